# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
def _get_priority_backends(config: FusedMoEConfig):
    if current_platform.is_rocm():
        _AVAILABLE_BACKENDS = [SynthMoeBackend.AITER, SynthMoeBackend.TRITON, SynthMoeBackend.BATCHED_TRITON]
    if current_platform.is_cuda():
        _AVAILABLE_BACKENDS = [SynthMoeBackend.FLASHINFER_TRTLLM, SynthMoeBackend.FLASHINFER_CUTLASS, SynthMoeBackend.TRITON, SynthMoeBackend.BATCHED_TRITON]
    if current_platform.is_cpu():
        _AVAILABLE_BACKENDS = [SynthMoeBackend.CPU]
    if current_platform.is_xpu():
        _AVAILABLE_BACKENDS = [SynthMoeBackend.XPU, SynthMoeBackend.TRITON]
