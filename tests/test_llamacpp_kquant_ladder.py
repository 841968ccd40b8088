"""llama.cpp k-quants never take the FP4 MMA (activations stay Q8_1: mmq.cu
ggml_cuda_mmq_get_prec_src1); on an sm120 build they take the blackwell tile config on int8 MMA
(trial 36: the k-quant ladder reused the FP4 rung list and predicted 'native FP4 MMA' for Q4_K)."""
from __future__ import annotations

from click.testing import CliRunner

from logscan.cli import cli


def _picked(*args):
    r = CliRunner().invoke(cli, ["ladder", "llamacpp", "Q4_K", *args])
    assert r.exit_code == 0, r.output
    return [ln for ln in r.output.splitlines() if ln.startswith("  =>")]


def test_q4_k_on_an_sm120_build_is_int8_mma_not_fp4():
    picked = _picked("--gpu", "RTX 5090", "--builds", "CUDA_ARCH_120")
    assert picked == ["  => MMQ blackwell config (int8 MMA, Q8_1 activations) (rung 1, native)"]


def test_q4_k_on_hopper_is_the_ampere_config():
    picked = _picked("--gpu", "H100", "--builds", "CUDA_ARCH_120")
    assert picked and "ampere config (int8 MMA" in picked[0] and "FP4" not in picked[0]


def test_the_rocm_kquant_ladder_walks_rdna():
    # rocm36: the ROCm k-quant ladder is shipped now (RDNA rungs from mmq.cu / common.cuh); it was a
    # 'no shipped ladder' exit 2 before
    r = CliRunner().invoke(cli, ["ladder", "llamacpp", "Q4_K", "--platform", "rocm", "--gpu", "gfx1151"])
    assert r.exit_code == 0, r.output
    assert "MMQ rdna3 / rdna3.5 config (int8 WMMA" in r.output and "Usage:" not in r.output
