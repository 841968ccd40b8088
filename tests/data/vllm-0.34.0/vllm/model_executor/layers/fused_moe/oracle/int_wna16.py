# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
def _get_priority_backends(config: FusedMoEConfig):
    if current_platform.is_xpu():
        return [SynthMoeBackend.XPU]
    if current_platform.is_cpu():
        return [SynthMoeBackend.ZEN_CPU, SynthMoeBackend.CPU]


def _get_priority_backends(config: FusedMoEConfig):
    backends = [SynthMoeBackend.RDNA3, SynthMoeBackend.FLASHINFER_TRTLLM, SynthMoeBackend.MARLIN, SynthMoeBackend.BATCHED_MARLIN, SynthMoeBackend.TRITON, SynthMoeBackend.HUMMING, SynthMoeBackend.EMULATION]
