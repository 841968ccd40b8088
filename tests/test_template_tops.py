"""The all-release build (tools/template_history.py) and one release's ``refresh.py --check``
choose an example's template alike (tools/derive_templates.py ``rule_templates`` /
``release_rule_templates``), given a history built by the same reader.

Seen on SGLang: the example 'Capture cuda graph begin. This can take up to several minutes. avail
mem=30.36 GB' is printed by 0.4.3.post3 .. 0.5.1.post3 through that very sentence, and by 0.5.2 ..
0.5.x through the vaguer f-string 'Capture {'cpu graph' if ... else 'cuda graph'} begin. ...'.
The build, choosing among every release's templates, takes the sentence. A per-release check
chooses among its release's templates and the *shipped* ones: the history built before logging
helpers were read lacked the sentence, so the check of 0.5.2 took the f-string ('new template').
Rebuilt with the same reader, the check agrees on all 110 SGLang releases (docs/ladders.md).
"""
from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import load_tool

dt = load_tool("derive_templates")

EXAMPLE = "Capture cuda graph begin. This can take up to several minutes. avail mem=30.36 GB"
OLD = "Capture cuda graph begin. This can take up to several minutes."  # 0.3.0 .. 0.4.3: no avail mem
EXACT = "Capture cuda graph begin. This can take up to several minutes. avail mem={before_mem} GB"
CPU = ("Capture {'cpu graph' if self.device == 'cpu' else 'cuda graph'} begin. This can take up to "
       "several minutes. avail mem={before_mem} GB")
RULES = [SimpleNamespace(examples=[EXAMPLE])]
BY_REL = {"0.4.3": {OLD: "info"}, "0.4.3.post3": {EXACT: "info"}, "0.5.1.post3": {EXACT: "info"},
          "0.5.2": {CPU: "info"}}


def test_the_build_takes_the_sentence_and_each_release_check_against_it_agrees():
    built = dt.rule_templates(RULES, BY_REL)
    assert built == {EXACT: {"level": "info", "releases": ["0.4.3.post3", "0.5.1.post3"]}}
    for rel, mine in BY_REL.items():
        held = {t for t, v in built.items() if rel in v["releases"]}
        assert set(dt.release_rule_templates(RULES, mine, built)) == held, rel


def test_a_check_against_a_history_lacking_the_sentence_credits_the_vaguer_form():
    """What the shipped SGLang history (read without helpers) made ``--check`` say on 0.5.2."""
    assert dt.release_rule_templates(RULES, BY_REL["0.5.2"], {}) == {CPU: {"level": "info"}}
    assert dt.best_templates(EXAMPLE, [(t, dt.template_regex(t), dt.literal_chars(t)) for t in (CPU, EXACT)]) == [EXACT]


def test_candidates_compile_a_regex_only_for_a_matching_head():
    rows = dt.candidates([EXACT, "Using %s for FP8 GEMM", "short %s"])
    assert [r[0] for r in rows] == [EXACT, "Using %s for FP8 GEMM"]  # under 12 literal characters: none
    assert dt.best_templates(EXAMPLE, rows) == [EXACT]
    assert rows[0][1] is not None and rows[1][1] is None  # 'Using' is not the example's head
