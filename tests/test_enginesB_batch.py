"""The enginesB first-sight batch (issue 16, docs/corpus.md): TensorRT-LLM and llama.cpp logs, and
the general mechanisms the batch showed missing (how ggml states a kernel it has no code for, how
rocBLAS names its library on Windows, how ggml's backends and TensorRT-LLM's console scripts name
their engine), each on the real log of the batch and with a counter-example that must stay as it
was."""
from __future__ import annotations


import pytest

from tests.conftest import write_log, FIXTURES as FIX, finding_codes as _codes, runs_of as _runs



# --- ggml's NO_DEVICE_CODE, in every shape it is printed -----------------------------------

def test_a_no_device_code_line_wrapped_after_its_verb_still_states_the_refusal():
    # llamacpp-133: the paste wraps after 'has no device code'; the arch is on the next line
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-133.log")
    assert run["engine"]["name"] == "llamacpp"
    assert _codes(run) == {"UNSUPPORTED_ON_ARCH"}


def test_an_unexpanded_cuda_arch_list_is_no_compiled_arch(tmp_path):
    # nvcc without __CUDA_ARCH_LIST__ prints the macro's name: the refusal holds, no arch is read
    log = write_log(tmp_path, "ggml/src/ggml-cuda/template-instances/../fattn-mma-f16.cuh:1246: ERROR: CUDA kernel "
                              "flash_attn_ext_f16 has no device code compatible with CUDA arch 750. ggml-cuda.cu was "
                              "compiled for: __CUDA_ARCH_LIST__\n")
    (run,) = _runs(log)
    assert _codes(run) == {"UNSUPPORTED_ON_ARCH"}
    assert "__CUDA_ARCH_LIST__" not in str(run["config"])


def test_the_hip_wording_is_a_rocm_arch_refusal(tmp_path):
    log = write_log(tmp_path, "fattn-mma-f16.cuh:2126: ERROR: HIP kernel flash_attn_ext_f16 has no device code "
                              "compatible with HIP arch 1300.\n")
    (run,) = _runs(log)
    assert _codes(run) == {"UNSUPPORTED_ON_ARCH"}
    assert run["engine"]["platform"] == "ROCM"


def test_a_sentence_about_device_code_that_is_not_ggml_s_refusal_raises_nothing(tmp_path):
    log = write_log(tmp_path, "ggml_cuda_init: found 1 CUDA devices:\n"
                              "note: the CUDA kernel has no device code path for fp8 here, falling back\n")
    (run,) = _runs(log)
    assert _codes(run) == set()


# --- rocBLAS: the install's own path, spaces and all ------------------------------------------

def test_a_windows_rocblas_path_with_spaces_still_names_the_missing_arch():
    # llamacpp-134: llamafile on Windows, 'C:\Program Files\AMD\ROCm\5.7\...\TensileLibrary.dat'
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-134.log")
    assert _codes(run) == {"UNSUPPORTED_ON_ARCH"}
    assert run["engine"]["platform"] == "ROCM"
    assert run["engine"]["name"] == "llamacpp"  # llamafile's ~/.llamafile/ ggml module folder


# --- engine naming from the engine's own tags and commands ------------------------------------

def test_a_ggml_backend_tag_names_llama_cpp():
    # llamacpp-142: test-backend-ops on Vulkan, whose only engine text is 'ggml_vulkan: ...'
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-142.log")
    assert run["engine"]["name"] == "llamacpp"
    assert _codes(run) == set()  # a per-type 'not supported' row of a test harness is no finding


def test_a_trtllm_serve_launch_command_names_tensorrt_llm():
    # trtllm-132: the launch command, FlashInfer's JIT lines and bare CUDA errors
    (run,) = _runs(FIX / "trtllm" / "trtllm-132.log")
    assert run["engine"]["name"] == "trtllm"
    assert _codes(run) == set()  # 'CUDA error: invalid argument' states no cause


