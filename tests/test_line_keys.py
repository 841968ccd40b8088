"""The search workers find each hit line's keywords (``KeywordIndex.line_keys``) and the matcher
tests only those on the message (``among``) instead of scanning it again (issue 18, speed37).

``among`` must give exactly ``present``'s answer for any message that is a substring of the raw
line; a message that is not (ANSI removed, a JSON record unwrapped, pieces joined) is scanned."""
from __future__ import annotations

import io

import pytest

from logscan.match import Matcher
from logscan.models import InputStats
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from logscan.sources import reader as reader_mod
from logscan.sources.backends import KeywordIndex
from logscan.sources.prefilter import make_prefilter
from tests.conftest import FIXTURES

pytest.importorskip("hyperscan")

#: a few real logs of every engine (the same choice at every run)
LOGS = [p for eng in ("vllm", "sglang", "trtllm", "llamacpp", "tgi", "lmdeploy", "mlc-llm")
        for p in sorted(FIXTURES.glob(f"{eng}/*.log"))[:4]]


def _kept(path, chunk=4096):
    """Every ``(raw, keys)`` the reader kept for ``path``, read in ``chunk``-byte buffers with the
    matcher's own index (the read-ahead thread and search workers run: several chunks)."""
    packs = default_packs()
    index = Matcher(packs)._index
    st = InputStats(source=str(path))
    kept = []
    with open(path, "rb") as fh:
        r = reader_mod.LineReader(io.BufferedReader(io.BytesIO(fh.read())), st, make_prefilter(packs),
                                  chunk_size=chunk)
        r.keyindex = index
        for n, _text, _tr in r:
            if n in r.line_keys:
                kept.append(r.line_keys[n])
    return index, kept


@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_among_gives_present_on_every_piece_of_every_real_hit_line(log):
    index, kept = _kept(log)
    assert kept, "no hit line kept its keywords"
    assert index.scans_apart
    for raw, keys in kept:
        assert keys == index.present(raw)
        # the message is the line after its prefix: every suffix at a space, and the prefixes
        cuts = [0] + [i + 1 for i, b in enumerate(raw) if b == 0x20]
        for c in cuts:
            for piece in (raw[c:], raw[:c], raw[c:c + 40]):
                assert index.among(piece, keys) == index.present(piece), (raw, piece)


def test_the_matcher_takes_the_workers_keys_and_scans_a_message_that_is_not_in_the_raw_line(monkeypatch):
    packs = default_packs()
    m = Matcher(packs)
    msg = "Using MarlinLinearKernel for GPTQMarlinLinearMethod"
    want = m._keyword_rules(msg)
    assert want
    calls = []
    real = KeywordIndex.present
    monkeypatch.setattr(KeywordIndex, "present", lambda self, data: calls.append(data) or real(self, data))
    raw = b"INFO 01-01 00:00:00 [kernel.py:1] " + msg.encode()
    m.line_keys = {7: (raw, real(m._index, raw))}
    assert m._keyword_rules(msg, 7) == want and calls == []  # taken from the worker's keys
    assert m._keyword_rules(msg, 8) == want and len(calls) == 1  # no keys kept for line 8: scanned
    m.line_keys = {7: (b"\x1b[0m" + raw[:20], [])}  # the message is not in this raw line: scanned
    assert m._keyword_rules(msg, 7) == want and len(calls) == 2


@pytest.mark.parametrize("log", LOGS[::4], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_scan_gives_the_same_report_with_and_without_the_workers_keys(log, monkeypatch):
    with_keys = scan_inputs([str(log)]).model_dump_json()
    monkeypatch.setattr(KeywordIndex, "scans_apart", property(lambda self: False))
    assert scan_inputs([str(log)]).model_dump_json() == with_keys
