"""The planning overlay's term rewrites test a pattern of escaped literals by set look-up, not by
compiling it (start-up, issue 18): the answer must be the regex's on every term text shipped."""
from __future__ import annotations

import regex

from logscan.analysis.overlay import _fullmatch, literal_alternatives, load_overlay
from logscan.packs.loader import default_packs


def _term_texts() -> set[str]:
    out: set[str] = set()

    def walk(terms):
        for t in terms:
            out.update(x for x in (t.source, t.text) if x)
            for opt in t.options or []:
                walk(opt)

    for pack in default_packs().packs.values():
        for lf in pack.ladders.values():
            for reg in lf.registry:
                for terms in reg.gates.values():
                    walk(terms)
            for k in lf.kernel.values():
                walk(k.gates)
    return out


def test_every_shipped_rewrite_pattern_answers_as_its_regex():
    texts = _term_texts()
    assert len(texts) > 100
    patterns = [rw.match for engine in ("vllm", "sglang") if load_overlay(engine) for rw in load_overlay(engine).term]
    assert len(patterns) > 20
    literal = 0
    for p in patterns:
        rx = regex.compile(p)
        literal += literal_alternatives(p) is not None
        probes = texts | {p, p.replace("\\", "")} | set(p.replace("\\", "").split("|"))
        for text in probes:
            assert _fullmatch(p)(text) == (rx.fullmatch(text) is not None), (p, text)
    assert literal > len(patterns) // 2  # most are literals: the fast path is the one taken


def test_only_plain_literals_are_read_as_literals():
    assert literal_alternatives(r"a\.b|c\(\)") == {"a.b", "c()"}
    assert literal_alternatives("x % 2 == 0") == {"x % 2 == 0"}
    for p in (r"\d+", "a.b", "a*", "(a)", "[ab]", "a{2}", "^a", "a$", "a\\", r"\bword", "a\tb", "a?"):
        assert literal_alternatives(p) is None, p
