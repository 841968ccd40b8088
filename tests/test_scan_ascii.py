"""With Hyperscan, the prefilter's scan also tells whether a buffer is ASCII (a byte >= 0x80 is
one more pattern: ``Prefilter.scan``, ``SparsePrefilter.hits_ascii``), instead of the reader's
``bytes.isascii`` pass holding the GIL. The answer and the hits must be what ``isascii`` and
``hits`` give, on every bundled real log and on random buffers with non-ASCII bytes anywhere."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from logscan.packs.loader import default_packs
from logscan.sources.prefilter import available_backends, make_prefilter

ROOT = Path(__file__).resolve().parent.parent


def _buffers() -> list[bytes]:
    bufs = [f.read_bytes() for f in sorted(ROOT.glob("fixtures/*/*.log"))]
    rng = random.Random(5)
    ascii_logs = [b for b in bufs if b.isascii()]
    for _ in range(300):
        b = bytearray(rng.choice(ascii_logs))
        for _ in range(rng.choice([0, 0, 1, 2])):  # none, or a byte >= 0x80 anywhere (first, last...)
            b[rng.choice([0, len(b) - 1, rng.randrange(len(b))])] = rng.choice([0x80, 0xC3, 0xFF, 0xE2])
        bufs.append(bytes(b))
    return bufs


@pytest.mark.parametrize("backend", available_backends())
def test_the_scan_tells_ascii_exactly_and_keeps_the_hits(backend):
    pf = make_prefilter(default_packs(), backend)
    assert hasattr(pf, "hits_ascii")  # the shipped packs have sparse rules: the wrapper answers
    seen = set()
    for buf in _buffers():
        hits, ascii = pf.hits_ascii(buf)
        assert ascii is buf.isascii()
        assert hits == pf.hits(buf, buf.isascii())
        seen.add(ascii)
    assert seen == {True, False}
