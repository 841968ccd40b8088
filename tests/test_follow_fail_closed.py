"""follow says when something went wrong (issue 12, cases 3 and 5).

Case 3: ``cat fixtures/vllm/vllm-019.log | logscan follow -`` used to emit only a warning finding
with ``fatal: true`` inside it: no start-failure record, no metric, ``logscan_degraded`` 0, so no
alert could fire. Case 5: ``logscan follow nope.log`` was silent for ever while ``/readyz`` said
200 and ``logscan_followed_files`` 1.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys

from prometheus_client import generate_latest

from logscan.follow.metrics import FollowMetrics
from logscan.follow.runner import Follower
from tests.conftest import FIXTURES

FAILED_START = FIXTURES / "vllm" / "vllm-019.log"


def _metric(m: FollowMetrics, name: str) -> float:
    for line in generate_latest(m.registry).decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not exported")


def test_a_failed_start_is_a_record_a_counter_and_a_gauge(packs, tmp_path):
    path = tmp_path / "engine.log"
    path.write_bytes(FAILED_START.read_bytes())
    out = io.StringIO()
    m = FollowMetrics("sidecar", packs.findings.cost_class_finding)
    f = Follower([str(path)], packs, out, metrics=m, idle_flush=0.0)
    assert _metric(m, "logscan_start_failures_total") == 0 and _metric(m, "logscan_start_failed") == 0
    f.poll_once()
    f.poll_once()
    recs = [json.loads(ln) for ln in out.getvalue().splitlines()]
    sf = [r for r in recs if r["type"] == "start_failure"]
    assert len(sf) == 1 and sf[0]["start_failure"]["line"] == 9
    assert sf[0]["start_failure"]["evidence"] == "EngineCore failed to start."
    assert _metric(m, "logscan_start_failures_total") == 1 and _metric(m, "logscan_start_failed") == 1
    f.end_all()  # the end of the input reports nothing twice
    assert sum(json.loads(ln)["type"] == "start_failure" for ln in out.getvalue().splitlines()) == 1


def test_cli_stdin_emits_the_start_failure():
    r = subprocess.run([sys.executable, "-m", "logscan.cli", "follow", "--metrics-addr", "off", "-"],
                       input=FAILED_START.read_bytes(), capture_output=True, timeout=120)
    types = [json.loads(ln)["type"] for ln in r.stdout.decode().splitlines()]
    assert r.returncode == 0 and types.count("start_failure") == 1


def test_a_missing_path_is_said_and_keeps_readiness_false(packs, tmp_path):
    path = tmp_path / "nope.log"
    err = io.StringIO()
    m = FollowMetrics("sidecar", packs.findings.cost_class_finding)
    f = Follower([str(path)], packs, io.StringIO(), metrics=m, err=err, rescan=0.0)
    f.poll_once()
    f.poll_once()
    assert f"{path}: not there yet" in err.getvalue() and err.getvalue().count("not there yet") == 1
    assert f.ready is False
    assert _metric(m, "logscan_followed_files") == 0 and _metric(m, "logscan_missing_files") == 1
    path.write_bytes(FAILED_START.read_bytes())
    f.poll_once()
    assert f"{path}: appeared" in err.getvalue()
    assert f.ready is True
    assert _metric(m, "logscan_followed_files") == 1 and _metric(m, "logscan_missing_files") == 0


def test_a_gzip_file_given_to_follow_is_refused_once_not_read_as_silence(tmp_path):
    """A finished .gz log given to follow (new-user trial: 0 lines and no word) is said once and
    not followed; scan reads it."""
    import gzip
    import io

    from logscan.follow.runner import Follower
    from logscan.packs.loader import default_packs

    gz = tmp_path / "server.log.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "vllm" / "vllm-005.log").read_bytes()))
    out, err = io.StringIO(), io.StringIO()
    f = Follower([str(gz)], default_packs(), out, err=err, rescan=0.0)
    f.poll_once()
    f.poll_once()
    assert not f.streams and out.getvalue() == ""
    assert err.getvalue().count("is gzip-compressed, not a growing log") == 1


def test_follow_refuses_a_gzip_path_given_by_name(tmp_path):
    """Given by name, a .gz log is refused at once (exit 2: nothing to follow), as a directory is;
    a glob's .gz pieces are noted and skipped (the test above)."""
    import gzip

    gz = tmp_path / "v.log.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "vllm" / "vllm-005.log").read_bytes()))
    proc = subprocess.run([sys.executable, "-m", "logscan", "follow", "--metrics-addr", "off", str(gz)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "gzip-compressed, not a growing log" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_gzip_piped_into_follow_is_said_and_exits_2(tmp_path):
    """``logscan follow - < log.gz`` (second new-user trial: exit 0, nothing on stdout, no word)."""
    import gzip

    gz = tmp_path / "v.log.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "vllm" / "vllm-005.log").read_bytes()))
    with open(gz, "rb") as fh:
        proc = subprocess.run([sys.executable, "-m", "logscan", "follow", "--metrics-addr", "off", "-"],
                              stdin=fh, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "standard input is gzip-compressed" in proc.stderr and "Traceback" not in proc.stderr
