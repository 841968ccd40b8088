"""``follow`` skips lines without a prefilter hit, as ``scan`` does, and reports exactly the same.

Real start-ups (the bundled ``fixtures/*/*.log``) buried in runtime noise, with a line of invalid
UTF-8 and a multi-line message, are followed with the prefilter and with
``LOGSCAN_PREFILTER=off``: the JSON lines, the line and byte counts and the decode errors agree.
"""
from __future__ import annotations

import io

import pytest

from logscan.follow.runner import Follower
from logscan.packs.loader import load_packs, patterns_root
from logscan.sources.prefilter import available_backends
from tests.conftest import FIXTURES, load_bench

BENCH = load_bench()


def _follow(path, monkeypatch, mode: str):
    monkeypatch.setenv("LOGSCAN_PREFILTER", mode)
    packs = load_packs(patterns_root())  # a fresh PackSet: its derived prefilter follows the env
    out = io.StringIO()
    f = Follower([str(path)], packs, out, idle_flush=0.0)
    f.poll_once()
    f.end_all()
    (stream,) = f.streams.values()
    return out.getvalue().splitlines(), (stream.stats.lines, stream.stats.bytes, stream.stats.decode_errors)


def _without_also(result):
    """``_follow``'s result with every finding's "also line N: ..." reasons taken out, and those
    reasons apart: ``(lines, stats), {(source, code, finding line, also line N), ...}``."""
    import json
    lines, stats = result
    out, also = [], set()
    for line in lines:
        doc = json.loads(line)
        f = doc.get("finding")
        if f and f.get("reasons"):
            for r in f["reasons"]:
                if r.startswith("also line "):
                    also.add((doc.get("source"), f["code"], f["line"], int(r.split()[2].rstrip(":"))))
            f["reasons"] = [r for r in f["reasons"] if not r.startswith("also line ")]
        out.append(json.dumps(doc, sort_keys=True))
    return (out, stats), also


def _unprefixed(path, line_no: int) -> bool:
    """Whether line ``line_no`` of ``path`` carries no engine's line prefix (its matching context is
    the last keyword line's engine, which noise fed whole with the prefilter off can change)."""
    from logscan.sources.prefix import PrefixParser

    text = path.read_bytes().split(b"\n")[line_no - 1].decode("utf-8", "replace")
    return PrefixParser(load_packs(patterns_root())).parse(str(path), line_no, text).prefix_format is None


# Not llama.cpp or SGLang: with the prefilter off, vLLM noise lines fed whole open a vLLM run or
# set the matching context before another engine's start (``scan`` does the same, see
# tests/data/hostile/fuzz-prefilter-era-divergence.log), so "off" is no oracle for another
# engine's logs buried in vLLM noise.
@pytest.mark.parametrize("engine", ["vllm", "trtllm"])
def test_follow_reports_the_same_with_and_without_the_prefilter(tmp_path, monkeypatch, engine):
    noise = BENCH.runtime_lines(seed=11)
    parts: list[bytes] = []
    for log in sorted((FIXTURES / engine).glob("*.log")):
        parts += [next(noise).encode() for _ in range(30)]
        parts.append(log.read_bytes().rstrip(b"\n"))
    parts.insert(3, b"INFO 01-01 00:00:00 [x.py:1] caf\xe9 \xff not UTF-8")
    path = tmp_path / "engine.log"
    path.write_bytes(b"\n".join(parts) + b"\n")
    with_prefilter = _follow(path, monkeypatch, "auto")
    without = _follow(path, monkeypatch, "off")
    assert without[0], "the buried start-ups must give JSON lines"
    # the same selections, findings, codes and evidence; a finding's "also line N" reasons (another
    # rule's line stating its code, analysis/close.py) are compared apart: the prefilter loses none
    # of them, and one it alone gives must name an unprefixed line: with the prefilter off, noise
    # lines fed whole set the matching context for such a line (as the note above says of other
    # engines), so it can land in another run's finding (trtllm: an unprefixed
    # 'RuntimeError: Unsupported SM version for FP8 block scaling GEMM')
    (kept, also_kept), (plain, also_plain) = _without_also(with_prefilter), _without_also(without)
    assert kept == plain
    assert also_plain <= also_kept, also_plain - also_kept
    assert all(_unprefixed(path, n) for *_, n in also_kept - also_plain), also_kept - also_plain
    assert without[1][2] >= 1  # the invalid line is counted either way


