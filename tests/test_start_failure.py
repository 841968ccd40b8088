"""Crashed starts, inference tags, the config line and ranks in the report (real corpus logs)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES

VLLM = FIXTURES / "vllm"


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def scan_json(path):
    r = run("scan", "--format", "json", str(path))
    return json.loads(r.stdout)


def _keys(obj):
    """Every key of every JSON object under ``obj``."""
    if isinstance(obj, dict):
        yield from obj
        for v in obj.values():
            yield from _keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v)


@pytest.mark.parametrize("log,line,evidence", [
    ("vllm-011.log", 9, "EngineCore failed to start."),
    ("vllm-021.log", 3, "EngineCore failed to start."),
    ("vllm-004.log", 2, "WorkerProc failed to start."),
    ("vllm-019.log", 9, "EngineCore failed to start."),
])
def test_a_crashed_start_is_reported_in_json_and_text(log, line, evidence):
    doc = scan_json(VLLM / log)
    sf = doc["runs"][-1]["start_failure"]
    assert sf["line"] == line and sf["evidence"] == evidence and sf["rule"] == "vllm.run.start-failed"
    # the corpus scorer counts objects with "code" as findings and with "kernel" as selections
    assert not {"code", "kernel"} & set(_keys(sf))
    text = run("scan", str(VLLM / log)).stdout
    # the headline is the exception when the log kept one (docs/lifecycle.md), the engine's line after it
    # (at the failure's own line, the gate check's location, with the exception's line after it)
    cause_at = f", cause line {sf['cause_line']}" if sf["cause"] and sf["cause_line"] != line else ""
    head = f"start FAILED at line {line}{cause_at}: {sf['cause'] or evidence}"
    assert head in text
    if sf["cause"]:
        assert f"engine line {line}: {evidence}" in text


def test_a_clean_start_has_no_start_failure():
    doc = scan_json(VLLM / "vllm-009.log")
    assert [r["start_failure"] for r in doc["runs"]] == [None] * len(doc["runs"])
    assert "start FAILED" not in run("scan", str(VLLM / "vllm-009.log")).stdout


def test_the_deepgemm_runtime_error_is_named_the_fatal_cause():
    doc = scan_json(VLLM / "vllm-019.log")
    r = doc["runs"][-1]
    assert r["start_failure"]["cause_line"] == 7 and "DeepGEMM" in r["start_failure"]["cause"]
    fatal = [f["code"] for f in r["findings"] if f["fatal"]]
    assert fatal == ["OPTIONAL_PACKAGE_MISSING"]
    text = run("scan", str(VLLM / "vllm-019.log")).stdout
    assert "OPTIONAL_PACKAGE_MISSING line 7" in text and "[fatal: this exception failed the start]" in text
    assert "start FAILED at line 9, cause line 7: RuntimeError: DeepGEMM" in text
    assert "failing kernel: DeepGEMM" in text


def test_gate_fails_a_crashed_start_by_default():
    # vllm-021: native Marlin WNA16 selection, nothing else fails: only the crash fails the gate
    r = run("gate", "--format", "json", "--today", "2026-06-01", str(VLLM / "vllm-021.log"))
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert [c["code"] for c in doc["gate"]["checks"] if c["verdict"] == "fail"] == ["START_FAILED"]


def test_sglang_inferred_finding_says_it_came_from_the_kernel_name():
    path = FIXTURES / "sglang" / "sglang-001.log"
    f = scan_json(path)["runs"][0]["findings"][0]
    assert f["code"] == "WEIGHT_ONLY_SUBSTITUTION" and f["inferred_from"] == "kernel_name"
    text = run("scan", str(path)).stdout
    assert "(inferred from the kernel name)" in text and "(inferred from the ladder" not in text
    gate = run("gate", str(path)).stdout
    assert "(inferred from the kernel name)" in gate and "(inferred from the ladder" not in gate
    # the family is a layer family, not the kernel's name again
    assert "linear (Marlin)" not in text
    # the GPU the log names is on the config line
    assert "gpu=NVIDIA_A100-SXM4-80GB" in text


def test_a_ladder_placed_finding_says_it_came_from_the_ladder_rung():
    # no real log of the corpus has a ladder-placed emulation; the era fixture names vLLM 0.26 kernels
    doc = scan_json(VLLM / "synthetic-era-0.26.log")
    inferred = [f for r in doc["runs"] for f in r["findings"] if f["inferred"]]
    assert inferred and {f["inferred_from"] for f in inferred} == {"ladder"}


def test_ranks_never_show_a_process_name():
    for log in sorted(VLLM.glob("*.log")):
        for r in scan_json(log)["runs"]:
            for s in r["selections"]:
                assert not any(x.startswith(("Engine", "Vllm", "Worker")) for x in s["ranks"]), (log, s["ranks"])
            for a in r["attention"]:
                assert not any(x.startswith(("Engine", "Vllm", "Worker")) for x in a["ranks"]), (log, a["ranks"])


def test_sglang_scheduler_exception_is_a_failed_start_with_its_cause(tmp_path):
    # no corpus log of SGLang shows the scheduler's death: the line shapes of
    # managers/scheduler.py run_scheduler_process, with sglang-008's real RuntimeError as the cause
    p = tmp_path / "sglang-crash.log"
    p.write_text(
        "[2025-08-07 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2620, in run_scheduler_process\n'
        + (FIXTURES / "sglang" / "sglang-008.log").read_text().splitlines()[0] + "\n")
    r = scan_json(p)["runs"][0]
    assert r["engine"]["name"] == "sglang"
    assert r["start_failure"]["line"] == 1 and r["start_failure"]["rule"] == "sglang.run.start-failed"
    assert r["start_failure"]["cause_line"] == 3
    assert [f["code"] for f in r["findings"] if f["fatal"]] == ["KERNEL_NOT_FOUND"]


@pytest.mark.parametrize("log", ["llamacpp/llamacpp-107.log", "vllm/vllm-019.log", "vllm/vllm-020.log",
                                 "vllm/vllm-025.log"])
def test_the_text_report_and_the_gate_give_the_same_failure_and_cause_lines(log):
    # llamacpp-107: the text said "start FAILED at line 2" (the CUDA error, the cause) while the gate
    # put START_FAILED at line 5 (GGML_ASSERT, the failure line): both now say "line 5, cause line 2"
    path = str(FIXTURES / log)
    sf = scan_json(FIXTURES / log)["runs"][-1]["start_failure"]
    cause = sf["cause_line"] if sf["cause_line"] is not None else sf["line"]
    assert cause != sf["line"]  # a log whose two lines differ
    at = f"line {sf['line']}, cause line {cause}"
    assert f"start FAILED at {at}: " in run("scan", path).stdout
    r = run("gate", "--format", "json", "--today", "2026-06-01", path)
    (check,) = [c for c in json.loads(r.stdout)["gate"]["checks"] if c["code"] == "START_FAILED"]
    assert check["line"] == sf["line"] and f"({at}" in check["message"]
    assert f"{path}:{sf['line']} START_FAILED: " in run("gate", "--today", "2026-06-01", path).stdout
    assert f" {at}: " in run("gate", "--format", "markdown", "--today", "2026-06-01", path).stdout
