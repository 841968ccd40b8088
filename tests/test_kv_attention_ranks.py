"""Attention backends, KV-cache dtype asked vs in effect, ranks that diverge, platforms, and
the degradations inferred from a ladder rung (FP8 per-tensor, MXFP8 dequant at load).

Every message below is a vLLM template (shared/reference/vllm/templates.jsonl, or the seed
record for the NVFP4 KV-cache gate) with its placeholders filled, behind the line prefix of a
release that prints it.
"""
from __future__ import annotations

import json

from logscan.formats import json as json_format
from logscan.models import Report
from logscan.pipeline import Pipeline

PFX = "INFO 01-01 00:00:00 [x.py:1] "


def scan(*lines: str, version: str | None = "0.33.0"):
    """One run from raw lines (a version line first when ``version``); returns (Run, Report)."""
    pipe = Pipeline(source="t")
    raw = ([f"{PFX}vLLM API server version {version}"] if version else []) + list(lines)
    runs, events = [], []
    for i, text in enumerate(raw, 1):
        for ev, run in pipe.feed(i, text):
            if ev is not None:
                events.append(ev)
            if run is not None:
                runs.append(run)
    for ev, run in pipe.close():
        if run is not None:
            runs.append(run)
    assert len(runs) == 1, runs
    return runs[0], Report(logscan_version="t", runs=runs, events=events)


def codes(run) -> set[str]:
    return {f.code for f in run.findings}


def _kernel_objects(node, out):
    if isinstance(node, dict):
        if isinstance(node.get("kernel"), str):
            out.append(node["kernel"])
        for v in node.values():
            _kernel_objects(v, out)
    elif isinstance(node, list):
        for v in node:
            _kernel_objects(v, out)
    return out


# -- attention ------------------------------------------------------------------------------
def test_attention_backend_is_its_own_list_never_a_kernel_object():
    run, report = scan(PFX + "Using FLASH_ATTN attention backend out of potential backends: "
                             "['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION'].")
    assert [a.backend for a in run.attention] == ["FLASH_ATTN"]
    assert run.attention[0].candidates == ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"]
    assert run.selections == []
    doc = json.loads(json_format.render(report))
    assert "FLASH_ATTN" not in _kernel_objects(doc, [])
    assert doc["runs"][0]["attention"][0]["backend"] == "FLASH_ATTN"


def test_attention_ranks_merge():
    run, _ = scan("(Worker_TP0 pid=1) " + PFX + "Using Flash Attention backend on V1 engine.",
                  "(Worker_TP1 pid=2) " + PFX + "Using Flash Attention backend on V1 engine.", version="0.10.2")
    assert len(run.attention) == 1 and run.attention[0].ranks == ["TP0", "TP1"]


# -- KV cache -------------------------------------------------------------------------------
CFG = ("Initializing a V1 LLM engine (v0.10.2) with config: model='m', dtype=torch.bfloat16, "
       "quantization=None, kv_cache_dtype={kv}, tensor_parallel_size=1")


def test_kv_cast_by_the_cpu_backend_is_a_fallback():
    run, _ = scan(PFX + CFG.format(kv="fp8_e4m3"),
                  "WARNING 01-01 00:00:02 [cpu.py:1] CPU backend doesn't support fp8_e4m3 KV cache type, cast to fp8_e5m2.",
                  version=None)
    assert (run.kv_cache.requested, run.kv_cache.in_effect) == ("fp8_e4m3", "fp8_e5m2")
    assert codes(run) == {"KV_CACHE_DTYPE_FALLBACK"}


def test_kv_same_dtype_spelled_two_ways_is_no_finding():
    run, _ = scan(PFX + CFG.format(kv="fp8"),
                  "WARNING 01-01 00:00:02 [kv_cache.py:1] Using KV cache scaling factor 1.0 for fp8_e4m3. "
                  "If this is unintended, verify that k/v_scale scaling factors are properly set in the checkpoint.",
                  version=None)
    assert (run.kv_cache.requested, run.kv_cache.in_effect) == ("fp8", "fp8_e4m3")
    assert codes(run) == set()


