"""The reader's read-ahead and search threads run only when a CPU is idle (``reader.spare_cpu``).

The threads cost ~30 % more CPU than one thread on the 2-core machine (issue 18): they pay only
when another core would sit idle. The threaded and the one-thread reads give the same lines and
stats (``tests/test_startup_cache.py``); this file checks the choice between them.
"""
from __future__ import annotations

import io

import pytest

import logscan.sources.reader as reader_mod
from logscan.models import InputStats
from logscan.packs.loader import default_packs
from logscan.sources.prefilter import make_prefilter


@pytest.mark.parametrize("cpus, load, want", [(2, 0.2, True), (2, 1.0, True), (2, 1.2, False), (2, 6.0, False),
                                               (1, 0.0, True), (1, 0.5, False), (8, 6.5, True)])
def test_spare_cpu_is_cpus_minus_load(monkeypatch, cpus, load, want):
    monkeypatch.setattr(reader_mod.os, "sched_getaffinity", lambda _pid: set(range(cpus)))
    monkeypatch.setattr(reader_mod.os, "getloadavg", lambda: (load, 0.0, 0.0))
    assert reader_mod.spare_cpu() is want


def test_spare_cpu_is_false_when_the_load_is_unknown(monkeypatch):
    def no_load():
        raise OSError("no load average")

    monkeypatch.setattr(reader_mod.os, "getloadavg", no_load)
    assert reader_mod.spare_cpu() is False


@pytest.mark.parametrize("spare", [True, False])
def test_read_ahead_only_with_a_spare_cpu(monkeypatch, spare):
    calls = []
    real = reader_mod.LineReader._prefetched

    def prefetched(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(reader_mod, "READ_AHEAD", 2)
    monkeypatch.setattr(reader_mod, "spare_cpu", lambda: spare)
    monkeypatch.setattr(reader_mod.LineReader, "_prefetched", prefetched)
    data = b"INFO noise line\n" * 2000 + b"Using MarlinLinearKernel for CompressedTensorsWNA16\n" + b"x\n" * 3000
    st = InputStats(source="t")
    r = reader_mod.LineReader(io.BufferedReader(io.BytesIO(data)), st,
                              prefilter=make_prefilter(default_packs()), chunk_size=4096)
    got = list(r)
    assert bool(calls) is spare
    assert [n for n, _, _ in got] == [2001] and st.lines == 5001
