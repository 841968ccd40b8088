# Synthetic SGLang-shaped source (written for logscan). Same chain as 0.5.23.


class GPTQMarlinConfig:
    @classmethod
    def override_quantization_method(cls, hf_quant_cfg, user_quant):
        is_marlin_format = marlin_format(hf_quant_cfg)
        can_convert = cls.is_gptq_marlin_compatible(hf_quant_cfg)
        is_valid_user_quant = user_quant in (None, "marlin", "gptq_marlin")
        if not is_marlin_format and can_convert and is_valid_user_quant:
            return cls.get_name()
        return None
