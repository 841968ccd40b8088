"""A line's statement about the GPU checked against ``scan --gpu`` (rule ``implies_gpu``, task cli12).

"Your GPU does not have native support for FP8 computation" under a W8A8 FP8 method is printed only
below sm89 (vLLM fp8.py / fbgemm_fp8.py use_marlin, the FP8 registries; SGLang fp8.py use_marlin):
``--gpu H100`` on such a log is GPU_CONTRADICTS_LOG. Counter-examples: an unstated quantization (a
W8A16 checkpoint prints it on any GPU), a switch that forces Marlin, and the FP4 sentence, which
real logs show on sm110 / sm120 GPUs.
"""
from __future__ import annotations

import pytest

from logscan.api import scan
from tests.conftest import FIXTURES


def _codes(path, gpu, text=None):
    report = scan(text.splitlines(keepends=True) if text is not None else path, gpu=gpu)
    return [{f.code for f in run.findings} for run in report.runs]


def _contradiction(path, gpu):
    report = scan(path, gpu=gpu)
    return [f for run in report.runs for f in run.findings if f.code == "GPU_CONTRADICTS_LOG"]


_FP8 = "native support for FP8"


@pytest.mark.parametrize("log,gpu,below,said", [
    ("vllm/synthetic-era-0.5", "H100", 89, _FP8), ("vllm/synthetic-era-0.5", "B200", 89, _FP8),
    ("vllm/synthetic-era-0.5", "L40S", 89, _FP8),
    # a real A100 log: Marlin's 'bf16 on GPUs before SM90' hint (maybe_warn_marlin_atomic_add: major < 9)
    ("sglang/sglang-001", "H100", 90, "GPUs before SM90")])
def test_a_capability_statement_contradicts_a_newer_gpu(log, gpu, below, said):
    found = _contradiction(FIXTURES / f"{log}.log", gpu)
    assert len(found) == 1
    f = found[0]
    assert f.inferred and f.inferred_from == "engine_message" and f"below sm{below}" in f.title
    assert said in f.evidence


def test_sglang_no_native_fp8_under_fp8_contradicts_h100():
    text = ("[2025-10-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B-FP8', quantization='fp8')\n"
            "[2025-10-01 10:00:05 TP0] Your GPU does not have native support for FP8 computation but FP8 "
            "quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel.\n")
    assert "GPU_CONTRADICTS_LOG" in _codes(None, "H100", text)[0]
    assert "GPU_CONTRADICTS_LOG" not in _codes(None, "A10", text)[0]


@pytest.mark.parametrize("log,gpu", [("vllm/synthetic-era-0.5", "A100"), ("sglang/sglang-001", "A100"),
                                     ("sglang/sglang-001", "RTX 3090"), ("sglang/sglang-001", "L40S")])
def test_a_gpu_below_the_ceiling_is_no_contradiction(log, gpu):
    assert not _contradiction(FIXTURES / f"{log}.log", gpu)


def test_no_gpu_given_no_claim():
    report = scan(FIXTURES / "vllm" / "synthetic-era-0.5.log")
    assert not [f for run in report.runs for f in run.findings if f.code == "GPU_CONTRADICTS_LOG"]


@pytest.mark.parametrize("log", ["vllm-004", "vllm-018", "vllm-171"])
def test_unstated_quantization_claims_nothing(log):
    # real sm80/sm86 logs with the FP8 sentence and no quantization line: a W8A16 FP8 checkpoint
    # (compressed-tensors CompressedTensorsW8A16Fp8, Marlin only) prints it on an H100 as well
    assert not _contradiction(FIXTURES / "vllm" / f"{log}.log", "H100")


@pytest.mark.parametrize("switch", ["export VLLM_TEST_FORCE_FP8_MARLIN=1",
                                    "export VLLM_DISABLED_KERNELS=CutlassFP8ScaledMMLinearKernel"])
def test_a_switch_that_forces_marlin_claims_nothing(switch):
    text = switch + "\n" + (FIXTURES / "vllm" / "synthetic-era-0.5.log").read_text()
    report = scan(text.splitlines(keepends=True), gpu="H100")
    assert not [f for run in report.runs for f in run.findings if f.code == "GPU_CONTRADICTS_LOG"]


@pytest.mark.parametrize("log,gpu", [("vllm-024", "RTX 5090"), ("vllm-006", "RTX PRO 6000"), ("vllm-005", "B200"),
                                     ("vllm-105", "B200")])
def test_the_fp4_sentence_implies_no_gpu(log, gpu):
    # vLLM prints it wherever the Marlin FP4 path is prepared: vllm-024 is a real RTX 5090 (sm120)
    assert not _contradiction(FIXTURES / "vllm" / f"{log}.log", gpu)


def test_the_force_switch_rule_reads_only_an_assignment():
    report = scan(["Set VLLM_TEST_FORCE_FP8_MARLIN=1 to test the Marlin path.\n",
                   *(FIXTURES / "vllm" / "synthetic-era-0.5.log").read_text().splitlines(keepends=True)], gpu="H100")
    assert [f for run in report.runs for f in run.findings if f.code == "GPU_CONTRADICTS_LOG"]
