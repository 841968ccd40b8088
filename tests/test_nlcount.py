"""``sources/nlcount.py``: whichever way it counts, a buffer's newlines are ``bytes.count``'s."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from logscan.sources import nlcount
from tests.conftest import FIXTURES


def _lines(lengths: list[int]) -> bytes:
    return b"".join(b"x" * n + b"\n" for n in lengths)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5000), max_size=200), st.data())
def test_every_span_counts_what_bytes_count_counts(lengths, data):
    buf = _lines(lengths) + data.draw(st.binary(max_size=300))
    a = data.draw(st.integers(0, len(buf)))
    b = data.draw(st.integers(a, len(buf)))
    assert nlcount.counter(buf)(a, b) == buf.count(b"\n", a, b)
    assert nlcount.count_by_replace(buf, a, b) == buf.count(b"\n", a, b)


def test_long_lines_take_the_replace_way_short_ones_the_compare_loop(monkeypatch):
    used = []
    real = nlcount.count_by_replace
    monkeypatch.setattr(nlcount, "count_by_replace", lambda *a: used.append(a) or real(*a))
    wide = _lines([400] * 1000)  # 401 KB of 400-byte lines: a request log's
    assert nlcount.counter(wide)(0, len(wide)) == 1000 and used
    used.clear()
    narrow = _lines([30] * 10000)  # 310 KB of 30-byte lines
    assert nlcount.counter(narrow)(0, len(narrow)) == 10000 and not used


def test_line_numbers_past_many_read_buffers_of_long_lines(tmp_path):
    """A 6 MB log of 700-byte request lines (the replace way) with vllm-005's real lines put in
    at known line numbers: every recognised line is reported at its number."""
    import logscan

    real = (FIXTURES / "vllm" / "vllm-005.log").read_bytes().splitlines(keepends=True)
    filler = b"INFO 01-01 00:00:00 [logger.py:1] Received request x: prompt: '" + b"y" * 640 + b"'\n"
    out, at = [], {}
    for k in range(9000):
        if k % 1000 == 500 and real:
            line = real.pop(0)
            at[len(out) + 1] = line
            out.append(line)
        out.append(filler)
    path = tmp_path / "long.log"
    path.write_bytes(b"".join(out))
    report = logscan.scan(path)
    got = {e.line for e in report.events}
    assert got and got <= set(at), sorted(got - set(at))
    for e in report.events:
        assert e.message.strip().split()[-1].encode() in at[e.line]
