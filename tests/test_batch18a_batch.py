"""Corpus batch 18a (docs/corpus.md, "Batch 18a"): vLLM and SGLang logs (fixtures/vllm/vllm-380..391,
fixtures/sglang/sglang-316..320). First sight 0.875 (kernels 2/2, findings 1 of 2, precision 1.000): vllm-382's
arch refusal was missed.

Mechanism (raised 'No compiled' refusals): vLLM's C++ entry points refuse a device with 'No compiled <op> ...' in
three shapes (csrc/quantization/.../scaled_mm_entry.cu, nvfp4_scaled_mm_entry.cu): 'No compiled <op> for a compute
capability less than CUDA device capability: N', 'No compiled <op> for CUDA device capability: N' and 'No compiled
<op>: no <kernel> kernel for CUDA device capability: N' (the MoE data-prep ops get_cutlass_moe_mm_data /
get_cutlass_pplx_moe_mm_data), plus 'No compiled nvfp4 mm kernel for SM <n>'. Rule
vllm.grammar.raised-arch-refusal knew only the first: it now takes the op's trailing words, the ': no <kernel>
kernel' clause and a 'CUDA / GPU' device or an 'SM <n>' object. Still only when raised (an exception type before it):
the same words in prose stay no finding.
"""
from __future__ import annotations

from tests.conftest import one_run, runs_of, write_log

PREFIX = "(EngineCore_DP0 pid=79) ERROR 09-15 21:45:00 [core.py:719] "


def _codes(run):
    return [f["code"] for f in run["findings"]]


def test_moe_data_op_refusing_capability_120_is_an_arch_finding():
    run = one_run("vllm-382")
    assert run["start_failure"] is not None
    assert _codes(run) == ["UNSUPPORTED_ON_ARCH"]


def test_the_other_no_compiled_shapes_are_arch_findings(tmp_path):
    for n, line in enumerate([
        "NotImplementedError: No compiled cutlass_scaled_mm for CUDA device capability: 120",
        "RuntimeError: No compiled nvfp4 mm kernel for SM 90. Recompile with CUDA >= 12.8 and CC >= 100.",
        "NotImplementedError: No compiled get_cutlass_pplx_moe_mm_data: no cutlass_scaled_mm kernel for CUDA device capability: 89. Required capability: 90 or 100",
    ]):
        (run,) = runs_of(write_log(tmp_path, PREFIX + line + "\n", name=f"nc{n}.log"))
        assert "UNSUPPORTED_ON_ARCH" in _codes(run), line


def test_no_compiled_without_a_device_or_not_raised_is_no_finding(tmp_path):
    for n, line in enumerate([
        # not raised: the words quoted in a warning line
        "No compiled get_cutlass_moe_mm_data: no cutlass_scaled_mm kernel for CUDA device capability: 120",
        # raised, but no device named: a JIT cache note
        "RuntimeError: No compiled kernels for this shape in the cache, compiling now",
    ]):
        runs = runs_of(write_log(tmp_path, PREFIX + line + "\n", name=f"cn{n}.log"))
        assert all("UNSUPPORTED_ON_ARCH" not in _codes(r) for r in runs), line


def test_precision_windows_of_the_batch_stay_without_findings():
    # tracebacks through Marlin FP8 / FP4, FlashInfer CUTLASS FP4, CUTLASS MoE and DeepGEMM frames: no selection,
    # no finding (the DeepGEMM 'Unknown recipe' assertion's sm_120 cause is only in the thread's prose)
    for name in ("vllm-383", "vllm-384", "vllm-385", "vllm-386", "vllm-387", "vllm-391", "sglang-316", "sglang-318"):
        run = one_run(name)
        assert run["findings"] == [] and run["selections"] == [], name


def test_engines_from_paths_wrappers_and_quotes():
    assert one_run("sglang-316")["engine"]["name"] == "sglang"      # bare traceback, paths only
    assert one_run("vllm-387")["engine"]["name"] == "vllm"          # '...'-elided vllm frames
    assert one_run("sglang-317")["engine"]["name"] == "sglang"      # '> '-quoted CI lines
    run = one_run("vllm-388")                                       # journalctl + router prefix
    assert run["engine"]["name"] == "vllm"
    assert run["engine"]["version"] == "0.23.1.dev0+rocm7.15.0a20260710.g0fc695fc6.d20260710"


def test_banner_version_build_tag_names_the_platform(tmp_path):
    # vllm-388: the ASCII banner's 'version X+rocm7.15...' (0.23 ->) is read like the version line's build tag
    assert one_run("vllm-388")["engine"]["platform"] == "ROCM"
    line = ("(APIServer pid=1) INFO 08-04 16:26:11 [api_utils.py:339]  \u2584\u2584 \u2584\u2588 \u2588     \u2588     "
            "\u2588 \u2580\u2584\u2580 \u2588  version 0.23.1.dev0+g0fc695fc6.d20260710.cu130\n")
    (run,) = runs_of(write_log(tmp_path, line))
    assert run["engine"]["platform"] != "ROCM"
