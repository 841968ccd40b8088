# Synthetic SGLang-shaped source (written for logscan). vs 0.5.23: the explicit FlashInfer
# CUTLASS branch is tested before the CuTe DSL one.


class ModelOptNvFp4FusedMoEMethod:
    def create_moe_runner(self, layer, moe_runner_config):
        moe_runner_backend = get_moe_runner_backend()
        if moe_runner_backend.is_auto():
            if is_cuda() and (8, 0) <= capability() < (10, 0):
                moe_runner_backend = MoeRunnerBackend.MARLIN
            else:
                moe_runner_backend = MoeRunnerBackend.FLASHINFER_TRTLLM
        if moe_runner_backend.is_lora():
            self.runner = None
            return
        if moe_runner_backend.is_flashinfer_cutlass():
            layer.cutlass_ready = True
        if moe_runner_backend.is_flashinfer_cutedsl():
            layer.cutedsl_wrapper = None
        if moe_runner_backend.is_cutlass():
            raise NotImplementedError("moe_runner_backend=cutlass is not supported here")
        self.runner = MoeRunner(moe_runner_backend, moe_runner_config)
