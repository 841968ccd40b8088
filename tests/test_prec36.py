"""Precision leftovers of batch 16a on the real logs (prec36): lines that are not about a kernel
stay out of a run's findings and its "not understood" list, and a run is only what the log shows.
"""
from __future__ import annotations

from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _runs(path):
    return scan_inputs([str(path)], default_packs()).runs


def test_a_quant_word_inside_a_model_id_is_no_quantization_line():
    """sglang-309 / -307 (sostrowsk/dgx-spark-local-llm, SGLang on a GB10): 'Tokenizer for
    poolside/Laguna-S-2.1-NVFP4 is still TokenizersBackend ...' names the model, it speaks of
    the tokenizer; the topic vocabulary (patterns/sglang/rules/90-topics.toml) does not read a
    word inside a repo id or a path."""
    for name, line in (("sglang-309", 17), ("sglang-307", 17)):
        (run,) = _runs(FIXTURES / "sglang" / f"{name}.log")
        assert "Tokenizer for poolside/" in (FIXTURES / "sglang" / f"{name}.log").read_text().splitlines()[line - 1]
        assert line not in {u.line for u in run.unexplained}
        assert not run.findings


def test_the_quoted_linear_class_rule_reads_vllm_372_and_no_prose():
    """vllm.linear.kernel-class-quoted (patterns/vllm/rules/30-linear.toml) still reads vllm-372's
    'Logs confirm Using XPUwNa16LinearKernel.' (a PR quoting vLLM's selection line), and reads no
    selection from vllm-369, whose prose names CPUWNA16LinearKernel as a traceback function."""
    (run,) = _runs(FIXTURES / "vllm" / "vllm-372.log")
    assert [s.kernel for s in run.selections] == ["XPUwNa16LinearKernel"]
    for run in _runs(FIXTURES / "vllm" / "vllm-369.log"):
        assert not run.selections
