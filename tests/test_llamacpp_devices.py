"""llama.cpp's device probe: every device ggml_cuda_init (ggml_init_cublas before its rename) lists,
mixed archs, and the build switches it prints before them (GGML_CUDA_FORCE_MMQ, GGML_CUDA_FORCE_CUBLAS,
CUDA_USE_TENSOR_CORES: they decide MMQ vs the cuBLAS dequantize path). Issue #16 trial: only the first
device reached the config, the switches were not reported, and a ggml_init_cublas run began at its
first device line. Real logs: llama.cpp#15593 (llamacpp-206), #12878 (-223), #4215 (-209), #3616 (-213),
a ROCm build's README paste (-110); the walk probes join real lines of those logs to llamacpp-106's real
Q6_K load (tests/test_llamacpp_offload.py does the same)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES, scan_json, write_log

FIX = FIXTURES / "llamacpp"


def _run(name: str) -> dict:
    (run,) = scan_json(FIX / f"{name}.log")["runs"]
    return run


def _text(path: Path) -> str:
    return CliRunner().invoke(cli, ["scan", str(path)], catch_exceptions=False).stdout


def _lines(name: str, *starts: str) -> str:
    """The lines of fixture ``name`` that start with one of ``starts``, as they are."""
    return "".join(l for l in (FIX / f"{name}.log").read_text(encoding="utf-8").splitlines(keepends=True)
                   if l.lstrip().startswith(starts))


def test_every_device_is_listed_not_only_the_first():
    run = _run("llamacpp-206")
    extra = run["config"]["extra"]
    assert run["config"]["gpu"] == "NVIDIA RTX PRO 4500 Blackwell"  # the first device names the run's GPU
    assert extra["devices"] == ("0: NVIDIA RTX PRO 4500 Blackwell (compute capability 12.0); "
                                "1: NVIDIA GeForce RTX 5060 Ti (compute capability 12.0)")
    assert extra["devices_found"] == "2 CUDA" and "devices_mixed" not in extra  # one arch, two names
    assert "devices  2 CUDA: 0: NVIDIA RTX PRO 4500 Blackwell" in _text(FIX / "llamacpp-206.log")
    # llamacpp-200: eight found, the excerpt ends at Device 6; alike devices print as one range
    assert ("devices  8 CUDA: 0-6: NVIDIA RTX PRO 6000 Blackwell Server Edition (compute capability 12.0) "
            "(7 of 8 listed in the log)") in _text(FIX / "llamacpp-200.log")


def test_mixed_archs_are_reported():
    extra = _run("llamacpp-223")["config"]["extra"]
    assert extra["devices_mixed"] == "gfx908, gfx1100, gfx906"
    assert extra["devices"].count("; ") == 3  # four devices, MI100 twice
    assert "(mixed archs: gfx908, gfx1100, gfx906)" in _text(FIX / "llamacpp-223.log")


def test_the_build_switches_are_reported():
    extra = _run("llamacpp-209")["config"]["extra"]
    assert extra["GGML_CUDA_FORCE_MMQ"] == "no" and extra["CUDA_USE_TENSOR_CORES"] == "yes"
    assert "switches FORCE_MMQ=no USE_TENSOR_CORES=yes" in _text(FIX / "llamacpp-209.log")
    extra = _run("llamacpp-223")["config"]["extra"]
    assert extra["GGML_CUDA_FORCE_MMQ"] == "no" and extra["GGML_CUDA_FORCE_CUBLAS"] == "no"


def test_a_ggml_init_cublas_run_starts_at_its_first_line():
    run = _run("llamacpp-213")  # lines 1-4 are the reporter's command, line 5 'ggml_init_cublas: found 2 ...'
    assert run["first_line"] == 5
    assert run["config"]["extra"]["devices_found"] == "2 CUDA"
    # llamacpp-209's line 1 is the reporter's './llama.cpp/build/bin/main -m ...': that launch
    # command opens its run (llamacpp.config.launch-command), the ggml_init_cublas line 2 joins it
    run = _run("llamacpp-209")
    assert run["first_line"] == 1 and "launch command" in run["engine"]["identified_by"]


def test_the_old_probe_names_the_platform():
    run = _run("llamacpp-110")  # 'ggml_init_cublas: found 1 ROCm devices:' (a HIP build, 2023)
    assert run["engine"]["platform"] == "ROCM"
    assert run["config"]["compute_capability"] is None  # a HIP '11.0' is no CUDA sm110
    assert run["config"]["extra"]["hip_compute_capability"] == "110"


def _walk_probe(tmp_path: Path, head: str) -> dict:
    body = (FIX / "llamacpp-106.log").read_text(encoding="utf-8")
    (run,) = scan_json(write_log(tmp_path, head + body))["runs"]
    assert run["config"]["quantization"] == "Q6_K"
    return run


def test_no_kernel_is_inferred_from_the_first_of_mixed_devices(tmp_path):
    # llamacpp-213's two RTX 3090, the second reworded to a GTX 1080 Ti (cc 6.1: dp4a MMQ, no int8 MMA)
    devices = _lines("llamacpp-213", "ggml_init_cublas:", "Device ")
    same = _walk_probe(tmp_path, devices)  # one arch: the walk infers the MMQ rung
    assert [s for s in same["selections"] if not s["observed"]] and "walk_skipped" not in same["config"]["extra"]
    mixed = devices.replace("Device 1: NVIDIA GeForce RTX 3090, compute capability 8.6",
                            "Device 1: NVIDIA GeForce GTX 1080 Ti, compute capability 6.1")
    assert mixed != devices
    run = _walk_probe(tmp_path, mixed)
    assert run["config"]["extra"]["devices_mixed"] == "8.6, 6.1"
    assert run["selections"] == []  # device 0's rung is not every layer's
    assert "different archs (8.6, 6.1)" in run["config"]["extra"]["walk_skipped"]
    r = CliRunner().invoke(cli, ["gate", str(tmp_path / "x.log")], catch_exceptions=False)
    assert r.exit_code == 1 and "NO_KERNEL_SEEN" in r.stdout  # fail closed, not a pass on device 0


def test_no_kernel_is_inferred_for_a_build_older_than_the_ladder(tmp_path):
    switches = _lines("llamacpp-209", "ggml_init_cublas: GGML_CUDA_FORCE_MMQ", "ggml_init_cublas: CUDA_USE_TENSOR_CORES")
    devices = _lines("llamacpp-213", "ggml_init_cublas:", "Device ")
    new = _walk_probe(tmp_path, devices)  # two RTX 3090 (8.6): MMQ at every batch on the shipped ladder
    assert [s for s in new["selections"] if not s["observed"]]
    run = _walk_probe(tmp_path, switches + devices)
    assert run["selections"] == []
    assert "CUDA_USE_TENSOR_CORES: yes" in run["config"]["extra"]["walk_skipped"]
    assert "cuBLAS FP16 GEMM" in run["config"]["extra"]["walk_skipped"]


def test_the_html_report_shows_the_same_rows():
    out = CliRunner().invoke(cli, ["scan", "--format", "html", str(FIX / "llamacpp-209.log")],
                             catch_exceptions=False).stdout
    assert "<td>switches</td><td>FORCE_MMQ=no USE_TENSOR_CORES=yes</td>" in out
    out = CliRunner().invoke(cli, ["scan", "--format", "html", str(FIX / "llamacpp-223.log")],
                             catch_exceptions=False).stdout
    assert "<td>devices</td><td>4 ROCm: 0: AMD Instinct MI100 (gfx908)" in out


def test_a_listed_fact_must_be_one_the_rule_sets():
    """``lists`` (which ``sets`` keys every line adds to) is rule data: a key the rule does not set
    is a typo the pack loader refuses, not a list that silently stays empty."""
    import pytest

    from logscan.packs.model_rules import Rule

    base = dict(id="x.device", kind="gpu", pattern=r"Device (?P<gpu>\w+)", keywords=["Device"],
                examples=["Device A"], sets={"devices": "{gpu}"})
    assert Rule.model_validate({**base, "lists": ["devices"]}).lists == ["devices"]
    with pytest.raises(ValueError, match="lists names facts its sets lack"):
        Rule.model_validate({**base, "lists": ["device"]})


def test_the_switches_line_follows_the_packs_the_log_was_read_with(tmp_path):
    """``--patterns``: the 'switches' labels come from the pack the run was read with (its
    ``[kernel_facts]``), in the text and HTML reports and the gate's text; they were read from the
    shipped packs whatever --patterns said."""
    import shutil

    import logscan

    dst = tmp_path / "patterns"
    shutil.copytree(Path(logscan.__file__).resolve().parent.parent / "patterns", dst)
    pack = dst / "llamacpp" / "pack.toml"
    text = pack.read_text(encoding="utf-8")
    assert 'GGML_CUDA_FORCE_MMQ = "FORCE_MMQ"' in text
    pack.write_text(text.replace('GGML_CUDA_FORCE_MMQ = "FORCE_MMQ"', 'GGML_CUDA_FORCE_MMQ = "MMQ_FORCED"'),
                    encoding="utf-8")
    log = str(FIX / "llamacpp-209.log")
    for args, want in ((["scan"], "switches MMQ_FORCED=no USE_TENSOR_CORES=yes"),
                       (["scan", "--format", "html"], "<td>switches</td><td>MMQ_FORCED=no USE_TENSOR_CORES=yes</td>"),
                       (["gate"], "switches MMQ_FORCED=no USE_TENSOR_CORES=yes")):
        out = CliRunner().invoke(cli, [*args, "--patterns", str(dst), log], catch_exceptions=False).stdout
        assert want in out and "FORCE_MMQ=" not in out, args
