"""A start repeated with the SAME pids and clocks (a crash loop's log, ``for i in $(seq 300); do cat
vllm-020.log; done``) is one run per start: the start sequence printed again after a failure opens
the next run (``analysis/newstart.repeated_start``, docs/run-splitting.md rule 5), and folding then
counts the repeats. Real fixture logs repeated; the counter-examples are real logs (or a real log
with another rank's tag) whose repeated line is no restart.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from logscan.api import gate
from logscan.pipeline import scan_inputs

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"


def _text(name: str) -> str:
    t = (FIX / name).read_text(encoding="utf-8")
    return t if t.endswith("\n") else t + "\n"


def _write(tmp_path: Path, text: str, name: str = "loop.log") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _starts(report) -> int:
    return sum(1 + (r.folded.runs if r.folded else 0) for r in report.runs)


def _failed(report) -> int:
    return sum(1 + (r.folded.runs if r.folded else 0) for r in report.runs if r.start_failure)


def test_three_hundred_identical_starts_are_three_hundred_failed_starts(tmp_path):
    """The new-user trial's loop: vllm-020 (a tagged traceback excerpt, one pid) catted 300 times was
    one run, its 299 further failures unsaid."""
    p = _write(tmp_path, _text("vllm/vllm-020.log") * 300)
    off = scan_inputs([str(p)], fold=False)
    assert len(off.runs) == 300
    assert all(r.start_failure is not None for r in off.runs)
    assert [r.first_line for r in off.runs[:3]] == [1, 12, 23]
    on = scan_inputs([str(p)])
    assert len(on.runs) == 1 and on.runs[0].folded.runs == 299
    assert on.summary.folded_runs == 299 and _failed(on) == 300
    assert gate(on).verdict == gate(off).verdict == "fail"


@pytest.mark.parametrize("name, how", [
    ("vllm/vllm-020.log", "first line (EngineCore pid tag) after a raised exception"),
    ("vllm/vllm-019.log", "first line after a raised exception"),
    ("sglang/sglang-293.log", "first line (clock) after a raised exception"),
    ("tgi/tgi-143.log", "first line (clock) after a raised exception"),
    ("llamacpp/llamacpp-188.log", "ggml_cuda_init: found 1 ROCm devices (once_per_start) after GGML_ASSERT"),
    ("other/other-119.log", "ggml_cuda_init: found 1 CUDA devices (once_per_start) after a CUDA error"),
])
def test_a_real_start_repeated_is_one_run_per_start(tmp_path, name, how):
    one = scan_inputs([str(FIX / name)], fold=False)
    assert len(one.runs) == 1
    p = _write(tmp_path, _text(name) * 5)
    off = scan_inputs([str(p)], fold=False)
    assert len(off.runs) == 5, how
    n = len(_text(name).splitlines())  # each later run opens at the repeated line of its copy
    assert [r.first_line - off.runs[1].first_line for r in off.runs[1:]] == [0, n, 2 * n, 3 * n]
    on = scan_inputs([str(p)])
    assert _starts(on) == 5 and _failed(on) == 5 * _failed(one)
    assert on.summary.folded_runs and on.summary.runs + on.summary.folded_runs == 5


def test_a_build_repeated_by_the_same_process_after_its_failure_line_stays_one_run():
    """trtllm-137: trtllm-build logs 'Engine building failed' and builds again in the same process,
    printing its first line ('Unused Input: position_ids', same clock) again: an engine's failed-step
    line is no raised exception, and the builder line is no once-per-start line."""
    report = scan_inputs([str(FIX / "trtllm" / "trtllm-137.log")], fold=False)
    assert len(report.runs) == 1
    assert report.runs[0].start_failure is not None


def test_another_ranks_copy_of_the_traceback_is_the_same_start(tmp_path):
    """The same traceback printed by another rank (another process tag and pid) after the first
    rank's exception is one start's (interleaved ranks): only the same process stream restarts."""
    first = _text("vllm/vllm-020.log")
    other = first.replace("(EngineCore_DP0 pid=3300589)", "(Worker_TP1 pid=3300602)")
    assert other != first
    report = scan_inputs([str(_write(tmp_path, first + other))], fold=False)
    assert len(report.runs) == 1


def test_a_traceback_logged_then_printed_raw_by_the_same_process_is_one_start(tmp_path):
    """vLLM's engine core logs its exception (logger.exception: 'ERROR <clock> [core.py:N]' on every
    line) and re-raises it, and multiprocessing prints the traceback again raw under the same tag
    (vllm/v1/engine/core.py run_engine_core): the same lines, another level, one start."""
    raw = _text("vllm/vllm-020.log")
    tag = "(EngineCore_DP0 pid=3300589) "
    logged = "".join(tag + "ERROR 01-07 13:43:31 [core.py:867] " + ln[len(tag):] + "\n"
                     for ln in raw.splitlines())
    report = scan_inputs([str(_write(tmp_path, logged + raw))], fold=False)
    assert len(report.runs) == 1


def test_a_survived_exception_then_the_first_line_again_is_one_start(tmp_path):
    """A process that logs progress after its exception survived it: the traceback seen again is
    not a restart's."""
    raw = _text("vllm/vllm-020.log")
    went_on = "(EngineCore_DP0 pid=3300589) INFO 01-07 13:43:32 [gpu_model_runner.py:1] Loading weights took 1.00 seconds\n"
    report = scan_inputs([str(_write(tmp_path, raw + went_on + raw))], fold=False)
    assert len(report.runs) == 1


