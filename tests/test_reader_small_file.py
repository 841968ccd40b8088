"""A regular file that one read takes whole is read without the read-ahead thread (start-up
cost), and gives exactly the lines and stats of the threaded read."""
import threading

import pytest

from logscan.models import InputStats
from logscan.packs.loader import default_packs
from logscan.sources import reader as reader_mod
from logscan.sources.prefilter import make_prefilter
from tests.conftest import FIXTURES


def _read(path, chunk, monkeypatch, spy):
    started = []
    real = threading.Thread.start

    def start(self):
        started.append(self.name)
        return real(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    st = InputStats(source=str(path))
    with open(path, "rb") as fh:
        lines = list(reader_mod.LineReader(fh, st, prefilter=make_prefilter(default_packs()), chunk_size=chunk))
    monkeypatch.setattr(threading.Thread, "start", real)
    spy.append(started)
    return lines, st


@pytest.mark.parametrize("log", sorted(FIXTURES.glob("vllm/*.log"))[:3], ids=lambda p: p.stem)
def test_a_one_chunk_file_is_read_inline_and_equal_to_the_threaded_read(log, monkeypatch):
    size = log.stat().st_size
    spy: list = []
    inline = _read(log, size + 1, monkeypatch, spy)  # the whole file fits one chunk
    threaded = _read(log, max(1, size // 3), monkeypatch, spy)  # three chunks: read ahead
    assert "logscan-read-ahead" not in spy[0] and "logscan-read-ahead" in spy[1]
    assert inline[0] == threaded[0] and inline[1] == threaded[1] and inline[0]
