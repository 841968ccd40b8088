"""Rewordings the reference never saw are still recognised (the families generalise).

Each line below is a message of a vLLM source file that is NOT among the 13 releases of
``shared/reference/vllm/templates.jsonl`` (intermediate commits of vllm-project/vllm, e.g.
``fused_moe/oracle/gpt_oss_mxfp4.py`` and ``fused_moe/oracle/marlin.py``), rendered with
plausible values and printed in the 0.33 line format. No rule was written for them: they
must be taken by the generic families, with a finding exactly where the sentence states one.
"""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs

P = "(EngineCore pid=1) {lvl} 11-29 10:00:01 [{src}:1] "

#: (level, source file, message, expected event kind, expected finding code or None)
UNSEEN = [
    ("INFO", "marlin.py", "Using 'MARLIN' GPTQ-Marlin MoE backend.", "moe_kernel", None),
    ("INFO", "gpt_oss_mxfp4.py", "Using Triton backend for mxfp4 lora", "moe_kernel", None),
    ("INFO", "gpt_oss_mxfp4.py", "Using 'FLASHINFER_TRTLLM_MXFP4_BF16' Mxfp4 MoE backend.", "moe_kernel", None),
    ("DEBUG", "marlin.py", "GPTQ-Marlin 8-bit MoE modular kernel is not supported. Falling back to legacy fused_marlin_moe().",
     "fallback_warning", None),
    ("DEBUG", "gpt_oss_mxfp4.py", "Mxfp4 MoE backend 'FLASHINFER_TRTLLM_MXFP4_BF16' does not support the deployment "
     "configuration since kernel does not support current device.", "failure", None),
    ("ERROR", "core.py", "ValueError: VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1 is set but the current device capability is "
     "not supported. Only SM90 (CUTLASS) and SM100+ (TRTLLM) are supported.", "failure", "UNSUPPORTED_ON_ARCH"),
    ("ERROR", "core.py", "NotImplementedError: No MXFP4 MoE backend supports the deployment configuration.",
     "kernel_not_found", "KERNEL_NOT_FOUND"),
    ("ERROR", "core.py", "NotImplementedError: Mxfp4 LoRA is currently only supported on CUDA.", "failure", None),
    # sgcov37: rewordings of gguf.py's 'GGUF has precision issues with bfloat16 on Blackwell.' (a dtype the
    # method drops on an arch; vllm.grammar.precision-issues-on): an event with its parts, no finding
    ("WARNING", "gguf.py", "GGUF has known precision issues with bfloat16 on Blackwell GPUs; using float16.", "quant_method", None),
    ("WARNING", "gguf.py", "GGUF has precision issues with bf16 on SM120.", "quant_method", None),
    ("WARNING", "bitsandbytes.py", "Bitsandbytes has precision issues with float16 on Turing devices.", "quant_method", None),
    ("WARNING", "gguf.py", "GGUF shows precision issues with bfloat16 on ROCm.", "quant_method", None),
    ("WARNING", "awq.py", "AWQ has numerical precision issues with fp16 on gfx950.", "quant_method", None),
    ("WARNING", "gguf.py", "GGUF has precision issues with bfloat16 on Blackwell devices.", "quant_method", None),
    # a caveat with no dtype and arch stays the event-only family's (vllm.family.caveat)
    ("WARNING", "gguf.py", "GGUF dequantization may have precision issues.", "fallback_warning", None),
]


@pytest.mark.parametrize(("level", "src", "message", "kind", "code"), UNSEEN, ids=[u[2][:48] for u in UNSEEN])
def test_unseen_line_is_recognised(tmp_path, level, src, message, kind, code):
    log = tmp_path / "unseen.log"
    log.write_text(P.format(lvl=level, src=src) + message + "\n")
    report = scan_inputs([str(log)])
    assert [e.kind for e in report.events] == [kind], f"events: {[(e.rule, e.kind) for e in report.events]}"
    codes = sorted(f.code for run in report.runs for f in run.findings)
    assert codes == ([code] if code else []), f"findings {codes}"
