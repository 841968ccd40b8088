"""Corpus batch 7v (docs/corpus.md): the general mechanisms its first sight showed missing, each on
the real log of the batch (fixtures/vllm/vllm-210..231) and with a counter-example that must stay
as it was."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "vllm"


def _runs(path: Path) -> list[dict]:
    return scan_json(path)["runs"]


# --- vLLM's start-up plumbing under its prefix names the engine ------------------------------

def test_v0_worker_plumbing_lines_alone_are_a_vllm_run():
    # vllm-220: terminal-wrapped V0 shm_broadcast handle lines and 'Found nccl from library'
    (run,) = _runs(FIX / "vllm-220.log")
    assert run["engine"]["name"] == "vllm"
    assert run["selections"] == [] and run["findings"] == []


def test_a_v1_executor_warning_after_a_config_fragment_is_a_vllm_run():
    # vllm-221: the tail of an engine config line, then 'Reducing Torch parallelism ...'
    (run,) = _runs(FIX / "vllm-221.log")
    assert run["engine"]["name"] == "vllm"
    assert run["first_line"] == run["last_line"] == 3


def test_the_plumbing_words_without_vllm_prefix_name_no_engine(tmp_path):
    # quoted in prose (a Helm chart's comment): the prefix is the proof, not the words
    log = write_log(tmp_path, "The signal is `Reducing Torch parallelism from 96 threads to 1 to avoid "
                              "unnecessary CPU contention`, which surfaces as ITL noise\n")
    assert all(r["engine"]["name"] != "vllm" for r in _runs(log))


# --- a path into the vllm package's config tree names vLLM ----------------------------------

def test_an_elided_path_to_vllms_tuned_config_names_vllm():
    # vllm-227: 'WARNING [fp8_utils.py] ... Config file not found at .../vllm/model_executor/...json'
    (run,) = _runs(FIX / "vllm-227.log")
    assert run["engine"]["name"] == "vllm"
    assert [s["kernel"] for s in run["selections"]] == ["Triton (W8A8 Block FP8 kernel)"]


def test_sglangs_config_path_does_not_name_vllm(tmp_path):
    log = write_log(tmp_path, "Using default W8A8 Block FP8 kernel config. Performance might be sub-optimal! "
                              "Config file not found at /sgl-workspace/sglang/python/sglang/srt/layers/quantization/"
                              "configs/N=2112,K=7168,device_name=NVIDIA_H20,dtype=fp8_w8a8,block_shape=[128, 128].json\n")
    assert all(r["engine"]["name"] != "vllm" for r in _runs(log))


def test_the_bare_sentence_still_names_no_engine():
    # vllm-228: SGLang prints the same sentence; without a prefix or a path the run stays unknown
    (run,) = _runs(FIX / "vllm-228.log")
    assert run["engine"]["name"] == "unknown"
    assert [s["cost_class"] for s in run["selections"]] == ["portable"]


# --- Marlin's own dispatch error is kernel-relevant and stays the failed start's cause -------

def test_marlins_invalid_thread_config_is_listed_not_understood():
    # vllm-213: a Ray worker's Marlin MoE GEMM on NVFP4 experts (num_bits = 4, group_size = 16)
    (run,) = _runs(FIX / "vllm-213.log")
    assert [u["line"] for u in run["unexplained"]] == [4]
    assert run["unexplained"][0]["rule"] == "vllm.kernel.marlin-thread-config"
    sf = run["start_failure"]
    assert sf["line"] == 1 and sf["cause_line"] == 4
    assert sf["cause"].startswith("RuntimeError: Invalid thread config")
    assert run["selections"] == [] and run["findings"] == []  # no format or family is guessed


def test_a_marlin_error_cut_before_its_format_parts_is_left_to_the_frames():
    # vllm-200: the paste stops after 'num_threads'; the frame above it is the listed line
    (run,) = _runs(FIX / "vllm-200.log")
    assert [u["line"] for u in run["unexplained"]] == [6]
    assert run["start_failure"]["cause_line"] == 10


def test_another_invalid_config_error_is_not_marlins(tmp_path):
    log = write_log(tmp_path, "(EngineCore_DP0 pid=7) ERROR 09-20 10:00:00 [core.py:1] Traceback (most recent call last):\n"
                              "(EngineCore_DP0 pid=7) ERROR 09-20 10:00:00 [core.py:1]   File \"/x/vllm/v1/engine/core.py\", line 1, in run\n"
                              "(EngineCore_DP0 pid=7) ERROR 09-20 10:00:00 [core.py:1] RuntimeError: Invalid config for the kernel\n")
    (run,) = _runs(log)
    assert run["unexplained"] == []
    assert run["start_failure"]["cause_line"] == 3
