"""Sparse rules (an HTTP 2xx access line: the server is up) cost no per-line work on a runtime log:
the prefilter passes the first matching line of a buffer and the first after each of its other
hits, the matcher reads only the first after each start marker (logscan/sources/sparse.py)."""
from __future__ import annotations

import itertools

from logscan.packs.loader import default_packs
from logscan.sources.prefilter import make_prefilter
from logscan.sources.sparse import SparsePrefilter
from tests.conftest import load_bench


BENCH = load_bench()


def _lines_of(buf: bytes, offsets: list[int]) -> set[int]:
    return {buf.count(b"\n", 0, o) for o in offsets}


def test_runtime_noise_passes_one_sparse_line_per_buffer():
    pf = make_prefilter(default_packs(), "python")
    assert isinstance(pf, SparsePrefilter) and b'HTTP/1.1" 2' in pf.sparse
    lines = list(itertools.islice(BENCH.runtime_lines(seed=1), 20000))
    buf = ("\n".join(lines) + "\n").encode()
    assert sum(1 for x in lines if 'HTTP/1.1" 2' in x or "Added request" in x) > 1000
    inner = _lines_of(buf, pf.inner.hits(buf))
    extra = _lines_of(buf, pf.hits(buf)) - inner
    assert 1 <= len(extra) <= 1 + len(inner) and len(inner) < 100  # not one per access line


def test_a_sparse_line_after_each_plain_hit():
    """After each start-marker line (a plain hit), the first access line is passed again."""
    pf = make_prefilter(default_packs(), "python")
    noise = list(itertools.islice(BENCH.runtime_lines(seed=2), 400))
    banner = "INFO 09-18 11:40:02 [api_server.py:1805] vLLM API server version 0.10.2"
    text = noise[:200] + [banner] + noise[200:]
    buf = ("\n".join(text) + "\n").encode()
    got = _lines_of(buf, pf.hits(buf))
    inner = _lines_of(buf, pf.inner.hits(buf))
    assert 200 in inner
    first_after = next(i for i, x in enumerate(text) if i > 200 and ('HTTP/1.1" 2' in x or "Added request" in x))
    assert first_after in got and first_after not in inner
    assert len(got - inner) <= 1 + len(inner)


def test_a_keyword_in_a_line_of_another_shape_is_looked_past():
    pf = make_prefilter(default_packs(), "python")
    buf = (b'prompt quoting request: GET /x and HTTP/1.1" 2 but no access line\n'
           b'INFO:     127.0.0.1:1 - "GET /v1/models HTTP/1.1" 200 OK\n')
    assert _lines_of(buf, pf.hits(buf)) == {1}


def test_hyperscan_sparse_search_keeps_the_lines_of_the_python_one():
    """The Hyperscan search of sparse keywords (one scan per start, stopped at the first line
    kept) passes the same lines as ``bytes.find`` per keyword, from any start, including lines
    holding a keyword in another shape (looked past) and several keywords in one line."""
    import random

    import pytest

    from logscan.sources.prefilter import available_backends

    if "hyperscan" not in available_backends():
        pytest.skip("no Hyperscan here")
    packs = default_packs()
    hs, py = make_prefilter(packs, "hyperscan"), make_prefilter(packs, "python")
    assert hs._db is not None and py._db is None
    rng = random.Random(5)
    noise = list(itertools.islice(BENCH.runtime_lines(seed=3), 2000))
    odd = ['prompt quoting request: GET /x and HTTP/1.1" 2 but no access line',
           "x Added request y Avg prompt throughput", 'INFO:     127.0.0.1:1 - "GET /v1/models HTTP/1.1" 200 OK',
           ": Success", "Decode batch. #running-req: 1", "INFO 09-18 11:40:02 [api_server.py:1805] vLLM API server version 0.10.2",
           "(EngineCore_DP0 pid=7) ERROR 09-18 11:40:03 [core.py:700] EngineCore encountered a fatal error.",
           # two sparse keywords in one line, the later one ending first
           'INFO:     1.2.3.4:5 - "POST /v1/x HTTP/1.1" 200 OK request: POST /: Success']
    compared = 0
    for _ in range(200):
        text = [rng.choice(noise) if rng.random() < 0.5 else rng.choice(odd) for _ in range(rng.randint(1, 40))]
        buf = ("\n".join(text) + "\n").encode()
        for start in range(0, len(buf), max(1, len(buf) // 7)):
            a, b = hs._hs_first(buf, start, {}), py._first(buf, start, {})
            assert a == b  # the same offset: ``hits`` compares the later starts with it
            compared += a is not None
        assert _lines_of(buf, hs.hits(buf)) == _lines_of(buf, py.hits(buf))
    assert compared > 100
