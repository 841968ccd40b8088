"""The pipeline's hooks for streams that never end, on every bundled real log.

``open_run`` shows the run as it would close; ``checkpoint``/``restore`` at any quiescent
line gives the same runs as an uninterrupted pass; ``Unwrapper`` fed line by line joins CRI
partial records like ``unwrap``.
"""
from __future__ import annotations

import json

import pytest

from logscan.pipeline import Pipeline
from logscan.sources.unwrap import Unwrapper, unwrap
from tests.conftest import corpus_params, real_logs
from tests.helpers.log_writer import cri_records

LOGS = [p for p in real_logs("vllm") if p.name.startswith("vllm-")]


def _records(path) -> list[tuple[int, str, bool]]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return list(unwrap(iter((i + 1, t, False) for i, t in enumerate(lines))))


def _dump(run) -> dict:
    d = run.model_dump(mode="json")
    d.pop("index")
    return d


def _full(packs, recs) -> list[dict]:
    p = Pipeline(packs, source="x")
    runs = [r for n, t, tr in recs for _, r in p.feed(n, t, tr) if r is not None]
    runs += [r for _, r in p.close() if r is not None]
    return [_dump(r) for r in runs]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_open_run_is_the_run_that_closes(packs, log):
    p = Pipeline(packs, source="x")
    for n, t, tr in _records(log):
        list(p.feed(n, t, tr))
    list(p.flush_pending())
    peeked = p.open_run()
    closed = [r for _, r in p.close() if r is not None]
    if peeked is None:
        assert closed == []
    else:
        assert [_dump(r) for r in closed] == [_dump(peeked)]


# A known corpus miss may give no run at all yet (fixtures/corpus-known-misses.toml): xfail.
@pytest.mark.parametrize("log", corpus_params(LOGS))
def test_restore_at_every_quiescent_line_gives_the_same_runs(packs, log):
    recs = _records(log)
    expected = _full(packs, recs)
    assert expected, "every bundled log has a run"
    for k in range(len(recs) + 1):
        a = Pipeline(packs, source="x")
        before = [r for n, t, tr in recs[:k] for _, r in a.feed(n, t, tr) if r is not None]
        if not a.quiescent:
            with pytest.raises(ValueError):
                a.checkpoint()
            continue
        state = json.loads(json.dumps(a.checkpoint().to_json()))  # through the state file's JSON
        b = Pipeline(packs, source="x")
        b.restore(state)
        after = [r for n, t, tr in recs[k:] for _, r in b.feed(n, t, tr) if r is not None]
        after += [r for _, r in b.close() if r is not None]
        assert [_dump(r) for r in before + after] == expected, f"restored after record {k}"


def test_restore_refuses_what_is_not_a_checkpoint(packs):
    with pytest.raises(ValueError):
        Pipeline(packs).restore({"events": [{"event": {"line": "x"}, "hint": [None, None]}]})
    with pytest.raises(ValueError):
        Pipeline(packs).restore({"events": [], "context": 3})


@pytest.mark.parametrize("split", [7, 40, 1000])
def test_unwrapper_joins_cri_partial_records_like_unwrap(split):
    lines = [ln for f in LOGS for ln in f.read_text(encoding="utf-8").split("\n")]
    cri = [f"2026-11-29T00:00:00.000000Z stdout {r}" for ln in lines for r in cri_records(ln, split)]
    u = Unwrapper()
    got = []
    for i, t in enumerate(cri):
        got.extend(u.feed(i + 1, t, False))
        assert u.pending == (not cri[i].split(" ", 3)[2] == "F")
    got.extend(u.flush())
    assert [t for _, t, _ in got] == lines
    assert got == list(unwrap(iter((i + 1, t, False) for i, t in enumerate(cri))))


def test_unwrapper_flush_keeps_an_unfinished_partial_record():
    u = Unwrapper()
    assert u.feed(1, "2026-11-29T00:00:00.000000Z stdout P INFO 03-17 [core.py:1] Using ", False) == []
    assert u.flush() == [(1, "INFO 03-17 [core.py:1] Using ", True)]
    assert not u.pending



def test_a_server_up_line_no_run_holds_survives_a_restore(packs):
    # a ready / HTTP 2xx line that joins no run (after a run closed) is no event of the open run, yet
    # a later failure is one while serving (``Analyzer.up_seen``): the checkpoint keeps its line.
    # Real-log case: tests/test_follow_runner.py, vllm-161 after vllm-160 (a restored follower said
    # START_FAILED where scan said failed while serving)
    a = Pipeline(packs, source="x")
    a.analyzer.up_seen["x"] = 6
    state = json.loads(json.dumps(a.checkpoint().to_json()))
    assert state["up_seen"] == 6
    b = Pipeline(packs, source="x")
    b.restore(state)
    assert b.analyzer.up_seen == {"x": 6}
    with pytest.raises(ValueError):
        Pipeline(packs).restore({"events": [], "up_seen": "6"})


def test_a_waiting_compilation_error_header_survives_a_restore(packs):
    """sglang-330's unprefixed Triton CompilationError header joins no run (it waits in
    ``Analyzer._jit_heads``); a checkpoint taken while it waits keeps it, so the restored
    pass still names ``fused_moe_kernel`` for the error below it."""
    from tests.conftest import FIXTURES
    recs = _records(FIXTURES / "sglang" / "sglang-330.log")
    expected = _full(packs, recs)
    assert any(f["kernel"] == "fused_moe_kernel" for r in expected for f in r["findings"])
    waited = 0
    for k in range(1, len(recs) + 1):
        a = Pipeline(packs, source="x")
        before = [r for n, t, tr in recs[:k] for _, r in a.feed(n, t, tr) if r is not None]
        if not a.quiescent:
            continue
        state = json.loads(json.dumps(a.checkpoint().to_json()))
        waited += "jit_head" in state
        b = Pipeline(packs, source="x")
        b.restore(state)
        after = [r for n, t, tr in recs[k:] for _, r in b.feed(n, t, tr) if r is not None]
        after += [r for _, r in b.close() if r is not None]
        assert [_dump(r) for r in before + after] == expected, f"restored after record {k}"
    assert waited, "no checkpoint was taken while the header waited"
