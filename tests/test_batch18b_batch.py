"""Corpus batch 18b (docs/corpus.md, "Batch 18b"): real llama.cpp-family kernel failures (ROCm / rocBLAS on
gfx906 / gfx1151 / RX 9060 XT, CUDA 'invalid device function' on Volta, NO_DEVICE_CODE arch 520, a quoted 'no kernel
image'), 'invalid argument' / cuBLAS 'not supported' op failures, TensorRT-LLM GEMM-profiler lines and
stable-diffusion.cpp's 'no kernel image' (fixtures/llamacpp/llamacpp-258..268, trtllm-200..201, other-141).
First sight 0.938, precision 1.000. The mechanism it showed, on the real log, with the counter-examples that must stay:

- rocBLAS reports a failed HIP call in its own sentence ("rocBLAS error from hip error code: '<hipGetErrorName>':<code>",
  ROCm/rocBLAS library/src/utility.cpp); the HIP error names that say the code object holds no kernel for the device
  (hipErrorInvalidDeviceFunction 98, hipErrorNoBinaryForGpu 209) are the arch refusal ggml states as 'invalid device
  function' (llamacpp-258: strsm on gfx906); an invalid image / kernel file (llamacpp-259 / -261) or any other HIP
  error is not read as one.
The precision windows (llamacpp-262 / -263 / -266 'invalid argument', -264 cuBLAS 'requested functionality is not
supported', trtllm-201's profiler assertion) must keep no finding.
"""
from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, finding_codes, runs_of, write_log


def _fx(name: str):
    return FIXTURES / name.rsplit("-", 1)[0] / f"{name}.log"


def _codes(name: str) -> set[str]:
    runs = runs_of(_fx(name))
    return set().union(*(finding_codes(r) for r in runs)) if runs else set()


# -- rocBLAS's own report of a HIP arch refusal ----------------------------------------------------

def test_rocblas_invalid_device_function_is_an_arch_refusal_on_the_real_log():
    (run,) = runs_of(_fx("llamacpp-258"))  # gfx906 MI50, SOLVE_TRI -> rocBLAS strsm
    assert run["engine"]["name"] == "llamacpp"
    assert run["engine"]["platform"] == "ROCM"
    arch = [f for f in run["findings"] if f["code"] == "UNSUPPORTED_ON_ARCH"]
    assert len(arch) == 1 and "hipErrorInvalidDeviceFunction" in arch[0]["evidence"], run["findings"]


@pytest.mark.parametrize("line, arch", [
    ("rocBLAS error from hip error code: 'hipErrorInvalidDeviceFunction':98", True),
    ("rocBLAS error from hip error code: 'hipErrorNoBinaryForGpu':209", True),
    ("rocBLAS error from hip error code: 'hipErrorInvalidImage':200", False),       # llamacpp-259's
    ("rocBLAS error from hip error code: 'hipErrorInvalidKernelFile':218", False),  # llamacpp-261's
    ("rocBLAS error from hip error code: 'hipErrorOutOfMemory':2", False),
])
def test_only_the_no_kernel_hip_errors_are_arch_refusals(tmp_path, line, arch):
    text = ("ggml_cuda_init: found 1 ROCm devices:\n"
            "  Device 0: AMD Radeon Graphics, gfx906:sramecc+:xnack- (0x906), VMM: no, Wave Size: 64\n"
            f"{line}\nggml_cuda_compute_forward: SOLVE_TRI failed\n")
    (run,) = runs_of(write_log(tmp_path, text))
    assert ("UNSUPPORTED_ON_ARCH" in finding_codes(run)) is arch


@pytest.mark.parametrize("name", ["llamacpp-259", "llamacpp-261"])
def test_invalid_image_or_kernel_file_is_no_arch_finding_on_the_real_logs(name):
    assert "UNSUPPORTED_ON_ARCH" not in _codes(name)


# -- precision windows: op failures that state no arch ---------------------------------------------

@pytest.mark.parametrize("name", ["llamacpp-262", "llamacpp-263", "llamacpp-264", "llamacpp-266", "llamacpp-268",
                                  "trtllm-201"])
def test_op_failures_without_an_arch_statement_raise_nothing(name):
    assert _codes(name) == set()


@pytest.mark.parametrize("name", ["llamacpp-260", "llamacpp-265", "llamacpp-267"])
def test_first_sight_arch_refusals_stay(name):
    assert "UNSUPPORTED_ON_ARCH" in _codes(name)


def test_engines_of_the_batch():
    for n in range(258, 269):
        assert {r["engine"]["name"] for r in runs_of(_fx(f"llamacpp-{n}"))} == {"llamacpp"}, n
    for name in ("trtllm-200", "trtllm-201"):
        assert {r["engine"]["name"] for r in runs_of(_fx(name))} == {"trtllm"}, name
    assert {r["engine"]["name"] for r in runs_of(_fx("other-141"))} == {"unknown"}  # stable-diffusion.cpp


# -- llama.cpp's verbose log format without a level letter -----------------------------------------

def test_timestamp_without_level_letter_is_the_common_log_prefix_on_the_real_log():
    # '0.14.603.693 D:/a/.../ggml-cuda.cu:106: ROCm error': common/log.cpp's timestamp, no level letter,
    # then ggml's abort whose Windows drive letter is not a level: the start died there
    (run,) = runs_of(_fx("llamacpp-261"))
    assert run["start_failure"] and run["start_failure"]["line"] == 6, run["start_failure"]
    assert "UNSUPPORTED_ON_ARCH" not in finding_codes(run)


@pytest.mark.parametrize("line, failed", [
    ("0.14.603.693 /opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:97: CUDA error", True),
    ("0.14.603.693 E /opt/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:97: CUDA error", True),
    ("0.14.603.693 I load_tensors: offloaded 41/41 layers to GPU", False),
])
def test_level_letter_is_optional_in_the_verbose_format(tmp_path, line, failed):
    (run,) = runs_of(write_log(tmp_path, "0.00.023.119 I ggml_cuda_init: found 1 CUDA devices:\n" + line + "\n"))
    assert bool(run["start_failure"]) is failed
