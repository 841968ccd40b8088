"""Corpus batch 4 (docs/corpus.md): the general mechanisms its first sight showed missing, each on
the real log of the batch (fixtures/) and with a counter-example that must stay as it was."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import runs_of, write_log

FIX = Path(__file__).parent.parent / "fixtures"


# --- a fallback to a GEMM library names the library the layer now runs on ---------------------

def test_a_wrapped_fallback_clause_on_its_own_line_is_a_selection():
    (run,) = runs_of(FIX / "vllm" / "vllm-138.log")
    sel = {s["kernel"]: s for s in run["selections"]}
    assert sel["CUTLASS"]["line"] == 3 and sel["CUTLASS"]["cost_class"] == "native"
    assert sel["CUTLASS"]["ladder"] is None and "classified by name" in sel["CUTLASS"]["reasoning"]
    assert sel["DEEPGEMM"]["line"] == 4 and run["findings"] == []


def test_an_attention_fallback_to_the_same_library_is_no_gemm_selection(tmp_path):
    log = write_log(tmp_path, "(EngineCore pid=1) WARNING 06-01 10:00:00 [xpu.py:91] Flash Attention on XPU does "
                           "not support float32 dtype. Falling back to Triton Attention backend.\n"
                           "(EngineCore pid=1) INFO 06-01 10:00:00 [rocm.py:301] Cannot use ROCm custom paged "
                           "attention kernel, falling back to Triton implementation.\n")
    (run,) = runs_of(log)
    assert run["selections"] == [] and run["findings"] == []


# --- the line formats a paste leaves ---------------------------------------------------------

def test_a_vllm_prefix_without_its_date_names_vllm_and_its_traceback_a_failed_start():
    (run,) = runs_of(FIX / "vllm" / "vllm-150.log")
    assert run["engine"]["name"] == "vllm" and "line prefix" in run["engine"]["identified_by"]
    assert run["start_failure"]["cause_line"] == 2


def test_a_docker_desktop_time_before_a_quoted_sglang_line_is_a_wrapper():
    (run,) = runs_of(FIX / "sglang" / "sglang-123.log")
    assert run["engine"]["name"] == "sglang"
    assert run["config"]["model"] == "nvidia/Llama-3.1-8B-Instruct-FP8"


def test_an_outer_timestamp_is_stripped_only_before_an_engine_prefix():
    # TGI's own lines begin with a timestamp (its prefix holds the time): they stay TGI's
    for name in ("tgi-101", "tgi-102"):
        runs = runs_of(FIX / "tgi" / f"{name}.log")
        assert runs and {r["engine"]["name"] for r in runs} == {"tgi"}, name


# --- DeepGEMM's variant names spell the operand types ------------------------------------------

def test_a_bf16_deepgemm_compile_is_no_quantized_selection():
    (run,) = runs_of(FIX / "sglang" / "sglang-124.log")
    assert run["selections"] == [] and run["findings"] == []


def test_an_fp8_deepgemm_compile_stays_the_native_fp8_selection():
    (run,) = runs_of(FIX / "sglang" / "sglang-119.log")
    assert {(s["kernel"], s["cost_class"]) for s in run["selections"]} == {("DeepGEMM", "native")}


# --- a plugin's own quantization config: said not understood -----------------------------------

def test_a_tpu_plugin_replacing_quantization_configs_is_unexplained_not_silent():
    (run,) = runs_of(FIX / "vllm" / "vllm-154.log")
    assert run["engine"]["platform"] == "TPU" and run["config"]["gpu"] == "TPU v6e"
    assert [u["line"] for u in run["unexplained"]] == [4, 5, 6, 7]
    assert run["selections"] == [] and run["findings"] == []


# --- a vLLM V1 process tag alone names vLLM ------------------------------------------------------

def test_a_traceback_under_a_vllm_process_tag_is_a_vllm_failed_start():
    (run,) = runs_of(FIX / "vllm" / "vllm-152.log")
    assert run["engine"]["name"] == "vllm" and run["start_failure"]["cause_line"] == 7


def test_a_generic_process_tag_names_no_engine(tmp_path):
    # Ray's worker tag has the same '(Name pid=N)' shape: it stays no engine's
    log = write_log(tmp_path, "(RayWorkerWrapper pid=4321) Traceback (most recent call last):\n"
                           "(RayWorkerWrapper pid=4321)   File \"/usr/lib/python3.12/x.py\", line 1, in f\n"
                           "(RayWorkerWrapper pid=4321) RuntimeError: boom\n")
    assert [r["engine"]["name"] for r in runs_of(log)] in ([], ["unknown"])
