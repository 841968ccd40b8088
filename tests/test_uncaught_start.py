"""A start that ends in an uncaught Python traceback is START_FAILED, for every engine
(analysis/uncaught.py, patterns/<engine>/rules/99-uncaught.toml); a recovered one is not.

Real logs: tests/data/{trtllm-2052,lmdeploy-2788,vllm-25909}.log (see tests/data/README.md).
The counter-examples are built from those logs' own lines plus the line that says the server
came up, or with the traceback logged at WARNING level.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logscan.cli import cli

DATA = Path(__file__).parent / "data"


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def scan_json(path):
    return json.loads(run("scan", "--format", "json", str(path)).stdout)


@pytest.mark.parametrize("log,line,cause", [
    ("trtllm-2052.log", 10, "KeyError: 'type'"),
    ("lmdeploy-2788.log", 4, None),  # the excerpt ends before the exception line
    ("vllm-25909.log", 3, None),     # ERROR-prefixed frames only, three nested process tags
])
def test_uncaught_traceback_is_a_failed_start(log, line, cause):
    (r,) = scan_json(DATA / log)["runs"]
    sf = r["start_failure"]
    assert sf is not None and sf["line"] == line
    assert sf["cause"] == cause
    assert run("scan", "--fail-on", "START_FAILED", str(DATA / log)).exit_code == 1
    g = run("gate", str(DATA / log))
    assert g.exit_code == 1 and "START_FAILED" in g.stdout


def test_build_setting_of_a_failed_build_is_unconfirmed():
    """trtllm-build's `Set gemm_plugin to fp8.` is what the build was configured with; the
    build then crashed, so the selection stays but is not presented as the kernel that runs."""
    (r,) = scan_json(DATA / "trtllm-2052.log")["runs"]
    (sel,) = r["selections"]
    assert sel["kernel"] == "gemm_plugin" and sel["reasoning"].startswith("unconfirmed:")
    text = run("scan", str(DATA / "trtllm-2052.log")).stdout
    assert "gemm_plugin (unconfirmed)" in text
    gate = run("gate", str(DATA / "trtllm-2052.log")).stdout
    assert "runs gemm_plugin" not in gate and "not confirmed" in gate


def test_unexplained_names_the_failed_start():
    r = run("scan", "--unexplained", str(DATA / "vllm-25909.log"))
    assert "run 1 start FAILED (START_FAILED)" in r.stderr and "failing kernel: CUTLASS" in r.stderr
    # its two cutlass_scaled_mm frames are kernel-relevant (vllm.frame.kernel-apply) and no selection
    # says which CUTLASS rung served: listed, never silent (docs/traceback-frames.md)
    assert [ln.split("\t")[0].rsplit(":", 1)[1] for ln in r.stdout.splitlines()] == ["3", "6"]


def _lines(log):
    return (DATA / log).read_text().splitlines()


@pytest.mark.parametrize("log,ready", [
    ("trtllm-2052.log", "[08/01/2024-10:55:42] [TRT-LLM] [I] Total time of building all engines: 00:02:00"),
    ("lmdeploy-2788.log", "INFO:     Application startup complete."),
    ("lmdeploy-2788.log", "INFO:     Uvicorn running on http://0.0.0.0:23333 (Press CTRL+C to quit)"),
])
def test_recovered_traceback_is_not_a_failed_start(tmp_path, log, ready):
    p = tmp_path / log
    p.write_text("\n".join(_lines(log) + [ready]) + "\n")
    runs = scan_json(p)["runs"]
    assert runs and all(r["start_failure"] is None for r in runs)
    assert run("scan", "--fail-on", "START_FAILED", str(p)).exit_code == 0


def test_warning_level_traceback_is_not_a_failed_start(tmp_path):
    """vLLM repeats the line prefix on every traceback line: at WARNING it was logged and recovered from."""
    lines = [x.replace(" ERROR ", " WARNING ") for x in _lines("vllm-25909.log")]
    p = tmp_path / "warn.log"
    p.write_text("\n".join(lines) + "\n")
    assert all(r["start_failure"] is None for r in scan_json(p)["runs"])


def test_bare_traceback_opens_no_run(tmp_path):
    """A traceback with no engine line names no engine: it is no run (no phantom failed start)."""
    p = tmp_path / "bare.log"
    tb = [x for x in _lines("trtllm-2052.log")[9:] if "tensorrt_llm" not in x and "trtllm" not in x]
    assert tb[0].startswith("Traceback") and tb[-1] == "KeyError: 'type'"
    p.write_text("\n".join(tb) + "\n")
    assert scan_json(p)["runs"] == []
    # the same lines inside an engine's run are its failed start (the package path names TRT-LLM)
    p.write_text("\n".join(_lines("trtllm-2052.log")[9:]) + "\n")
    (r,) = scan_json(p)["runs"]
    assert r["engine"]["name"] == "trtllm" and r["start_failure"] is not None


def test_a_crash_after_the_engine_said_it_came_up_is_not_a_failed_start():
    """sgl-project/sglang#23548 (fixtures/sglang/sglang-111.log, checked free): 'Application startup
    complete.', 'Uvicorn running on ...' and a served request, then 'Scheduler hit an exception:
    Traceback ...' at line 12: the server was up, so no START_FAILED (a new user's trial found it)."""
    from pathlib import Path

    from logscan.packs.loader import default_packs
    from logscan.pipeline import scan_inputs

    log = Path(__file__).resolve().parent.parent / "fixtures" / "sglang" / "sglang-111.log"
    text = log.read_text(encoding="utf-8")
    assert "Application startup complete" in text and "Scheduler hit an exception" in text
    (run,) = scan_inputs([str(log)], default_packs()).runs
    assert run.start_failure is None
