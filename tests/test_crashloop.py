"""A crash loop (one real failing start-up repeated) folds into a bounded report, losing nothing the
gate or a reader needs: counts, first/last lines, every distinct selection and failure, the verdict.

The logs are built here from real fixture windows (``bench/crashloop_log.py``: vllm-005 +
vllm-019, sglang-211's ServerArgs + sglang-274), with clocks and pids advanced per restart.
"""
from __future__ import annotations

import datetime
import importlib.util
import json
import re
from pathlib import Path

import pytest

from logscan.api import gate
from logscan.fold import keys
from logscan.formats import json as json_format, text as text_format
from logscan.pipeline import scan_inputs

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("crashloop_log", ROOT / "bench" / "crashloop_log.py")
crashloop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(crashloop)
DAY = datetime.date(2026, 1, 1)


def _loop(tmp_path: Path, engine: str, count: int) -> Path:
    p = tmp_path / f"{engine}-{count}.log"
    crashloop.write_loop(p, engine, count=count)
    return p


def _starts(report) -> int:
    return sum(1 + (r.folded.runs if r.folded else 0) for r in report.runs)


def _selections(report) -> set:
    return {(s.family, s.kernel, s.cost_class, s.ladder.rung if s.ladder else None, s.refused is not None)
            for r in report.runs for s in r.selections}


def _failures(report) -> list:
    """(headline, exception) of every start's failure, each folded run counted (the line numbers
    a headline names left out)."""
    out = []
    for r in report.runs:
        f = r.start_failure
        out += [(re.sub(r"\d+", "#", f.headline), f.exception_type) if f else None] * (1 + (r.folded.runs if r.folded else 0))
    return sorted(out, key=repr)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_fold_keeps_counts_lines_selections_and_verdict(tmp_path, engine):
    path = _loop(tmp_path, engine, 8)
    off = scan_inputs([str(path)], fold=False)
    on = scan_inputs([str(path)], fold=True)
    assert len(off.runs) == 8
    assert len(on.runs) < len(off.runs)
    assert _starts(on) == len(off.runs) == on.summary.runs + on.summary.folded_runs
    folded = [r for r in on.runs if r.folded]
    assert len(folded) == 1
    rep, f = folded[0], folded[0].folded
    # the folded runs are the ones after the representative, up to the last listed run
    i = next(i for i, r in enumerate(off.runs) if r.first_line == rep.first_line)
    later = off.runs[i + 1: i + 1 + f.runs]
    assert f.first_line == later[0].first_line
    assert (f.last_first_line, f.last_line) == (later[-1].first_line, later[-1].last_line)
    assert f.events == sum(1 for e in off.events if later[0].first_line <= e.line <= later[-1].last_line)
    assert len(on.events) + on.summary.events_left_out == len(off.events)
    assert _selections(on) == _selections(off)
    assert {c.code for r in on.runs for c in r.findings} == {c.code for r in off.runs for c in r.findings}
    assert _failures(on) == _failures(off)
    g_on, g_off = gate(on, today=DAY), gate(off, today=DAY)
    assert g_on.verdict == g_off.verdict == "fail"
    assert ({(c.code, c.verdict) for c in g_on.checks} == {(c.code, c.verdict) for c in g_off.checks})
    # said in the text report and the JSON, never silently
    text = text_format.render(on)
    assert f"{f.runs:,} more run(s) like this one, lines {f.first_line:,}-{f.last_line:,}" in text
    failed = len(_failures(off)) - _failures(off).count(None)
    assert failed == 8 and on.summary.failed_starts == off.summary.failed_starts == failed
    assert f"({failed:,} failed start(s), {on.summary.folded_runs:,} folded)" in text
    assert f"{failed} start(s) FAILED (START_FAILED)" in text
    doc = json.loads(json_format.render(on))
    assert doc["summary"]["folded_runs"] == f.runs
    assert doc["summary"]["failed_starts"] == failed
    assert [r.get("folded") for r in doc["runs"] if r.get("folded")][0]["runs"] == f.runs
    assert "folded" not in json.loads(json_format.render(off))["runs"][0]


def test_a_different_start_among_the_repeats_is_kept(tmp_path):
    """vllm-011 (flashinfer-cutlass NVFP4, Cutlass MoE) between the repeated vLLM start-ups stays
    its own run, and the repeats after it still fold into the first one like them."""
    p = tmp_path / "mixed.log"
    gen = crashloop.restarts("vllm")
    other = (ROOT / "fixtures" / "vllm" / "vllm-011.log").read_text(encoding="utf-8")
    with p.open("w", encoding="utf-8") as fh:
        for k in range(7):
            fh.write(next(gen))
            if k == 3:
                fh.write(other.rstrip("\n") + "\n")
    off = scan_inputs([str(p)], fold=False)
    on = scan_inputs([str(p)], fold=True)
    assert _selections(on) == _selections(off)
    assert any(s.kernel == "flashinfer-cutlass" or "cutlass" in s.kernel.lower()
               for r in on.runs for s in r.selections)
    assert _starts(on) == len(off.runs)
    assert _failures(on) == _failures(off)
    assert gate(on, today=DAY).verdict == gate(off, today=DAY).verdict


def test_runs_differing_in_a_kernel_do_not_fold(tmp_path):
    """A number inside a kernel name is compared: only the log's words (evidence, reasons) have
    their numbers ignored."""
    path = _loop(tmp_path, "vllm", 4)
    runs = scan_inputs([str(path)], fold=False).runs
    a, b = runs[1], runs[2]
    assert keys(a) == keys(b)[:1] + (keys(b)[1],) and keys(a)[0] == keys(b)[0]
    b.selections[0].kernel = b.selections[0].kernel + "2"
    assert keys(a)[0] != keys(b)[0]
    c = runs[2]
    c.selections[0].evidence = c.selections[0].evidence.replace("FP4", "FP8")
    assert keys(a)[0] != keys(c)[0]


def test_two_inputs_never_fold_together(tmp_path):
    a, b = _loop(tmp_path, "sglang", 3), tmp_path / "b.log"
    b.write_bytes(a.read_bytes())
    on = scan_inputs([str(a), str(b)], fold=True)
    assert {r.source for r in on.runs} == {str(a), str(b)}
    assert _starts(on) == 6


def test_a_long_loop_gives_a_bounded_report(tmp_path):
    """600 restarts of the SGLang start-up (each start is analysed: ~15 ms a run on this machine,
    so not the 2,000 of the brief): a handful of runs and a small JSON report."""
    path = _loop(tmp_path, "sglang", 600)
    on = scan_inputs([str(path)])
    assert len(on.runs) <= 3
    assert _starts(on) == 600
    assert on.summary.folded_runs >= 597
    assert len(on.events) <= 3 * 12
    assert len(json_format.render(on)) < 40_000
    assert gate(on, today=DAY).verdict == "fail"
