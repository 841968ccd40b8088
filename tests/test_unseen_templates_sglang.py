"""SGLang rewordings the reference never saw are still read by the sgcov37 shapes.

Each message below is a plausible next-release wording (other tense, other word order, another
format or kernel name of SGLang's vocabulary) of a 0.5.10 -> 0.5.23 template of
``shared/reference/sglang/templates.jsonl`` that branch sgcov37 taught the grammar to read
(``patterns/sglang/rules/85-grammar.toml``, docs/grammar.md 'sgcov37'). None of them is a rule's
own example. Each must give one event of the expected rule and kind, with the parts named, and no
finding: none of these sentences states a degradation. The near-misses at the end must NOT be
taken by the shape they resemble.
"""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs

P = "[2026-11-29 10:00:00 TP0] "

#: (message, expected rule, expected event kind, a captured part that must be there)
UNSEEN = [
    # how the KV cache's FP8 scales were obtained (load_model_utils.load_kv_cache_scales)
    ("Loaded KV cache scales from /models/qwen3-fp8/kv_cache_scales.json", "sglang.grammar.kv-scaling-factors", "kv_cache", "source"),
    ("Loading KV cache scaling factors from /ckpt/scales.json", "sglang.grammar.kv-scaling-factors", "kv_cache", "source"),
    ("Using FP8 KV cache but no scaling factors were provided. Defaulting to scaling factors of 1.0.",
     "sglang.grammar.kv-scaling-factors", "kv_cache", "value"),
    ("No KV cache scaling factors found; defaulting to scaling factors = 1.0.", "sglang.grammar.kv-scaling-factors", "kv_cache", "value"),
    ("Defaulting to KV cache scaling factors of 1.0 for all layers in TP rank 3 because the scales file is missing",
     "sglang.grammar.kv-scaling-factors", "kv_cache", "why"),
    ("Using FP8 KV cache but no scaling factors provided.", "sglang.grammar.kv-scaling-factors", "kv_cache", "missing"),
    # the engine quantizes the weights as it loads them (QuantizedRLModelLoader, get_model_loader)
    ("[QuantizedRL] Initial load with MXFP8 quantization", "sglang.grammar.loads-with-quantization", "quant_method", "method"),
    ("[QuantizedRL] Reloading weights with FP8 quantization", "sglang.grammar.loads-with-quantization", "quant_method", "method"),
    ("Model loaded with native SGLang FP8 quantization.", "sglang.grammar.loads-with-quantization", "quant_method", "native"),
    ("Loading the model with w8a8_fp8 quantization", "sglang.grammar.loads-with-quantization", "quant_method", "method"),
    ("Updating the weights with FP8 online quantization", "sglang.grammar.loads-with-quantization", "quant_method", "method"),
    ("The model is loaded with native sglang MXFP4 quantization; same path for training and inference.",
     "sglang.grammar.loads-with-quantization", "quant_method", "method"),
    # a loader that could quantize finds the checkpoint already quantized (ModelOpt / INC loaders)
    ("Checkpoint is already quantized; skipping quantization.", "sglang.grammar.already-quantized", "quant_method", "action"),
    ("Model already quantized (modelopt_fp4), loading directly", "sglang.grammar.already-quantized", "quant_method", "method"),
    ("The model is already quantized. Loading it directly...", "sglang.grammar.already-quantized", "quant_method", "action"),
    ("Weights are already pre-quantized, skip calibration", "sglang.grammar.already-quantized", "quant_method", "action"),
    ("Model was already quantized - loading directly", "sglang.grammar.already-quantized", "quant_method", "action"),
    # a layer left out of quantization (torchao_utils.proj_filter_conv3d)
    ("Quantize: skipping visual.patch_embed.proj because it is a Conv3d", "sglang.grammar.skipping-layer-quantization", "quant_method", "why"),
    ("Quantization: skipping model.lm_head (excluded by the config)", "sglang.grammar.skipping-layer-quantization", "quant_method", "why"),
    ("Skipping quantization of layer model.visual.merger.mlp.0 because its in_features is not a multiple of 64",
     "sglang.grammar.skipping-layer-quantization", "quant_method", "layer"),
    ("Skipped quantization for module vision_tower.patch_embed.proj: Conv3d", "sglang.grammar.skipping-layer-quantization", "quant_method", "layer"),
    ("Quantize: not quantizing lm_head because it is tied to the embeddings", "sglang.grammar.skipping-layer-quantization", "quant_method", "layer"),
    # a quantized attention path that is on (minimax_sparse_backend.py)
    ("[MiniMaxSparse] nvfp4 MSA active: the first forward may JIT-compile fmha_sm100 nvfp4 kernel variants.",
     "sglang.grammar.quantized-path-active", "attention_backend", "kernel"),
    ("[MiniMaxSparse] FP8 MSA is active; the first forward JIT-compiles fmha_sm120 fp8 kernel variants.",
     "sglang.grammar.quantized-path-active", "attention_backend", "kernel"),
    ("[MiniMaxSparse] fp8 attn-GEMM active: decode runs fmha_sm100 fp8 kernels.", "sglang.grammar.quantized-path-active", "attention_backend", "path"),
    ("q8kv4 decode active: the decode uses the MSA-v1 kernel.", "sglang.grammar.quantized-path-active", "attention_backend", "kernel"),
    # 'enabled:' is the older enable-for shape's word: read there, with the feature named
    ("fp8 MSA enabled: first forward compiles fmha_sm100 kernel variants (cold cache can take minutes).",
     "sglang.grammar.enable-for", "backend_override", "feature"),
    # an activation fused into a GEMM epilogue (unquant.py _maybe_interleave_w13_for_fused_swiglu)
    ("Interleaved w13 gate/up: SwiGLU is fused into the MoE up-GEMM epilogue.", "sglang.grammar.fused-epilogue", "moe_kernel", "gemm"),
    ("Interleaved gate/up: the SiLU activation is applied in the grouped GEMM epilogue.", "sglang.grammar.fused-epilogue", "moe_kernel", "op"),
    ("w13 interleaved: the SwiGLU gets fused into the CUTLASS MoE epilogue.", "sglang.grammar.fused-epilogue", "moe_kernel", "gemm"),
    ("Fused SwiGLU: the activation is computed inside the FlashInfer MoE GEMM1 epilogue.", "sglang.grammar.fused-epilogue", "moe_kernel", "gemm"),
    ("Interleaved w13 gate/up: the GeGLU is applied by the MoE up-GEMM epilogue.", "sglang.grammar.fused-epilogue", "moe_kernel", "op"),
    # a warm-up step that cannot build a layer's quant method (flashinfer_megamoe.py)
    ("warmup_all_flashinfer_megamoe_layers: layer[7] uses quant_method=Fp8MoEMethod, which this eager warmup cannot build.",
     "sglang.grammar.cannot-build-for-method", "moe_kernel", "method"),
    ("warmup_all_megamoe_layers: layer[0] uses quant_method=UnquantizedFusedMoEMethod which the pre-capture warmup does not know how to handle.",
     "sglang.grammar.cannot-build-for-method", "moe_kernel", "method"),
    ("warmup_all_flashinfer_megamoe_layers: layer 12 uses quant_method=ModelOptNvFp4FusedMoEMethod, which this warmup doesn't support.",
     "sglang.grammar.cannot-build-for-method", "moe_kernel", "layer"),
    ("warmup_all_aiter_megamoe_layers: layer[5] uses quant_method=QuarkW4A4MXFp4MoEMethod, which this eager pre-capture warmup is unable to build.",
     "sglang.grammar.cannot-build-for-method", "moe_kernel", "method"),
    ("megamoe warmup: layer[2] uses quant_method=W4AFp8MoEMethod, which this warmup can't warm up.",
     "sglang.grammar.cannot-build-for-method", "moe_kernel", "step"),
]

