"""``logscan follow`` folds a crash loop (``follow/repeats.py``): the first run's records, then a
compact ``repeated`` line, not the same records per restart; metrics still count every failed start;
a run that differs is printed in full; memory stays bounded. Real fixture logs repeated.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

from logscan.follow.repeats import KEEP_REPS, Repeats
from logscan.follow.runner import Follower

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"


def _text(name: str) -> str:
    t = (FIX / name).read_text(encoding="utf-8")
    return t if t.endswith("\n") else t + "\n"


def _follow(packs, path: Path, chunks: list[str], every: float = 60.0, metrics=None) -> list[dict]:
    out = io.StringIO()
    f = Follower([str(path)], packs, out, idle_flush=0.0, metrics=metrics)
    with open(path, "w", encoding="utf-8") as fh:
        for chunk in chunks:
            fh.write(chunk)
            fh.flush()
            f.poll_once()
            for s in f.streams.values():
                if s.repeats is not None:
                    s.repeats.every = every
    f.poll_once()
    f.end_all()
    return [json.loads(ln) for ln in out.getvalue().splitlines()]


def test_a_crash_loop_prints_its_run_once_then_repeated_lines(packs, tmp_path):
    """vllm-020 restarting 50 times, one restart per poll: the finding and the failed start once,
    a 'repeated' line at the first repeat and one when the stream ends (299 -> 49 here), counts exact."""
    recs = _follow(packs, tmp_path / "engine.log", [_text("vllm/vllm-020.log")] * 50)
    kinds = [r["type"] for r in recs]
    assert kinds.count("start_failure") == 1 and kinds.count("finding") == 1
    rep = [r for r in recs if r["type"] == "repeated"]
    assert rep[0]["folded"]["runs"] == 1 and rep[0]["run_line"] == 1
    assert rep[-1]["folded"]["runs"] == 49
    assert rep[-1]["folded"]["first_line"] == 12 and rep[-1]["folded"]["last_first_line"] == 49 * 11 + 1
    assert len(rep) <= 3  # the first repeat, the end (and at most one more): no line per restart


def test_repeated_lines_come_per_interval(packs, tmp_path):
    """With an interval of 0 s, a line per poll whose count grew: the counts rise, none twice."""
    recs = _follow(packs, tmp_path / "engine.log", [_text("vllm/vllm-020.log")] * 6, every=0.0)
    counts = [r["folded"]["runs"] for r in recs if r["type"] == "repeated"]
    assert counts == sorted(set(counts)) and counts[-1] == 5 and len(counts) >= 3


def test_folding_off_prints_every_run(packs, tmp_path, monkeypatch):
    monkeypatch.setenv("LOGSCAN_FOLD", "0")
    recs = _follow(packs, tmp_path / "engine.log", [_text("vllm/vllm-020.log")] * 5)
    assert [r["type"] for r in recs].count("start_failure") == 5
    assert not any(r["type"] == "repeated" for r in recs)


def test_a_different_run_in_the_loop_is_printed_in_full(packs, tmp_path):
    """vllm-011 (flashinfer-cutlass NVFP4, its own failed start) between the repeats: its selection,
    findings and failure are printed, and it ends the loop's count (a 'repeated' line before it)."""
    loop, other = _text("vllm/vllm-020.log"), _text("vllm/vllm-011.log")
    recs = _follow(packs, tmp_path / "engine.log", [loop] * 4 + [other] + [loop] * 3)
    other_line = next(r["run_line"] for r in recs if r["type"] == "selection")
    assert other_line > 4 * len(loop.splitlines())
    mine = [r for r in recs if r["run_line"] == other_line]
    assert {r["selection"]["kernel"] for r in mine if r["type"] == "selection"} == {"flashinfer-cutlass", "Cutlass"}
    assert any(r["type"] == "start_failure" for r in mine)
    i = next(i for i, r in enumerate(recs) if r["run_line"] == other_line)
    # copies 2 and 3 folded into the first (the fourth is cut short by vllm-011's start: its own run)
    assert [r["folded"]["runs"] for r in recs[:i] if r["type"] == "repeated" and r["run_line"] == 1][-1] == 2
    assert [r["type"] for r in recs if r["run_line"] == 1].count("start_failure") == 1


def test_metrics_count_every_failed_start(packs, tmp_path):
    from prometheus_client import generate_latest

    from logscan.follow.metrics import FollowMetrics

    m = FollowMetrics("sidecar", packs.findings.cost_class_finding)
    _follow(packs, tmp_path / "engine.log", [_text("vllm/vllm-020.log")] * 7, metrics=m)
    text = generate_latest(m.registry).decode()
    assert "logscan_start_failures_total 7.0" in text


def test_representatives_are_bounded():
    """At most KEEP_REPS distinct runs are kept per stream, however many distinct runs close."""
    from logscan.pipeline import scan_inputs

    run = scan_inputs([str(FIX / "vllm" / "vllm-020.log")], fold=False).runs[0]
    rp = Repeats()
    for i in range(KEEP_REPS * 3):
        r = run.model_copy(update={"first_line": i * 100 + 1, "last_line": i * 100 + 11})
        r.config = run.config.model_copy(update={"model": f"m{i}"})
        rp.filter(r, set(), [], True, {}, lambda rec: None, lambda rec: None)
    assert len(rp.reps) == KEEP_REPS



def test_a_run_that_printed_nothing_repeats_without_a_line(tmp_path):
    """A run that reported no record (runtime noise that opened a run) folds its repeats but
    prints no ``repeated`` line: a count of nothing printed is noise (it made follow's output
    differ with the prefilter on and off, tests/test_follow_prefilter.py). A run that printed a
    record still gets its line."""
    from logscan.pipeline import scan_inputs

    p = tmp_path / "three.log"
    p.write_text(_text("vllm/vllm-020.log") * 3, encoding="utf-8")
    runs = scan_inputs([str(p)], fold=False).runs  # three starts, each at its own lines
    assert len(runs) == 3
    lines: list = []
    BASE = {"source": "x.log", "run_line": runs[0].first_line, "engine": "vllm"}
    silent = Repeats()
    for run in runs:
        silent.filter(run.model_copy(), set(), [], True, BASE, lines.append, lambda rec: None)
    assert len(silent.reps) == 1 and next(iter(silent.reps.values())).folded.runs == 2
    assert lines == [] and silent.flush() == []
    loud = Repeats()
    for i, run in enumerate(runs):
        loud.filter(run.model_copy(), {"rec"} if i == 0 else set(), [], True, BASE, lines.append, lambda rec: None)
    assert [rec.type for rec in lines] == ["repeated"] and lines[0].folded.runs == 1
