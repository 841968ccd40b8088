# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
def _get_priority_backends(config: FusedMoEConfig):
    if current_platform.is_cpu():
        return [SynthMoeBackend.CPU_INT4]
