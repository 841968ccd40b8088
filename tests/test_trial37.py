"""New-user trial 37 (real logs logscan had never seen, tests/data/trial37/; also fixtures/ vllm-395,
vllm-396, sglang-330, trtllm-215, mlc-llm-190): each fix on the real log, with a counter-example."""
from __future__ import annotations

from pathlib import Path

from logscan.api import scan

DATA = Path(__file__).parent / "data" / "trial37"


def _write(tmp_path, text: str) -> str:
    p = tmp_path / "x.log"
    p.write_text(text)
    return str(p)


# 1. a Triton CompilationError excerpt's `def <name>(` names the kernel of the error below it
def test_compilation_error_def_names_the_kernel():
    r = scan(str(DATA / "b-sglang18875.log"))
    f = next(f for f in r.runs[0].findings if f.code == "UNSUPPORTED_ON_ARCH")
    assert f.kernel == "fused_moe_kernel"
    assert any("CompilationError excerpt begins at its `def fused_moe_kernel(`" in x for x in f.reasons)


def test_compilation_error_def_prefixed_start_failure():
    r = scan(str(Path(__file__).parents[1] / "fixtures" / "vllm" / "vllm-025.log"))
    run = r.runs[0]
    assert next(f for f in run.findings if f.code == "UNSUPPORTED_ON_ARCH").kernel == "_w8a8_triton_block_scaled_mm"
    assert run.start_failure is not None and run.start_failure.failing_kernel == "_w8a8_triton_block_scaled_mm"


def test_def_line_of_ordinary_python_names_no_kernel(tmp_path):
    # a traceback's quoted `def` line (no CompilationError header right above it) is no kernel
    log = ("Traceback (most recent call last):\n"
           '  File "/usr/lib/python3.12/site-packages/foo/wrap.py", line 12, in wrapper\n'
           "    def wrapper(*args):\n"
           "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")\n")
    f = next(f for f in scan(_write(tmp_path, log)).runs[0].findings if f.code == "UNSUPPORTED_ON_ARCH")
    assert f.kernel is None


def test_excerpt_not_starting_at_def_names_no_kernel(tmp_path):
    # an error deep in the kernel: the excerpt shows body lines, no def line (lmdeploy-159's shape)
    log = ("triton.compiler.errors.CompilationError: at 124:14:\n"
           "        k = tl.load(k_ptrs + b_offset * stride_kp)\n"
           "              ^\n"
           "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")\n")
    f = next(f for f in scan(_write(tmp_path, log)).runs[0].findings if f.code == "UNSUPPORTED_ON_ARCH")
    assert f.kernel is None


# 3. --gpu: the better rungs the named GPU refuses keep their reason
def test_gpu_keeps_the_refused_rungs_reasons():
    from logscan.formats.text import render as render_text

    r = scan(str(DATA / "a-vllm49070.log"), gpu="H200")
    s = r.runs[0].selections[0]
    assert s.kernel == "MARLIN" and s.ladder.fell == 0
    ref = s.ladder.refused_on_gpu
    assert set(ref) == {"FLASHINFER_TRTLLM", "FLASHINFER_CUTLASS"}
    assert "sm10x" in ref["FLASHINFER_TRTLLM"] and "sm90" in ref["FLASHINFER_TRTLLM"]
    text = render_text(r)
    assert "refused by the GPU: FLASHINFER_TRTLLM, FLASHINFER_CUTLASS" in text
    assert "FLASHINFER_CUTLASS: refused: needs either an sm10x GPU" in text


def test_gpu_that_could_run_them_leaves_them_fallen():
    # on B200 the rungs could pass: they are fallen below (UNEXPLAINED), not refused
    s = scan(str(DATA / "a-vllm49070.log"), gpu="B200").runs[0].selections[0]
    assert s.ladder.fell == 2 and not s.ladder.refused_on_gpu
