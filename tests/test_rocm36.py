"""rocm36 trial fixes, on real llama.cpp ROCm logs (fixtures/llamacpp).

- ``--gpu gfx1151`` against llamacpp-246 (device line 'Radeon 8060S Graphics, gfx1151'): the same GPU
  named by marketing name and gfx target is no mismatch (run_checks.same_gpu, patterns/gpus.toml).
- cuBLAS / hipBLAS dequantize-then-F16-GEMM rungs are weight_only, not emulated
  (patterns/llamacpp/ladders/2026.10.1.toml; ggml-cuda.cu ggml_cuda_op_mul_mat_cublas).
"""
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG246 = ROOT / "fixtures/llamacpp/llamacpp-246.log"


def _scan(*args):
    out = subprocess.run([sys.executable, "-m", "logscan", "scan", *map(str, args)],
                         capture_output=True, text=True, cwd=ROOT)
    return out.stdout + out.stderr


def test_gfx_target_names_the_logged_marketing_name():
    text = _scan(LOG246, "--gpu", "gfx1151")
    line = next(l for l in text.splitlines() if "given by --gpu" in l)
    assert "gfx1151" in line and "the log names" not in line


def test_another_gfx_target_is_still_a_mismatch():
    text = _scan(LOG246, "--gpu", "gfx1100")
    line = next(l for l in text.splitlines() if "given by --gpu" in l)
    assert "the log names Radeon 8060S Graphics" in line


def test_marketing_name_given_against_the_same_arch():
    text = _scan(LOG246, "--gpu", "Strix Halo")
    line = next(l for l in text.splitlines() if "given by --gpu" in l)
    assert "the log names" not in line


def test_blas_dequant_rungs_are_weight_only():
    data = tomllib.loads((ROOT / "patterns/llamacpp/ladders/2026.10.1.toml").read_text())
    for name in ("cuBLAS dequant (F16 GEMM)", "hipBLAS dequant (F16 GEMM)"):
        assert data["kernel"][name]["cost_class"] == "weight_only"
        for reg in data["registry"]:
            if name in reg["cost"]:
                assert reg["cost"][name] == "weight_only"


def _ladder(*args):
    out = subprocess.run([sys.executable, "-m", "logscan", "ladder", *args],
                         capture_output=True, text=True, cwd=ROOT)
    return [l for l in out.stdout.splitlines() if l.startswith("  => ")]


def test_v100_is_named_by_its_dp4a_compute_not_int8_mma():
    # mmq.cuh: sm70 takes the ampere tile config, but TURING_MMA_AVAILABLE (>= 750) is off: dp4a vec-dot
    picked = _ladder("llamacpp", "GGUF-KQUANT", "--gpu", "V100")
    assert picked and "dp4a on Volta" in picked[0]


def test_turing_still_takes_int8_mma():
    picked = _ladder("llamacpp", "GGUF-KQUANT", "--gpu", "T4")
    assert picked and "int8 MMA" in picked[0] and "Volta" not in picked[0]


def test_rdna_rungs_follow_the_gfx_target():
    # common.cuh GGML_CUDA_CC_IS_RDNA*: gfx1151 (Strix Halo) is RDNA3.5 (WMMA), gfx1201 RDNA4, gfx942 CDNA3
    assert "rdna3 / rdna3.5 config (int8 WMMA" in _ladder("llamacpp", "GGUF-KQUANT", "--gpu", "gfx1151")[0]
    assert "rdna4 config (int8 WMMA" in _ladder("llamacpp", "GGUF-KQUANT", "--gpu", "RX 9070")[0]
    assert "cdna config (int8 MFMA" in _ladder("llamacpp", "GGUF-KQUANT", "--gpu", "MI300X")[0]
