"""Two engine starts in one stream are two runs, even when the second logs no start marker
(``logscan/analysis/newstart.py``); the lines of one multi-rank start stay one run."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from logscan.analysis.newstart import model_key, role, same_model
from logscan.models import Event
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

UNCONFIRMED = "unconfirmed:"


def _cat(tmp_path: Path, *names: str) -> Path:
    out = tmp_path / "cat.log"
    out.write_text("".join((FIXTURES / n).read_text(encoding="utf-8").rstrip("\n") + "\n" for n in names),
                   encoding="utf-8")
    return out


def _runs(path: Path):
    return scan_inputs([str(path)]).runs


def test_two_vllm_starts_without_a_second_banner_are_two_runs(tmp_path):
    # trial 2, item 2: vllm-011 starts with a selection of EngineCore_DP0 pid=273616 and a
    # 'Starting to load model' line naming another model; no banner, no args line
    runs = _runs(_cat(tmp_path, "vllm/vllm-005.log", "vllm/vllm-011.log"))
    assert len(runs) == 2
    first, second = runs
    assert first.config.model == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4"
    assert first.start_failure is None
    marlin = [s for s in first.selections if s.kernel == "Marlin"]
    assert marlin and not any((s.reasoning or "").startswith(UNCONFIRMED) for s in marlin)
    assert second.start_failure is not None and second.start_failure.line == 19 + 9
    assert second.config.model != first.config.model
    assert {s.kernel for s in second.selections} == {"flashinfer-cutlass", "Cutlass"}
    assert all((s.reasoning or "").startswith(UNCONFIRMED) for s in second.selections)


def test_the_second_run_is_what_the_second_log_alone_gives(tmp_path):
    alone = _runs(FIXTURES / "vllm/vllm-011.log")
    both = _runs(_cat(tmp_path, "vllm/vllm-005.log", "vllm/vllm-011.log"))
    assert len(alone) == 1
    a, b = alone[0], both[1]
    assert [(s.kernel, s.line + 19) for s in a.selections] == [(s.kernel, s.line) for s in b.selections]
    assert a.config.model == b.config.model
    assert a.start_failure.line + 19 == b.start_failure.line


def test_two_sglang_excerpts_are_two_runs(tmp_path):
    # sglang-110 names /models/qwen3.8-27b-nvfp4 and no start marker; sglang-115's ServerArgs
    # names /root/sglang/DeepSeek-V3-awq: the ServerArgs line is another start, not 110's banner
    runs = _runs(_cat(tmp_path, "sglang/sglang-110.log", "sglang/sglang-115.log"))
    assert [r.config.model for r in runs] == ["/models/qwen3.8-27b-nvfp4", "/root/sglang/DeepSeek-V3-awq"]
    alone = _runs(FIXTURES / "sglang/sglang-110.log")
    assert [s.kernel for s in runs[0].selections] == [s.kernel for s in alone[0].selections]


def test_one_worker_role_under_two_pids_is_two_runs():
    # vllm-112 (vllm#33285): two runs pasted one after the other, Worker_TP0 pid=1113294 then pid=1118221
    runs = _runs(FIXTURES / "vllm/vllm-112.log")
    assert [[s.kernel for s in r.selections] for r in runs] == [["VLLM_CUTLASS"], ["TRITON"]]


#: real multi-rank logs: one start, several process tags with their own pids (per rank, API server,
#: engine core), ranks interleaved
MULTI_RANK = ["vllm/vllm-005.log", "vllm/vllm-014.log", "vllm/vllm-019.log", "vllm/vllm-025.log",
              "vllm/vllm-103.log", "vllm/vllm-104.log", "vllm/vllm-110.log", "vllm/vllm-118.log",
              "vllm/vllm-129.log", "sglang/sglang-010.log", "sglang/sglang-111.log"]


@pytest.mark.parametrize("name", MULTI_RANK)
def test_a_multi_rank_start_stays_one_run(name):
    text = (FIXTURES / name).read_text(encoding="utf-8")
    tags = set(re.findall(r"\((\w+) pid=(\d+)\)", text)) | set(re.findall(r" (TP\d+)\]", text))
    assert len(tags) >= 2  # the log does hold several processes or ranks
    assert len(_runs(FIXTURES / name)) == 1


def test_an_engine_core_config_line_after_the_api_server_args_is_one_run(tmp_path):
    # V1: the API server logs its args, then the EngineCore its own config line naming the model
    # by its HF cache path; after the workers' Marlin lines a worker's 'Starting to load model'
    # line names it by that path again: a new role (the core's pid) and the same model, one start
    lines = (FIXTURES / "vllm/vllm-005.log").read_text(encoding="utf-8").splitlines()
    cache = "/root/.cache/huggingface/hub/models--nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4/snapshots/0123abcd"
    core = ("(EngineCore_DP0 pid=646700) INFO 03-17 17:06:50 [core.py:93] Initializing a V1 LLM engine "
            f"(v0.1.dev14910+g20b14095a) with config: model='{cache}', "
            "speculative_config=None, tokenizer='nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4'")
    load = f"(Worker_TP1 pid=646936) INFO 03-17 17:06:54 [gpu_model_runner.py:1] Starting to load model {cache}..."
    path = tmp_path / "v1.log"
    path.write_text("\n".join(lines[:11] + [core] + lines[11:] + [load, lines[-1]]) + "\n", encoding="utf-8")
    runs = _runs(path)
    assert len(runs) == 1 and [s.kernel for s in runs[0].selections] == ["Marlin"]
    other = load.replace(cache, "/models/Qwen3-8B")
    path.write_text("\n".join(lines[:11] + [core] + lines[11:] + [other, lines[-1]]) + "\n", encoding="utf-8")
    assert len(_runs(path)) == 2  # the same line naming another model comes from another start
    again = load.replace("pid=646936", "pid=700001")
    path.write_text("\n".join(lines[:11] + [core] + lines[11:] + [again, lines[-1]]) + "\n", encoding="utf-8")
    assert len(_runs(path)) == 2  # Worker_TP1 under another pid is another start


def test_model_spellings_and_roles():
    assert model_key("/data/models/Qwen3-8B/") == "qwen3-8b" == model_key("Qwen/Qwen3-8B")
    assert same_model("Qwen/Qwen3-8B", "/mnt/Qwen3-8B")
    assert same_model("org/Name", "/hf/hub/models--org--Name/snapshots/abc")
    assert not same_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", "/cache/Qwen3-Next-Instruct-fp4-80b-fp4")
    ev = dict(line=1, rule="r", kind="k", source="s", message="m")
    assert role(Event(**ev, process="Worker_TP1", rank="TP1", pid=5)) == "Worker_TP1#TP1"
    assert role(Event(**ev, process="APIServer", pid=5)) == "APIServer#"
    assert role(Event(**ev, process="VllmWorkerProcess", pid=5)) is None  # one per rank, one name
    assert role(Event(**ev, process="APIServer")) is None  # no pid


def test_the_pid_stays_out_of_the_report():
    report = scan_inputs([str(FIXTURES / "vllm/vllm-005.log")])
    assert report.events and all("pid" not in e.model_dump() for e in report.events)


def test_follow_after_a_rename_rotation_reports_the_second_start_as_its_own_run(tmp_path):
    import io
    import json
    import os

    from logscan.follow.runner import Follower
    from logscan.packs.loader import default_packs

    path = tmp_path / "engine.log"
    out = io.StringIO()
    f = Follower([str(path)], default_packs(), out, idle_flush=0.0)
    path.write_text((FIXTURES / "vllm/vllm-005.log").read_text(encoding="utf-8"), encoding="utf-8")
    f.poll_once()
    os.rename(path, str(path) + ".1")
    path.write_text((FIXTURES / "vllm/vllm-011.log").read_text(encoding="utf-8"), encoding="utf-8")
    f.poll_once()
    f.poll_once()
    recs = [json.loads(ln) for ln in out.getvalue().splitlines()]
    marlin = {r["run_line"] for r in recs if r["type"] == "selection" and r["selection"]["kernel"] == "Marlin"}
    failed = {r["run_line"] for r in recs if r["type"] == "start_failure"}
    assert marlin and failed and marlin.isdisjoint(failed)


def _kernels(runs):
    return [[(s.family, s.kernel) for s in r.selections] for r in runs]


def test_two_sglang_excerpts_whose_clock_goes_back_are_two_runs(tmp_path):
    # sglang-001 was logged 2026-04-12 (Marlin on TP7), sglang-002 2025-04-21 (DeepGEMM on TP0):
    # neither names a model or a pid, the clock going back a year tells them apart
    both = _runs(_cat(tmp_path, "sglang/sglang-001.log", "sglang/sglang-002.log"))
    alone = _runs(FIXTURES / "sglang/sglang-001.log") + _runs(FIXTURES / "sglang/sglang-002.log")
    assert len(both) == 2 and _kernels(both) == _kernels(alone)


def test_the_clock_of_one_start():
    from logscan.analysis.newstart import clock, went_back
    from logscan.analysis.runstate import RunState

    run = RunState(index=0, source="s", first_line=1, last_line=1, engine="vllm")
    ev = dict(line=2, rule="r", kind="k", source="s", message="m")
    run.clocks[""] = clock("12-31 23:59:50")
    assert went_back(run, Event(**ev, timestamp="01-01 00:00:05")) is None  # new year, no year printed
    run.clocks[""] = clock("03-17 17:06:53")
    assert went_back(run, Event(**ev, timestamp="03-17 17:06:20")) is None  # ranks a little out of order
    assert went_back(run, Event(**ev, timestamp="01-07 13:43:10"))
    assert went_back(run, Event(**ev, timestamp="2025-01-07 13:43:10")) is None  # another clock shape
    run.clocks[""] = clock("2026-04-12 12:53:32")
    assert went_back(run, Event(**ev, timestamp="2025-04-21 18:35:51"))
    assert clock("not a time") is None


def test_clocks_are_compared_within_one_process_only():
    """A Ray worker node's relayed lines may carry another host's clock or time zone: hours behind
    the head's lines is no new start; the same process going back is."""
    from logscan.analysis.newstart import clock, note, went_back
    from logscan.analysis.runstate import RunState

    run = RunState(index=0, source="s", first_line=1, last_line=1, engine="vllm")
    head = dict(line=2, rule="r", kind="k", source="s", message="m", process="APIServer", pid=1)
    worker = dict(line=3, rule="r", kind="k", source="s", message="m", process="RayWorkerWrapper", pid=77)
    note(run, Event(**head, timestamp="03-17 17:06:53"))
    assert went_back(run, Event(**worker, timestamp="03-17 09:06:53")) is None  # another host, UTC-8
    note(run, Event(**worker, timestamp="03-17 09:06:53"))
    assert went_back(run, Event(**head, timestamp="03-17 17:07:00")) is None
    assert went_back(run, Event(**head, timestamp="03-17 16:00:00"))  # the head's own clock went back
    assert clock("03-17 16:00:00") is not None
