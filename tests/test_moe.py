"""Fused-MoE backend choice per era: the registry reached, the rung, the cost class, the finding.

Each line is a vLLM message template (shared/reference/vllm/templates.jsonl) with its
placeholders filled, after a version line of a release that prints it. Marlin MoE is
weight-only for FP8 / NVFP4 / W4A4 MXFP4 / MXFP8 experts but native for WNA16 (GPTQ/AWQ) and
gpt-oss MXFP4, which are W4A16 by design: the registry the line is placed on decides.
"""
from __future__ import annotations

import pytest

from logscan.pipeline import Pipeline


def scan_lines(version: str, *messages: str):
    """One run from a version line plus ``messages`` behind the bracketed prefix; returns the Run."""
    pipe = Pipeline(source="moe")
    lines = [f"INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version {version}"]
    lines += [f"INFO 01-01 00:00:01 [x.py:1] {m}" for m in messages]
    runs = []
    for i, text in enumerate(lines, 1):
        runs += [r for _, r in pipe.feed(i, text) if r is not None]
    runs += [r for _, r in pipe.close() if r is not None]
    assert len(runs) == 1
    return runs[0]


# (release, line, family, kernel, registry prefix or None, rung or None, cost, finding or None)
CASES = [
    # 0.18.1+ oracles: "Using X <Format> MoE backend out of potential backends": the rung counts on the
    # logged list, the process's own candidates (logged_ladder.py); cost class and finding from the ladder
    ("0.33.0", "Using 'MARLIN' NvFp4 MoE backend out of potential backends: ['FLASHINFER_TRTLLM', 'MARLIN', 'EMULATION'].",
     "MoE (NvFp4)", "MARLIN", "moe:nvfp4:", 2, "weight_only", "WEIGHT_ONLY_SUBSTITUTION"),
    ("0.33.0", "Using 'EMULATION' NvFp4 MoE backend out of potential backends: ['EMULATION'].",
     "MoE (NvFp4)", "EMULATION", "moe:nvfp4:", 1, "emulated", "EMULATION"),
    ("0.33.0", "Using MARLIN Fp8 MoE backend out of potential backends: ['TRITON', 'MARLIN'].",
     "MoE (Fp8)", "MARLIN", "moe:fp8:", 2, "weight_only", "WEIGHT_ONLY_SUBSTITUTION"),
    ("0.33.0", "Using DEEPGEMM Fp8 MoE backend out of potential backends: ['DEEPGEMM', 'TRITON'].",
     "MoE (Fp8)", "DEEPGEMM", "moe:fp8:", 1, "native", None),
    ("0.33.0", "Using VLLM_CUTLASS Fp8 MoE backend out of potential backends: ['VLLM_CUTLASS'].",
     "MoE (Fp8)", "VLLM_CUTLASS", "moe:fp8:", 1, "native", None),
    ("0.33.0", "Using TRITON Fp8 MoE backend out of potential backends: ['DEEPGEMM', 'TRITON'].",
     "MoE (Fp8)", "TRITON", "moe:fp8:", 2, "portable", None),
    # gpt-oss MXFP4 is W4A16 by design: Marlin is its native path
    ("0.33.0", "Using 'MARLIN' Mxfp4 MoE backend.", "MoE (Mxfp4)", "MARLIN",
     "moe:mxfp4:_get_priority_backends_for_gpt_oss", 11, "native", None),
    ("0.33.0", "Using 'FLASHINFER_TRTLLM_MXFP4_MXFP8' Mxfp4 MoE backend.", "MoE (Mxfp4)",
     "FLASHINFER_TRTLLM_MXFP4_MXFP8", "moe:mxfp4:_get_priority_backends_for_gpt_oss", 2, "native", None),
    # a W4A4 MXFP4 checkpoint (compressed-tensors) on Marlin experts lost its FP4 activations
    ("0.33.0", "Using MarlinExperts for MXFP4 MoE", "MoE (MXFP4)", "MarlinExperts",
     "moe:mxfp4:_get_priority_backends._AVAILABLE_BACKENDS", 3, "weight_only", "WEIGHT_ONLY_SUBSTITUTION"),
    ("0.33.0", "Using 'MARLIN' WNA16 MoE backend.", "MoE (WNA16)", "MARLIN", "moe:int_wna16:", 3, "native", None),
    ("0.33.0", "Using 'EMULATION' WNA16 MoE backend.", "MoE (WNA16)", "EMULATION", "moe:int_wna16:", 7,
     "dequant_at_load", "DEQUANT_AT_LOAD"),
    ("0.33.0", "Using 'MARLIN' MxFp8 MoE backend.", "MoE (MxFp8)", "MARLIN", "moe:mxfp8:", 3, "weight_only",
     "WEIGHT_ONLY_SUBSTITUTION"),
    ("0.33.0", "Using 'EMULATION' MxFp8 MoE backend.", "MoE (MxFp8)", "EMULATION", "moe:mxfp8:", 8,
     "dequant_at_load", "DEQUANT_AT_LOAD"),
    ("0.22.1", "Using Nvfp4QuantizationEmulationTritonExperts MoE backend. Weights are dequantized to BF16 on the fly",
     "MoE", "Nvfp4QuantizationEmulationTritonExperts", "moe:nvfp4:", 7, "emulated", "EMULATION"),
    # 0.14.1 oracle if-chains
    ("0.14.1", "Using MARLIN backend for NvFp4 MoE", "MoE (NvFp4)", "MARLIN", "ifchain:nvfp4:", 2,
     "weight_only", "WEIGHT_ONLY_SUBSTITUTION"),
    ("0.14.1", "Using VLLM_CUTLASS backend for NvFp4 MoE", "MoE (NvFp4)", "VLLM_CUTLASS", "ifchain:nvfp4:", 1,
     "native", None),
    # 0.11.2 quantization/fp8.py if-chain: CUTLASS grouped GEMM, DeepGEMM, FlashInfer, Marlin
    ("0.11.2", "Using Marlin backend for FP8 MoE", "MoE (FP8)", "Marlin", "ifchain:fp8:", 3, "weight_only",
     "WEIGHT_ONLY_SUBSTITUTION"),
    ("0.11.2", "Using DeepGEMM backend for FP8 MoE", "MoE (FP8)", "DeepGEMM", "ifchain:fp8:", 4, "native", None),
    ("0.11.2", "Using FlashInfer FP8 MoE CUTLASS backend for SM90/SM100", "MoE (FP8)",
     "FlashInfer FP8 MoE CUTLASS", "ifchain:fp8:", 2, "native", None),
    ("0.11.2", "Using Cutlass BlockScaled GroupedGemm backend for FP8 MoE", "MoE (FP8)",
     "Cutlass BlockScaled GroupedGemm", "ifchain:fp8:", 5, "native", None),
    # 0.10.2 gpt-oss mxfp4.py if-chain (Hopper: FlashInfer BF16; Blackwell: MXFP8 CUTLASS)
    ("0.10.2", "Using FlashInfer MXFP4 MXFP8 CUTLASS backend for SM100", "MoE (MXFP4, gpt-oss)",
     "FlashInfer MXFP4 MXFP8 CUTLASS", "ifchain:mxfp4:", 2, "native", None),
    ("0.10.2", "Using Marlin backend", "MoE (MXFP4, gpt-oss)", "Marlin", "ifchain:mxfp4:", 5, "native", None),
    ("0.10.2", "Using Triton backend", "MoE (MXFP4, gpt-oss)", "Triton", "ifchain:mxfp4:", 6, "portable", None),
    ("0.10.2", "Using FlashInfer CUTLASS kernels for ModelOptNvFp4FusedMoE.", "MoE", "FlashInfer CUTLASS",
     "ifchain:flashinfer_utils:", 1, "native", None),
    # no MoE registry in these releases: the cost class comes from the kernel name (said so)
    ("0.10.2", "Using DeepGemm kernels for Fp8MoEMethod.", "MoE", "DeepGemm", None, None, "native", None),
    ("0.10.2", "Falling back to Marlin FP4 MoE kernel.", "MoE (NvFp4)", "MARLIN", None, None, "weight_only",
     "WEIGHT_ONLY_SUBSTITUTION"),
    ("0.10.2", "Layer 'model.layers.3.mlp.experts' is not supported by GPTQMoeMarlin. Falling back to Moe WNA16 kernels.",
     "MoE (WNA16)", "Moe WNA16", None, None, "native", "UNTUNED_SHAPE"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}:{c[3]}:{c[1][:30]}" for c in CASES])
def test_moe_backend_rung_cost_and_finding(case):
    release, line, family, kernel, registry, rung, cost, finding = case
    run = scan_lines(release, line)
    sel = [s for s in run.selections if s.kernel == kernel]
    assert sel, f"no selection of {kernel}: {[(s.family, s.kernel) for s in run.selections]}"
    s = sel[0]
    assert s.family == family
    assert s.cost_class.value == cost
    if registry is None:
        assert s.ladder is None and s.reasoning  # the name decided, and the report says so
    else:
        assert s.ladder.registry.startswith(registry), s.ladder.registry
        assert s.ladder.rung == rung
        assert s.ladder.ladder_version == release
    codes = {f.code for f in run.findings}
    assert codes == ({finding} if finding else set())


def test_same_marlin_backend_differs_by_scheme():
    """One run, two MoE schemes: Marlin is native for gpt-oss MXFP4, weight-only for NVFP4."""
    run = scan_lines("0.33.0", "Using 'MARLIN' Mxfp4 MoE backend.",
                     "Using 'MARLIN' NvFp4 MoE backend out of potential backends: ['MARLIN'].")
    by_family = {s.family: s.cost_class.value for s in run.selections}
    assert by_family == {"MoE (Mxfp4)": "native", "MoE (NvFp4)": "weight_only"}


def test_release_between_shipped_ladders_uses_the_next_one_when_the_older_lacks_the_registry():
    """vLLM 0.10.1 logs the gpt-oss if-chain, which 0.9.2 (the older detailed snapshot) lacks.

    0.10.1.1's own linear / MoE lists are shipped (the history), so its ladder is 0.10.1.1;
    if-chains are not derived, so the next snapshot that holds one is used, and said so."""
    run = scan_lines("0.10.1.1", "Using Marlin backend")
    s = run.selections[0]
    assert run.engine.ladder_version == "0.10.1.1"
    assert (s.ladder.ladder_version, s.ladder.registry) == ("0.10.2", "ifchain:mxfp4:get_mxfp4_backend")
    assert s.reasoning.startswith("placed on the next shipped ladder, vLLM 0.10.2")


@pytest.mark.parametrize("quantization,registry,cost", [
    ("mxfp4", "moe:mxfp4:_get_priority_backends_for_gpt_oss._AVAILABLE_BACKENDS", "native"),
    ("compressed-tensors", "moe:mxfp4:_get_priority_backends._AVAILABLE_BACKENDS", "weight_only"),
    (None, "moe:mxfp4:_get_priority_backends_for_gpt_oss._AVAILABLE_BACKENDS", "native"),
])
def test_one_mxfp4_moe_line_read_by_the_quantization_method(quantization, registry, cost):
    """0.22.1+ prints "Using 'MARLIN' Mxfp4 MoE backend." for gpt-oss (W4A16 by design) and for
    W4A4 MXFP4 checkpoints alike; the config's quantization method tells which selector ran."""
    lines = []
    if quantization:
        lines.append(f"Initializing a V1 LLM engine (v0.33.0) with config: model='m', quantization={quantization}, "
                     "kv_cache_dtype=auto")
    run = scan_lines("0.33.0", *lines, "Using 'MARLIN' Mxfp4 MoE backend.")
    s = run.selections[0]
    assert (s.ladder.registry, s.cost_class.value) == (registry, cost)
