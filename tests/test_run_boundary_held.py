"""A multi-line event the matcher still holds open at a run boundary goes to the run it began in.

vLLM's ``ValueError: Failed to find a kernel ... Reasons:`` gathers its reason lines
(``Matcher``, rule ``continuation``); the lines of another process interleave with it for up to
``MAX_INTERLEAVE`` records. When the next start's lines come first (two logs concatenated, a
restart under new pids, another engine's log), the event used to be emitted after the next run
had opened, and its finding landed there (docs/run-splitting.md, "Held lines at a run
boundary"). Real fixtures, concatenated, in several orders and engines, with and without new pids.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _text(name: str, new_pids: bool = False) -> str:
    text = (FIXTURES / name).read_text(encoding="utf-8").rstrip("\n") + "\n"
    return re.sub(r"pid=(\d+)", r"pid=9\1", text) if new_pids else text  # another process of the same role


def _cat(tmp_path: Path, *parts: tuple[str, bool]) -> Path:
    out = tmp_path / "cat.log"
    out.write_text("".join(_text(n, p) for n, p in parts), encoding="utf-8")
    return out


def _lines(name: str) -> int:
    return len(_text(name).splitlines())


def _view(run) -> tuple:
    """What a run says, without line numbers: findings, kernels, config facts, failure."""
    return (sorted(f.code for f in run.findings), sorted(s.kernel or "" for s in run.selections),
            run.engine.name, run.config.model, run.config.tensor_parallel_size, run.config.dtype,
            run.start_failure.exception_type if run.start_failure else None, run.serving_failure is not None)


_ALONE: dict[str, tuple] = {}


def _alone(name: str) -> tuple:
    if name not in _ALONE:
        runs = scan_inputs([str(FIXTURES / name)], fold=False).runs
        assert len(runs) == 1, name
        _ALONE[name] = _view(runs[0])
    return _ALONE[name]


def test_the_reasons_of_a_restart_under_new_pids_stay_in_the_first_run(tmp_path):
    # the trial's repro: vllm-020 twice, the second with other pids of the same roles
    # (EngineCore_DP0): run 1 ends on the exception's reason lines, run 2 begins with frames
    runs = scan_inputs([str(_cat(tmp_path, ("vllm/vllm-020.log", False), ("vllm/vllm-020.log", True)))], fold=False).runs
    assert len(runs) == 2
    first, second = runs
    assert (first.first_line, first.last_line) == (1, 11)  # the reason lines are run 1's
    nf = [f for f in first.findings if f.code == "KERNEL_NOT_FOUND"]
    assert nf and nf[0].line == 5 and len(nf[0].reasons) == 6
    assert second.first_line == 12
    assert [f.line for f in second.findings if f.code == "KERNEL_NOT_FOUND"] == [16]
    assert _view(first) == _view(second) == _alone("vllm/vllm-020.log")


@pytest.mark.parametrize("first,second,new_pids", [
    ("vllm/vllm-254.log", "sglang/sglang-290.log", False),   # a worker's reasons, then SGLang ranks
    ("vllm/vllm-254.log", "lmdeploy/lmdeploy-106.log", False),
    ("vllm/vllm-020.log", "vllm/vllm-020.log", True),
])
def test_a_held_event_that_opens_the_input_opens_the_first_run(tmp_path, first, second, new_pids):
    # vllm-254 is the exception alone (Worker_TP2 pid=142, 5 lines): no run is open while it is
    # held, and the next log's lines used to open run 1, the exception's run coming after it
    runs = scan_inputs([str(_cat(tmp_path, (first, False), (second, new_pids)))], fold=False).runs
    assert [r.first_line for r in runs] == [1, _lines(first) + 1]
    assert [_view(r) for r in runs] == [_alone(first), _alone(second)]


def test_interleaved_ranks_still_feed_one_held_event(tmp_path):
    # counter-example: another rank (another pid, another role) interleaving its lines with the
    # reasons is the same start: nothing is flushed early, every reason is kept
    lines = _text("vllm/vllm-254.log").splitlines()
    other = "(Worker_TP3 pid=143) INFO 12-12 21:39:58 [gpu_model_runner.py:1] Starting to load model Qwen/Qwen3-8B..."
    mixed = [lines[0], lines[1], other, lines[2], other.replace("TP3 pid=143", "TP1 pid=141"), *lines[3:]]
    path = tmp_path / "ranks.log"
    path.write_text("\n".join(mixed) + "\n", encoding="utf-8")
    runs = scan_inputs([str(path)], fold=False).runs
    assert len(runs) == 1
    nf = [f for f in runs[0].findings if f.code == "KERNEL_NOT_FOUND"]
    assert nf and len(nf[0].reasons) == 4


def test_a_restart_of_the_same_role_in_one_log_flushes_the_reasons(tmp_path):
    # the same role under another pid while the reasons are gathered: a new start; its line goes to
    # run 2, the exception (and the reasons before it) to run 1
    lines = _text("vllm/vllm-254.log").splitlines()
    # (the kernel line of vllm-013's Worker_TP0, as TP2 of the restarted start)
    restart = "(Worker_TP2 pid=999) INFO 12-12 21:41:00 [gptq_marlin.py:387] Using MarlinLinearKernel for GPTQMarlinLinearMethod"
    path = tmp_path / "restart.log"
    path.write_text("\n".join([*lines, restart, lines[0].replace("pid=142", "pid=999")]) + "\n", encoding="utf-8")
    runs = scan_inputs([str(path)], fold=False).runs
    assert [r.first_line for r in runs] == [1, 6]
    assert [len([f for f in r.findings if f.code == "KERNEL_NOT_FOUND"]) for r in runs] == [1, 1]
    assert [[s.kernel for s in r.selections] for r in runs] == [[], ["MarlinLinearKernel"]]
    assert len([f for f in runs[0].findings if f.code == "KERNEL_NOT_FOUND"][0].reasons) == 4


#: logs whose last recognised line is a multi-line event still gathering lines at the end
HELD_AT_END = ["vllm/vllm-020.log", "vllm/vllm-254.log"]
#: one-run logs of several engines whose first lines name their start (a tagged process, a banner)
#: (vllm-005 begins with a pasted launch command, then its banner)
NEXT = ["vllm/vllm-020.log", "vllm/vllm-254.log", "vllm/vllm-005.log", "vllm/vllm-011.log",
        "sglang/sglang-290.log", "lmdeploy/lmdeploy-106.log", "sglang/sglang-110.log"]


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.sampled_from(HELD_AT_END), second=st.sampled_from(NEXT), new_pids=st.booleans())
def test_each_run_of_two_logs_is_what_the_log_gives_alone(tmp_path, first, second, new_pids):
    runs = scan_inputs([str(_cat(tmp_path, (first, False), (second, new_pids)))], fold=False).runs
    if len(runs) != 2:  # nothing tells the two apart (docs/run-splitting.md, Limits): not this property
        return
    assert runs[0].first_line == 1 and runs[1].first_line > _lines(first)
    assert [_view(r) for r in runs] == [_alone(first), _alone(second)]


def test_a_restart_loop_of_one_failure_folds_once_its_reasons_stay_in_their_run(tmp_path):
    # fold.py folds a run into an earlier one alike but for numbers: with the reasons on the wrong
    # run, the two starts of one failure differed and were listed apart
    report = scan_inputs([str(_cat(tmp_path, ("vllm/vllm-020.log", False), ("vllm/vllm-020.log", True),
                                   ("vllm/vllm-020.log", False)))])
    assert len(report.runs) == 1 and report.runs[0].folded is not None and report.runs[0].folded.runs == 2
    assert "KERNEL_NOT_FOUND" in {f.code for f in report.runs[0].findings}


def test_a_launch_command_before_the_next_banner_is_the_next_runs(tmp_path):
    # vllm-005 begins with a pasted 'VLLM_...=1 vllm serve nvidia/... -tp 2' command, then its banner:
    # after vllm-020's failed start the command named run 1's model and TP size
    runs = scan_inputs([str(_cat(tmp_path, ("vllm/vllm-020.log", False), ("vllm/vllm-005.log", False)))],
                       fold=False).runs
    assert [(r.first_line, r.last_line) for r in runs][:1] == [(1, 11)] and runs[1].first_line == 12
    assert (runs[0].config.model, runs[0].config.tensor_parallel_size) == (None, None)
    assert runs[1].config.model == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4"
    assert runs[1].config.tensor_parallel_size == 2
    assert [_view(r) for r in runs] == [_alone("vllm/vllm-020.log"), _alone("vllm/vllm-005.log")]


def test_a_launch_command_pasted_after_the_traceback_stays_with_it():
    # counter-example, vllm-298: the traceback, then the command that ran it, then nothing: one run,
    # and the command's model and TP size are that run's
    runs = scan_inputs([str(FIXTURES / "vllm/vllm-298.log")], fold=False).runs
    assert len(runs) == 1 and runs[0].start_failure is not None
    assert (runs[0].config.model, runs[0].config.tensor_parallel_size) == (
        "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", 8)
