"""``logscan follow``: the scan pipeline on logs that never end, with JSON lines and Prometheus metrics.

``tail.py`` follows files through rotations (``pieces.py``: the rotated pieces, ``position.py``:
where a restart resumes, ``pipe.py``: pipes and the line cutting both tails share),
``runner.py`` feeds the pipeline and reports,
``metrics.py`` exports Prometheus metrics and health endpoints, ``podinfo.py`` reads pod
identity from kubelet paths, ``command.py`` wires them for the CLI.
"""
