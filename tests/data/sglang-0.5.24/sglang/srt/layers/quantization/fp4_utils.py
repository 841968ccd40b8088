# Synthetic SGLang-shaped source for tests/test_refresh_sglang.py (written for logscan, not SGLang's code).
# vs 0.5.23: the SM80-SM90 branch of the auto chain also needs CUDA >= 12.0.


def initialize_fp4_gemm_config() -> None:
    global FP4_GEMM_RUNNER_BACKEND
    backend = read_option("fp4_gemm_runner_backend")
    if backend == "auto":
        if platform().is_sm100:
            backend = "flashinfer_cutedsl"
        elif is_cuda() and cuda_at_least(12, 0) and (10, 0) > capability() >= (8, 0):
            backend = "marlin"
        else:
            backend = "flashinfer_cutlass"
    FP4_GEMM_RUNNER_BACKEND = Fp4GemmRunnerBackend(backend)
