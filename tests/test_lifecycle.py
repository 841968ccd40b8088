"""A run's lifecycle: a failed start (START_FAILED) versus a failure after the server came up
(``Run.serving_failure``), with "up" remembered per source (analysis/lifecycle.py, docs/lifecycle.md).

Real logs: fixtures/vllm/vllm-160.log (vllm#17276: added requests, then 'EngineCore encountered
a fatal error'), vllm-161.log (vllm-metal#112: an HTTP 200 access line that belongs to no run, then
EngineDeadError), fixtures/sglang/sglang-111.log (sglang#23548), tests/data/vllm-25909.log (a real
failed start); each label beside a fixture says its ``lifecycle``. The combined inputs are those
logs' own lines, put one after the other (a restart, a survived traceback).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES, known_misses

DATA = Path(__file__).parent / "data"
LIFECYCLE = sorted(p for p in FIXTURES.glob("*/*.label.json") if "lifecycle" in json.loads(p.read_text()))


def _runs(path: Path):
    return scan_inputs([str(path)], default_packs()).runs


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _write(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "combined.log"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_lifecycle_labels_exist():
    assert {p.name.split(".")[0] for p in LIFECYCLE} >= {"vllm-160", "vllm-161", "sglang-111"}


@pytest.mark.parametrize("label", LIFECYCLE, ids=lambda p: p.name.split(".")[0])
def test_labelled_lifecycle_is_met(label):
    miss = known_misses().get(f"{label.parent.name}/{label.name.split('.')[0]}")
    if miss is not None and "lifecycle" in miss:
        pytest.xfail(f"known miss: {miss}")
    want = json.loads(label.read_text())["lifecycle"]
    runs = _runs(label.with_name(label.name.replace(".label.json", ".log")))
    failed = [r for r in runs if r.start_failure is not None]
    serving = [r for r in runs if r.serving_failure is not None]
    if want == "failed_while_serving":
        assert serving and not failed
    elif want == "start_failed":
        assert failed
    else:
        assert want == "up" and not failed and not serving


def test_a_served_request_then_engine_death_is_not_start_failed():
    """vllm-metal#112: the 200 line opens no run (no engine prefix) but is remembered for its source."""
    log = FIXTURES / "vllm" / "vllm-161.log"
    (run,) = _runs(log)
    assert run.first_line == 4 and run.start_failure is None
    assert run.serving_failure.line == 4 and "EngineDeadError" in run.serving_failure.cause
    r = CliRunner().invoke(cli, ["scan", "--fail-on", "START_FAILED", str(log)])
    assert r.exit_code == 0, r.output
    text = CliRunner().invoke(cli, ["scan", str(log)]).stdout
    assert "failed WHILE SERVING at line 4" in text and "start FAILED" not in text
    doc = json.loads(CliRunner().invoke(cli, ["scan", "--format", "json", str(log)]).stdout)
    assert doc["runs"][0]["serving_failure"]["line"] == 4 and doc["runs"][0]["start_failure"] is None


def test_without_the_served_line_the_same_crash_fails_closed(tmp_path):
    lines = _lines(FIXTURES / "vllm" / "vllm-161.log")
    (run,) = _runs(_write(tmp_path, lines[2:]))
    assert run.start_failure is not None and run.serving_failure is None


def test_a_fatal_error_of_a_running_engine_core_is_no_failed_start(tmp_path):
    """vllm#17276: 'EngineCore encountered a fatal error.' is logged only once the engine core was
    built (v1/engine/core.py run_engine_core); on its own, without the added requests, it still says so."""
    lines = _lines(FIXTURES / "vllm" / "vllm-160.log")
    for sample in (lines, lines[3:]):
        (run,) = _runs(_write(tmp_path, sample))
        assert run.start_failure is None and run.serving_failure is not None


def test_a_restart_after_serving_can_fail_its_start_again(tmp_path):
    """Up is forgotten at a new start marker: vllm-161's served request and engine death, then a
    new API server banner (vllm-006's own line) and vllm-25909's failed start."""
    banner = next(x for x in _lines(FIXTURES / "vllm" / "vllm-006.log") if "vLLM API server version" in x)
    lines = _lines(FIXTURES / "vllm" / "vllm-161.log") + [banner] + _lines(DATA / "vllm-25909.log")
    runs = _runs(_write(tmp_path, lines))
    assert runs[0].serving_failure is not None and runs[0].start_failure is None
    assert runs[-1].start_failure is not None and runs[-1].serving_failure is None
    assert runs[-1].start_failure.line > len(_lines(FIXTURES / "vllm" / "vllm-161.log"))
    # without the banner the crash lines run on from the served request: no failed start
    runs = _runs(_write(tmp_path, _lines(FIXTURES / "vllm" / "vllm-161.log") + _lines(DATA / "vllm-25909.log")))
    assert all(r.start_failure is None for r in runs) and any(r.serving_failure is not None for r in runs)


