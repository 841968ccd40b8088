# Synthetic SGLang-shaped source (written for logscan). Same ladder as 0.5.23.


class Fp8LinearMethod:
    def apply(self, layer, x, bias=None):
        if self.use_marlin:
            return apply_fp8_marlin_linear(x, layer.weight, layer.weight_scale)
        if self.block_quant:
            return self.w8a8_block_fp8_linear(x, layer.weight, layer.weight_scale_inv)
        if isinstance(x, tuple):
            return apply_fp8_linear(x[0], layer.weight, layer.weight_scale, input_scale=x[1])
        return apply_fp8_linear(x, layer.weight, layer.weight_scale)
