"""The engines8b first-sight batch (issue 16, docs/corpus.md): TensorRT-LLM and llama.cpp-family logs
(Ollama, llama-cpp-python, koboldcpp), and the general mechanisms the batch showed missing:

- a TensorRT-LLM assertion that states its cause (an arch refusal, no GEMM tactic) still ends the start,
  with that finding as its fatal cause (the pack's ``fatal_line``), also inside Triton's status table;
- the HIP runtime's own arch refusal ('No compatible code objects found for: gfxN') and the shell's
  signal report of a llama.cpp program;
- paste and runtime wrappers: journald's 'Mon DD HH:MM:SS host prog[pid]: ', a whole line in
  Markdown backticks;
- Ollama's own lines: identity, the flash-attention / quantized-KV drops, its device summary, its Gin
  access log as 'the server was up';
- a HIP device's 'compute capability 9.0' is no CUDA sm.

Each on the real log of the batch, each with a counter-example that must stay as it was.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import finding_codes, runs_of, scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures"


def _lines(name: str) -> list[str]:
    engine = name.split("-")[0]
    return (FIX / engine / f"{name}.log").read_text(encoding="utf-8").splitlines()


# --- TensorRT-LLM: an assertion with a stated cause ends the start -------------------------

@pytest.mark.parametrize("name, line, code", [
    ("trtllm-157", 1, "UNSUPPORTED_ON_ARCH"),  # fmhaRunner 'Unsupported architecture' on a V100
    ("trtllm-158", 4, "KERNEL_NOT_FOUND"),     # 'what(): ... No valid SQ GEMM tactic', flattened paste
])
def test_an_assertion_that_states_its_cause_is_the_fatal_cause_of_a_failed_start(name, line, code):
    (run,) = runs_of(FIX / "trtllm" / f"{name}.log")
    sf = run["start_failure"]
    assert sf is not None and sf["line"] == line and sf["cause_line"] == line
    (f,) = [f for f in run["findings"] if f["code"] == code]
    assert f["line"] == line and f["fatal"] is True


def test_the_same_assertion_at_warning_level_or_before_a_ready_line_fails_nothing(tmp_path):
    (line,) = _lines("trtllm-157")
    warn = write_log(tmp_path, line.replace("[ERROR]", "[WARNING]") + "\n", "warn.log")
    (run,) = runs_of(warn)
    assert run["start_failure"] is None
    ready = write_log(tmp_path, line + "\n[TRT-LLM] [I] Total time of building all engines: 00:01:02\n", "ready.log")
    (run,) = runs_of(ready)
    assert run["start_failure"] is None and finding_codes(run) == {"UNSUPPORTED_ON_ARCH"}


def test_a_triton_status_row_whose_cell_ends_at_assertion_failed_is_a_failed_start():
    (run,) = runs_of(FIX / "trtllm" / "trtllm-163.log")
    assert run["engine"]["name"] == "trtllm"
    assert run["start_failure"]["line"] == 6 and run["start_failure"]["rule"] == "trtllm.run.cpp-fatal"


def test_pytorch_backend_start_lines_make_a_tensorrt_llm_run_without_a_kernel():
    (run,) = runs_of(FIX / "trtllm" / "trtllm-160.log")
    assert run["engine"]["name"] == "trtllm" and not run["selections"] and not run["findings"]
    assert run["config"]["extra"]["sampler"] == "TorchSampler"


def test_the_nvfp4_default_plugin_line_is_the_builds_fp4_gemm():
    (run,) = runs_of(FIX / "trtllm" / "trtllm-156.log")
    (sel,) = run["selections"]
    assert (sel["kernel"], sel["cost_class"], sel["line"]) == ("gemm_plugin", "native", 4)
    assert run["config"]["quantization"] == "NVFP4"


# --- llama.cpp: the HIP runtime's refusal, the shell's signal report ------------------------

def test_no_compatible_code_object_is_the_fatal_arch_refusal_of_a_segfaulted_start():
    (run,) = runs_of(FIX / "llamacpp" / "llamacpp-185.log")
    assert finding_codes(run) == {"UNSUPPORTED_ON_ARCH"} and run["engine"]["platform"] == "ROCM"
    # the shell's report (line 6) ends the start; the HIP runtime's line (5) is its cause
    assert run["start_failure"]["line"] == 6 and run["start_failure"]["cause_line"] == 5
    assert run["findings"][0]["fatal"] is True


def test_a_shell_signal_report_of_another_program_names_no_llamacpp_failure(tmp_path):
    lines = _lines("llamacpp-185")[:4]
    log = write_log(tmp_path, "\n".join(lines + ["zsh: segmentation fault  python3 bench.py"]) + "\n")
    (run,) = runs_of(log)
    assert run["start_failure"] is None and not run["findings"]


# --- wrappers: journald, whole-line backticks ----------------------------------------------

def test_a_journald_prefix_is_a_wrapper_and_ggml_assert_behind_it_fails_the_start():
    (run,) = runs_of(FIX / "llamacpp" / "llamacpp-188.log")
    assert run["start_failure"]["line"] == 8 and not run["findings"]
    assert run["engine"]["platform"] == "ROCM"
    # ROCm's 'compute capability 9.0' (gfx900) is no CUDA sm 9.0: never a Hopper gate's input
    assert run["config"]["compute_capability"] is None
    assert run["config"]["extra"]["hip_compute_capability"] == "90"


def test_a_cuda_device_line_keeps_its_compute_capability(tmp_path):
    log = write_log(tmp_path, "ggml_cuda_init: found 1 CUDA devices:\n"
                              "  Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes\n")
    (run,) = runs_of(log)
    assert run["config"]["compute_capability"] == "90"


def test_lines_wrapped_in_backticks_are_read_as_the_engine_printed_them(tmp_path):
    (run,) = runs_of(FIX / "llamacpp" / "llamacpp-189.log")
    # ggml's abort (line 5, '`...ggml-cuda.cu:96: ROCm error`') ends the start, caused by line 2
    assert run["start_failure"]["line"] == 5 and run["start_failure"]["cause_line"] == 2
    assert finding_codes(run) == {"UNSUPPORTED_ON_ARCH"}
    # a backtick inside a line is the engine's own text: the line is left as it is
    log = write_log(tmp_path, "llama_model_loader: loaded `model.gguf` with 291 tensors`\n")
    events = scan_json(log)["events"]
    assert events and all(e["message"].startswith("llama_model_loader: loaded `model.gguf`") for e in events)


# --- Ollama ----------------------------------------------------------------------------------

def test_ollama_dropping_flash_attention_is_an_ignored_override():
    (run,) = runs_of(FIX / "llamacpp" / "llamacpp-180.log")
    assert run["engine"]["name"] == "llamacpp" and finding_codes(run) == {"BACKEND_OVERRIDE_IGNORED"}
    assert run["config"]["kv_cache_dtype"] == "q8_0"


def test_ollama_enabling_flash_attention_is_no_finding(tmp_path):
    first = _lines("llamacpp-180")[0]
    log = write_log(tmp_path, first + "\ntime=2025-11-03T17:34:18.366Z level=INFO source=server.go:215 "
                                      'msg="enabling flash attention"\n')
    (run,) = runs_of(log)
    assert run["engine"]["name"] == "llamacpp" and not run["findings"]


def test_a_gin_200_line_means_the_server_was_up_and_the_inference_compute_line_names_the_gpu():
    (run,) = runs_of(FIX / "llamacpp" / "llamacpp-179.log")
    assert run["start_failure"] is None and run["serving_failure"]["line"] == 6
    assert run["serving_failure"]["cause_line"] == 3
    assert run["engine"]["platform"] == "CUDA" and run["config"]["compute_capability"] == "61"
    assert run["config"]["gpu"] == "NVIDIA GeForce GTX 1060 with Max-Q Design"


def test_without_a_2xx_gin_line_the_same_crash_fails_closed(tmp_path):
    lines = _lines("llamacpp-179")
    for first in (None, lines[0].replace("| 200 |", "| 500 |")):
        log = write_log(tmp_path, "\n".join(([first] if first else []) + lines[1:]) + "\n")
        (run,) = runs_of(log)
        assert run["start_failure"] is not None and run.get("serving_failure") is None


# --- precision: errors that are no arch refusal ----------------------------------------------

@pytest.mark.parametrize("name", ["llamacpp-181", "llamacpp-183", "llamacpp-188", "trtllm-161", "trtllm-162"])
def test_errors_that_name_no_arch_raise_no_finding(name):
    engine = name.split("-")[0]
    (run,) = runs_of(FIX / engine / f"{name}.log")
    assert not run["findings"]


# --- engines8b-2: llama.cpp's device_info list ------------------------------------------------

def test_a_device_info_entry_names_the_platform_and_gpu(tmp_path):
    (run,) = runs_of(FIX / "llamacpp" / "llamacpp-190.log")
    assert run["engine"]["platform"] == "ROCM" and run["config"]["gpu"] == "AMD Radeon RX 7900 XTX"
    # the CPU entry of the same list names no GPU platform
    cpu = [ln for ln in _lines("llamacpp-190") if "- CPU" in ln]
    log = write_log(tmp_path, "\n".join(_lines("llamacpp-190")[:3] + cpu) + "\n")
    (run,) = runs_of(log)
    assert run["engine"]["platform"] is None and run["config"]["gpu"] is None


@pytest.mark.parametrize("name", ["llamacpp-191", "llamacpp-192"])
def test_device_kernel_image_is_invalid_fails_the_start_and_claims_no_arch(name):
    (run,) = runs_of(FIX / "llamacpp" / f"{name}.log")
    assert run["start_failure"] is not None and not run["findings"]
    assert run["engine"]["platform"] == "ROCM"


# --- TLLM_THROW's text: a TllmException with no 'Assertion failed:' ---------------------------

def test_a_thrown_tllm_exception_that_states_its_cause_fails_the_start(tmp_path):
    # trtllm-151's real line shape ('[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: ...') with the
    # groupwise plugin's own refusal (weightOnlyGroupwiseQuantMatmulPlugin.cpp TLLM_THROW) after a real
    # build line that set the plugin (trtllm-108's release, the plugin line of PluginConfig)
    log = write_log(tmp_path,
                    "[04/09/2024-16:26:41] [TRT-LLM] [I] Set weight_only_groupwise_quant_matmul_plugin to float16.\n"
                    "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: W4A(fp)8 kernel is unsupported on "
                    "pre-Ada (sm<89) architectures! (/app/tensorrt_llm/cpp/tensorrt_llm/plugins/weightOnlyGroupwise"
                    "QuantMatmulPlugin/weightOnlyGroupwiseQuantMatmulPlugin.cpp:121)\n")
    (run,) = runs_of(log)
    assert run["start_failure"]["line"] == 2 and run["findings"][0]["fatal"] is True
    # the refusal names the plugin's W4A(fp)8 mode: the configured plugin is the native W4A8 kernel
    (sel,) = run["selections"]
    assert sel["cost_class"] == "native" and run["config"]["quantization"] == "W4A8_AWQ"
    # the same plugin line alone: which mode the groupwise plugin runs is not logged
    (run,) = runs_of(write_log(tmp_path, "[04/09/2024-16:26:41] [TRT-LLM] [I] Set weight_only_groupwise_quant_matmul_plugin"
                                       " to float16.\n", "alone.log"))
    assert run["selections"][0]["cost_class"] == "unknown" and run["start_failure"] is None


# --- engines8b-3: Ollama's GPU discovery refuses a GPU ----------------------------------------

@pytest.mark.parametrize("name, line, gfx", [
    ("llamacpp-193", 4, "gfx1103"),   # 0.11: 'amdgpu is not supported (supported types:[])' gpu_type=gfx1103
    ("llamacpp-194", 6, "gfx1031"),   # 0.3: 'amdgpu is not supported' gpu=0 gpu_type=gfx1031 ...
    ("llamacpp-195", 11, "gfx1010"),  # 0.1: 'amdgpu [0] gfx1010 is not supported by /tmp/ollama.../rocm ['
])
def test_ollama_refusing_a_gpu_is_an_unused_backend_in_every_wording(name, line, gfx):
    (run,) = runs_of(FIX / "llamacpp" / f"{name}.log")
    assert run["engine"]["name"] == "llamacpp" and finding_codes(run) == {"BACKEND_OVERRIDE_IGNORED"}
    (f,) = run["findings"]
    assert f["line"] == line and run["config"]["extra"]["gfx_arch"] == gfx
    assert run["start_failure"] is None  # Ollama goes on without the GPU: no failed start


def test_no_compatible_gpu_alone_is_a_cpu_run_without_a_finding(tmp_path):
    # a machine without a GPU prints the same line: the CPU is the platform, nothing was refused
    lines = [ln for ln in _lines("llamacpp-194") if "amdgpu" not in ln and "HSA_OVERRIDE" not in ln]
    (run,) = runs_of(write_log(tmp_path, "\n".join(lines) + "\n"))
    assert run["engine"]["platform"] == "CPU" and not run["findings"]
    assert run["config"]["extra"]["ollama_version"] == "0.3.4-0-g26bd110"
