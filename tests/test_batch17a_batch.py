"""Corpus batch 17a (docs/corpus.md, "Batch 17a"): vLLM and SGLang logs (fixtures/vllm/vllm-376..379,
fixtures/sglang/sglang-314..315). First sight 1.000 (kernels 1/1, findings 2/2, precision 1.000), but one fault the
score does not see: vllm-376's run was named TensorRT-LLM and its NVFP4 Marlin selection placed on TensorRT-LLM's
ladder.

Mechanism 1 (imports): vLLM and SGLang import FlashInfer, which builds TensorRT-LLM's CUTLASS MoE / FP4 GEMM kernels
and their logger into its JIT modules (flashinfer csrc/nv_internal/tensorrt_llm/): its autotuner prints
'[TensorRT-LLM][ERROR] Failed to initialize cutlass TMA WS grouped gemm' inside the serving engine's process (NVIDIA
forum 365119, GB10). ``[pack] imports`` of vLLM and SGLang name trtllm, so such a tag line is no hint against a
following vLLM line (analysis/analyzer.py ``_engine_sure``), while a TensorRT-LLM log keeps its engine.

Mechanism 2 (enum class names its registry): 'Using NvFp4LinearBackend.MARLIN for NVFP4 GEMM' names the member of
NvFp4LinearBackend; a bare 'MARLIN' is a rung of the FP8, NVFP4, MXFP4 and WNA16 lists (linear and MoE), so rule
vllm.grammar.enum-backend takes the registry hint from the enum class (format, Linear / MoE). The member was
placed on the FP8 linear list (vllm-376) and vllm-302's VLLM_CUTLASS on the FP8 MoE list.
"""
from __future__ import annotations

from tests.conftest import one_run, runs_of, write_log


def _placed(run, kernel):
    (sel,) = [s for s in run["selections"] if s["kernel"] == kernel]
    return sel["ladder"]


def test_flashinfer_trtllm_tag_line_does_not_name_the_run():
    run = one_run("vllm-376")
    assert run["engine"]["name"] != "trtllm"
    ladder = _placed(run, "NvFp4LinearBackend.MARLIN")
    assert ladder["registry"] == "_POSSIBLE_NVFP4_KERNELS"
    assert (ladder["rung"], ladder["rungs"]) == (6, 14)


def test_nvfp4_linear_enum_member_is_never_placed_on_a_moe_or_fp8_list():
    run = one_run("vllm-302")
    ladder = _placed(run, "NvFp4LinearBackend.VLLM_CUTLASS")
    assert ladder is None or ladder["role"].startswith("nvfp4 linear")


def test_a_tensorrt_llm_log_with_the_tag_lines_stays_tensorrt_llm(tmp_path):
    # the tag lines with TensorRT-LLM's own prefixed lines after them: nothing of vLLM's is said
    log = write_log(tmp_path, "[TensorRT-LLM][ERROR] Failed to initialize cutlass TMA WS grouped gemm\n"
                              "[TensorRT-LLM][INFO] Loaded engine size: 4096 MiB\n")
    runs = runs_of(log)
    assert runs and all(r["engine"]["name"] == "trtllm" for r in runs)
