"""The Hyperscan engine's pure-literal database and what it searches apart (issue 18, scanspeed8).

- a gate sniff that is a literal joins the literal database (``pattern_literal``); a regex sniff
  is searched by a prefix of its sequence first (``sniff_prefix``), which must be a necessary
  condition of it: checked on every bundled real line and random mutations;
- the unwrapper's JSON keys (``triggers.JSON_KEYS``) replace the two-byte ``\\n{`` trigger: a
  JSON record whose escape hides a keyword is still read, and a ``{`` line the unwrapper leaves
  alone needs no trigger;
- a lone ``\\r`` is found only by a scan made when the buffer holds a ``\\r``;
- both engines give the same hits on every bundled real log.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import regex

from logscan.packs.loader import default_packs
from logscan.sources.literals import pattern_literal, sniff_prefix
from logscan.sources.prefilter import Prefilter, available_backends, make_prefilter
from logscan.sources.triggers import JSON_KEYS
from logscan.sources.unwrap import Unwrapper

ROOT = Path(__file__).resolve().parent.parent
HS = "hyperscan" in available_backends()


def test_pattern_literal_reads_only_plain_literals():
    assert pattern_literal(rb"\[TRT-LLM\] ") == b"[TRT-LLM] "
    assert pattern_literal(rb"\:sglang") == b":sglang"
    assert pattern_literal(rb"\x00ab") == b"\x00ab"
    assert pattern_literal(rb"\[\d{4}-") is None  # a class
    assert pattern_literal(rb"ab|cd") is None  # an alternation
    assert pattern_literal(rb"(?i)abc") is None  # a flag changes what it matches
    assert pattern_literal(rb"ab?") is None  # a repeat
    assert pattern_literal(rb"a(") is None  # not readable
    assert pattern_literal(b"") is None


def test_sniff_prefix_cuts_after_the_first_literal_that_follows_a_class():
    sglang = rb"\[(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)"
    pre = sniff_prefix(sglang)
    assert pre == rb"\x5b[0-9]{4}\x2d"
    assert regex.search(pre, b"[2025-04-15 05:30:13] x") and not regex.search(pre, b"[logger.py:39] x")
    assert sniff_prefix(rb"[a-c]{2,}x\d") == rb"[\x61-\x63]{2,}\x78"
    assert sniff_prefix(rb"\d{2}x") is None  # the prefix would be the whole pattern
    assert sniff_prefix(rb"abc") is None  # a literal: no class before a literal
    assert sniff_prefix(rb"(?i)\d-x") is None  # flags
    assert sniff_prefix(rb"\s-x") is None  # \s is not written back (str and bytes read it apart)
    assert sniff_prefix(rb"(?:ab|cd)\d-x") is None  # an alternation first
    assert sniff_prefix(rb"(?:a|b)\d-x") == rb"[\x61\x62][0-9]\x2d"  # the parser makes it a class
    assert sniff_prefix(rb"\d*-x") == rb"[0-9]{0,}\x2d"  # ends with a literal: never empty


def _line_set(buf: bytes, hits: list[int]) -> set[int]:
    return {buf.rfind(b"\n", 0, h) + 1 for h in hits}


def _lines() -> list[bytes]:
    out: list[bytes] = []
    for f in sorted(ROOT.glob("fixtures/*/*.log")):
        out += f.read_bytes().split(b"\n")
    return out


def test_every_sniff_prefix_matches_wherever_its_sniff_matches_on_real_lines_and_mutations():
    pf = make_prefilter(default_packs(), "python").inner
    pairs = [(regex.compile(src, regex.V0), regex.compile(pre, regex.V0))
             for g, _ in pf.gates for src in pf._sniff_sources(g) if (pre := sniff_prefix(src)) is not None]
    assert pairs, "no shipped gate has a regex sniff with a prefix: the test tests nothing"
    rng = random.Random(18)
    lines = _lines()
    alphabet = b"0123456789-: [].TPxX\t"
    checked = matched = 0
    for line in lines + [bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(20_000)]:
        if rng.random() < 0.5 and line:
            i = rng.randrange(len(line))
            line = line[:i] + bytes([rng.choice(alphabet)]) + line[i + 1:]
        for full, pre in pairs:
            checked += 1
            if full.search(line):
                matched += 1
                assert pre.search(line), (full.pattern, pre.pattern, line[:200])
    assert matched > 100 and checked > matched  # the sniffs matched real lines, and not all


@pytest.mark.skipif(not HS, reason="no Hyperscan wheel here")
def test_the_main_database_holds_literals_only_and_regex_sniffs_go_first_by_prefix():
    pf = make_prefilter(default_packs(), "hyperscan").inner
    sglang = [gi for gi, (g, _) in enumerate(pf.gates) if g.engine == "sglang"]
    assert sglang and pf._first_db is not None and pf._whole_db is not None
    assert any(gi == sglang[0] and not final for _, gi, final in pf._first_sniffs)
    # a literal sniff of SGLang's basic logger (':sglang') signals from the literal database
    assert any(g == sglang[0] for g in pf._signal.values())
    line = b"[2025-04-15 05:30:13 TP0] Decode batch. #running-req: 1, using the attention backend\n"
    noise = b"INFO 05-11 08:00:01 [logger.py:39] Received request: prompt: 'x'\n" * 50
    py = make_prefilter(default_packs(), "python").inner
    for buf in (noise + line, noise, line + noise, b"[2025-04-15T05:30:13Z] " + line):
        assert _line_set(buf, pf.hits(buf)) == _line_set(buf, py.hits(buf))  # offsets differ: start vs end


@pytest.mark.parametrize("backend", available_backends())
def test_json_records_are_found_by_the_unwrappers_keys(backend):
    pf = Prefilter(["marlin"], backend)
    noise = b"just a line\n" * 3
    for key in JSON_KEYS:
        k = json.loads(key)
        end = "\\n" if k == "log" else ""  # Docker's log field ends with the line's newline
        rec = ('{"%s": "Using \\u004darlin kernel%s"}' % (k, end)).encode()
        assert b"marlin" not in rec.lower()  # the escape hides the keyword from the byte search
        [(_, text, _)] = Unwrapper().feed(1, rec.decode(), False)
        assert "Marlin" in text  # the unwrapper reads it, so the line must be kept
        buf = noise + rec + b"\n" + noise
        lines = _line_set(buf, pf.hits(buf))
        assert lines == {len(noise)}, (key, lines)
    # a '{' line without such a key is no record for the unwrapper, and no hit
    assert pf.hits(noise + b'{"level": "x"}\n') == []
    assert Unwrapper().feed(1, '{"level": "x"}', False) == [(1, '{"level": "x"}', False)]


@pytest.mark.parametrize("backend", available_backends())
def test_a_lone_carriage_return_is_a_hit_and_a_crlf_line_end_is_not(backend):
    pf = Prefilter(["marlin"], backend)
    assert pf.hits(b"a\r\nb\r\n" * 100) == []
    buf = b"a\r\n" * 100 + b"progress 10%\rprogress 20%\n" + b"b\r\n" * 100
    assert _line_set(buf, pf.hits(buf)) == {300}


@pytest.mark.skipif(not HS, reason="no Hyperscan wheel here")
def test_both_engines_give_the_same_hits_and_starts_on_every_real_log():
    packs = default_packs()
    hs, py = make_prefilter(packs, "hyperscan").inner, make_prefilter(packs, "python").inner
    n = 0
    for f in sorted(ROOT.glob("fixtures/*/*.log")):
        buf = f.read_bytes()
        buf = buf if buf.endswith(b"\n") else buf + b"\n"
        a, b = hs.scan(buf), py.scan(buf)
        assert a[2] == b[2], f.name
        for x, y in zip(a[:2], b[:2]):  # hits, starts: the same lines (Hyperscan reports match ends)
            assert _line_set(buf, x) == _line_set(buf, y), f.name
        n += len(a[0])
    assert n > 1000


def test_no_keyword_of_the_shipped_packs_is_a_literal_shorter_than_three_bytes():
    """Every literal searched everywhere (caseless or case-sensitive) has 3+ bytes: a two-byte
    literal stops Hyperscan's literal fast path (issue 18: the rich-traceback rule's ``:/`` and
    ``:\\`` cost ~0.3 of ~1.2 ms/MB of the main database on the bench log, and ``:/`` kept every
    URL line). The one-byte NUL and ESC triggers are searched apart from the keywords' literals
    (``triggers.DIRTY``) and are not pack keywords. A rule's keyword that short needs a longer
    necessary literal of its pattern instead (the drive-letter frame ``│ C:``)."""
    pre = make_prefilter(default_packs(), "python")
    short = [lit for lit in pre.literals + pre.sensitive if len(lit) < 3]
    assert short == []
