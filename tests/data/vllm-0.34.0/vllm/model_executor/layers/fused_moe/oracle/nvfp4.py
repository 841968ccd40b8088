# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
def select_nvfp4_moe_backend(config: FusedMoEConfig):
    AVAILABLE_BACKENDS = [SynthMoeBackend.FLASHINFER_TRTLLM, SynthMoeBackend.FLASHINFER_CUTEDSL, SynthMoeBackend.FLASHINFER_CUTEDSL_BATCHED, SynthMoeBackend.FLASHINFER_CUTLASS, SynthMoeBackend.VLLM_CUTLASS, SynthMoeBackend.MARLIN, SynthMoeBackend.HUMMING, SynthMoeBackend.EMULATION]