def test_the_build_argument_dump_is_a_tensorrt_llm_build_run():
    (run,) = _runs(FIX / "trtllm" / "trtllm-139.log")
    assert run["engine"]["name"] == "trtllm"
    assert run["selections"] == [] and _codes(run) == set()


@pytest.mark.parametrize("text", [
    "see docs/trtllm-serve.md for the options\n",
    "wrote trtllm-serve_config.yaml\n",
])
def test_a_mention_of_a_console_script_is_no_run(tmp_path, text):
    assert _runs(write_log(tmp_path, text)) == []


# --- precision on the batch: no false finding ------------------------------------------------

@pytest.mark.parametrize("stem", ["trtllm-130", "trtllm-131", "trtllm-133", "trtllm-136", "trtllm-138",
                                  "llamacpp-137", "llamacpp-138", "llamacpp-139", "llamacpp-141", "llamacpp-143"])
def test_tempting_windows_raise_nothing(stem):
    # a TllmException naming no cause, an XQA JIT error, a quantized layer class in a traceback,
    # plugins set to None, TensorRT skipping tactics, MMQ/XMX build flags, a missing SYCL kernel
    # image, a q4_0 KV cache, Vulkan devices without matrix cores, a ccache hint
    (run,) = _runs(FIX / stem.split("-")[0] / f"{stem}.log")
    assert _codes(run) == set()


# --- enginesB2: TensorRT-LLM's attention fallback and device summary ------------------------

def test_the_unfused_mha_fallback_printed_through_a_braced_format_is_read():
    # trtllm-141: 'in sm_{75}.' (a release's format string kept its braces); a log of only these
    # [TensorRT-LLM][WARNING] lines is a TensorRT-LLM run with its attention choice and arch
    (run,) = _runs(FIX / "trtllm" / "trtllm-141.log")
    assert run["engine"]["name"] == "trtllm"
    assert [a["backend"] for a in run["attention"]][:1] == ["unfused MHA"]
    assert run["config"]["compute_capability"] == "75"
    assert _codes(run) == set()  # an attention fallback is no finding


def test_the_builder_device_summary_is_a_build_run_and_no_fact():
    # trtllm-144: an unknown card prints 0 TFLOPS for every dtype: not read as 'no FP8'
    (run,) = _runs(FIX / "trtllm" / "trtllm-144.log")
    assert run["engine"]["name"] == "trtllm"
    assert _codes(run) == set() and run["config"]["extra"] == {}


def test_a_cluster_info_shape_outside_the_trtllm_prefix_makes_no_run(tmp_path):
    assert _runs(write_log(tmp_path, "SM count: 188\nfp8 TFLOPS: 0\n")) == []


# --- enginesB3: llama.cpp's flash-attention decision ------------------------------------------

def test_flash_attention_auto_resolved_to_disabled_is_an_attention_fact_not_a_finding():
    # llamacpp-146 (LM Studio): '-fa auto' set to disabled after the FA tensor landed on the CPU
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-146.log")
    assert [a["backend"] for a in run["attention"]] == ["no flash attention (auto: disabled)"]
    assert _codes(run) == set()


def test_flash_attention_auto_resolved_to_enabled(tmp_path):
    log = write_log(tmp_path, "llama_context: flash_attn    = auto\n"
                              "sched_reserve: Flash Attention was auto, set to enabled\n")
    (run,) = _runs(log)
    assert [a["backend"] for a in run["attention"]] == ["flash attention (auto: enabled)"]


def test_requested_flash_attention_forced_off_stays_an_ignored_override():
    # llamacpp-148: the sentence inside the reporter's markdown bold
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-148.log")
    assert _codes(run) == {"BACKEND_OVERRIDE_IGNORED"}


@pytest.mark.parametrize("stem", ["llamacpp-144", "llamacpp-145", "llamacpp-147"])
def test_a_refused_quantized_v_cache_is_no_finding(stem):
    (run,) = _runs(FIX / "llamacpp" / f"{stem}.log")
    assert run["engine"]["name"] == "llamacpp" and _codes(run) == set()