UNSEEN += [
    # ModelOpt's saved quantization state restored, or not and calibrated again (ModelOptModelLoader)
    ("Failed to restore quantized model from /ckpt/state.pth: version mismatch", "sglang.grammar.quantized-restore", "quant_method", "error"),
    ("Failed to restore the checkpoint from s3://bucket/modelopt.pth: timeout", "sglang.grammar.quantized-restore", "quant_method", "source"),
    ("Restored quantized checkpoint from /ckpt/modelopt_fp8.pth", "sglang.grammar.quantized-restore", "quant_method", "source"),
    ("Proceeding with calibration based quantization", "sglang.grammar.quantized-restore", "quant_method", "method"),
    ("Proceeding with PTQ-based quantization (512 samples)", "sglang.grammar.quantized-restore", "quant_method", "method"),
    ("Failed to restore from /x/y.pth: RuntimeError: size mismatch", "sglang.grammar.quantized-restore", "quant_method", "error"),
    # the checkpoint's quantization config file could not be read (ModelConfig._parse_quant_hf_config)
    ("Failed to check hf_quant_config.json: nvidia/DeepSeek-R1-FP4 Connection timed out",
     "sglang.grammar.quant-config-check-skipped", "quant_method", "error"),
    ("Failed to read hf_quant_config.json: /models/llama-fp8 [Errno 13] Permission denied",
     "sglang.grammar.quant-config-check-skipped", "quant_method", "model"),
    ("Failed to download hf_quant_config.json for nvidia/Qwen3-FP8: HTTP 401", "sglang.grammar.quant-config-check-skipped", "quant_method", "model"),
    ("Failed to parse quant_config.json: /models/x Expecting value: line 1 column 1",
     "sglang.grammar.quant-config-check-skipped", "quant_method", "error"),
    ("HF_HUB_OFFLINE set, skipping hf_quant_config.json download", "sglang.grammar.quant-config-check-skipped", "quant_method", "cause"),
]

