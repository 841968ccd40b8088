"""``logscan matrix`` has a row for each of the seven engines for NVFP4, MXFP4, FP8 and INT4 W4A16
on sm80, sm89, sm90, sm100, sm120 and MI300: a walked ladder, or the refusal / unknown that
``patterns/schemes.toml`` records with its reason (engines' sources, see docs/engines.md).
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.cli import cli

ENGINES = ["vllm", "sglang", "trtllm", "llamacpp", "tgi", "lmdeploy", "mlc-llm"]
SCHEMES = ["NVFP4", "MXFP4", "FP8", "W4A16"]
GPUS = ["sm80", "sm89", "sm90", "sm100", "sm120", "MI300"]


def _matrix(scheme, gpu):
    r = CliRunner().invoke(cli, ["matrix", scheme, "--gpu", gpu, "--format", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return {row["engine"]: row for row in json.loads(r.stdout)["rows"]}


@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_engine_answers_with_a_reason(scheme, gpu):
    rows = _matrix(scheme, gpu)
    assert list(rows) == ENGINES
    for eng, row in rows.items():
        assert row["basis"] != "no ladder", f"{eng} {scheme} {gpu}: {row['note']}"
        if row["basis"] in ("refused", "unknown", "undetermined"):
            assert len(row["note"]) > 30, f"{eng} {scheme} {gpu}: no reason"
        if row["basis"] in ("certain", "conditional"):
            assert row["executes"] and row["cost_class"]


@pytest.mark.parametrize("scheme,gpu,engine,basis,executes,cost", [
    ("FP8", "sm89", "tgi", "certain", "GPTQMarlinFP8Linear", "weight_only"),   # CC 8.x -> Marlin FP8 (8.9 too)
    ("FP8", "sm90", "tgi", "conditional", "cutlass_scaled_mm", "native"),    # the most capable outcome leads (docs/planning.md)
    ("FP8", "sm90", "lmdeploy", "conditional", "TurboMind FP8 GMMA (sm90_64n32_8)", "native"),  # if a CUDA >= 12.3 build; else weight-only
    ("FP8", "sm100", "lmdeploy", "certain", "TurboMind E4M3 weight-only (mma.sync)", "weight_only"),  # SM80 bucket serves Blackwell
    ("W4A16", "sm120", "lmdeploy", "certain", "TurboMind U4 GEMM (mma.sync)", "native"),
    ("W4A16", "sm80", "tgi", "conditional", "GPTQMarlinWeightsLoader", "native"),  # if Marlin's group size holds; else Triton/ExLlama
    ("W4A16", "MI300", "mlc-llm", "certain", "GroupQuantize dequantize-matmul (TIR)", "portable"),
    ("FP8", "sm90", "mlc-llm", "certain", "cutlass.fp8_gemm", "native"),     # sm_90a + cutlass=1 (O2)
    ("MXFP4", "sm90", "lmdeploy", "certain", "TurboMind MXF4 dequant GEMM (mma.sync, BF16/FP16 activations)", "weight_only"),
])
def test_walked_rows(scheme, gpu, engine, basis, executes, cost):
    row = _matrix(scheme, gpu)[engine]
    assert (row["basis"], row["executes"], row["cost_class"]) == (basis, executes, cost)
    if (engine, scheme) == ("tgi", "W4A16"):
        assert row["note"].startswith("if group_size") and "Triton QuantLinear (portable)" in row["note"]


@pytest.mark.parametrize("scheme,gpu,engine,basis,words", [
    ("NVFP4", "sm100", "tgi", "refused", "no FP4 --quantize value"),
    ("NVFP4", "sm120", "lmdeploy", "refused", "neither engine takes NVFP4"),
    ("MXFP4", "sm100", "mlc-llm", "refused", "no FP4 scheme"),
    ("FP8", "sm90", "llamacpp", "refused", "GGUF has no FP8"),
    ("W4A16", "MI300", "trtllm", "refused", "NVIDIA GPUs only"),
    ("W4A16", "MI300", "sglang", "refused", "gptq_marlin quantization is currently not supported in ROCm."),
    ("MXFP4", "sm90", "sglang", "refused", "Activation-quantized float4 is only supported in the NVFP4 layout"),
])
def test_recorded_refusals_and_unknowns_say_why(scheme, gpu, engine, basis, words):
    row = _matrix(scheme, gpu)[engine]
    assert row["basis"] == basis and words in row["note"]


def test_ladder_command_walks_a_recorded_refusal():
    r = CliRunner().invoke(cli, ["ladder", "tgi", "NVFP4", "--gpu", "B200", "--format", "json"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["scheme_verdict"] == "fails" and "no FP4 --quantize value" in doc["outcome"]


@pytest.mark.parametrize("with_,executes,basis", [
    ([], "cutlass.fp8_groupwise_scaled_gemm", "conditional"),  # the TVM build-time probe and triton unknown: outcomes, CUTLASS first
    (["--with", "triton"], "triton.fp8_groupwise_scaled_gemm", "certain"),
    (["--with", "triton,tvm-cutlass"], "cutlass.fp8_groupwise_scaled_gemm", "certain"),
])
def test_mlc_block_fp8_follows_the_tvm_cutlass_probe(with_, executes, basis):
    r = CliRunner().invoke(cli, ["matrix", "FP8-BLOCK", "--gpu", "H100", "--format", "json", *with_], catch_exceptions=False)
    row = {x["engine"]: x for x in json.loads(r.stdout)["rows"]}["mlc-llm"]
    assert (row["executes"], row["basis"]) == (executes, basis)
