"""New-user trial 38's scan problems (fix37b), each on the trial's real log (tests/data/t38/),
with a counter-example."""
from __future__ import annotations

from pathlib import Path

from logscan.api import scan

T38 = Path(__file__).parent / "data" / "t38"
FIX = Path(__file__).parents[1] / "fixtures"


def _write(tmp_path, text: str, name: str = "x.log") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# 1. a message printed before a cut traceback is not the exception it chains to
def test_printed_line_before_cut_traceback_is_no_chained_cause():
    run = scan(str(T38 / "a-vllm39712.log")).runs[0]
    sf = run.start_failure
    assert sf is not None and sf.cause is None and sf.cause_line is None
    assert "chains to" not in sf.headline
    assert sf.headline.startswith("no exception line in the log (the traceback from line 6 is cut")
    # the arch guard's print is still the run's finding
    assert [f.code for f in run.findings] == ["UNSUPPORTED_ON_ARCH"]


def test_logger_exception_record_still_chains():
    # vllm-001: logger.exception's message and its traceback are one record (same prefix)
    sf = scan(str(FIX / "vllm" / "vllm-001.log")).runs[0].start_failure
    assert sf.cause_line == 2 and "chains to" in sf.headline


def test_real_chaining_marker_still_chains():
    sf = scan(str(FIX / "vllm" / "vllm-195.log")).runs[0].start_failure
    assert sf.cause_line == 9 and sf.exception_type == "AssertionError"


def test_other_prefix_error_line_is_no_chained_cause(tmp_path):
    # an error line of another logger record (other file:line) above a traceback is not its message
    log = ("ERROR 12-11 21:46:49 worker.py:12] Marlin MoE only supports SM80 or newer devices.\n"
           "ERROR 12-11 21:46:50 engine.py:366] Traceback (most recent call last):\n"
           'ERROR 12-11 21:46:50 engine.py:366]   File "/x/vllm/engine/multiprocessing/engine.py", line 357, in run_mp_engine\n'
           "ERROR 12-11 21:46:50 engine.py:366]     engine = MQLLMEngine.from_engine_args(engine_args=engine_args,\n")
    sf = scan(_write(tmp_path, log)).runs[0].start_failure
    assert sf is not None and sf.cause_line is None and "chains to" not in sf.headline


def test_gate_reason_covers_a_run_time_arch_guard():
    from logscan.api import gate
    import datetime
    res = gate(scan(str(T38 / "a-vllm39712.log")), today=datetime.date(2026, 12, 6))
    chk = next(c for c in res.checks if c.code == "UNSUPPORTED_ON_ARCH")
    assert "arch guard at run time" in chk.message and chk.verdict.value == "fail"


# 2. fail closed: a start cut before its first kernel selection is START_INCOMPLETE too
def _gate_codes(path):
    import datetime
    from logscan.api import gate
    return [c.code for c in gate(scan(path), today=datetime.date(2026, 12, 6)).checks if c.verdict.value == "fail"]


def test_start_cut_before_any_selection_is_incomplete(tmp_path):
    data = (FIX / "vllm" / "vllm-005.log").read_bytes()[:1500]  # trial 38: head -c 1500
    p = tmp_path / "trunc.log"
    p.write_bytes(data)
    assert "START_INCOMPLETE" in _gate_codes(str(p))
    assert "START_INCOMPLETE" in _gate_codes(str(FIX / "vllm" / "vllm-005.log"))


def test_excerpt_showing_no_start_is_not_incomplete(tmp_path):
    # a quoted warning line with no engine start under way (no version line) is not judged a cut start
    p = _write(tmp_path, "WARNING 03-17 15:05:47 [config.py:1] Casting torch.bfloat16 to torch.float16.\n")
    assert "START_INCOMPLETE" not in _gate_codes(p)


def test_failed_start_before_selection_is_not_incomplete():
    assert "START_INCOMPLETE" not in _gate_codes(str(T38 / "a-vllm39712.log"))


def test_last_run_cut_before_selection_is_counted(tmp_path):
    # a log that restarts and is cut (a SIGINT'd pipe, trial 38) in the last start's weight loading
    data = (FIX / "vllm" / "vllm-005.log").read_bytes()
    p = tmp_path / "restart.log"
    p.write_bytes(data + data[:1500].rsplit(b"\n", 1)[0] + b"\n")
    import datetime
    from logscan.api import gate
    r = scan(str(p))
    assert len(r.runs) == 2 and not r.runs[1].selections
    cut = [c.run for c in gate(r, today=datetime.date(2026, 12, 6)).checks if c.code == "START_INCOMPLETE"]
    assert cut == [1, 2]


# 3. TensorRT-LLM's 'FP4 Gemm not supported before Blackwell, nor GeForce Blackwell' is an arch refusal
def test_trtllm_fp4_gemm_before_blackwell_is_arch_refusal():
    run = scan(str(T38 / "d-trtllm5018.log")).runs[0]
    assert [(f.code, f.line) for f in run.findings] == [("UNSUPPORTED_ON_ARCH", 2)]
    assert not run.unexplained
    assert (run.first_line, run.last_line) == (1, 2)


def test_not_supported_before_needs_a_format_and_an_arch(tmp_path):
    log = ("[TensorRT-LLM] TensorRT-LLM version: 0.19.0\n"
           "Signup not supported in pre-release\n"
           "This model is not supported before transformers 4.45\n")
    run = scan(_write(tmp_path, log)).runs[0]
    assert not [f for f in run.findings if f.code == "UNSUPPORTED_ON_ARCH"]


def test_unread_line_is_inside_its_run(tmp_path):
    # a kernel sentence no rule reads stays in the span of the run that lists it
    log = ("[TensorRT-LLM] TensorRT-LLM version: 0.19.0\n"
           "FP4 Gemm not supported with this scaling layout\n")
    run = scan(_write(tmp_path, log)).runs[0]
    assert [u.line for u in run.unexplained] == [2] and run.last_line == 2


# 4. VLLM_DISABLED_KERNELS assigned at any shell assignment position is the run's environment
def test_wrapper_line_sets_disabled_kernels():
    r = scan(str(T38 / "b-lightnav6.log"))
    run = r.runs[0]
    assert run.engine.name == "vllm"
    ev = next(e for e in r.events if e.rule == "vllm.config.disabled-kernels")
    assert ev.line == 1 and ev.groups["kernels"].split(",") == [
        "MarlinFP8ScaledMMLinearKernel", "FlashInferFP8ScaledMMLinearKernel", "CutlassFP8ScaledMMLinearKernel"]


def test_prose_mention_is_advice_not_a_setting(tmp_path):
    r = scan(_write(tmp_path, "Set VLLM_DISABLED_KERNELS=MarlinLinearKernel to work around it.\n"))
    assert not [e for e in r.events if e.rule == "vllm.config.disabled-kernels"]
