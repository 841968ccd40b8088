"""The sparse prefilter searches its next line only after the hits that may be a start marker's
(``Prefilter.hits_and_starts``): that subset must hold every line that can fire a start marker
(the matcher reads a sparse rule again only after one), on every bundled real log, with both
engines; and the prompt lines of a runtime log, hit by keywords no start rule has, are not in it."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from logscan.packs.loader import default_packs
from logscan.sources.prefilter import available_backends, make_prefilter, start_keywords
from tests.conftest import load_bench

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = available_backends()


def _line_set(buf: bytes, offsets: list[int]) -> set[int]:
    return {buf.rfind(b"\n", 0, o) + 1 for o in offsets}


def _fixture_buffers() -> list[bytes]:
    return [f.read_bytes() for f in sorted(ROOT.glob("fixtures/*/*.log"))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_line_holding_a_start_keyword_is_a_start_on_every_real_log(backend):
    packs = default_packs()
    pf = make_prefilter(packs, backend).inner
    keys = [k.encode("utf-8").lower() for k in start_keywords(packs)]
    assert len(keys) > 20 and pf._quiet  # the packs' start rules, and literals that are not theirs
    # a start keyword of a rule with case-sensitive keywords only ('LMDeploy: ') is searched as
    # written: 'wheel for lmdeploy: filename=...' (pip, lmdeploy-161) holds no start keyword
    sensitive = {k.encode("utf-8") for pack in packs.packs.values() for cr in pack.rules
                 if cr.rule.starts_run and cr.rule.case_sensitive_keywords for k in cr.rule.keywords if k}
    caseless = {k.encode("utf-8") for pack in packs.packs.values() for cr in pack.rules
                if cr.rule.starts_run and not cr.rule.case_sensitive_keywords for k in cr.rule.keywords if k}
    keys = [k.lower() for k in caseless]
    checked = quiet_lines = 0
    for raw in _fixture_buffers():
        buf = raw if raw.endswith(b"\n") else raw + b"\n"
        hits, starts = pf.hits_and_starts(buf, buf.isascii())
        assert set(starts) <= set(hits) and starts == sorted(starts)
        start_lines = _line_set(buf, starts)
        pos = 0
        for line in buf.split(b"\n")[:-1]:
            low = line.lower()
            if any(k in low for k in keys) or any(k in line for k in sensitive):
                assert pos in start_lines, line[:200]
                checked += 1
            pos += len(line) + 1
        quiet_lines += len(_line_set(buf, hits) - start_lines)
    assert checked > 150 and quiet_lines > 100  # the property is exercised, and the subset is smaller


@pytest.mark.parametrize("backend", BACKENDS)
def test_prompt_lines_hit_inside_the_prompt_are_no_starts(backend):
    pf = make_prefilter(default_packs(), backend)
    lines = list(itertools.islice(load_bench().runtime_lines(seed=4), 20000))
    buf = ("\n".join(lines) + "\n").encode()
    hits, starts = pf.inner.hits_and_starts(buf)
    prompts = {ls for ls in _line_set(buf, hits) if b"Received request" in buf[ls:buf.find(b"\n", ls)]}
    assert len(prompts) > 20
    quiet = prompts - _line_set(buf, starts)
    assert len(quiet) > len(prompts) // 2  # ' for wa', 'are supported' ...: no start rule's keywords
    # and the sparse prefilter passes fewer lines than one after each hit
    assert len(_line_set(buf, pf.hits(buf))) < len(_line_set(buf, hits)) + len(prompts) - len(quiet) // 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_start_keywords_every_hit_is_a_start(backend):
    from logscan.sources.prefilter import Prefilter

    pf = Prefilter(["kernel", "backend"], backend, starts=None)
    buf = b"a kernel\nno\nthe backend\n\x1b[0m x\n{\"log\": 1}\n"
    hits, starts = pf.hits_and_starts(buf)
    assert hits and starts == hits
    pf = Prefilter(["kernel", "backend"], backend, starts=["Kernel version"])
    hits, starts = pf.hits_and_starts(buf)
    # 'backend' is in no start keyword; ESC and a JSON record's start always are starts
    assert _line_set(buf, starts) == {0, 24, 31} and _line_set(buf, hits) == {0, 12, 24, 31}
