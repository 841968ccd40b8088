# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
_SUPPORTED_BACKENDS = [SynthMoeBackend.FLASHINFER_TRTLLM, SynthMoeBackend.DEEPGEMM, SynthMoeBackend.MARLIN, SynthMoeBackend.XPU, SynthMoeBackend.AITER_MXFP8, SynthMoeBackend.HUMMING, SynthMoeBackend.TRITON_MXFP8, SynthMoeBackend.EMULATION]