def test_kv_dtype_in_effect_differs_from_config():
    run, _ = scan(PFX + CFG.format(kv="fp8_e5m2"),
                  PFX + "Using fp8_e4m3 data type to store kv cache. It reduces the GPU memory footprint and boosts "
                        "the performance. Meanwhile, it may cause accuracy drop without a proper scaling factor.",
                  version=None)
    f = [f for f in run.findings if f.code == "KV_CACHE_DTYPE_FALLBACK"]
    assert f and "requested kv_cache_dtype=fp8_e5m2" in f[0].reasons[0]


def test_kv_auto_is_never_a_fallback():
    run, _ = scan(PFX + CFG.format(kv="auto"), version=None)
    assert run.kv_cache.requested == "auto" and codes(run) == set()


def test_nvfp4_kv_cache_needs_the_sm100_path():
    run, _ = scan("ERROR 01-01 00:00:03 [core.py:1] ValueError: --kv-cache-dtype nvfp4 requires the SM100 "
                  "trtllm-gen FlashInfer path.")
    assert codes(run) == {"UNSUPPORTED_ON_ARCH"}
    assert run.kv_cache.requested == "nvfp4"


def test_kv_cache_refused_by_backend_and_by_capability():
    run, _ = scan(PFX + "FlexAttention does not support quantized kv-cache. Yet")
    assert codes(run) == {"KV_CACHE_UNSUPPORTED"}
    run, _ = scan("ERROR 01-01 00:00:03 [core.py:1] ValueError: FP8 KV cache is not supported by the Triton "
                  "attention backend on NVIDIA GeForce RTX 3090 (compute capability 8.6); native FP8 (fp8e4nv) "
                  "requires SM89+. Re-run with --kv-cache-dtype fp8_e5m2.")
    assert codes(run) == {"UNSUPPORTED_ON_ARCH"}
    assert run.config.compute_capability == "8.6"


# -- ranks ----------------------------------------------------------------------------------
def test_ranks_that_chose_different_kernels_diverge():
    run, _ = scan("(Worker_TP0 pid=11) " + PFX + "Using MarlinLinearKernel for CompressedTensorsWNA16",
                  "(Worker_TP1 pid=12) " + PFX + "Using ExllamaLinearKernel for CompressedTensorsWNA16",
                  version="0.10.2")
    div = [f for f in run.findings if f.code == "RANK_DIVERGENCE"]
    assert div, run.findings
    assert div[0].reasons == ["TP0: MarlinLinearKernel (line 2)", "TP1: ExllamaLinearKernel (line 3)"]


def test_ranks_that_print_the_same_two_kernels_do_not_diverge():
    lines = []
    for tp in ("TP0", "TP1"):
        for k in ("MarlinLinearKernel", "ExllamaLinearKernel"):
            lines.append(f"(Worker_{tp} pid=1) " + PFX + f"Using {k} for CompressedTensorsWNA16")
    run, _ = scan(*lines, version="0.10.2")
    assert "RANK_DIVERGENCE" not in codes(run)
    assert all(s.ranks == ["TP0", "TP1"] for s in run.selections)


# -- platforms ------------------------------------------------------------------------------
def test_rocm_from_the_platform_line_gives_rocm_rungs():
    run, _ = scan(PFX + "Automatically detected platform rocm.",
                  PFX + "Selected TritonInt8ScaledMMLinearKernel for CompressedTensorsW8A8Int8")
    s = run.selections[0]
    assert (s.ladder.platform, s.ladder.rung, s.ladder.rungs) == ("ROCM", 2, 2)
    assert run.engine.platform_source == "logged"


def test_nvfp4_on_rocm_is_emulation_only():
    run, _ = scan(PFX + "Automatically detected platform rocm.",
                  PFX + "Using EmulationNvFp4LinearKernel for NVFP4 GEMM")
    s = run.selections[0]
    assert (s.ladder.platform, s.ladder.rung, s.ladder.rungs, s.cost_class.value) == ("ROCM", 1, 1, "emulated")
    assert "EMULATION" in codes(run)


