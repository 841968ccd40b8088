"""New-user trial 37 (real logs logscan had never seen, now fixtures/ vllm-395, vllm-396, sglang-330,
trtllm-215, mlc-llm-190): each fix on the real log, with a counter-example."""
from __future__ import annotations

import pytest

from pathlib import Path

from logscan.api import scan

FIX = Path(__file__).parents[1] / "fixtures"
A_LOG = FIX / "vllm" / "vllm-395.log"  # vLLM issue 49070 (trial 37 a-vllm49070.log)
B_LOG = FIX / "sglang" / "sglang-330.log"  # SGLang issue 18875 (trial 37 b-sglang18875.log)


def _write(tmp_path, text: str) -> str:
    p = tmp_path / "x.log"
    p.write_text(text)
    return str(p)


# 1. a Triton CompilationError excerpt's `def <name>(` names the kernel of the error below it
def test_compilation_error_def_names_the_kernel():
    r = scan(str(B_LOG))
    f = next(f for f in r.runs[0].findings if f.code == "UNSUPPORTED_ON_ARCH")
    assert f.kernel == "fused_moe_kernel"
    assert any("CompilationError excerpt begins at its `def fused_moe_kernel(`" in x for x in f.reasons)


def test_compilation_error_def_prefixed_start_failure():
    r = scan(str(Path(__file__).parents[1] / "fixtures" / "vllm" / "vllm-025.log"))
    run = r.runs[0]
    assert next(f for f in run.findings if f.code == "UNSUPPORTED_ON_ARCH").kernel == "_w8a8_triton_block_scaled_mm"
    assert run.start_failure is not None and run.start_failure.failing_kernel == "_w8a8_triton_block_scaled_mm"


_ERR = "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")\n"


@pytest.mark.parametrize("log", [
    # a traceback's quoted `def` line (no CompilationError header right above it) is no kernel
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.12/site-packages/foo/wrap.py", line 12, in wrapper\n'
    "    def wrapper(*args):\n" + _ERR,
    # an error deep in the kernel: the excerpt shows body lines, no def line (lmdeploy-159's shape)
    "triton.compiler.errors.CompilationError: at 124:14:\n"
    "        k = tl.load(k_ptrs + b_offset * stride_kp)\n"
    "              ^\n" + _ERR,
], ids=["ordinary-def-line", "excerpt-not-at-def"])
def test_a_def_line_names_a_kernel_only_right_after_the_header(tmp_path, log):
    f = next(f for f in scan(_write(tmp_path, log)).runs[0].findings if f.code == "UNSUPPORTED_ON_ARCH")
    assert f.kernel is None


# 3. --gpu: the better rungs the named GPU refuses keep their reason
def test_gpu_keeps_the_refused_rungs_reasons():
    from logscan.formats.text import render as render_text

    r = scan(str(A_LOG), gpu="H200")
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
    s = scan(str(A_LOG), gpu="B200").runs[0].selections[0]
    assert s.ladder.fell == 2 and not s.ladder.refused_on_gpu


# 4. an issue template's GPU bullet is read through markdown emphasis and code spans
def test_markdown_bold_gpu_bullet_is_read():
    r = scan(str(A_LOG))
    extra = r.runs[0].config.extra
    assert extra.get("gpu_one_of") == "NVIDIA H200, H100" and extra.get("gpu_one_of_cc") == "90"
    # judged on sm90: the sm10x rungs are refused by it, not UNEXPLAINED
    s = r.runs[0].selections[0]
    assert not s.ladder.undecided and set(s.ladder.refused_on_gpu) == {"FLASHINFER_TRTLLM", "FLASHINFER_CUTLASS"}


def test_gpu_in_a_does_not_happen_sentence_is_not_read(tmp_path):
    log = ("- GPU: **NVIDIA B200** (does not happen on H100)\n"
           + (A_LOG).read_text().splitlines()[3] + "\n")
    r = scan(_write(tmp_path, log))
    assert "gpu_one_of" not in r.runs[0].config.extra and r.runs[0].config.gpu is None


def test_single_bold_gpu_is_read(tmp_path):
    log = ("- GPU: **NVIDIA H200**\n" + (A_LOG).read_text().splitlines()[3] + "\n")
    assert "H200" in (scan(_write(tmp_path, log)).runs[0].config.gpu or "")


# 5. CUTLASS's per-tactic shared-memory refusal (autotuner skips it) is no error; Triton's raised one is
def test_cutlass_tactic_smem_refusal_is_no_error():
    r = scan(str(FIX / "trtllm" / "trtllm-215.log"))
    assert not r.runs[0].findings


def test_triton_out_of_resources_raised_is_unsupported_on_arch(tmp_path):
    log = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, "
           "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n")
    assert [f.code for f in scan(_write(tmp_path, log)).runs[0].findings] == ["UNSUPPORTED_ON_ARCH"]


# 2. SGLang's FP8 MoE ladder (patterns/matrix/sglang-0.5.23-fp8-moe.toml, the 0.5.23 wheel's
#    Fp8MoEMethod.create_moe_runner): ladder / explain / matrix have an SGLang row
def _ladder(*args: str) -> list[str]:
    import json

    from click.testing import CliRunner

    from logscan.cli import cli

    r = CliRunner().invoke(cli, ["ladder", "sglang", "FP8-MOE", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return [x["kernel"] for x in json.loads(r.output)["rungs"] if x["predicted"]]


def test_sglang_fp8_moe_auto_is_triton():
    assert _ladder("--gpu", "H100") == ["triton"]


def test_sglang_fp8_moe_deepgemm_needs_a_deepep_style_a2a():
    assert _ladder("--gpu", "H100", "--with", "deep_gemm", "--env", "--moe-a2a-backend=deepep") == ["deep_gemm"]
    # counter-example: deep_gemm installed but the standard a2a backend: auto stays on Triton
    assert _ladder("--gpu", "H100", "--with", "deep_gemm") == ["triton"]


def test_sglang_fp8_moe_flashinfer_cutlass_has_no_fp8_path():
    assert _ladder("--gpu", "B200", "--with", "flashinfer", "--env", "--moe-runner-backend=flashinfer_cutlass") == ["triton"]
    assert _ladder("--gpu", "B200", "--with", "flashinfer", "--env", "--moe-runner-backend=flashinfer_trtllm") == ["flashinfer_trtllm"]


def test_sglang_fp8_moe_in_matrix_and_explain():
    from click.testing import CliRunner

    from logscan.cli import cli

    m = CliRunner().invoke(cli, ["matrix", "FP8-MOE", "--gpu", "H100"])
    assert m.exit_code == 0 and "sglang 0.5.23  triton" in m.output
    e = CliRunner().invoke(cli, ["explain", "fused_moe_kernel", "--engine", "sglang"])
    assert e.exit_code == 0 and "Fp8MoEMethod.create_moe_runner" in e.output
