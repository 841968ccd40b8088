# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
def _get_priority_backends(config: FusedMoEConfig):
    _AVAILABLE_BACKENDS = [SynthMoeBackend.AITER, SynthMoeBackend.FLASHINFER_TRTLLM, SynthMoeBackend.FLASHINFER_CUTLASS, SynthMoeBackend.DEEPGEMM, SynthMoeBackend.VLLM_CUTLASS, SynthMoeBackend.TRITON, SynthMoeBackend.MARLIN, SynthMoeBackend.HUMMING, SynthMoeBackend.BATCHED_DEEPGEMM, SynthMoeBackend.BATCHED_VLLM_CUTLASS, SynthMoeBackend.BATCHED_TRITON, SynthMoeBackend.XPU, SynthMoeBackend.CPU_W8A8, SynthMoeBackend.CPU, SynthMoeBackend.HPC]
