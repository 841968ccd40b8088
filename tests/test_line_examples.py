"""Rules recognise whole lines in every era's line format, read the way a user's file is read.

A rule's ``line_examples`` are complete lines as vLLM prints them: the legacy prefix
(0.5-0.7), the bracketed one (0.8 ->), the ANSI-cyan process tag of the stdout wrapper
(before 0.14), the ColoredFormatter's coloured level/time/file (0.14 ->; vllm/logging_utils/
formatter.py), the 0.33 process tag, and multi-line messages that NewLineFormatter continues
after ``\\r\\n`` with the prefix repeated. Each goes through reader -> unwrap -> prefix parser
-> matcher exactly as ``logscan scan`` does.
"""
from __future__ import annotations

import pytest

from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs

_PACKS = default_packs()
_CASES = [(cr.rule.id, line, bool(cr.rule.continuation))
          for p in _PACKS.packs.values() for cr in p.rules for line in cr.rule.line_examples]


def test_every_era_is_covered_by_some_line_example():
    """Legacy, bracketed, ANSI process tag, ColoredFormatter, 0.33 tag and a \\r\\n continuation."""
    lines = [line for _, line, _ in _CASES]
    assert any(" [" not in line.split("] ", 1)[0] and line[:4] in ("INFO", "WARN", "ERRO") for line in lines), "legacy"
    assert any("\x1b[36m(" in line or "\x1b[1;36m(" in line for line in lines), "ANSI process tag"
    assert any("\x1b[90m[" in line for line in lines), "ColoredFormatter"
    assert any(line.startswith("(EngineCore pid=") for line in lines), "0.33 process tag"
    assert any("\r\n" in line for line in lines), "multi-line message"


@pytest.mark.parametrize(("rule_id", "line", "continued"), _CASES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(_CASES)])
def test_line_example_yields_its_rule(tmp_path, rule_id, line, continued):
    log = tmp_path / "line.log"
    log.write_bytes((line + "\r\n").encode("utf-8"))
    report = scan_inputs([str(log)])
    rules = [e.rule for e in report.events]
    assert rules and rules[0] == rule_id, f"{rule_id}: got {rules} for {line!r}"
    if continued and "\r\n" in line:
        assert report.events[0].items, f"{rule_id}: continuation lines of {line!r} were not gathered"
