"""Corpus batch 5 (docs/corpus.md): the general mechanisms its first sight showed missing (era
data, engine naming, platform), each on the real log of the batch (fixtures/) and with a
counter-example that must stay as it was."""
from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from logscan.gate.releases import release_of
from logscan.models import EngineInfo
from tests.conftest import runs_of, scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures"


# --- era data: a process tag's era ends at the first release that prints its successor -------

def test_the_enginecore_n_tag_allows_the_010x_releases_that_still_print_it():
    # vllm-177 is a vLLM 0.10.1 paste (the thread's title): its '(EngineCore_0 pid=N)' tag must
    # not confine the release to 0.8.5 .. 0.9.2, or a gate scoped '>=0.10.1' would never be tried
    (run,) = runs_of(FIX / "vllm" / "vllm-177.log")
    lo, hi = run["engine"]["release_range"]
    assert Version(lo) <= Version("0.9.2") and Version(hi) >= Version("0.10.1")
    assert Version(hi) < Version("0.10.2")
    rel = release_of(EngineInfo(**run["engine"]))
    assert rel.inferred and Version(rel.high) >= Version("0.10.1")


def test_the_enginecore_dp_tag_still_starts_at_0102(tmp_path):
    log = write_log(tmp_path, "(EngineCore_DP0 pid=7) INFO 09-20 10:00:00 [__init__.py:1] Automatically "
                           "detected platform cuda.\n")
    (run,) = runs_of(log)
    assert Version(run["engine"]["release_range"][0]) >= Version("0.10.2")


# --- engine naming: an engine's per-step statistics still say whose log it is ---------------

def test_a_window_of_sglang_decode_batch_lines_alone_is_an_sglang_run():
    (run,) = runs_of(FIX / "sglang" / "sglang-172.log")
    assert run["engine"]["name"] == "sglang"
    assert run["selections"] == [] and run["findings"] == []


def test_batch_statistics_stay_noise_once_the_engine_is_named():
    report = scan_json(FIX / "sglang" / "sglang-172.log")
    stats = [e for e in report["events"] if e["rule"] == "sglang.identity.scheduler-stats"]
    assert [e["line"] for e in stats] == [2]  # one naming event; lines 3-5 are skipped as before


def test_unprefixed_batch_words_name_no_engine(tmp_path):
    log = write_log(tmp_path, "Decode batch, #running-req: 32, #full token: 53587, gen throughput (token/s): 1686.10\n")
    assert runs_of(log) == []


# --- platform: a vLLM build's target-device tag names the platform -------------------------

def test_a_vllm_xpu_build_in_a_package_path_names_xpu_without_taking_the_frame():
    (run,) = runs_of(FIX / "vllm" / "vllm-181.log")
    assert run["engine"]["platform"] == "XPU" and run["engine"]["platform_source"] == "logged"
    # the frame line is still the traceback's: the platform fact does not take it
    assert run["start_failure"]["line"] == 1 and run["start_failure"]["rule"] == "vllm.uncaught.traceback"


def test_a_torch_xpu_wheel_or_a_cuda_build_tag_names_no_xpu(tmp_path):
    log = write_log(tmp_path, "INFO 06-26 19:39:00 [api_server.py:1] vLLM API server version "
                           "0.10.1.dev446+g7e3a8dc90.d20250808.cu129\nPyTorch version: 2.11.0+xpu\n")
    (run,) = runs_of(log)
    assert run["engine"]["platform"] != "XPU"
