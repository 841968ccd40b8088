"""Issue 16, matrix part: every cell of ``logscan matrix`` for the seven engines x NVFP4, MXFP4,
FP8, W4A16 x sm80, sm89, sm90, sm100, sm120, MI300 comes from the engine's source (a walked
ladder, or a refusal / unknown recorded with its reason), and none says "not encoded".

The cells read for this issue are checked one by one: what executes, its cost class, and the
engine's own wording of a refusal. Where the wording is an engine log/raise template, it must
match a template of the stated file and release in ``tests/data/matrix-source-templates.jsonl``
(lines copied verbatim from the shared reference's template extracts, which were taken from the
released packages: sglang templates.jsonl, other-engines/templates-other.jsonl).
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from logscan.cli import cli

ENGINES = ["vllm", "sglang", "trtllm", "llamacpp", "tgi", "lmdeploy", "mlc-llm"]
SCHEMES = ["NVFP4", "MXFP4", "FP8", "W4A16"]
GPUS = ["sm80", "sm89", "sm90", "sm100", "sm120", "MI300"]
TEMPLATES = Path(__file__).parent / "data" / "matrix-source-templates.jsonl"


@lru_cache(maxsize=None)
def _rows(scheme: str, gpu: str, *extra: str) -> dict[str, dict]:
    r = CliRunner().invoke(cli, ["matrix", scheme, "--gpu", gpu, "--format", "json", *extra],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return {row["engine"]: row for row in json.loads(r.stdout)["rows"]}


def _templates() -> list[dict]:
    return [json.loads(line) for line in TEMPLATES.read_text(encoding="utf-8").splitlines() if line.strip()]


def _template_rx(template: str) -> re.Pattern:
    parts = re.split(r"\{[^{}]*\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts))


# --- no cell is left "not encoded" --------------------------------------------------------------

@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_cell_says_not_encoded(scheme, gpu):
    rows = _rows(scheme, gpu)
    assert list(rows) == ENGINES
    for eng, row in rows.items():
        note = row["note"].lower()
        assert "not encoded" not in note and "not read from source" not in note, f"{eng} {scheme} {gpu}: {row['note']}"
        assert row["basis"] not in ("no ladder", "unknown", "undetermined") or len(row["note"]) > 60, \
            f"{eng} {scheme} {gpu}: an unknown must name its reason"


# the only cells whose cost class is still unknown, each with the reason the row gives
UNKNOWN_COST = {("FP8", "sm80", "mlc-llm"): "TVM lowers an FP8 matmul", ("FP8", "MI300", "mlc-llm"): "TVM lowers an FP8 matmul"}


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_walked_cell_names_its_cost_class(scheme, gpu):
    for eng, row in _rows(scheme, gpu).items():
        if row["basis"] in ("certain", "conditional"):
            if (scheme, gpu, eng) in UNKNOWN_COST:
                assert UNKNOWN_COST[(scheme, gpu, eng)] in row["note"]
            else:
                assert row["cost_class"] not in (None, "unknown"), f"{eng} {scheme} {gpu}: {row}"


# --- the cells read for issue 16 ----------------------------------------------------------------

WALKED = [
    # SGLang 0.5.23: GPTQ -> gptq_marlin (Marlin W4A16 is native for a W4A16 checkpoint)
    *[("W4A16", g, (), "sglang", "conditional", "gptq_marlin", "native") for g in ("sm80", "sm89", "sm90", "sm100", "sm120")],
    ("W4A16", "sm90", ("--group-size", "128"), "sglang", "certain", "gptq_marlin", "native"),
    # SGLang 0.5.23 on ROCm
    ("FP8", "MI300", (), "sglang", "certain", "torch._scaled_mm (hipBLASLt, per-tensor)", "native"),
    ("FP8", "MI300", ("--env", "SGLANG_USE_AITER=1", "--env", "SGLANG_USE_AITER_FP8_PER_TOKEN=1"), "sglang", "certain",
     "aiter gemm_a8w8_bpreshuffle (per-token)", "native"),
    ("NVFP4", "MI300", (), "sglang", "conditional", "petit_nvfp4 (mul_nvfp4_a16)", "weight_only"),
    ("NVFP4", "MI300", ("--with", "petit_kernel"), "sglang", "certain", "petit_nvfp4 (mul_nvfp4_a16)", "weight_only"),
    ("MXFP4", "MI300", ("--env", "AITER_FORCE_A8W4=1"), "sglang", "certain", "BF16 GEMM (MXFP4 weights dequantized at load)", "dequant_at_load"),
    ("MXFP4", "MI355X", (), "sglang", "certain", "aiter gemm_afp4wfp4 (FP4 x FP4)", "native"),
    # TensorRT-LLM: W4A16 GPTQ through the CUTLASS FpA_IntB groupwise GEMM; MXFP4 only as W4A8 on Blackwell
    *[("W4A16", g, ("--env=--backend=tensorrt",), "trtllm", "certain", "CUTLASS FpA_IntB groupwise GEMM (TensorRT engine)", "native")
      for g in ("sm80", "sm89", "sm90", "sm100")],
    ("W4A16", "sm120", ("--env=--backend=tensorrt",), "trtllm", "conditional", "CUTLASS FpA_IntB groupwise GEMM (TensorRT engine)", "native"),
    ("MXFP4", "sm100", (), "trtllm", "conditional", "W4A8MXFP4MXFP8LinearMethod", "activation_upcast"),
    ("MXFP4", "sm120", (), "trtllm", "conditional", "W4A8MXFP4MXFP8LinearMethod", "activation_upcast"),
    # llama.cpp HIP build: MMQ cdna config, FP4 weights x Q8_1 activations (no FP4 MMA on AMD)
    ("NVFP4", "MI300", (), "llamacpp", "certain", "MMQ cdna config (int8 MFMA, Q8_1 activations)", "activation_upcast"),
    ("MXFP4", "MI300", (), "llamacpp", "certain", "MMQ cdna config (int8 MFMA, Q8_1 activations)", "activation_upcast"),
    ("MXFP4", "MI300", ("--env", "GGML_HIP_MMQ_MFMA=off"), "llamacpp", "conditional", "MMQ cdna config (dp4a, Q8_1 activations)", "activation_upcast"),
    # TGI ROCm FP8: torch._scaled_mm, activations per-tensor
    ("FP8", "MI300", ("--scales", "per-tensor"), "tgi", "certain", "torch._scaled_mm (ROCm, per-tensor)", "native"),
    ("FP8", "MI300", ("--scales", "per-channel"), "tgi", "certain", "torch._scaled_mm (ROCm, per-channel weights, unfused)", "native"),
    # TGI Gaudi branch (backends/gaudi)
    ("FP8", "Gaudi2", (), "tgi", "certain", "Fp8Linear (HPU fp8_gemm_v2)", "native"),
    ("W4A16", "Gaudi3", (), "tgi", "certain", "QuantLinear (HPU convert_from_uint4 + matmul)", "emulated"),
]


@pytest.mark.parametrize("scheme,gpu,extra,engine,basis,executes,cost", WALKED)
def test_walked_cells(scheme, gpu, extra, engine, basis, executes, cost):
    row = _rows(scheme, gpu, *extra)[engine]
    assert (row["basis"], row["executes"], row["cost_class"]) == (basis, executes, cost), row


# (scheme, gpu, extra, engine, basis, words the row must hold, template: (engine, file, release) or None)
STATED = [
    ("W4A16", "MI300", (), "sglang", "refused", "gptq_marlin quantization is currently not supported in ROCm.",
     ("sglang", "sglang/srt/configs/model_config.py", "0.5.23")),
    ("W4A16", "MI300", (), "sglang", "refused", "Unknown quantization method: gptq. Must be one of [...]",
     ("sglang", "sglang/srt/configs/model_config.py", "0.5.23")),
    ("W4A16", "sm90", ("--group-size", "256"), "sglang", "refused", "Unknown quantization method: gptq. Must be one of [...]",
     ("sglang", "sglang/srt/configs/model_config.py", "0.5.23")),
    ("W4A16", "T4", (), "sglang", "refused", "Unknown quantization method: gptq", None),
    *[("MXFP4", g, (), "sglang", "refused",
       "Activation-quantized float4 is only supported in the NVFP4 layout (tensor_group, group_size 16); got strategy=..., group_size=32.",
       ("sglang", "sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py", "0.5.23"))
      for g in ("sm80", "sm89", "sm90", "sm100", "sm120")],
    ("MXFP4", "MI300", (), "sglang", "refused", "MXFP4 is not available on your device", None),
    ("NVFP4", "MI300", ("--with", "none"), "sglang", "refused", "NameError at repack_nvfp4", None),
    *[("MXFP4", g, (), "trtllm", "refused", "no W4A4 MXFP4 algorithm", None) for g in ("sm80", "sm89", "sm90")],
    ("NVFP4", "Gaudi2", (), "tgi", "refused", "raises 'Unknown quantization method: {quantize}' for any other",
     ("tgi", "backends/gaudi/server/text_generation_server/utils/quantization.py", "v3.3.7")),
    ("W4A16", "MI300", (), "lmdeploy", "refused", "'Unsupported quant method: gptq'",
     ("lmdeploy", "lmdeploy/pytorch/config.py", "v0.16.0")),
    ("W4A16", "MI300", (), "lmdeploy", "refused",
     "Fallback to pytorch engine because turbomind engine is not installed correctly. ...",
     ("lmdeploy", "lmdeploy/archs.py", "v0.16.0")),
    ("MXFP4", "MI300", (), "lmdeploy", "refused", "'Unsupported quant method: mxfp4'",
     ("lmdeploy", "lmdeploy/pytorch/config.py", "v0.16.0")),
    ("FP8", "MI300", (), "lmdeploy", "unknown", "whether they run on this GPU is not known", None),
    ("FP8", "Gaudi2", (), "vllm", "unknown", "vllm-gaudi plugin", None),
]


@pytest.mark.parametrize("scheme,gpu,extra,engine,basis,words,template", STATED)
def test_stated_refusals_and_unknowns(scheme, gpu, extra, engine, basis, words, template):
    row = _rows(scheme, gpu, *extra)[engine]
    assert row["basis"] == basis, row
    assert words in row["note"], row["note"]
    if template is None:
        return
    eng, file, release = template
    cands = [t for t in _templates() if t["engine"] == eng and t["file"] == file and release in t["versions"]]
    assert cands, f"no bundled {eng} template of {file} at {release}"
    # the quoted wording is one of the engine's templates of that file and release (placeholders
    # filled in, an elided tail written '...')
    quoted = words.strip("'").split(" [...]")[0].split(" ...")[0]
    assert any(_template_rx(t["template"].split(" {supported_quantization}")[0]).search(quoted)
               or quoted in t["template"] for t in cands), (quoted, [t["template"] for t in cands])


def test_bundled_templates_are_verbatim_reference_records():
    """Each bundled record keeps the reference's fields (template, file, versions, engine)."""
    rows = _templates()
    assert len(rows) >= 8
    for t in rows:
        assert {"template", "file", "versions", "engine", "level"} <= set(t)
        assert t["versions"] and t["template"]


def test_exact_platform_verdict_beats_an_any_platform_ladder():
    """vLLM's generated registries list rungs for ANY platform; on Gaudi (HPU) the recorded
    unknown wins, so the matrix does not walk a CUDA kernel list for a Gaudi card."""
    row = _rows("W4A16", "Gaudi3")["vllm"]
    assert row["basis"] == "unknown" and row["executes"] is None
    r = CliRunner().invoke(cli, ["ladder", "vllm", "W4A16", "--gpu", "Gaudi3", "--format", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "vllm-gaudi" in json.loads(r.stdout)["outcome"]
