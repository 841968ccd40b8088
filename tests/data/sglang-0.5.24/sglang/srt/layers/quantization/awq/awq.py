# Synthetic SGLang-shaped source (written for logscan). Same chain as 0.5.23.


class AWQMarlinConfig:
    @classmethod
    def override_quantization_method(cls, hf_quant_cfg, user_quant):
        can_convert = cls.is_awq_marlin_compatible(hf_quant_cfg)
        is_valid_user_quant = user_quant in (None, "marlin", "awq_marlin")
        if can_convert and is_valid_user_quant:
            return cls.get_name()
        return None