def _progress(process_tag: str) -> str:
    """vllm-005's own 'Loading weights took' line, under another process tag."""
    line = next(x for x in _lines(FIXTURES / "vllm" / "vllm-005.log") if "Loading weights took" in x)
    return process_tag + line[line.index(")") + 1:]


def test_a_traceback_its_process_went_on_from_was_survived(tmp_path):
    """vllm-25909's traceback (Worker_TP3 under EngineCore_DP0 under APIServer), then a progress
    line of the same process: it went on with its start, so no START_FAILED."""
    tb = _lines(DATA / "vllm-25909.log")
    tag = tb[1][: tb[1].index(" ERROR ")]
    assert "Worker_TP3" in tag
    runs = _runs(_write(tmp_path, tb + [_progress(tag)]))
    assert runs and all(r.start_failure is None for r in runs)


def test_a_traceback_followed_only_by_other_processes_fails_closed(tmp_path):
    tb = _lines(DATA / "vllm-25909.log")
    other = tb[1][: tb[1].index(" ERROR ")].replace("Worker_TP3 pid=305", "Worker_TP0 pid=302")
    (run,) = _runs(_write(tmp_path, tb + [_progress(other)]))
    assert run.start_failure is not None
    (run,) = _runs(_write(tmp_path, tb))  # the log ends at the traceback: fail closed
    assert run.start_failure is not None


def test_progress_lines_are_no_report_events_and_split_no_run():
    """vllm-005 has 'Loading weights took' lines: they feed the analysis only."""
    log = FIXTURES / "vllm" / "vllm-005.log"
    report = scan_inputs([str(log)], default_packs())
    assert not [e for e in report.events if e.kind == "progress"]
    assert any("Loading weights took" in x for x in _lines(log))


@pytest.mark.parametrize("line,up", [
    ('[2026-04-23 07:32:02] INFO:     127.0.0.1:34224 - "GET /model_info HTTP/1.1" 200 OK', True),
    ("srv  log_server_r: request: POST /v1/chat/completions 127.0.0.1 200", True),
    ('INFO:     127.0.0.1:34224 - "GET /health HTTP/1.1" 503 Service Unavailable', False),
    ("srv  log_server_r: request: GET /health 127.0.0.1 503", False),
])
def test_only_a_2xx_access_line_says_the_server_was_up(tmp_path, line, up):
    """sglang-111's scheduler exception after one access line of either shape (the ready lines removed)."""
    lines = [x for x in _lines(FIXTURES / "sglang" / "sglang-111.log")
             if "startup complete" not in x and "Uvicorn running" not in x and "HTTP/1.1" not in x]
    at = next(i for i, x in enumerate(lines) if "Scheduler hit an exception" in x)
    runs = _runs(_write(tmp_path, lines[:at] + [line] + lines[at:]))
    assert any(r.serving_failure is not None for r in runs) is up
    assert any(r.start_failure is not None for r in runs) is not up


def test_a_scheduler_exception_inside_the_event_loop_is_a_failure_while_serving(tmp_path):
    """sglang#31103 (sglang-161): the traceback runs through scheduler.event_loop_overlap(), which
    run_scheduler_process enters only after the scheduler's init. Without those frame lines (what
    an init failure's traceback looks like: its frames are in Scheduler(...)) it fails closed."""
    log = FIXTURES / "sglang" / "sglang-161.log"
    (run,) = _runs(log)
    assert run.start_failure is None and run.serving_failure.line == 2
    # line 1 is a 'Decode batch' line, itself serving evidence (sglang.run.batch-stats): left out
    lines = [x for x in _lines(log)[1:] if "event_loop" not in x]
    (run,) = _runs(_write(tmp_path, lines))
    assert run.start_failure is not None and run.serving_failure is None


