"""The engines7 first-sight batch (issue 16, docs/corpus.md): TensorRT-LLM and llama.cpp logs, and
the general mechanisms the batch showed missing: a TensorRT-LLM C++ failure that states no cause is
still a failed start (fail closed: an engine that died never reads as fine); llama.cpp's non-CUDA
backends (Vulkan, SYCL, Metal) and HIP error lines name the platform; the pre-2024 ggml CUDA_CHECK
wording is the same arch refusal. Each on the real logs of the batch, each with a counter-example
that must stay as it was."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import finding_codes, runs_of, write_log

FIX = Path(__file__).parent.parent / "fixtures"


# --- TensorRT-LLM: a fatal C++ error with no cause line is a failed start ------------------

@pytest.mark.parametrize("name, line", [
    ("trtllm-150", 3),  # PyTorch backend: '[TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: ...'
    ("trtllm-151", 2),  # '[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: ... Assertion failed: d == a + length'
    ("trtllm-152", 1),  # XQA cubin registry assertion, first line of the window
    ("trtllm-153", 3),  # inside Triton's model-load error, behind a docker compose prefix
    ("trtllm-154", 2),  # the what() line after 'terminate called after throwing ... TllmException'
    ("trtllm-155", 1),  # a '> '-quoted Triton error line with the frames joined by literal \n
    ("trtllm-130", 3),  # the enginesB known limit: FP8 FMHA assertion that names no arch
    ("trtllm-131", 6),  # the enginesB known limit: 'TllmXqaJit runtime error in ...(' after what()
])
def test_a_tensorrt_llm_log_that_died_on_a_cpp_error_is_a_failed_start(name, line):
    (run,) = runs_of(FIX / "trtllm" / f"{name}.log")
    assert run["engine"]["name"] == "trtllm"
    sf = run["start_failure"]
    assert sf is not None and sf["line"] == line and sf["rule"] == "trtllm.run.cpp-fatal"


def test_the_failed_tensorrt_llm_start_fails_the_default_gate():
    # the gate must not pass a log whose engine died, whatever the kernel evidence says
    r = CliRunner().invoke(cli, ["gate", "--format", "json", "--today", "2026-06-01",
                                 str(FIX / "trtllm" / "trtllm-151.log")], catch_exceptions=False)
    doc = json.loads(r.stdout)
    assert doc["gate"]["verdict"] == "fail" and r.exit_code != 0


def test_a_stated_cause_keeps_its_finding_rule():
    # trtllm-121: both what() lines state their cause, 'No valid weight only groupwise GEMM tactic'
    # and 'No valid SQ GEMM tactic' (smoothQuantGemmPlugin.cpp): KERNEL_NOT_FOUND (40-build), read
    # before the fatal-error rule, so the finding keeps the line; since engines8b the assertion
    # still ends the start (the pack's fatal_line), with that finding as its fatal cause
    (run,) = runs_of(FIX / "trtllm" / "trtllm-121.log")
    assert finding_codes(run) == {"KERNEL_NOT_FOUND"} and run["findings"][0]["line"] == 1
    sf = run["start_failure"]
    assert sf is not None and sf["line"] == 1 and sf["rule"] == "trtllm.kernel.no-groupwise-tactic"
    assert sf["cause_line"] == 1 and run["findings"][0]["fatal"] is True


def test_the_sq_and_per_channel_no_tactic_wordings_are_no_kernel(tmp_path):
    log = write_log(tmp_path, "[TensorRT-LLM][INFO] Loaded engine size: 5446 MiB\n"
                              "  what():  [TensorRT-LLM][ERROR] Assertion failed: No valid weight only per-channel GEMM "
                              "tactic(It is usually caused by the failure to execute all candidate configurations of the "
                              "CUTLASS kernel, please pay attention to the warning information when building the engine.)\n")
    (run,) = runs_of(log)
    assert finding_codes(run) == {"KERNEL_NOT_FOUND"}
    assert run["findings"][0]["kernel"] == "weight_only_quant_matmul_plugin"


@pytest.mark.parametrize("text", [
    "[TensorRT-LLM][WARNING] Assertion failed: x\n",  # not at an error level: nothing died
    "[TensorRT-LLM][ERROR] the test asserts 'Assertion failed: ' is printed\n",
    "[TRT-LLM] [W] Failed to initialize executor on rank 0, retrying\n",
])
def test_no_failed_start_without_a_fatal_tensorrt_llm_error(tmp_path, text):
    (run,) = runs_of(write_log(tmp_path, "[TensorRT-LLM][INFO] Loaded engine size: 15448 MiB\n" + text))
    assert run["engine"]["name"] == "trtllm" and run["start_failure"] is None


def test_a_fatal_assertion_after_the_server_came_up_is_a_failure_while_serving(tmp_path):
    log = write_log(tmp_path, "[TensorRT-LLM][INFO] Loaded engine size: 15448 MiB\n"
                              "INFO:     Application startup complete.\n"
                              "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] "
                              "Assertion failed: mNextBlocks.empty() (/src/kvCacheManager.cpp:160)\n")
    (run,) = runs_of(log)
    assert run["start_failure"] is None and run["serving_failure"]["rule"] == "trtllm.run.cpp-fatal"


# --- llama.cpp: the backend's own lines name the platform ----------------------------------

@pytest.mark.parametrize("name, platform", [
    ("llamacpp-171", "VULKAN"), ("llamacpp-174", "VULKAN"), ("llamacpp-176", "VULKAN"),
    ("llamacpp-172", "SYCL"), ("llamacpp-175", "SYCL"),
    ("llamacpp-173", "METAL"),
    ("llamacpp-170", "ROCM"),  # 'ROCm error: invalid device function' with no device line kept
])
def test_llama_cpp_backend_lines_name_the_platform(name, platform):
    (run,) = runs_of(FIX / "llamacpp" / f"{name}.log")
    assert run["engine"]["name"] == "llamacpp" and run["engine"]["platform"] == platform


@pytest.mark.parametrize("name", ["llamacpp-177", "llamacpp-178"])
def test_an_old_hip_build_printing_cuda_error_names_no_platform(name):
    # HIP builds before 2024 print 'CUDA error' and Ollama lists both cuda and rocm libraries:
    # the line does not say which, so the platform stays unknown rather than guessed (llamacpp-177's
    # paste goes on with the next Ollama start, 'Listening on ... (version 0.1.33)': a second run)
    runs = runs_of(FIX / "llamacpp" / f"{name}.log")
    assert runs and all(run["engine"]["platform"] is None for run in runs)


def test_a_vulkan_backend_that_found_no_device_is_the_cpu_fallback(tmp_path):
    log = write_log(tmp_path, "ggml_vulkan: No devices found.\nllama_model_loader: loaded meta data with 20 key-value pairs\n")
    (run,) = runs_of(log)
    assert run["engine"]["platform"] == "CPU"


def test_a_vulkan_platform_has_no_compute_capability_to_judge():
    # an RTX 3060 driven through Vulkan runs shaders, not sm86 CUDA kernels: no CUDA arch check applies
    (run,) = runs_of(FIX / "llamacpp" / "llamacpp-171.log")
    assert "ARCH_NOT_COMPILED" not in finding_codes(run) and run["engine"]["version"] == "b4641"


# --- llama.cpp: the pre-2024 CUDA_CHECK wording is the same arch refusal --------------------

def test_the_old_cuda_check_wording_is_the_arch_refusal():
    (run,) = runs_of(FIX / "llamacpp" / "llamacpp-178.log")
    assert finding_codes(run) == {"UNSUPPORTED_ON_ARCH"}


def test_another_old_cuda_check_error_is_no_arch_refusal(tmp_path):
    log = write_log(tmp_path, "CUDA error 2 at /source/llama.cpp/ggml-cuda.cu:7788: out of memory\n"
                              "GGML_ASSERT: /source/llama.cpp/ggml-cuda.cu:7788: !\"CUDA error\"\n")
    (run,) = runs_of(log)
    assert run["engine"]["name"] == "llamacpp" and "UNSUPPORTED_ON_ARCH" not in finding_codes(run)


# --- LMDeploy: TurboMind's C++ failures are failed starts too --------------------------------

def test_a_turbomind_assertion_is_a_failed_start():
    # lmdeploy-140 (engines7b): 'RuntimeError: [TM][ERROR]  Assertion fail: .../bind.cpp:294'
    (run,) = runs_of(FIX / "lmdeploy" / "lmdeploy-140.log")
    assert run["engine"]["name"] == "lmdeploy"
    assert run["start_failure"]["line"] == 4 and run["start_failure"]["rule"] == "lmdeploy.run.tm-check-failed"


def test_a_turbomind_terminate_with_no_traceback_is_a_failed_start(tmp_path):
    log = write_log(tmp_path, "[TM][INFO] Barrier(2)\n"
                              "terminate called after throwing an instance of 'std::runtime_error'\n"
                              "  what():  [TM][ERROR] CUDA runtime error: an illegal memory access was encountered "
                              "/lmdeploy/src/turbomind/utils/allocator.h:231\n")
    runs = runs_of(log)
    assert [r["start_failure"]["rule"] for r in runs if r["start_failure"]] == ["lmdeploy.run.tm-check-failed"]


@pytest.mark.parametrize("name, code", [("lmdeploy-113", "UNSUPPORTED_ON_ARCH"), ("lmdeploy-112", "KERNEL_NOT_FOUND")])
def test_a_turbomind_failure_that_states_its_cause_keeps_its_finding(name, code):
    (run,) = runs_of(FIX / "lmdeploy" / f"{name}.log")
    # the finding is kept; a start failure, if any, is only the shell's later 'Aborted (core dumped)'
    # (lmdeploy-113 line 8: {engine}.run.signal-death), not the finding's line read as one
    sf = run["start_failure"]
    assert code in finding_codes(run) and (sf is None or sf["rule"] == "lmdeploy.run.signal-death")


def test_a_turbomind_warning_is_no_failure(tmp_path):
    (run,) = runs_of(write_log(tmp_path, "[WARNING] gemm_config.in is not found; using default GEMM algo\n"
                                       "[TM][WARNING] Assertion fail: retried\n"))
    assert run["engine"]["name"] == "lmdeploy" and run["start_failure"] is None


# --- llama.cpp: ggml's abort ends the start, its stated cause is the failure's cause --------

@pytest.mark.parametrize("name, line, cause", [
    ("llamacpp-170", 3, 2),  # '<file>:87: ROCm error' abort after 'ROCm error: invalid device function'
    ("llamacpp-178", 3, 1),  # old 'GGML_ASSERT: <file>:7788: !"CUDA error"' after 'CUDA error 98 at ...'
    ("llamacpp-107", 5, 2),
])
def test_a_ggml_abort_is_a_failed_start_caused_by_the_arch_refusal(name, line, cause):
    (run,) = runs_of(FIX / "llamacpp" / f"{name}.log")
    sf = run["start_failure"]
    assert (sf["line"], sf["rule"], sf["cause_line"]) == (line, "llamacpp.run.ggml-abort", cause)
    assert [f["fatal"] for f in run["findings"] if f["code"] == "UNSUPPORTED_ON_ARCH"] == [True]


def test_a_ggml_assert_with_no_stated_cause_is_still_a_failed_start(tmp_path):
    log = write_log(tmp_path, "llama_model_loader: loaded meta data with 20 key-value pairs\n"
                              "/home/user/llama.cpp/ggml/src/ggml.c:3513: GGML_ASSERT(a->ne[2] == b->ne[0]) failed\n")
    (run,) = runs_of(log)
    assert run["start_failure"]["line"] == 2 and run["start_failure"]["cause"] is None


def test_a_ggml_abort_after_the_server_listened_is_a_failure_while_serving(tmp_path):
    log = write_log(tmp_path, "llama_model_loader: loaded meta data with 20 key-value pairs\n"
                              "main: server is listening on http://127.0.0.1:8080 - starting the main loop\n"
                              "/home/user/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:97: CUDA error\n")
    (run,) = runs_of(log)
    assert run["start_failure"] is None and run["serving_failure"]["rule"] == "llamacpp.run.ggml-abort"


def test_the_rocm_refusal_line_alone_names_the_platform(tmp_path):
    (run,) = runs_of(write_log(tmp_path, "ROCm error: invalid device function\n"
                                       "  current device: 0, in function ggml_cuda_compute_forward at ggml-cuda.cu:2519\n"))
    assert finding_codes(run) == {"UNSUPPORTED_ON_ARCH"} and run["engine"]["platform"] == "ROCM"