#: (message, the shape it resembles and must not be taken by)
NEAR_MISSES = [
    ("Skipping block quantization checks for weight partition.", "sglang.grammar.skipping-layer-quantization"),
    ("[MiniMaxSparse] fp8 MSA disabled: page_size=64 != 128; falling back to the Triton sparse path.", "sglang.grammar.quantized-path-active"),
    ("Speculative decoding active: keeping the FlashInfer MNNVL CuTe DSL finalize presets on the safe (non-early-load) ordering.",
     "sglang.grammar.quantized-path-active"),
    ("The model loads with no quantization config.", "sglang.grammar.loads-with-quantization"),
    ("[QuantizedRL] Initial load complete", "sglang.grammar.loads-with-quantization"),
    ("Model is not quantized, quantizing it now.", "sglang.grammar.already-quantized"),
    ("Only support per-tensor scaling factor for fp8 KV cache", "sglang.grammar.kv-scaling-factors"),
    ("layer[3] uses quant_method=ModelOptFp8MoEMethod", "sglang.grammar.cannot-build-for-method"),
    ("Cannot restore flashinfer TRT-LLM BF16 MoE weight shape for w13_weight: current shape=(8, 4096), expected shape=(8, 2048).",
     "sglang.grammar.quantized-restore"),
    ("Loaded hf_quant_config.json from /models/x", "sglang.grammar.quant-config-check-skipped"),
]


def _scan(tmp_path, message):
    log = tmp_path / "unseen.log"
    log.write_text(P + message + "\n")
    return scan_inputs([str(log)])


@pytest.mark.parametrize(("message", "rule", "kind", "part"), UNSEEN, ids=[u[0][:56] for u in UNSEEN])
def test_unseen_sglang_line_is_read_with_its_parts(tmp_path, message, rule, kind, part):
    report = _scan(tmp_path, message)
    assert [(e.rule, e.kind) for e in report.events] == [(rule, kind)]
    assert report.events[0].groups.get(part), f"no {part!r} captured: {report.events[0].groups}"
    codes = sorted(f.code for run in report.runs for f in run.findings)
    assert codes == [], f"findings {codes}"
    assert not [s for run in report.runs for s in run.selections]


@pytest.mark.parametrize(("message", "rule"), NEAR_MISSES, ids=[n[0][:56] for n in NEAR_MISSES])
def test_near_miss_is_not_taken_by_the_shape(tmp_path, message, rule):
    report = _scan(tmp_path, message)
    assert rule not in [e.rule for e in report.events]
