# Synthetic SGLang-shaped source (written for logscan). vs 0.5.23: a new FlashInfer DeepGEMM rung
# ahead of FlashInfer; the NPU branch is gone.
from functools import partial


def _dispatch_auto_backend(act_scale_ue8m0: bool = False):
    if deep_gemm_enabled():
        return deepgemm_w8a8_block_fp8_linear_with_fallback
    elif platform().is_blackwell and has_flashinfer_deepgemm():
        return partial(flashinfer_deepgemm_w8a8_block_fp8_linear, act_scale_ue8m0=act_scale_ue8m0)
    elif platform().is_blackwell and is_flashinfer_available():
        return flashinfer_gemm_w8a8_block_fp8_linear_with_fallback
    elif platform().is_sm120:
        return cutlass_w8a8_block_fp8_linear_with_fallback
    elif _use_aiter:
        return aiter_w8a8_block_fp8_linear
    elif _is_xpu:
        return torch_w8a8_block_fp8_linear
    else:
        return triton_w8a8_block_fp8_linear


def dispatch_w8a8_block_fp8_linear(weight_block_size=None):
    if weight_block_size is not None and weight_block_size[1] != 128:
        return triton_w8a8_block_fp8_linear
    return _dispatch_auto_backend()