def test_follow_decodes_only_the_first_access_line_of_a_poll(tmp_path, monkeypatch):
    """HTTP 2xx access lines (a ``sparse`` rule, sources/sparse.py) after a real start-up: only the
    first of a poll goes through the pipeline, as in one of ``scan``'s buffers, and the report
    is the same as with the prefilter off (every line decoded)."""
    access = b'INFO:     127.0.0.1:34224 - "GET /v1/models HTTP/1.1" 200 OK'
    start = (FIXTURES / "vllm" / "vllm-005.log").read_bytes().rstrip(b"\n")
    path = tmp_path / "engine.log"
    path.write_bytes(b"\n".join([start] + [access] * 50 + [start] + [access] * 50) + b"\n")
    monkeypatch.setenv("LOGSCAN_PREFILTER", "auto")
    f = Follower([str(path)], load_packs(patterns_root()), io.StringIO(), idle_flush=0.0)
    f.poll_once()  # opens the stream
    (stream,) = f.streams.values()
    stream.sparse_armed = True
    assert stream.wanted(access) is True
    assert stream.wanted(access) is False  # the matcher would drop it: counted, not decoded
    assert stream.wanted(b"INFO 01-01 00:00:00 [x.py:1] unrelated runtime line") is False
    assert _follow(path, monkeypatch, "auto") == _follow(path, monkeypatch, "off")


def _mixed_lines() -> list[bytes]:
    """Real start-ups of every engine, runtime noise, access lines, a non-UTF-8 line, a line with
    ANSI colour and a lone CR, and an empty line: the lines ``Stream.plan`` gets in one batch."""
    noise = BENCH.runtime_lines(seed=5)
    access = b'INFO:     127.0.0.1:34224 - "GET /v1/models HTTP/1.1" 200 OK'
    out: list[bytes] = []
    for n, log in enumerate(sorted(FIXTURES.glob("*/*.log"))):
        if n % 7:
            continue
        out += [next(noise).encode() for _ in range(5)] + [access] * 3
        out += log.read_bytes().split(b"\n")[:60]
    out += [b"INFO caf\xe9 \xff not UTF-8", b"\x1b[32mINFO\x1b[0m Using MarlinLinearKernel", b"a\rb", b""]
    return out


@pytest.mark.parametrize("backend", available_backends())
def test_one_call_per_batch_wants_the_lines_one_call_per_line_wanted(tmp_path, monkeypatch, backend):
    """``Stream.plan`` asks the prefilter once about a batch of lines joined by newlines; each
    line's answer (hit, possible start marker, first sparse line since arming) must be the one
    the line gets as a buffer of its own, whatever the arming (re-armed as the runner does for
    a line it feeds unseen)."""
    monkeypatch.setenv("LOGSCAN_PREFILTER", backend)
    path = tmp_path / "engine.log"
    path.write_bytes(b"")
    f = Follower([str(path)], load_packs(patterns_root()), io.StringIO(), idle_flush=0.0)
    f.poll_once()
    (stream,) = f.streams.values()
    assert stream.prefilter is not None and stream.prefilter.backend == backend
    lines = _mixed_lines()
    rearm = {i for i in range(len(lines)) if i % 37 == 5}
    one: list[bool] = []
    stream.sparse_armed = True
    for i, raw in enumerate(lines):
        if i in rearm:
            stream.sparse_armed = True
        one.append(stream.wanted(raw))
    batch: list[bool] = []
    stream.sparse_armed = True
    stream.plan(lines)
    for i in range(len(lines)):
        if i in rearm:
            stream.sparse_armed = True
        batch.append(stream.wanted_at(i))
    assert sum(one) > 100 and not all(one)  # both kinds of line are there
    assert batch == one
