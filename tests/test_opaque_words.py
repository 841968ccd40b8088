"""A gate term only the engine's source states (``opaque``: vLLM 0.33.0's RDNA3W4A16LinearKernel
``can_implement`` requires ``hasattr(torch.ops, '_rocm_C')``) reads as a quoted source condition.

Review trial: ``logscan gate`` on a W4A16 ROCm log with no GPU named printed the Python expression
inside quotes its own quotes broke, then the same text again as the reason: ``'hasattr(torch.ops,
'_rocm_C')' (not structured) (not structured: hasattr(torch.ops, '_rocm_C'))``. No real ROCm W4A16
log is bundled (fixtures: no MI300X / gfx942 log with GPTQ or AWQ), so the lines are vLLM 0.33.0
templates (shared/reference/vllm/templates.jsonl) with their placeholders filled, as
fixtures/vllm/synthetic-rocm-0.33.log is built.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from logscan.analysis.words import term_words
from logscan.cli import cli
from logscan.packs.model import GateTerm

LINES = (
    "(APIServer pid=1201) INFO 03-02 10:00:00 [api_server.py:1890] vLLM server version 0.33.0, serving model "
    "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4\n"
    "(EngineCore pid=1305) INFO 03-02 10:00:40 [gptq_marlin.py:300] Using TritonW4A16LinearKernel for "
    "GPTQMarlinLinearMethod\n"
    "(EngineCore pid=1305) INFO 03-02 10:00:44 [rocm.py:391] Using ROCM_AITER_FA backend out of potential "
    "backends: ['ROCM_AITER_FA', 'ROCM_ATTN', 'TRITON_ATTN'].\n"
)


def test_an_opaque_term_is_quoted_as_code_once():
    assert term_words(GateTerm(kind="opaque", text="hasattr(torch.ops, '_rocm_C')")) == \
        "source condition `hasattr(torch.ops, '_rocm_C')`"


@pytest.mark.parametrize("fmt", ["text", "markdown", "github", "json"])
def test_the_gate_names_an_unmodelled_condition_in_words(tmp_path, fmt):
    log = tmp_path / "rocm-w4a16.log"
    log.write_text(LINES, encoding="utf-8")
    out = CliRunner().invoke(cli, ["gate", "--format", fmt, str(log)]).output
    out = out.replace("&#96;", "`")  # the Markdown summary escapes backticks: a literal one shows
    assert "TritonW4A16LinearKernel" in out and "FALLBACK_UNEXPLAINED" in out
    assert "source condition `hasattr(torch.ops, '_rocm_C')` (logscan does not model it)" in out
    assert "not structured" not in out and "'hasattr(" not in out
