"""Cross-engine matrix rows and scan's expected-versus-observed rung (UNEXPECTED_FALLBACK).

Facts pinned (seed 000 PART 2/3, C2, N6; shared/reference/sglang/ladders.json 0.5.23;
other-engines/*.md): NVFP4 on sm90 — vLLM Marlin W4A16; SGLang 0.5.23 auto resolves to FP4
Marlin on SM80-SM90 and refuses any other backend ("require SM100+. Use --fp4-gemm-backend
marlin"); TensorRT-LLM refuses unless the Marlin NVFP4 opt-in; llama.cpp's integer MMQ
(Ampere-style) path, also on B200 because its Blackwell constant is 1200.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.analysis.gates import Machine
from logscan.analysis.predict import matrix
from logscan.cli import cli
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _rows(packs, scheme, cc, **kw):
    return {r.engine: r for r in matrix(packs, scheme, Machine(cc=cc, **kw)).rows}


def test_nvfp4_on_sm90_per_engine(packs):
    rows = _rows(packs, "NVFP4", 90)
    assert [r.engine for r in matrix(packs, "NVFP4", Machine(cc=90)).rows] == ["vllm", "sglang", "trtllm", "llamacpp", "tgi", "lmdeploy", "mlc-llm"]
    assert (rows["vllm"].executes, rows["vllm"].cost_class, rows["vllm"].basis) == (
        "MarlinNvFp4LinearKernel", "weight_only", "certain")
    assert (rows["sglang"].executes, rows["sglang"].cost_class) == ("marlin", "weight_only")
    assert rows["trtllm"].basis == "refused" and "MarlinNVFP4LinearMethod" in rows["trtllm"].note
    assert rows["llamacpp"].executes.startswith("MMQ ampere config")


def test_sglang_refuses_a_native_fp4_backend_off_blackwell(packs):
    rows = _rows(packs, "NVFP4", 90, env={"--fp4-gemm-backend": "flashinfer_cutlass"})
    assert rows["sglang"].basis == "refused"
    assert "Use --fp4-gemm-backend marlin" in rows["sglang"].note


def test_trtllm_marlin_opt_in_runs_marlin_nvfp4_on_sm90_not_on_sm100(packs):
    on = {"nvfp4_gemm_config.allowed_backends": "marlin"}
    assert _rows(packs, "NVFP4", 90, env=on)["trtllm"].executes == "MarlinNVFP4LinearMethod"
    assert _rows(packs, "NVFP4", 100, env=on)["trtllm"].basis == "refused"   # complement of native FP4
    assert _rows(packs, "NVFP4", 120, env=on)["trtllm"].executes == "MarlinNVFP4LinearMethod"


@pytest.mark.parametrize("cc,builds,kernel,basis", [
    (100, None, "MMQ ampere config (int8 MMA, Q8_1 activations)", "certain"),    # B200: 1000 < 1200
    (103, None, "MMQ ampere config (int8 MMA, Q8_1 activations)", "certain"),    # B300
    (120, None, "MMQ blackwell config (native FP4 MMA)", "conditional"),  # 5090, build unknown: the most capable outcome leads
    (120, frozenset({"CUDA_ARCH_120"}), "MMQ blackwell config (native FP4 MMA)", "certain"),
    (121, frozenset({"CUDA_ARCH_120"}), "MMQ blackwell config (native FP4 MMA)", "certain"),
])
def test_llamacpp_fp4_blackwell_means_sm12x_only(packs, cc, builds, kernel, basis):
    row = _rows(packs, "MXFP4", cc, builds=builds)["llamacpp"]
    assert (row.executes, row.basis) == (kernel, basis)


def test_llamacpp_q8_activations_keep_sm120_on_the_ampere_config(packs):
    row = _rows(packs, "NVFP4", 120, builds=frozenset({"CUDA_ARCH_120"}), env={"GGML_CUDA_MMQ_PREC": "q8"})["llamacpp"]
    assert row.executes.startswith("MMQ ampere config")


def test_trtllm_fp8_refused_on_ampere_native_on_ada(packs):
    assert _rows(packs, "FP8", 80)["trtllm"].basis == "refused"
    assert _rows(packs, "FP8", 89)["trtllm"].cost_class == "native"


def test_matrix_cli_json_and_unknown_scheme():
    r = CliRunner().invoke(cli, ["matrix", "NVFP4", "--gpu", "H100", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert {row["engine"] for row in json.loads(r.output)["rows"]} == {"vllm", "sglang", "trtllm", "llamacpp", "tgi", "lmdeploy", "mlc-llm"}
    assert CliRunner().invoke(cli, ["matrix", "NOPE"]).exit_code == 2


NVFP4_MARLIN_LOG = FIXTURES / "vllm" / "vllm-005.log"   # NVFP4 served by Marlin (real log)


def _codes(report):
    return {f.code: f for run in report.runs for f in run.findings}


def _undecided(report):
    return {u.kernel: u for run in report.runs for s in run.selections if s.ladder for u in s.ladder.undecided}


def test_nvfp4_on_marlin_with_a_b200_is_unexplained_with_the_undecided_needs():
    # B200 can take the FP4 rungs, but the log does not say whether the CUDA runtime is 12.8+, the
    # build has ENABLE_NVFP4_SM100 or flashinfer is installed: no false UNEXPECTED_FALLBACK, the
    # fallback is UNEXPLAINED with those needs named (analysis/fallback.py)
    report = scan_inputs([str(NVFP4_MARLIN_LOG)], gpu="B200")
    assert "UNEXPECTED_FALLBACK" not in _codes(report)
    und = _undecided(report)
    text = " ".join(n for u in und.values() for n in u.needs)
    for cause in ("CUDA runtime 12.8 or newer", "ENABLE_NVFP4_SM100", "flashinfer installed"):
        assert cause in text
    assert "FlashInferCuteDslNvFp4LinearKernel" in und and not any("B12x" in k for k in und)  # sm12x-only rungs fail on sm100


def test_every_need_met_by_stated_facts_is_an_unexpected_fallback():
    # vllm-004 (FP8 on Marlin) told H100, CUDA 12.8 and its release: CUTLASS FP8's gate (CUDA, sm90,
    # CUDA >= 12.0) is all met, so the engine skipped a rung it should have taken
    log = str(FIXTURES / "vllm" / "vllm-004.log")
    report = scan_inputs([log], gpu="H100", cuda="12.8", engine_version={"vllm": "0.33.0"})
    f = _codes(report)["UNEXPECTED_FALLBACK"]
    assert "CutlassFP8ScaledMMLinearKernel" in f.title and "Every need of it is met" in f.reasons[0]
    assert "CutlassFP8ScaledMMLinearKernel" not in _undecided(report)
    # the same log without its release: whether that release holds the rung is undecided
    und = _undecided(scan_inputs([log], gpu="H100", cuda="12.8"))
    assert "UNEXPECTED_FALLBACK" not in _codes(scan_inputs([log], gpu="H100", cuda="12.8"))
    assert any("release" in n for n in und["CutlassFP8ScaledMMLinearKernel"].needs)
    # a CUDA runtime below the rung's floor explains the fallback: the rung is in neither list
    low = scan_inputs([log], gpu="H100", cuda="11.8", engine_version={"vllm": "0.33.0"})
    assert "UNEXPECTED_FALLBACK" not in _codes(low) and "CutlassFP8ScaledMMLinearKernel" not in _undecided(low)


@pytest.mark.parametrize("gpu", [None, "H100", "A100", "L40S"])
def test_marlin_is_expected_where_no_native_fp4_exists(gpu):
    assert "UNEXPECTED_FALLBACK" not in _codes(scan_inputs([str(NVFP4_MARLIN_LOG)], gpu=gpu))


def test_scan_gpu_option_and_bad_gpu():
    r = CliRunner().invoke(cli, ["scan", "--gpu", "B200", "--format", "json", str(NVFP4_MARLIN_LOG)])
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert "UNEXPECTED_FALLBACK" not in {f["code"] for run in doc["runs"] for f in run["findings"]}
    assert [u["kernel"] for run in doc["runs"] for s in run["selections"] for u in s["ladder"]["undecided"]]
    assert CliRunner().invoke(cli, ["scan", "--gpu", "Z80", str(NVFP4_MARLIN_LOG)]).exit_code == 2
