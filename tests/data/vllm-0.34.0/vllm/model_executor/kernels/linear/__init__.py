# Synthetic vLLM 0.34.0 for tests/test_refresh.py (generated from the 0.33.0 history, edited)
_POSSIBLE_KERNELS = {
    PlatformEnum.XPU: [XPUW4A8IntLinearKernel, XPUwNa16LinearKernel],
    PlatformEnum.CPU: [Dynamic4bitLinearKernel, ZentorchWNA16LinearKernel, CPUWNA16LinearKernel],
    PlatformEnum.ROCM: [RDNA3W4A16LinearKernel, RDNAHybridW4A16LinearKernel, TritonW4A16LinearKernel, ConchLinearKernel, ExllamaLinearKernel],
    PlatformEnum.CUDA: [CutlassW4A8LinearKernel, MacheteLinearKernel, MarlinLinearKernel, ConchLinearKernel, ExllamaLinearKernel, TritonW4A16LinearKernel, HummingLinearKernel],
}


_POSSIBLE_INT8_KERNELS = {
    PlatformEnum.ROCM: [AiterInt8ScaledMMLinearKernel, TritonInt8ScaledMMLinearKernel],
    PlatformEnum.CPU: [ZentorchInt8ScaledMMLinearKernel, CPUInt8ScaledMMLinearKernel],
    PlatformEnum.CUDA: [CutlassInt8ScaledMMLinearKernel, TritonInt8ScaledMMLinearKernel, HummingInt8ScaledMMLinearKernel],
    PlatformEnum.XPU: [TritonInt8ScaledMMLinearKernel],
}


_POSSIBLE_FP8_KERNELS = {
    PlatformEnum.ROCM: [AiterHipbMMPerTokenFp8ScaledMMLinearKernel, AiterPreshuffledPerTokenFp8ScaledMMLinearKernel, AiterPerTokenFp8ScaledMMLinearKernel, ROCmFP8ScaledMMLinearKernel, PerTensorTorchFP8ScaledMMLinearKernel, RowWiseTorchFP8ScaledMMLinearKernel, ChannelWiseTorchFP8ScaledMMLinearKernel],
    PlatformEnum.XPU: [XPUW8A16FP8LinearKernel, XPUW8A8FP8LinearKernel, PerTensorTorchFP8ScaledMMLinearKernel, ChannelWiseTorchFP8ScaledMMLinearKernel],
    PlatformEnum.CUDA: [CutlassFP8ScaledMMLinearKernel, FlashInferFP8ScaledMMLinearKernel, B12xTensorFP8ScaledMMLinearKernel, PerTensorTorchFP8ScaledMMLinearKernel, ChannelWiseTorchFP8ScaledMMLinearKernel, MarlinFP8ScaledMMLinearKernel, HummingFP8ScaledMMLinearKernel],
    PlatformEnum.CPU: [CPUFP8W8A8ScaledMMLinearKernel, CPUFp8PerTensorScaledMMLinearKernel, CPUFp8ChannelWiseScaledMMLinearKernel, PerTensorTorchFP8ScaledMMLinearKernel, ChannelWiseTorchFP8ScaledMMLinearKernel],
}


_POSSIBLE_FP8_BLOCK_KERNELS = {
    PlatformEnum.XPU: [XPUFp8BlockScaledMMKernel, TritonFp8BlockScaledMMKernel, BlockWiseTorchFP8ScaledMMLinearKernel],
    PlatformEnum.CUDA: [FlashInferFp8DeepGEMMDynamicBlockScaledKernel, DeepGemmFp8BlockScaledMMKernel, CutlassFp8BlockScaledMMKernel, B12xFp8BlockScaledMMKernel, MarlinFP8ScaledMMLinearKernel, HummingFP8ScaledMMLinearKernel, TritonFp8BlockScaledMMKernel, BlockWiseTorchFP8ScaledMMLinearKernel],
    PlatformEnum.ROCM: [AiterFp8BlockScaledMMKernel, TritonFp8BlockScaledMMKernel],
    PlatformEnum.CPU: [CPUFp8W8A8BlockScaledMMKernel, CPUFp8BlockScaledMMKernel],
}


_POSSIBLE_WFP8A16_KERNELS = {
    PlatformEnum.ROCM: [],
    PlatformEnum.CPU: [],
    PlatformEnum.CUDA: [HummingFP8ScaledMMLinearKernel, MarlinFP8ScaledMMLinearKernel],
    PlatformEnum.XPU: [XPUW8A16FP8LinearKernel],
}


_POSSIBLE_MXFP8_KERNELS = {
    PlatformEnum.ROCM: [RocmDotScaledMxfp8LinearKernel, EmulationMxfp8LinearKernel],
    PlatformEnum.CUDA: [FlashInferCutedslMxfp8LinearKernel, FlashInferCutlassMxfp8LinearKernel, MarlinMxfp8LinearKernel, B12xMxfp8LinearKernel, EmulationMxfp8LinearKernel, HummingMxfp8LinearKernel, FlashInferTrtllmMxfp8LinearKernel, TorchMxFp8LinearKernel],
    PlatformEnum.XPU: [XPUMxFp8LinearKernel, TorchMxFp8LinearKernel, EmulationMxfp8LinearKernel],
}


_POSSIBLE_NVFP4_KERNELS = {
    PlatformEnum.ROCM: [EmulationNvFp4LinearKernel],
    PlatformEnum.CUDA: [NewShinyNvFp4LinearKernel, FlashInferCuteDslNvFp4LinearKernel, FlashInferCutlassNvFp4LinearKernel, FlashInferB12xNvFp4LinearKernel, CutlassNvFp4LinearKernel, FlashInferCuteDslNvFp4W4A16LinearKernel, MarlinNvFp4LinearKernel, FlashInferTrtllmNvFp4LinearKernel, FlashInferCudnnNvFp4LinearKernel, FbgemmNvFp4LinearKernel, B12xNvFp4LinearKernel, B12xNvFp4W4A16LinearKernel, TorchNvFp4LinearKernel, HummingNvFp4LinearKernel],
}


_POSSIBLE_MXFP4_KERNELS = {
    PlatformEnum.CUDA: [FlashInferMxFp4LinearKernel, MarlinMxFp4LinearKernel, HummingMxFp4LinearKernel, B12xMxFp4LinearKernel, EmulationMxfp4LinearKernel],
    PlatformEnum.ROCM: [Rdna3W4A8MxFp4LinearKernel, AiterMxfp4LinearKernel, EmulationMxfp4LinearKernel],
    PlatformEnum.XPU: [XPUMxFp4LinearKernel, TorchMxFp4LinearKernel],
}


_POSSIBLE_MXFP6_KERNELS = {
    PlatformEnum.ROCM: [EmulationMxfp6LinearKernel],
    PlatformEnum.CUDA: [HummingMxFp6LinearKernel, EmulationMxfp6LinearKernel],
}