def test_an_untagged_unclocked_first_line_is_no_restart(tmp_path):
    """A raw line with neither a pid nor a clock names no process: its copy after an exception may be
    another rank's or a second print, so it opens nothing (a limit, docs/run-splitting.md)."""
    raw = _text("vllm/vllm-020.log").replace("(EngineCore_DP0 pid=3300589) ", "")
    report = scan_inputs([str(_write(tmp_path, raw * 3))], fold=False)
    assert len(report.runs) == 1


def test_the_summary_counts_failed_starts_with_their_folded_repeats(tmp_path):
    """Text and JSON say how many starts failed, folded repeats counted; a loop of healthy starts
    (vllm-005, TP=2 Marlin, no failure) has no failed_starts key and the plain folded clause."""
    import json

    from logscan.formats import json as json_format, text as text_format

    loop = scan_inputs([str(_write(tmp_path, _text("vllm/vllm-020.log") * 300))])
    text = text_format.render(loop)
    assert "Summary: 1 run(s) (300 failed start(s), 299 folded), " in text
    assert "; 300 start(s) FAILED (START_FAILED)" in text
    summary = json.loads(json_format.render(loop))["summary"]
    assert (summary["failed_starts"], summary["folded_runs"]) == (300, 299)
    assert "serving_failures" not in summary
    healthy = scan_inputs([str(_write(tmp_path, _text("vllm/vllm-005.log") * 4, "healthy.log"))])
    assert healthy.summary.folded_runs
    assert f"(and {healthy.summary.folded_runs} folded into them), " in text_format.render(healthy)
    assert "failed_starts" not in json.loads(json_format.render(healthy))["summary"]


