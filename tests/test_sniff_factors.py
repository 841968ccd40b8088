"""A gate's sniffs (``Prefilter._sniff_sources``) must be necessary conditions of its prefix
patterns: wherever a prefix pattern matches a line, some sniff matches the line's bytes. The
fifth round of issue 18 made two changes that this checks on every bundled real line and random
mutations: a literal factor found anywhere in a pattern (``literal_factor``: TGI's
``text_generation_``) stands for its head, and a sniff implied by another one of its gate is
left out (``without_implied``: SGLang's ``\\[(?:timestamp)\\.``)."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import regex

from logscan.packs.loader import default_packs
from logscan.sources.literals import literal_factor, sniff_source, without_implied
from logscan.sources.prefilter import Prefilter, available_backends, make_prefilter

ROOT = Path(__file__).resolve().parent.parent


def test_literal_factor_reads_through_unquantified_groups_only():
    tgi = (r"(?P<timestamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z)\s{1,3}(?P<level>INFO|WARN)\s{1,2}"
           r"(?:[a-z][\w-]{0,40}: ){0,2}text_generation_(?:launcher|router)(?:::[\w:]{1,80})?: ")
    assert literal_factor(tgi) == "text_generation_"
    assert literal_factor(r"(?P<f>text_generation_server[\w.]{0,9}:\d) - ") == "text_generation_server"
    assert literal_factor(r"(?:abcdefgh)?xy") == "xy"  # a quantified group is not necessary
    assert literal_factor(r"abcdefgh|xy") == ""  # a top-level alternation: no factor is necessary
    assert literal_factor(r"(?i)abcdefgh") == ""  # case-insensitive: no byte literal
    assert literal_factor(r"a(?i:bcdefgh)") == "a"
    assert literal_factor(r"ab\bcd") == "ab"  # an anchor ends a run
    assert literal_factor(r"\p{L}abcdef") == ""  # regex-only syntax: not read
    assert sniff_source(tgi) == "text_generation_"
    assert sniff_source(r"x(?P<a>\d)(?P<b>\d) \[w\.z\] \| é(?:q)?") == r"\ \[w\.z\]\ \|\ \xc3\xa9"


def test_without_implied_drops_only_sniffs_that_hold_another():
    head = rb"\[(?:\d{4}-\d\d-\d\d)"
    assert without_implied([head, head + rb"\.", rb"\[TRT\] "]) == [head, rb"\[TRT\] "]
    assert without_implied([b"text_generation_server", b"text_generation_"]) == [b"text_generation_"]
    assert without_implied([b"abc", rb"a\bc"]) == [b"abc", rb"a\bc"]  # \b is no literal b
    assert without_implied([b"ab", rb"(?:ab)?c"]) == [b"ab", rb"(?:ab)?c"]  # optional: c alone matches
    assert without_implied([rb"a\-b", b"a-b"]) == [rb"a\-b"]  # the same sniff spelled twice
    assert without_implied([b"(", b"x"]) == [b"(", b"x"]  # unreadable: kept


def _lines() -> list[bytes]:
    out: list[bytes] = []
    for f in sorted(ROOT.glob("fixtures/*/*.log")):
        out += f.read_bytes().split(b"\n")
    return out


@pytest.mark.parametrize("backend", available_backends())
def test_some_sniff_matches_wherever_a_prefix_matches_on_every_real_line_and_mutations(backend):
    pf = make_prefilter(default_packs(), backend).inner
    gates = [(g, [regex.compile(s, regex.V0) for s in pf._sniff_sources(g)],
              [regex.compile(s, regex.V0) for s in _all_sniffs(g)]) for g, _ in pf.gates]
    assert {g.engine for g, _, _ in gates} >= {"sglang", "tgi", "trtllm", "lmdeploy"}
    lines = _lines()
    rng = random.Random(18)
    bits = [b"text_generation_", b"[", b"]", b" ", b"2025-01-02 03:04:05", b"T", b"Z", b".123", b"|", b"-"]
    for _ in range(20000):
        line = rng.choice(lines)
        r = rng.random()
        if r < 0.3:
            line = line[rng.randint(0, len(line) // 3):]
        elif r < 0.7:
            i = rng.randint(0, len(line))
            line = line[:i] + rng.choice(bits) + line[i:]
        elif r < 0.85 and line:
            i = rng.randrange(len(line))
            line = line[:i] + line[i + 1:]
        lines.append(line)
    matched = {g.engine: 0 for g, _, _ in gates}
    for line in lines:
        if not line.isascii():
            continue  # a non-ASCII buffer opens every gate (the sniffs are not trusted there)
        text = line.decode("ascii")
        for gate, sniffs, every in gates:
            kept = any(s.search(line) for s in sniffs)
            assert kept == any(s.search(line) for s in every), (gate.engine, line[:200])
            if any(rx.search(text) for rx in gate.prefixes):
                assert kept, (gate.engine, line[:200])
                matched[gate.engine] += 1
    assert min(matched.values()) > 20, matched  # every gate's prefixes took part


def _all_sniffs(gate) -> list[bytes]:
    """The gate's sniffs before ``without_implied`` (one per prefix pattern)."""
    import re

    from logscan.sources.literals import sniff_head

    return [re.sub(r"\(\?P<\w+>", "(?:", sniff_head(rx.pattern) if rx.flags & re.IGNORECASE
                   else sniff_source(rx.pattern)).encode("utf-8") for rx in gate.prefixes]


def test_the_shipped_tgi_and_sglang_gates_sniff_fewer_and_cheaper_patterns():
    pf = make_prefilter(default_packs(), available_backends()[0]).inner
    sniffs = {g.engine: pf._sniff_sources(g) for g, _ in pf.gates}
    assert sniffs["tgi"] == [b"text_generation_"]  # was two class-only timestamp heads
    # one timestamp head (the second, implied one followed by '\.' is left out); any other SGLang
    # sniff is a plain literal factor (e.g. ':sglang' of Python's default 'LEVEL:sglang.x:' format)
    heads = [s for s in sniffs["sglang"] if s.startswith(rb"\[(?:\d{4}-")]
    assert len(heads) == 1
    assert all(re.fullmatch(rb"[\\\w:.]{4,}", s) for s in sniffs["sglang"] if s not in heads), sniffs["sglang"]
    gate = next(g for g, _ in pf.gates if g.engine == "tgi")
    assert len(gate.prefixes) == 2 and len(Prefilter._sniff_sources(gate)) == 1


def test_gate_sniffs_are_kept_in_the_pack_set_memo_under_the_code_that_made_them():
    """Parsing the prefix patterns costs ~4 ms a start: the sniffs are kept in the pack set's
    memo (pickled with the cached pack set), keyed by the patterns and ``literals.py``'s code."""
    from logscan.sources import literals
    from logscan.sources.prefilter import pack_keywords

    packs = default_packs()
    gates = pack_keywords(packs)[1]
    assert gates and all(g.memo is packs.memo for g in gates)
    gate = next(g for g in gates if g.engine == "sglang")
    memo: dict = {}
    first = literals.gate_sniffs(gate.prefixes, memo)
    assert first == Prefilter._sniff_sources(gate) and len(memo) == 1
    key = next(iter(memo))
    assert key[0] == "gate-sniffs" and key[1] == literals._code_id() and len(key[1]) == 16
    memo[key] = [b"kept"]
    assert literals.gate_sniffs(gate.prefixes, memo) == [b"kept"]  # read back, not computed again
    assert literals.gate_sniffs(gate.prefixes[:1], memo) == first[:1]  # other patterns: another key
