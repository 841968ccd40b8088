"""TensorRT-LLM and llama.cpp packs: line formats, arch refusals, and llama.cpp's compiled-arch check.

Device and system_info lines follow the formats quoted in shared/reference/other-engines/llamacpp.md
(ggml_cuda_init, system_info); the corpus logs themselves are checked in test_real_logs.py.
"""
from __future__ import annotations

import pytest

from logscan.analysis.archs import check_compiled, parse_cc, parse_compiled
from logscan.pipeline import scan_inputs

B200_OLD_BUILD = """\
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA B200, compute capability 10.0, VMM: yes
build: 6448 (24a6734d) with cc (Ubuntu 14.2.0) for x86_64-linux-gnu
system_info: n_threads = 16 (n_threads_batch = 16) / 32 | CUDA : ARCHS = 750,800,860,890,900,1200 | USE_GRAPHS = 1 | CPU : SSE3 = 1 |
"""


def _scan(tmp_path, text):
    p = tmp_path / "x.log"
    p.write_text(text)
    return scan_inputs([str(p)])


def test_b200_on_a_build_without_sm100_is_flagged(tmp_path):
    run = _scan(tmp_path, B200_OLD_BUILD).runs[0]
    assert run.engine.name == "llamacpp"
    assert run.config.compute_capability == "100"
    f = {x.code: x for x in run.findings}["PTX_JIT_FALLBACK"]  # sm90 below the device, no sm10x: PTX JIT
    assert f.inferred and "sm90 code" in f.reasons[0] and "ARCH_NOT_COMPILED" not in {x.code for x in run.findings}


def test_device_family_in_the_build_is_not_flagged(tmp_path):
    text = B200_OLD_BUILD.replace("NVIDIA B200, compute capability 10.0", "NVIDIA H100 80GB HBM3, compute capability 9.0")
    run = _scan(tmp_path, text).runs[0]
    assert run.config.gpu == "NVIDIA H100 80GB HBM3"
    assert "ARCH_NOT_COMPILED" not in {x.code for x in run.findings}


@pytest.mark.parametrize("device,compiled,runs,family", [
    (100, "750,800,860,890,900,1200", 90, False),   # B200 on the default (non-native) arch list
    (120, "750,800,860,890,900,1200", 120, True),   # RTX 5090 with 120a-real
    (121, "1200", 120, True),                        # GB10 runs the sm120 code: same family
    (70, "750,800", None, False),                    # V100: no device code at all
])
def test_check_compiled(device, compiled, runs, family):
    v = check_compiled(device, parse_compiled(compiled, 10))
    assert (v.runs, v.family_compiled) == (runs, family)


def test_parse_cc_forms():
    assert [parse_cc(x) for x in ("9.0", "90", "sm_120", "12.1", None, "n/a")] == [90, 90, 120, 121, None, None]


@pytest.mark.parametrize("line,code", [
    ("[TensorRT-LLM][ERROR] Marlin NVFP4 GEMM is only supported on SM89, SM90-99, and SM120/121; current SM = 100",
     "UNSUPPORTED_ON_ARCH"),
    ("[06/10/2025-02:50:21] [TRT-LLM] [E] Failed to initialize executor on rank 0: fp8 blockscale gemm only support Hopper.",
     "UNSUPPORTED_ON_ARCH"),
    ("warning: no usable GPU found, --gpu-layers option will be ignored", "BACKEND_OVERRIDE_IGNORED"),
])
def test_engine_lines_raise_their_code(tmp_path, line, code):
    run = _scan(tmp_path, line + "\n").runs[0]
    assert code in {f.code for f in run.findings}


def test_trtllm_version_line_names_the_engine(tmp_path):
    run = _scan(tmp_path, "[TensorRT-LLM] TensorRT LLM version: 1.3.0rc25\n"
                          "[TensorRT-LLM][ERROR] Marlin NVFP4 GEMM is only supported on Hopper (SM 9.x); current SM = 100\n").runs[0]
    assert (run.engine.name, run.engine.version, run.config.compute_capability) == ("trtllm", "1.3.0rc25", "100")


FP4_GGUF = """\
ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA B200, compute capability 10.0, VMM: yes
build: 6448 (24a6734d) with cc (Ubuntu 14.2.0) for x86_64-linux-gnu
system_info: n_threads = 16 (n_threads_batch = 16) / 32 | CUDA : ARCHS = 750,800,860,890,900,1000,1200 | USE_GRAPHS = 1 |
print_info: file type   = MXFP4 MoE
"""


@pytest.mark.parametrize("device,archs,kernel", [
    ("NVIDIA B200, compute capability 10.0", "750,800,860,890,900,1000,1200", "MMQ ampere config"),   # 1000 < 1200
    ("NVIDIA B300, compute capability 10.3", "750,800,860,890,900,1000,1200", "MMQ ampere config"),
    ("NVIDIA GeForce RTX 5090, compute capability 12.0", "750,800,860,890,900,1000,1200", "MMQ blackwell config"),
    ("NVIDIA GeForce RTX 5090, compute capability 12.0", "750,800,860,890,900,1000", "MMQ ampere config"),  # no 120a
])
def test_llamacpp_fp4_gguf_path_is_inferred_from_device_and_archs(tmp_path, device, archs, kernel):
    text = FP4_GGUF.replace("NVIDIA B200, compute capability 10.0", device).replace(
        "750,800,860,890,900,1000,1200", archs)
    run = _scan(tmp_path, text).runs[0]
    sels = [s for s in run.selections if s.family == "matmul (FP4 GGUF)"]
    assert len(sels) == 1 and not sels[0].observed and sels[0].kernel.startswith(kernel)
    assert sels[0].ladder is not None and "inferred" in sels[0].reasoning


def test_llamacpp_without_a_device_line_infers_nothing(tmp_path):
    run = _scan(tmp_path, FP4_GGUF.replace("  Device 0: NVIDIA B200, compute capability 10.0, VMM: yes\n", "")).runs[0]
    assert run.selections == []


def test_llamacpp_force_cublas_build_takes_the_cublas_dequant_path(tmp_path):
    text = "ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: yes\n" + FP4_GGUF
    run = _scan(tmp_path, text).runs[0]
    sel = next(s for s in run.selections if s.family == "matmul (FP4 GGUF)")
    assert (sel.kernel, sel.cost_class.value) == ("cuBLAS dequant (F16 GEMM)", "weight_only")  # rocm36: F16 GEMM on per-matmul dequantized weights is weight_only