def test_platform_inferred_from_platform_only_kernel_names():
    for line, plat in [("Selected AiterPerTokenFp8ScaledMMLinearKernel for CompressedTensorsW8A8Fp8", "ROCM"),
                       ("Selected XPUW8A8FP8LinearKernel for Fp8LinearMethod", "XPU"),
                       ("Selected CPUInt8ScaledMMLinearKernel for CompressedTensorsW8A8Int8", "CPU")]:
        run, _ = scan(PFX + line)
        assert run.engine.platform == plat and run.engine.platform_source == "inferred", line
        assert run.engine.platform_evidence and f"only the {plat} ones hold" in run.engine.platform_evidence
        assert run.selections[0].ladder.platform == plat


def test_aiter_untuned_shape():
    run, _ = scan("WARNING 01-01 00:00:02 [aiter.py:1] AITER ASM FP4 GEMM requires weight_scale dims divisible "
                  "by (32, 8), but this layer has weight_scale shape torch.Size([2880, 90]). Falling back to the "
                  "AITER Triton FP4 GEMM for this layer.")
    assert codes(run) == {"UNTUNED_SHAPE"}
    assert run.engine.platform == "ROCM"
    assert run.findings[0].kernel == "AITER Triton FP4 GEMM"


# -- degradations that only the rung tells --------------------------------------------------
def test_fp8_per_tensor_fallback_is_inferred_from_the_rung():
    cfg = PFX + CFG.replace("quantization=None", "quantization=fp8").format(kv="auto")
    run, _ = scan(cfg, PFX + "Selected PerTensorTorchFP8ScaledMMLinearKernel for Fp8LinearMethod")
    f = [f for f in run.findings if f.code == "FP8_PER_TENSOR_FALLBACK"]
    assert f and f[0].inferred and f[0].kernel == "PerTensorTorchFP8ScaledMMLinearKernel"
    assert "asks for dynamic per-token FP8 activation scales" in f[0].reasons[0]
    run, _ = scan(cfg, PFX + "Selected ChannelWiseTorchFP8ScaledMMLinearKernel for Fp8LinearMethod")
    assert "FP8_PER_TENSOR_FALLBACK" not in codes(run)


def test_mxfp8_emulation_dequantizes_at_load_from_0_26():
    run, _ = scan(PFX + "Using EmulationMxfp8LinearKernel for MXFP8 GEMM", version="0.26.0")
    s = run.selections[0]
    assert (s.cost_class.value, s.ladder.ladder_version) == ("dequant_at_load", "0.26.0")
    f = [f for f in run.findings if f.code == "DEQUANT_AT_LOAD"]
    assert f and f[0].inferred
    assert f[0].reasons[0].startswith("inferred: EmulationMxfp8LinearKernel is rung")
    assert any("VLLM_MXFP8_EMULATION_DEQUANT_AT_LOAD (default True)" in r for r in f[0].reasons)
    run, _ = scan(PFX + "Using EmulationMxfp8LinearKernel for MXFP8 GEMM", version="0.22.1")
    assert run.selections[0].cost_class.value == "emulated"
    assert codes(run) == {"EMULATION"}


def test_untagged_or_process_only_lines_never_diverge():
    """A paste mixing an untagged line with a tagged one says nothing about ranks."""
    run, _ = scan(PFX + "Using MarlinLinearKernel for CompressedTensorsWNA16",
                  "(EngineCore_DP0 pid=3) " + PFX + "Using ExllamaLinearKernel for CompressedTensorsWNA16",
                  version="0.10.2")
    assert len(run.selections) == 2
    assert "RANK_DIVERGENCE" not in codes(run)


def test_old_fixed_fp8_store_message_matches_any_fp8_request():
    """<= 0.18.1 prints 'Using fp8 data type to store kv cache' whatever FP8 variant was asked."""
    run, _ = scan(PFX + CFG.format(kv="fp8_e5m2"),
                  PFX + "Using fp8 data type to store kv cache. It reduces the GPU memory footprint and boosts "
                        "the performance. Meanwhile, it may cause accuracy drop without a proper scaling factor",
                  version=None)
    assert run.kv_cache.in_effect == "fp8"
    assert "KV_CACHE_DTYPE_FALLBACK" not in codes(run)
