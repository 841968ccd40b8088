"""A regular file is read without joining a chunk's unfinished last line to the next read: the
reader seeks back to it (issue 18). The lines, their numbers and the stats must be those of
the same bytes read from a stream that cannot seek (a pipe), with or without the prefilter."""
from __future__ import annotations

import io
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logscan.models import InputStats
from logscan.packs.loader import default_packs
from logscan.sources.prefilter import available_backends, make_prefilter
from logscan.sources.reader import LineReader, open_input

from .test_prefilter import _log

BOUNDED = settings(max_examples=120, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_bytes = st.binary(max_size=800) | _log | st.lists(st.sampled_from(
    [b"x" * 90 + b"\n", b"Using MarlinLinearKernel for GPTQ\n", b"\xff\xfe bad\n", b"a\x00b\n", b"no newline",
     b"\r\n", b"{\"log\":\"kernel\"}\n", b"\n"]), max_size=40).map(b"".join)


def _read(fh, prefilter, max_line, chunk):
    stats = InputStats(source="x")
    reader = LineReader(fh, stats, prefilter, max_line, chunk)
    return list(reader), stats, reader


def _file(data: bytes) -> str:
    fd, path = tempfile.mkstemp(suffix=".log")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


@BOUNDED
@given(data=_bytes, max_line=st.integers(min_value=4, max_value=300), chunk=st.integers(min_value=1, max_value=260))
def test_a_file_read_with_seeks_gives_the_lines_and_stats_of_a_pipe(data, max_line, chunk):
    path = _file(data)
    try:
        packs = default_packs()
        for backend in [None] + available_backends():
            full = make_prefilter(packs, backend) if backend else None
            # the sparse wrapper (sources/sparse.py) passes the first access line of each buffer,
            # so which of those it passes depends on the buffers by design (the matcher reads one
            # per start either way): the lines must be equal under the plain prefilter, and may
            # differ only by sparse-keyword lines under the full one; the stats never differ
            for pf in dict.fromkeys([getattr(full, "inner", full), full]):
                fh, _ = open_input(path)
                try:
                    got, got_stats, reader = _read(fh, pf, max_line, chunk)
                    assert reader._rewind  # the seeking path was the one taken
                finally:
                    fh.close()
                ref, ref_stats, pipe_reader = _read(io.BufferedReader(io.BytesIO(data)), pf, max_line, chunk)
                assert not pipe_reader._rewind
                assert got_stats == ref_stats, backend
                if pf is full and pf is not getattr(full, "inner", full):
                    sparse = tuple(k.decode() for k in full.sparse)
                    assert all(any(k in t for k in sparse) for _, t, _ in set(got) ^ set(ref)), backend
                else:
                    assert got == ref, backend
    finally:
        os.unlink(path)


def test_a_gzip_file_is_not_read_with_seeks(tmp_path):
    import gzip

    path = tmp_path / "x.log.gz"
    path.write_bytes(gzip.compress(b"one\ntwo\nthree"))
    fh, _ = open_input(str(path))
    lines, stats, reader = _read(fh, None, 100, 4)
    assert not reader._rewind
    assert [t for _, t, _ in lines] == ["one", "two", "three"] and stats.lines == 3
