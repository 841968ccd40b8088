"""Corpus batch 7v (docs/corpus.md): the general mechanisms its first sight showed missing, each on
the real log of the batch (fixtures/vllm/vllm-210..231) and with a counter-example that must stay
as it was."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import runs_of, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "vllm"


# --- vLLM's start-up plumbing under its prefix names the engine ------------------------------

def test_v0_worker_plumbing_lines_alone_are_a_vllm_run():
    # vllm-220: terminal-wrapped V0 shm_broadcast handle lines and 'Found nccl from library'
    (run,) = runs_of(FIX / "vllm-220.log")
    assert run["engine"]["name"] == "vllm"
    assert run["selections"] == [] and run["findings"] == []


def test_a_v1_executor_warning_after_a_config_fragment_is_a_vllm_run():
    # vllm-221: the tail of an engine config line, then 'Reducing Torch parallelism ...'
    (run,) = runs_of(FIX / "vllm-221.log")
    assert run["engine"]["name"] == "vllm"
    assert run["first_line"] == run["last_line"] == 3


def test_the_plumbing_words_without_vllm_prefix_name_no_engine(tmp_path):
    # quoted in prose (a Helm chart's comment): the prefix is the proof, not the words
    log = write_log(tmp_path, "The signal is `Reducing Torch parallelism from 96 threads to 1 to avoid "
                              "unnecessary CPU contention`, which surfaces as ITL noise\n")
    assert all(r["engine"]["name"] != "vllm" for r in runs_of(log))


# --- a path into the vllm package's config tree names vLLM ----------------------------------

def test_an_elided_path_to_vllms_tuned_config_names_vllm():
    # vllm-227: 'WARNING [fp8_utils.py] ... Config file not found at .../vllm/model_executor/...json'
    (run,) = runs_of(FIX / "vllm-227.log")
    assert run["engine"]["name"] == "vllm"
    assert [s["kernel"] for s in run["selections"]] == ["Triton (W8A8 Block FP8 kernel)"]


def test_sglangs_config_path_does_not_name_vllm(tmp_path):
    log = write_log(tmp_path, "Using default W8A8 Block FP8 kernel config. Performance might be sub-optimal! "
                              "Config file not found at /sgl-workspace/sglang/python/sglang/srt/layers/quantization/"
                              "configs/N=2112,K=7168,device_name=NVIDIA_H20,dtype=fp8_w8a8,block_shape=[128, 128].json\n")
    assert all(r["engine"]["name"] != "vllm" for r in runs_of(log))


def test_the_bare_sentence_still_names_no_engine():
    # vllm-228: SGLang prints the same sentence; without a prefix or a path the run stays unknown
    (run,) = runs_of(FIX / "vllm-228.log")
    assert run["engine"]["name"] == "unknown"
    assert [s["cost_class"] for s in run["selections"]] == ["portable"]


# --- Marlin's own dispatch error is kernel-relevant and stays the failed start's cause -------

def test_marlins_invalid_thread_config_is_the_failed_starts_cause_naming_marlin():
    # vllm-213: a Ray worker's Marlin MoE GEMM on NVFP4 experts (num_bits = 4, group_size = 16).
    # The error is Marlin's own wording (vllm.kernel.marlin-thread-config); since the failhead
    # merge it is the failed start's cause and names Marlin as the failing kernel, so it is no
    # longer listed as not understood (it is understood: Marlin ran and no configuration fit).
    (run,) = runs_of(FIX / "vllm-213.log")
    assert run["unexplained"] == []
    sf = run["start_failure"]
    assert sf["line"] == 1 and sf["cause_line"] == 4
    assert sf["cause"].startswith("RuntimeError: Invalid thread config")
    assert sf["headline"].startswith("RuntimeError: Invalid thread config")
    assert (sf["failing_kernel"], sf["failing_kernel_line"]) == ("Marlin", 4)
    assert run["selections"] == [] and run["findings"] == []  # no format or family is guessed


def test_a_marlin_error_cut_before_its_format_parts_is_marlins_failure_under_the_marlin_selection():
    # vllm-200: the paste stops after 'num_threads'; the gptq_marlin_gemm frame corroborates the
    # FP8 Marlin selection of the apply_fp8_marlin_linear frame, and the error names Marlin
    (run,) = runs_of(FIX / "vllm-200.log")
    assert run["unexplained"] == []
    assert [s["kernel"] for s in run["selections"]] == ["Marlin"]
    sf = run["start_failure"]
    assert sf["cause_line"] == 10 and sf["failing_kernel"] == "Marlin"


def test_another_invalid_config_error_is_not_marlins(tmp_path):
    log = write_log(tmp_path, "(EngineCore_DP0 pid=7) ERROR 09-20 10:00:00 [core.py:1] Traceback (most recent call last):\n"
                              "(EngineCore_DP0 pid=7) ERROR 09-20 10:00:00 [core.py:1]   File \"/x/vllm/v1/engine/core.py\", line 1, in run\n"
                              "(EngineCore_DP0 pid=7) ERROR 09-20 10:00:00 [core.py:1] RuntimeError: Invalid config for the kernel\n")
    (run,) = runs_of(log)
    assert run["unexplained"] == []
    assert run["start_failure"]["cause_line"] == 3


# --- batch 7v-2: a vLLM environment block names the engine ----------------------------------

def test_a_pasted_vllm_env_block_is_a_vllm_run():
    # vllm-233: the reporter's DeepGEMM env vars, a condensed call chain and the CUDA driver error
    (run,) = runs_of(FIX / "vllm-233.log")
    assert run["engine"]["name"] == "vllm"
    assert run["selections"] == [] and run["findings"] == []  # env vars and flags are requests
    assert run["start_failure"]["cause_line"] == 8


def test_a_vllm_variable_named_in_prose_or_another_engine_names_no_engine(tmp_path):
    log = write_log(tmp_path, "Set VLLM_MOE_USE_DEEP_GEMM=1 to enable it.\nSGLANG_USE_AITER=1\n")
    assert all(r["engine"]["name"] != "vllm" for r in runs_of(log))


def test_before_and_after_moe_backend_lines_are_two_runs():
    # vllm-232: the PR's Before (DeepGEMM) and After (Triton at TP=8) blocks, two worker pids
    runs = runs_of(FIX / "vllm-232.log")
    assert [[(s["kernel"], s["cost_class"]) for s in r["selections"]] for r in runs] == [
        [("DeepGEMM", "native")], [("Triton", "portable")]]
    assert all(r["findings"] == [] for r in runs)


def test_the_cpu_backends_kv_cache_default_names_the_cpu_platform():
    # vllm-234: an offline CPU run's start with no 'Automatically detected platform' line
    (run,) = runs_of(FIX / "vllm-234.log")
    assert run["engine"]["platform"] == "CPU"
    assert run["engine"]["platform_source"] == "logged"


def test_a_bad_cpu_kv_cache_value_names_no_platform(tmp_path):
    log = write_log(tmp_path, "INFO 10-30 05:38:34 [utils.py:243] non-default args: {'model': 'x'}\n"
                              "ERROR 10-30 05:38:41 [cpu.py:1] Invalid environment variable VLLM_CPU_KVCACHE_SPACE -1, "
                              "expect a positive integer value.\n")
    assert all(r["engine"]["platform"] is None for r in runs_of(log))


# --- the API server's own process tag is a vLLM line prefix with its era ------------------------

def test_api_server_traceback_lines_are_vllm_lines_of_their_era():
    # vllm-225: '(APIServer pid=N)   File ...' lines only; before, no prefix and no era hint
    (run,) = runs_of(FIX / "vllm-225.log")
    assert run["engine"]["identified_by"] == "line 1 carries the vLLM line prefix"
    # the APIServer tag dates from 0.10.0 (a real 0.10.1.x log prints it beside EngineCore_0: tests/test_era_split.py)
    assert run["engine"]["release_range"] == ["0.10.0", "0.33.0"]


def test_another_process_tag_is_no_vllm_prefix(tmp_path):
    # Ray's generic actor tag names no engine; only vLLM's own process names do
    log = write_log(tmp_path, "(RayTrainWorker pid=9)   File \"/opt/app/train.py\", line 3, in main\n"
                              "(RayTrainWorker pid=9) RuntimeError: boom\n")
    assert all(r["engine"]["name"] != "vllm" for r in runs_of(log))


# --- a restored pipeline remembers which engine a line prefix already named ------------------

def _feed_all(pipe, lines):
    out = []
    for n, text in enumerate(lines, 1):
        out += [r for _, r in pipe.feed(n, text, False) if r is not None]
    return out


def test_a_checkpoint_keeps_the_engines_a_prefix_named_and_old_state_files_still_restore():
    import json

    from logscan.pipeline import Pipeline

    lines = (FIX / "vllm-220.log").read_text(encoding="utf-8").splitlines()
    a = Pipeline(source="x")
    _feed_all(a, lines[:3])
    state = json.loads(json.dumps(a.checkpoint().to_json()))
    assert state["prefix_named"] == ["vllm"]  # line 2's plumbing sentence named the engine
    legacy = {k: v for k, v in state.items() if k != "prefix_named"}  # a state file from before
    Pipeline(source="x").restore(legacy)
    with pytest.raises(ValueError):
        Pipeline(source="x").restore({**state, "prefix_named": "vllm"})