def test_a_loop_frame_is_no_recovery_from_its_own_traceback(tmp_path):
    """A serving-loop frame is a ready-kind line inside the traceback: it must not read as a ready
    line after the traceback (which would mean recovered, and report nothing)."""
    lines = [x for x in _lines(FIXTURES / "sglang" / "sglang-160.log")]
    lines = [x.replace("Scheduler hit an exception: ", "") for x in lines]  # the bare traceback
    runs = _runs(_write(tmp_path, lines))
    assert runs and all(r.start_failure is None for r in runs)
    assert any(r.serving_failure is not None for r in runs)


# --- serving evidence of runs with no server (docs/lifecycle.md "Serving evidence") ---------------

def test_an_offline_progress_bar_then_a_worker_death_is_a_failure_while_serving(tmp_path):
    """vllm#7322's worker death (vllm-250, a failed start on its own) after the offline
    `Processed prompts: 100%|...` bar of vllm PR #24577 (vllm-196): the engine had run requests."""
    bar = [ln for ln in _lines(FIXTURES / "vllm" / "vllm-196.log") if "Processed prompts:" in ln]
    death = _lines(FIXTURES / "vllm" / "vllm-250.log")
    (run,) = _runs(_write(tmp_path, death[:8] + bar + death[8:]))
    assert run.start_failure is None and run.serving_failure is not None
    assert "died" in run.serving_failure.evidence
    # the same lines without the bar fail closed
    (run,) = _runs(_write(tmp_path, death))
    assert run.start_failure is not None and run.serving_failure is None


def test_sglang_batch_statistics_are_serving_evidence_for_the_gate():
    """sglang-004 (an SGLang DP excerpt: two selections, then the schedulers' 'Prefill batch'
    lines, no ready line): the schedulers ran a batch, so the start is no START_INCOMPLETE."""
    log = FIXTURES / "sglang" / "sglang-004.log"
    r = CliRunner().invoke(cli, ["gate", "--format", "json", str(log)])
    doc = json.loads(r.stdout)
    assert not [c for c in doc["gate"]["checks"] if c.get("code") == "START_INCOMPLETE"]
    events = scan_inputs([str(log)], default_packs()).events
    assert any(e.rule == "sglang.run.batch-stats" for e in events)


def test_without_batch_statistics_the_same_sglang_excerpt_is_start_incomplete(tmp_path):
    lines = [ln for ln in _lines(FIXTURES / "sglang" / "sglang-004.log") if "batch," not in ln]
    r = CliRunner().invoke(cli, ["gate", "--format", "json", str(_write(tmp_path, lines))])
    doc = json.loads(r.stdout)
    assert [c for c in doc["gate"]["checks"] if c.get("code") == "START_INCOMPLETE"]


def test_batch_statistics_are_read_once_per_start_not_per_line():
    """sglang-172: a window of decode-batch lines; one serving event, not one per line."""
    events = scan_inputs([str(FIXTURES / "sglang" / "sglang-172.log")], default_packs()).events
    assert [e.rule for e in events].count("sglang.run.batch-stats") == 1


def test_a_scheduler_crash_after_decode_statistics_is_a_failure_while_serving(tmp_path):
    """sglang-161 (sglang#31103) without its event-loop frames fails closed on main; its own
    'Decode batch' line (line 1) now says the scheduler was serving."""
    lines = [ln for ln in _lines(FIXTURES / "sglang" / "sglang-161.log") if "event_loop" not in ln]
    (run,) = _runs(_write(tmp_path, lines))
    assert run.serving_failure is not None and run.start_failure is None
    (run,) = _runs(_write(tmp_path, lines[1:]))
    assert run.start_failure is not None and run.serving_failure is None


def test_llamacpp_timings_then_an_abort_is_a_failure_while_serving(tmp_path):
    """llama-cli's perf lines (llama.cpp#9013, a real paste) before a ggml CUDA abort of a bundled log."""
    timing = "llama_perf_context_print: prompt eval time =     927.17 ms /    49 tokens (   18.92 ms per token,    52.85 tokens per second)"
    crash = [ln for ln in _lines(FIXTURES / "llamacpp" / "llamacpp-179.log")]
    runs = _runs(_write(tmp_path, [ln for ln in crash if "[GIN]" not in ln]))
    assert any(r.start_failure is not None for r in runs)
    no_gin = [ln for ln in crash if "[GIN]" not in ln]
    runs = _runs(_write(tmp_path, [timing] + no_gin))
    assert not any(r.start_failure is not None for r in runs)
    assert any(r.serving_failure is not None for r in runs)
