import logging

from sglang.srt.utils import fetch, log_info_on_rank0, print_deprecated_warning, print_warning_once, rank0_log

logger = logging.getLogger(__name__)


class Fp8LinearMethod:
    def __init__(self, quant_config):
        log_info_on_rank0(logger, f"Using {self.backend} for FP8 block-scaled GEMM on sm{self.sm}")
        log_info_on_rank0(logger, msg="Detected fp8 checkpoint.")
        rank0_log("Using default MoE kernel config. Performance might be sub-optimal!")
        print_warning_once("Only support per-tensor FP8 weight scale on ROCm for now.")
        utils.print_info_once("DeepGEMM JIT is enabled.")
        print_deprecated_warning("--enable-flashinfer-mla is deprecated.")
        self.log_info("Capture cuda graph begin.")
        fetch("layer.0.weight")
        logger.info_once("Using Triton MoE with %s experts", 8)
        log_info_on_rank0(*args)
        raise ValueError(f"Unsupported quantization {quant_config}")
