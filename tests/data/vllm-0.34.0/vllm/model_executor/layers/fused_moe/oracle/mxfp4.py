# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
def _get_priority_backends(config: FusedMoEConfig):
    _AVAILABLE_BACKENDS = [SynthMoeBackend.FLASHINFER_TRTLLM_MXFP4_MXFP8, SynthMoeBackend.DEEPGEMM_MXFP4, SynthMoeBackend.MARLIN, SynthMoeBackend.BATCHED_MARLIN, SynthMoeBackend.HUMMING]


def _get_priority_backends_for_gpt_oss(config: FusedMoEConfig):
    _AVAILABLE_BACKENDS = [SynthMoeBackend.FLASHINFER_TRTLLM_MXFP4_BF16, SynthMoeBackend.FLASHINFER_TRTLLM_MXFP4_MXFP8, SynthMoeBackend.AITER_MXFP4_BF16, SynthMoeBackend.AITER_TRITON_MXFP4_BF16, SynthMoeBackend.AITER_MXFP4_FP8, SynthMoeBackend.AITER_MXFP4_MXFP4, SynthMoeBackend.TRITON, SynthMoeBackend.FLASHINFER_CUTLASS_MXFP4_BF16, SynthMoeBackend.FLASHINFER_CUTLASS_MXFP4_MXFP8, SynthMoeBackend.CUTLASS_MXFP4_MXFP4, SynthMoeBackend.MARLIN, SynthMoeBackend.BATCHED_MARLIN, SynthMoeBackend.HUMMING, SynthMoeBackend.XPU, SynthMoeBackend.CPU, SynthMoeBackend.EMULATION]


def _get_priority_backends(config: FusedMoEConfig):
    if current_platform.is_xpu():
        return [SynthMoeBackend.XPU]
    if current_platform.is_rocm():
        return [SynthMoeBackend.AITER_MXFP4_BF16, SynthMoeBackend.EMULATION]
    if current_platform.is_cpu():
        return [SynthMoeBackend.CPU]


def select_deepseek_v4_mxfp4_moe_backend(config: FusedMoEConfig):
    if current_platform.is_rocm() and config.routing_method == RoutingMethodType.DeepseekV4:
        priority_backends = [SynthMoeBackend.AITER_MXFP4_BF16, SynthMoeBackend.TRITON_UNFUSED]


def log_choice():
    logger.info("Using MarlinExperts (weight-only FP4) for AutoRound MXFP4 MoE")
