"""A cut traceback's quoted op call names the failing kernel (common-rules/97-quoted-op-calls.toml,
analysis/failhead.py; task cli12).

vllm-294 (vllm-project/vllm#11249) ends ``out = ops.awq_dequantize(...)``, the ``_custom_ops.py``
wrapper's frame and ``raise e``: no frame is in a kernel's op, the exception is cut, and the failed
start named no kernel. The quoted call is the op its frame ran: AWQ.
"""
from __future__ import annotations

from logscan.api import scan
from tests.conftest import FIXTURES

V294 = FIXTURES / "vllm" / "vllm-294.log"
V261 = FIXTURES / "vllm" / "vllm-261.log"


def _failure(source):
    report = scan(source)
    (run,) = report.runs
    return run.start_failure


def _lines(text):
    return text.splitlines(keepends=True)


def test_a_cut_traceback_names_the_op_its_last_quoted_line_calls():
    sf = _failure(V294)
    assert sf.failing_kernel == "AWQ" and sf.failing_kernel_line == 7
    assert "quoted source line calls its op awq_dequantize (line 7)" in sf.failing_kernel_why


def test_a_frame_in_the_op_still_comes_first():
    sf = _failure(V261)  # the _custom_ops.py cutlass_scaled_mm frame (line 26), then its quoted call
    assert sf.failing_kernel == "CUTLASS" and sf.failing_kernel_line == 26
    assert "among the innermost frames" in sf.failing_kernel_why


def test_torch_ops_call_under_a_frame_of_no_kernel():
    lines = V261.read_text().splitlines(keepends=True)
    # the window cut after the quoted call 'torch.ops._C.cutlass_scaled_mm(out, a, b, scale_a,', and
    # its frame header no longer names the op (a wrapper of another name)
    text = "".join(lines[:25]) + lines[25].replace("in cutlass_scaled_mm", "in wrapper") + lines[26]
    sf = _failure(_lines(text))
    assert sf.failing_kernel == "CUTLASS" and sf.failing_kernel_line == 27
    assert "calls its op cutlass_scaled_mm" in sf.failing_kernel_why


def test_an_op_no_kernel_holds_names_none():
    text = V294.read_text().replace("ops.awq_dequantize(", "ops.scaled_fp8_quant(")
    assert _failure(_lines(text)).failing_kernel is None


def test_an_outer_frames_call_is_not_the_failing_op():
    lines = V294.read_text().splitlines(keepends=True)
    frame = lines[7]  # the _custom_ops.py wrapper frame header
    deeper = [frame.replace("_custom_ops.py\", line 62, in wrapper", f"torch/_ops.py\", line {n}, in f{n}")
              for n in range(4)]
    sf = _failure(_lines("".join(lines[:7] + deeper + lines[7:])))
    assert sf.failing_kernel is None  # four frames of no kernel below the call


def test_a_log_statement_that_looks_like_a_call_is_no_quoted_line():
    text = ("ERROR 12-17 03:22:04 worker.py:236] Traceback (most recent call last):\n"
            "ERROR 12-17 03:22:04 worker.py:236] ops.awq_dequantize(x) failed\n")
    sf = _failure(_lines(text))
    assert sf is None or sf.failing_kernel is None
