"""A worker / child / shard process that died is a lifecycle failure (docs/lifecycle.md): before
the server was up a failed start (START_FAILED), after it a failure while serving.

Real logs: fixtures/vllm/vllm-250.log (vllm#7322) and vllm-251.log (vllm#6875): 'Worker
VllmWorkerProcess pid N died, exit code: -15' (v0 WorkerMonitor); vllm-254.log (vllm PR #30602):
Worker_TP2's KERNEL_NOT_FOUND ValueError; vllm-252.log (vllm#18421): the ranks' parallel_state
lines; fixtures/sglang/sglang-105.log: SGLang's 'Received sigquit from a child process';
fixtures/vllm/vllm-014.log (a start that chose Marlin) with the vLLM v1 monitor's line quoted
verbatim in the trial (vllm 'Worker proc VllmWorker-1 died unexpectedly, shutting down executor.').
"""
from __future__ import annotations

import json

from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES

V1_DIED = ("(EngineCore_DP0 pid=90) ERROR 05-15 16:02:40 [multiproc_executor.py:154] "
           "Worker proc VllmWorker-1 died unexpectedly, shutting down executor.")
READY = "(APIServer pid=1) INFO 05-15 16:02:39 [launcher.py:44] Application startup complete."


def run(*args):
    return CliRunner().invoke(cli, list(args))


def runs_of(path):
    return json.loads(run("scan", "--format", "json", str(path)).stdout)["runs"]


def test_a_vllm_worker_death_before_ready_is_a_failed_start_not_silence():
    for n, line in (("250", 9), ("251", 4)):
        log = FIXTURES / "vllm" / f"vllm-{n}.log"
        (r,) = runs_of(log)
        assert r["engine"]["name"] == "vllm"
        assert r["start_failure"]["line"] == line and "died, exit code: -15" in r["start_failure"]["evidence"]
        assert run("scan", "--fail-on", "START_FAILED", str(log)).exit_code == 1


def test_the_v1_monitor_line_fails_a_start_and_is_no_start_failure_after_ready(tmp_path):
    base = (FIXTURES / "vllm" / "vllm-014.log").read_text(encoding="utf-8").rstrip("\n")
    died = tmp_path / "died.log"
    died.write_text(base + "\n" + V1_DIED + "\n", encoding="utf-8")
    (r,) = runs_of(died)
    n = len(base.splitlines()) + 1
    assert r["start_failure"]["line"] == n and "VllmWorker-1 died unexpectedly" in r["start_failure"]["evidence"]
    served = tmp_path / "served.log"
    served.write_text(base + "\n" + READY + "\n" + V1_DIED + "\n", encoding="utf-8")
    (r,) = runs_of(served)
    assert r["start_failure"] is None
    assert r["serving_failure"]["line"] == n + 1
    assert run("scan", "--fail-on", "START_FAILED", str(served)).exit_code == 0


def test_a_deliberate_shutdown_is_no_failure(tmp_path):
    """vLLM's close() logs 'Terminating local vLLM worker processes' (no death line); TGI logs
    'Shard terminated' when it stops the shards on purpose."""
    base = (FIXTURES / "vllm" / "vllm-014.log").read_text(encoding="utf-8").rstrip("\n")
    p = tmp_path / "stop.log"
    p.write_text(base + "\nINFO 05-15 16:02:40 multiproc_worker_utils.py:138] Terminating local vLLM worker processes\n"
                 "INFO 05-15 16:02:40 multiproc_worker_utils.py:123] Killing local vLLM worker processes\n",
                 encoding="utf-8")
    assert all(r["start_failure"] is None for r in runs_of(p))
    t = tmp_path / "tgi.log"
    t.write_text("2023-07-24T02:39:20.781260Z  INFO shard-manager: text_generation_launcher: Shard terminated rank=1\n",
                 encoding="utf-8")
    assert all(r["start_failure"] is None for r in runs_of(t))


def test_a_tgi_shard_killed_by_a_signal_is_a_tgi_failed_start(tmp_path):
    p = tmp_path / "tgi.log"
    p.write_text("2024-08-11T09:36:31.932556Z ERROR shard-manager: text_generation_launcher: "
                 "Shard process was signaled to shutdown with signal 9 rank=0\n", encoding="utf-8")
    (r,) = runs_of(p)
    assert r["engine"]["name"] == "tgi" and r["start_failure"]["line"] == 1


def test_sglang_sigquit_from_a_child_fails_the_start_with_its_exception_as_cause():
    (r,) = runs_of(FIXTURES / "sglang" / "sglang-105.log")
    sf = r["start_failure"]
    assert sf["line"] == 5 and "Received sigquit from a child process" in sf["evidence"]
    assert sf["cause_line"] == 3 and sf["cause"].startswith("ValueError: Unsupported compute capability")


def test_a_worker_exception_a_finding_read_is_a_failed_start_spanning_its_reasons():
    log = FIXTURES / "vllm" / "vllm-254.log"
    (r,) = runs_of(log)
    assert (r["first_line"], r["last_line"]) == (1, 5)
    assert r["start_failure"]["line"] == 1
    assert r["config"]["compute_capability"] == "75"
    assert [f["code"] for f in r["findings"]] == ["KERNEL_NOT_FOUND"]
    assert run("scan", "--fail-on", "START_FAILED", str(log)).exit_code == 1


def test_rank_lines_begin_the_run_and_state_the_world_size():
    (r,) = runs_of(FIXTURES / "vllm" / "vllm-252.log")
    assert r["first_line"] == 1
    assert r["config"]["extra"]["world_size"] == "8"
    assert r["config"]["tensor_parallel_size"] is None  # the world is DP x PP x TP: no TP size