def test_gate_checks_of_a_folded_run_name_its_repeats(tmp_path):
    """A gate verdict over a folded run says the failure repeated: 'run 1 (and 299 folded repeat(s),
    lines 12-3,300)' in the message of every check of that run (text, JUnit, SARIF, Markdown and
    annotations all print it), ``folded`` in the JSON, and the closing stderr line counts them."""
    import json

    from click.testing import CliRunner

    from logscan.cli import cli
    from logscan.formats import github, junit, markdown, sarif

    p = _write(tmp_path, _text("vllm/vllm-020.log") * 300)
    on = scan_inputs([str(p)])
    g = gate(on)
    words = "and 299 folded repeat(s), lines 12-3,300"
    sf = next(c for c in g.checks if c.code == "START_FAILED")
    assert sf.message.startswith(f"run 1 ({words}): the engine did not start: ")
    assert sf.folded is not None and sf.folded.runs == 299
    knf = next(c for c in g.checks if c.code == "KERNEL_NOT_FOUND")
    assert knf.message.endswith(f"; in run 1 ({words})")
    for fmt in (junit, sarif, markdown, github):
        assert words in fmt.render(on, g), fmt.__name__
    off = gate(scan_inputs([str(p)], fold=False))
    assert not any("folded repeat" in c.message or c.folded for c in off.checks)
    assert off.verdict == g.verdict == "fail"
    res = CliRunner().invoke(cli, ["gate", "--format", "json", str(p)], catch_exceptions=False)
    doc = json.loads(res.stdout)
    assert {c["code"]: c.get("folded", {}).get("runs") for c in doc["gate"]["checks"]} == {
        "KERNEL_NOT_FOUND": 299, "START_FAILED": 299}
    assert "their run(s) repeated 299 more time(s), folded" in res.stderr
    # a run with no repeats keeps its message as it was
    single = gate(scan_inputs([str(FIX / "vllm" / "vllm-020.log")]))
    assert next(c for c in single.checks if c.code == "START_FAILED").message.startswith(
        "run 1: the engine did not start: ")


def test_a_no_kernel_check_keeps_its_lines_beside_the_repeats(tmp_path):
    """'run 1 (lines 1-11) names no quantized kernel selection' of a folded run: both spans said."""
    from logscan.gate.repeats import note_folded
    from logscan.gate.result import Check, Verdict

    on = scan_inputs([str(_write(tmp_path, _text("vllm/vllm-020.log") * 3))])
    c = Check(kind="no_kernel", code="NO_KERNEL_SEEN", name="NO_KERNEL_SEEN run 1",
              message="run 1 (lines 1-11) names no quantized kernel selection", verdict=Verdict.fail,
              decided_by="", source=on.runs[0].source, run=1)
    note_folded([c], on)
    assert c.message == "run 1 (lines 1-11; and 2 folded repeat(s), lines 12-33) names no quantized kernel selection"


# -- another process after a failure (newstart.unseen_process) -----------------------------------------

@pytest.mark.parametrize("first,second", [
    ("vllm/vllm-020.log", "vllm/vllm-254.log"),  # EngineCore_DP0 pid=3300589's traceback, then Worker_TP2 pid=142's
    ("vllm/vllm-020.log", "vllm/vllm-240.log"),  # then Worker_TP0_EP0 pid=110162 and Worker_TP1_EP1 (two ranks)
])
def test_a_banner_less_traceback_of_another_process_after_a_failure_is_the_next_start(tmp_path, first, second):
    # no banner, no clock going back, no same role: nothing but the process says it is another start
    # (a name the run never heard, no clock near the run's, a pid far from its pids); it joined run 1
    from tests.test_run_boundary_held import _alone, _cat, _lines, _view

    runs = scan_inputs([str(_cat(tmp_path, (first, False), (second, False)))], fold=False).runs
    assert [r.first_line for r in runs][1:] == [_lines(first) + 1]
    assert [_view(r) for r in runs] == [_alone(first), _alone(second)]


@pytest.mark.parametrize("name", [
    "vllm/vllm-213.log",  # RayWorkerWrapper pid=890's traceback, then '(APIServer pid=632) Traceback' (no clock)
    "vllm/vllm-240.log",  # Worker_TP0_EP0's failure, then Worker_TP1_EP1 (another rank of a name heard)
    "vllm/vllm-272.log",
    "vllm/vllm-281.log",
])
def test_another_process_of_the_same_start_after_its_failure_is_no_new_start(name):
    # the real runs where a pid the run had not heard speaks after its failure line: one start each
    from tests.conftest import FIXTURES

    assert len(scan_inputs([str(FIXTURES / name)], fold=False).runs) == 1
