"""A failed start says WHY in the engine's own words, and names the failing kernel (analysis/failhead.py).

Real logs of the bundled corpus: vllm-200 (vllm#22821, Marlin's 'Invalid thread config' under a
gptq_marlin_gemm frame), vllm-240 (vllm#28843, 'gpt_marlin_gemm only supports ...'), vllm-029
(vllm#9419, a cut traceback chained to 'No compiled cutlass_scaled_mm ...'), vllm-019 (DeepGEMM
missing before 'EngineCore failed to start.'), vllm-020 / vllm-127 (KERNEL_NOT_FOUND: no kernel
could serve), tgi-110 (TGI's shard exception read first by a grammar rule), sglang-007
(ModuleNotFoundError: a package, not a failing kernel), vllm-151 (a cut traceback whose innermost
frames are AITER's), tests/data/vllm-25909.log (a window of kernel frames only).
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES, ROOT

VLLM = FIXTURES / "vllm"
NATIVE_CUTLASS = ROOT / "tests" / "data" / "vllm-011-loaded.log"  # vllm-011 cut before its failure line


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _failure(path):
    runs = [r for r in scan_inputs([str(path)]).runs if r.start_failure is not None]
    assert len(runs) == 1, path
    return runs[0].start_failure


@pytest.mark.parametrize("log,line,exc,kernel,tb_line", [
    ("vllm/vllm-200.log", 10, "RuntimeError: Invalid thread config", "Marlin", 2),
    ("vllm/vllm-240.log", 15, "RuntimeError: gpt_marlin_gemm only supports bfloat16", "Marlin", 1),
    ("vllm/vllm-029.log", 2, "NotImplementedError: Error in calling custom op cutlass_scaled_mm", "CUTLASS", 7),
    ("vllm/vllm-019.log", 7, "RuntimeError: DeepGEMM backend is not available", "DeepGEMM", None),
    ("vllm/vllm-020.log", 5, "ValueError: Failed to find a kernel that can implement", None, 1),
    ("vllm/vllm-127.log", 5, "ValueError: Failed to find a kernel that can implement", None, 3),
    ("tgi/tgi-110.log", 9, "NotImplementedError: Sharded Llama requires Flash Attention", None, None),
    ("sglang/sglang-007.log", 7, "ModuleNotFoundError: No module named 'flashinfer'", None, 3),
])
def test_the_headline_is_the_exception_and_names_the_failing_kernel(log, line, exc, kernel, tb_line):
    sf = _failure(FIXTURES / log)
    assert sf.headline.startswith(exc) and sf.cause_line == line
    assert sf.exception_type == exc.split(":")[0]
    assert sf.failing_kernel == kernel, sf.failing_kernel_why
    if tb_line is not None:
        assert sf.traceback_line == tb_line
    text = run("scan", str(FIXTURES / log)).stdout
    # the failure's own line (the gate check's location) leads, the exception's line after it
    at = f"line {sf.line}" if sf.line == line else f"line {sf.line}, cause line {line}"
    assert f"start FAILED at {at}: {exc}" in text
    assert ("failing kernel: " + kernel in text) if kernel else "failing kernel" not in text


def test_the_engine_failure_line_is_kept_where_the_exception_leads():
    sf = _failure(VLLM / "vllm-019.log")
    assert (sf.line, sf.evidence) == (9, "EngineCore failed to start.")  # the stable fields stay
    assert "engine line 9: EngineCore failed to start." in run("scan", str(VLLM / "vllm-019.log")).stdout
    tgi = run("scan", str(FIXTURES / "tgi" / "tgi-110.log")).stdout
    assert "engine line 11: Shard 0 failed to start" in tgi


def _failed_starts():
    out = []
    for path in sorted(FIXTURES.glob("*/*.log")):
        for r in scan_inputs([str(path)]).runs:
            for f in (r.start_failure, r.serving_failure):
                if f is not None:
                    out.append((path, f))
    return out


def test_every_failure_of_the_corpus_says_why_and_invents_no_exception():
    seen = _failed_starts()
    assert len(seen) >= 60  # the corpus's failed starts and failures while serving
    for path, f in seen:
        text = path.read_text(errors="replace")
        assert f.headline, path
        if f.cause is None and f.traceback_line is None and f.line != f.traceback_line:
            # no traceback at all (a C++ assertion, an abort line): the engine's words are the headline
            assert f.headline == f.evidence.strip(), (path, f.headline)
            assert "no exception" not in f.headline and "not in the log" not in f.headline, (path, f.headline)
        elif f.cause is None:
            assert ("no exception line in the log" in f.headline
                    or "the exception that caused it is not in the log" in f.headline), (path, f.headline)
            assert f.failing_kernel is None or "the log holds no exception line" in (f.failing_kernel_why or ""), path
        else:
            assert f.headline.startswith(f.cause.strip()), (path, f.headline)
            assert f.cause.strip()[:80] in text, path  # the engine's own words, from the log
        if f.failing_kernel_line is not None:
            assert f.failing_kernel_line <= len(text.splitlines()), path


def test_a_window_cut_before_its_exception_says_so_and_names_the_kernel_of_its_innermost_frames():
    sf = _failure(VLLM / "vllm-151.log")
    assert sf.cause is None and sf.headline.startswith("no exception line in the log")
    assert sf.failing_kernel == "AITER" and "rocm_aiter_fused_experts" in sf.failing_kernel_why
    # a window of two kernel frames and no other traceback line is still a failed start (fail closed)
    sf = _failure(ROOT / "tests" / "data" / "vllm-25909.log")
    assert sf.line == 3 and sf.cause is None and sf.failing_kernel == "CUTLASS"


def test_json_adds_the_fields_and_keeps_the_old_ones():
    doc = json.loads(run("scan", "--format", "json", str(VLLM / "vllm-200.log")).stdout)
    sf = doc["runs"][0]["start_failure"]
    assert (sf["line"], sf["rule"], sf["cause_line"]) == (2, "vllm.uncaught.traceback", 10)
    assert sf["evidence"].endswith("in apply_weights") and sf["cause"].startswith("RuntimeError")
    assert sf["headline"] == sf["cause"] and sf["exception_type"] == "RuntimeError"
    assert (sf["traceback_line"], sf["failing_kernel"], sf["failing_kernel_line"]) == (2, "Marlin", 10)
    assert "kernel" not in sf and "code" not in sf  # the corpus scorer would read them as a selection / finding
    schema = json.loads(run("schema").stdout)
    props = json.dumps(schema)
    for field in ("headline", "exception_type", "traceback_line", "failing_kernel", "failing_kernel_why"):
        assert f'"{field}"' in props


def test_the_gate_message_leads_with_the_exception_in_every_format():
    log = str(VLLM / "vllm-200.log")
    r = run("gate", "--format", "json", "--today", "2026-06-01", log)
    (check,) = [c for c in json.loads(r.stdout)["gate"]["checks"] if c["code"] == "START_FAILED"]
    assert check["message"].startswith("run 1: the engine did not start: RuntimeError: Invalid thread config")
    assert "failing kernel: Marlin" in check["message"] and "traceback from line 2" in check["message"]
    for fmt in ("text", "github", "junit", "sarif", "markdown"):
        out = run("gate", "--format", fmt, "--today", "2026-06-01", log).stdout
        assert "Invalid thread config" in out, fmt


def test_scan_fail_on_and_diff_name_the_exception():
    r = run("scan", "--fail-on", "START_FAILED", str(VLLM / "vllm-019.log"))
    assert r.exit_code == 1 and "START_FAILED (line 9, cause line 7): RuntimeError: DeepGEMM backend" in r.output
    d = run("diff", str(NATIVE_CUTLASS), str(VLLM / "vllm-019.log"))
    assert "new run 1: start FAILED at line 9, cause line 7: RuntimeError: DeepGEMM backend" in d.stdout
    assert "(line 9: EngineCore failed to start.)" in d.stdout and "failing kernel DeepGEMM" in d.stdout


def test_an_error_finding_logged_just_before_a_traceback_without_exception_is_its_cause():
    # vllm-001 (vLLM V0 engine.py: logger.exception(e) logs str(e), no class name, then the
    # traceback): the KERNEL_NOT_FOUND line 2 is the failure's cause, not "no exception line"
    sf = _failure(VLLM / "vllm-001.log")
    assert sf.cause_line == 2 and sf.cause.startswith("Failed to find a kernel that can implement")
    assert sf.headline.startswith("Failed to find a kernel") and "no exception line" not in sf.headline
    assert sf.failing_kernel is None  # a KERNEL_NOT_FOUND names no failing kernel: none could serve
