# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
def select_w4a8_moe_backend(config: FusedMoEConfig):
    backends = [SynthMoeBackend.CUTLASS, SynthMoeBackend.HUMMING]
