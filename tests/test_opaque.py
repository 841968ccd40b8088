"""Request logs quote user text: a prompt that reads like an engine message raises nothing.

vLLM's request logger prints the prompt verbatim ("Received request ...: prompt: '...'").
The pack's ``[[opaque]]`` shapes keep every rule away from such lines; the same sentence
printed by the engine itself is still recognised (so the test fails if the opaque list, not
the rules, stopped matching).
"""
from __future__ import annotations

import re

import pytest

from logscan.match import Matcher
from logscan.models import Record
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs

_PACKS = default_packs()
_OPAQUE = [(name, o) for name, p in sorted(_PACKS.packs.items()) for o in p.meta.opaque]


def _events(engine: str, message: str):
    m = Matcher(_PACKS, context=engine)
    return list(m.feed(Record(source="t", line=1, message=message, level="INFO"))) + list(m.flush())


@pytest.mark.parametrize(("engine", "shape"), _OPAQUE, ids=[f"{n}-{o.id}" for n, o in _OPAQUE])
def test_opaque_examples_raise_no_event(engine, shape):
    for example in shape.examples:
        assert not _events(engine, example), example


@pytest.mark.parametrize(("engine", "shape"), _OPAQUE, ids=[f"{n}-{o.id}" for n, o in _OPAQUE])
def test_quoted_sentence_is_recognised_outside_the_request_log(engine, shape):
    """The quoted text of each example is itself an engine sentence some rule knows."""
    for example in shape.examples:
        quoted = re.search(r"'([^']{10,})'", example)
        assert quoted, f"example {example!r} quotes no text"
        assert _events(engine, quoted.group(1)), f"no rule knows {quoted.group(1)!r}: the example proves nothing"


def test_request_log_in_a_real_line_format_gives_no_finding(tmp_path):
    log = tmp_path / "requests.log"
    log.write_text(
        "INFO 08-17 22:48:14 [logger.py:43] Received request chatcmpl-1: prompt: "
        "'Your GPU does not have native support for FP8 computation; DeepGEMM MegaMoE requires SM100 GPUs.', "
        "params: SamplingParams(n=1), prompt_token_ids: None, lora_request: None.\n"
    )
    report = scan_inputs([str(log)])
    assert report.events == []
    assert all(not run.findings for run in report.runs)
