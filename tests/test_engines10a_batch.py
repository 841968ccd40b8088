"""The engines10a first-sight batch (issue 16, docs/corpus.md): TensorRT-LLM and llama.cpp logs, and the
general mechanisms it showed missing: TensorRT's builder refusing the target SM, TensorRT-LLM's CUDA check
naming a qualified call (or quoted inside Triton's model-load error), the Triton backend's parameter
defaults, the pydantic PluginConfig's 'Set PluginConfig.<field> to <v>.', ggml's 'not compiled with any
CUDA arch <= N' abort and rocBLAS's Tensile abort (not hipBLASLt's same sentence). Each on the real log of
the batch, with a counter-example that must stay as it was."""
from __future__ import annotations


from tests.conftest import write_log, FIXTURES as FIX, finding_codes as _codes, runs_of as _runs



# --- TensorRT-LLM -------------------------------------------------------------------------------

def test_tensorrt_refusing_the_target_sm_is_a_fatal_arch_refusal():
    # trtllm-167: the one [TRT] [E] line of a V100 build; before engines10a, no run at all
    (run,) = _runs(FIX / "trtllm" / "trtllm-167.log")
    assert run["engine"]["name"] == "trtllm"
    assert _codes(run) == {"UNSUPPORTED_ON_ARCH"}
    assert run["findings"][0]["fatal"] is True
    assert run["start_failure"]["line"] == 1
    assert run["config"]["compute_capability"] == "70"


def test_a_tensorrt_runtime_error_is_no_build_failure(tmp_path):
    # only the builder's build-step shapes are fatal lines; the same 'Error Code' at run time is not
    log = write_log(tmp_path, "[TensorRT-LLM] TensorRT-LLM version: 0.10.0\n"
                              "[04/22/2024-12:18:18] [TRT] [E] 3: [executionContext.cpp::setInputShape::2037] "
                              "Error Code 3: API Usage Error (Parameter check failed)\n")
    (run,) = _runs(log)
    assert run["start_failure"] is None


def test_a_cuda_check_with_a_qualified_call_ends_the_start():
    # trtllm-173: 'CUDA runtime error in cub::DeviceSegmentedRadixSort::SortPairsDescending(...)'
    (run,) = _runs(FIX / "trtllm" / "trtllm-173.log")
    assert run["start_failure"]["line"] == 1
    assert _codes(run) == set()  # 'invalid device function' alone is no stated arch refusal (optional)


def test_a_cuda_check_inside_tritons_model_load_error_ends_the_start():
    # trtllm-168: the wrapped continuation of Triton's error carries the C++ tag in mid-line
    (run,) = _runs(FIX / "trtllm" / "trtllm-168.log")
    assert run["engine"]["name"] == "trtllm"
    assert run["start_failure"]["line"] == 6
    assert "cudaDeviceGetDefaultMemPool" in run["start_failure"]["evidence"]


def test_a_handled_runtime_error_is_no_start_failure(tmp_path):
    log = write_log(tmp_path, "[TensorRT-LLM][WARNING] enable_chunked_context is not specified, will be set to false.\n"
                              "[TensorRT-LLM][ERROR] a runtime error in the tokenizer was handled\n")
    (run,) = _runs(log)
    assert run["start_failure"] is None


def test_the_triton_backends_parameter_defaults_are_a_trtllm_run():
    # trtllm-169, -170, -172: windows of only '[TensorRT-LLM][WARNING] <param> is not specified, ...' lines
    for stem in ("trtllm-169", "trtllm-170", "trtllm-172"):
        (run,) = _runs(FIX / "trtllm" / f"{stem}.log")
        assert run["engine"]["name"] == "trtllm", stem
        assert run["findings"] == [] and run["selections"] == [], stem
        assert run["start_failure"] is None, stem


def test_a_parameter_default_sentence_without_the_cpp_tag_opens_no_run(tmp_path):
    # prefixed_only: another program's 'x is not specified, will be set to y' is not TensorRT-LLM's
    log = write_log(tmp_path, "enable_chunked_context is not specified, will be set to false.\n")
    assert _runs(log) == []


