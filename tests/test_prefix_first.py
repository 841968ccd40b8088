"""The prefix parser tries each list of formats (wrappers, process tags, line formats) as one
alternation (sources/prefix.py ``_First``); it must pick what trying them one by one picks."""
from __future__ import annotations

import random
from pathlib import Path

from logscan.packs.loader import default_packs
from logscan.sources.prefix import LAZY, PrefixParser

ROOT = Path(__file__).resolve().parent.parent


def _one_by_one(packs) -> PrefixParser:
    p = PrefixParser(packs)
    for first in (p._wrappers, p._processes, p._prefixes):
        first._built, first._rx = True, None  # the per-pattern loop, always
    return p


def _lines() -> list[str]:
    out: list[str] = []
    for f in sorted(ROOT.glob("fixtures/*/*.log")):
        out += f.read_text(encoding="utf-8", errors="replace").split("\n")
    return out


def test_alternations_compile_for_the_shipped_packs():
    p = PrefixParser(default_packs())
    firsts = (p._wrappers, p._processes, p._prefixes)
    assert all(f._rx is None for f in firsts)  # not before LAZY lines: a short log does not pay the compile
    for i in range(LAZY + 1):
        p.parse("s", i, "INFO 08-03 22:13:20 [engine.py:280] Added request x.")
    assert all(f._rx is not None for f in firsts)


def test_the_alternation_picks_what_the_loop_picks_on_every_fixture_line_and_mutations():
    packs = default_packs()
    fast, ref = PrefixParser(packs), _one_by_one(packs)
    for f in (fast._wrappers, fast._processes, fast._prefixes):
        f.build()
    lines = _lines()
    assert len(lines) > 2000
    rng = random.Random(7)
    heads = ["vllm  | ", "[api-1] | ", "> ", "**", " ", "\t", "| ", "2024-01-02T03:04:05Z ",
             "(Worker_TP1 pid=3) ", "(EngineCore_DP0 pid=9) ", "[2025-01-02 03:04:05 TP0] ", "INFO ..."]
    bits = ["(", ")", "[", "]", " ", "pid=", " rank=2", "TP0 ", "|", ">", "\u00e9", "\x1c"]
    for _ in range(20000):
        line = rng.choice(lines)
        r = rng.random()
        if r < 0.3:
            line = line[rng.randint(0, len(line) // 3):]
        elif r < 0.55:
            line = rng.choice(heads) + line
        elif r < 0.75:
            i = rng.randint(0, len(line))
            line = line[:i] + rng.choice(bits) + line[i:]
        lines.append(line)
    formats = set()
    for i, line in enumerate(lines):
        got, want = fast.parse("s", i, line), ref.parse("s", i, line)
        assert got == want and fast.last_formats == ref.last_formats, line
        formats.update(fast.last_formats)
    assert fast.seen_formats == ref.seen_formats
    assert len(formats) >= 15  # most formats of the packs took part


def test_the_innermost_process_tag_names_the_rank():
    """vLLM >= 0.11 nests tags: '(EngineCore_DP0 pid=1) (Worker_TP3 pid=2)' is worker TP3's line
    (new-user trial, vllm PR #25909: the rank read was the outer DP0)."""
    from logscan.packs.loader import default_packs
    from logscan.sources.prefix import PrefixParser

    rec = PrefixParser(default_packs()).parse(
        "t", 1, "(EngineCore_DP0 pid=1) (Worker_TP3 pid=2) ERROR 09-29 10:00:00 [core.py:1] x")
    assert (rec.process, rec.rank) == ("Worker_TP3", "TP3")
    rec = PrefixParser(default_packs()).parse("t", 1, "(EngineCore_DP0 pid=1) INFO 09-29 10:00:00 [core.py:1] x")
    assert rec.rank == "DP0"