def test_plugin_feature_lines_stay_in_the_build_run():
    # trtllm-171: 'Set context_fmha to True.' ... 'Set enable_xqa to True.' after the plugin lines
    (run,) = _runs(FIX / "trtllm" / "trtllm-171.log")
    assert (run["first_line"], run["last_line"]) == (1, 17)
    assert run["selections"] == []  # 'Set gemm_plugin to float32.' is no quantized GEMM


def test_the_pydantic_plugin_config_names_its_class(tmp_path):
    # TensorRT-LLM 1.x PluginConfig.log_field_changes: 'Set PluginConfig.gemm_plugin to fp8.'
    on = write_log(tmp_path, "[11/22/2025-11:19:23] [TRT-LLM] [I] Set PluginConfig.gemm_plugin to fp8.\n", "on.log")
    (run,) = _runs(on)
    assert [s["kernel"] for s in run["selections"]] == ["gemm_plugin"]
    off = write_log(tmp_path, "[11/22/2025-11:19:23] [TRT-LLM] [I] Set PluginConfig.gemm_plugin to None.\n", "off.log")
    (run,) = _runs(off)
    assert run["selections"] == []


# --- llama.cpp family ------------------------------------------------------------------------------

def test_ggmls_compiled_arch_abort_ends_the_start_without_a_finding():
    # llamacpp-205: '**common.cuh:112: ggml was not compiled with any CUDA arch <= 750**' on an A100 (a regression)
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-205.log")
    assert run["start_failure"]["line"] == 1
    assert _codes(run) == set()


def test_rocblas_tensile_abort_is_fatal_and_hipblaslt_is_not(tmp_path):
    # llamacpp-203: rocBLAS aborts after 'Could not initialize Tensile library'
    runs = _runs(FIX / "llamacpp" / "llamacpp-203.log")
    assert runs[0]["start_failure"]["line"] == 3
    # llamacpp-201 / -202: hipBLASLt's 'rocblaslt error: ...' lines do not abort (the servers kept answering)
    for stem in ("llamacpp-201", "llamacpp-202"):
        (run,) = _runs(FIX / "llamacpp" / f"{stem}.log")
        assert run["start_failure"] is None and run["findings"] == [], stem
        assert run["engine"]["platform"] == "ROCM" and run["first_line"] == 1, stem  # the hipBLASLt line is read
    log = write_log(tmp_path, "rocblaslt error: Could not load TensileLibrary_lazy_gfx1151.dat\n"
                              "rocblaslt error: Could not initialize Tensile library\n"
                              "ggml_cuda_init: found 1 ROCm devices:\n")
    for run in _runs(log):
        assert run["start_failure"] is None


def test_rocblas_missing_arch_library_is_the_fatal_cause():
    # llamacpp-111: 'rocBLAS error: Cannot read .../TensileLibrary.dat: ... for GPU arch : gfx1036' then rocblas_abort()
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-111.log")
    assert _codes(run) == {"UNSUPPORTED_ON_ARCH"}
    # the start ends at rocblas_abort()'s 'Aborted (core dumped)' (line 14); its cause is line 1
    assert run["findings"][0]["fatal"] is True and run["start_failure"]["cause_line"] == 1


# --- engines10a-2 (the second first sight) ------------------------------------------------------

def test_koboldcpps_banner_opens_a_llamacpp_run():
    # llamacpp-210: only KoboldCpp's banner and library lines; before, no run at all
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-210.log")
    assert run["engine"]["name"] == "llamacpp"
    assert run["first_line"] == 3
    assert run["engine"].get("version") in (None, "")  # KoboldCpp's release is not a llama.cpp build


def test_a_banner_without_a_version_is_no_start(tmp_path):
    log = write_log(tmp_path, "Welcome to KoboldCpp\nsee the KoboldCpp - Version 1.54 release notes\n")
    assert _runs(log) == []


def test_tensorrt_builder_notes_are_build_run_lines():
    # trtllm-177: kTF32 on a V100, an unused input; before, the run covered lines 6-8 only
    (run,) = _runs(FIX / "trtllm" / "trtllm-177.log")
    assert run["engine"]["name"] == "trtllm"
    assert (run["first_line"], run["last_line"]) == (3, 10)
    assert run["findings"] == []  # a TF32 note is no refusal of a quantized kernel
