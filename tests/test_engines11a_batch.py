"""The engines11a first-sight batch (issue 16, docs/corpus.md): TensorRT-LLM and llama.cpp logs scored
1.000 at first sight; the unscored gaps it showed are fixed in data: the Metal backend's Sept-2025 names
(ggml_metal_device_init / ggml_metal_library_init) and its graph-compute errors name the Metal platform,
the Metal and Vulkan device lines name the run's GPU, and trtllm-build's notes on options it sets for
itself are build-run lines (never an ignored request). Each on the real log of the batch, with a
counter-example that must stay as it was; and the batch's precision windows stay silent."""
from __future__ import annotations


from tests.conftest import scan_json, write_log, FIXTURES as FIX, finding_codes as _codes, runs_of as _runs



# --- llama.cpp: Metal and Vulkan ----------------------------------------------------------------

def test_the_newer_metal_device_init_names_the_platform_and_the_gpu():
    # llamacpp-218: Jan's process error over ggml_metal_library_init / ggml_metal_device_init (M3 Ultra);
    # at first sight no platform and no GPU
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-218.log")
    assert run["engine"]["platform"] == "METAL"
    assert run["config"]["gpu"] == "Apple M3 Ultra"
    assert _codes(run) == set()


def test_the_older_metal_init_names_the_gpu_too():
    # llamacpp-220 (M4) and llamacpp-219 (a paravirtual CI device): the platform was read, the GPU not
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-220.log")
    assert (run["engine"]["platform"], run["config"]["gpu"]) == ("METAL", "Apple M4")
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-219.log")
    assert (run["engine"]["platform"], run["config"]["gpu"]) == ("METAL", "Apple Paravirtual device")


def test_a_metal_family_line_is_no_gpu_name(tmp_path):
    # counter-example: 'GPU family:' names the platform only
    log = write_log(tmp_path, "ggml_metal_device_init: GPU family: MTLGPUFamilyApple9  (1009)\n"
                              "ggml_metal_device_init: simdgroup matrix mul. = true\n")
    (run,) = _runs(log)
    assert run["engine"]["platform"] == "METAL"
    assert run["config"]["gpu"] is None


def test_a_metal_graph_compute_error_names_the_metal_platform():
    # llamacpp-217: "unsupported op 'MUL_MAT'" and the GGML_ASSERT; at first sight no platform
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-217.log")
    assert run["engine"]["platform"] == "METAL"
    assert run["start_failure"]["line"] == 2


def test_the_first_vulkan_device_names_the_gpu(tmp_path):
    # llamacpp-215: 'ggml_vulkan: 0 = NVIDIA GeForce RTX 2060 (NVIDIA) | uma: 0 | ...'; no finding
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-215.log")
    assert (run["engine"]["platform"], run["config"]["gpu"]) == ("VULKAN", "NVIDIA GeForce RTX 2060")
    assert _codes(run) == set()
    # a RADV name carries its own parentheses; the first of two devices is kept
    log = write_log(tmp_path, "ggml_vulkan: Found 2 Vulkan devices:\n"
                              "ggml_vulkan: 0 = AMD Radeon Graphics (RADV GFX1151) (radv) | uma: 1 | fp16: 1 | "
                              "warp size: 64 | matrix cores: KHR_coopmat\n"
                              "ggml_vulkan: 1 = NVIDIA GeForce RTX 3060 (NVIDIA) | uma: 0 | fp16: 1 | "
                              "warp size: 32 | matrix cores: KHR_coopmat\n")
    (run,) = _runs(log)
    assert run["config"]["gpu"] == "AMD Radeon Graphics (RADV GFX1151)"


def test_a_vulkan_using_line_names_no_gpu(tmp_path):
    # counter-example: the 2024 'ggml_vulkan: Using <device>' line names the platform only, as before
    log = write_log(tmp_path, "ggml_vulkan: Using AMD Radeon RX 580 Series (RADV POLARIS10)\n")
    (run,) = _runs(log)
    assert run["engine"]["platform"] == "VULKAN"
    assert run["config"]["gpu"] is None


def test_cpu_fallbacks_and_a_missing_kernel_image_at_first_sight():
    # llamacpp-213: -ngl 64 yet 'offloaded 0/35 layers to GPU'; llamacpp-212: ik_llama.cpp on an RTX 5090
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-213.log")
    assert _codes(run) == {"BACKEND_OVERRIDE_IGNORED"}
    assert run["engine"]["platform"] == "CPU"
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-212.log")
    assert _codes(run) == {"UNSUPPORTED_ON_ARCH"}
    assert run["start_failure"] is not None


# --- TensorRT-LLM -------------------------------------------------------------------------------

def test_the_builders_own_option_notes_are_build_lines_not_overrides():
    # trtllm-179: an FP16 build's '[W] FP8 Context FMHA is disabled because ...', 'Overriding paged_state
    # to False', the opt_num_tokens and padding/fMHA notes; at first sight 5 of 16 lines read (2-12)
    (run,) = _runs(FIX / "trtllm" / "trtllm-179.log")
    assert (run["first_line"], run["last_line"]) == (1, 15)
    assert _codes(run) == set()


def test_an_llm_api_override_sentence_is_not_a_builder_note(tmp_path):
    # counter-example: trtllm-bench's 'Overriding pytorch_backend_config because ...' stays unread here
    log = write_log(tmp_path, "[06/26/2025-14:53:34] [TRT-LLM] [W] Overriding pytorch_backend_config because "
                              "it's specified in /root/extra-llm-api-config.yml\n")
    assert scan_json(log)["events"] == []


def test_the_batchs_trtllm_precision_windows_stay_silent():
    # plugin lines set to auto, FlashInfer's JIT notice, a moe_backend request in a heredoc with an
    # illegal-address error, a fused_moe_cutlass.py frame, a tensor-name RuntimeError, a CUDA OOM
    for n in (178, 180, 181, 182, 183, 184, 185):
        runs = _runs(FIX / "trtllm" / f"trtllm-{n}.log")
        assert [r["engine"]["name"] for r in runs] == ["trtllm"], n
        assert _codes(runs[0]) == set(), n
        assert runs[0]["selections"] == [], n


def test_the_2026_module_tag_after_the_level_is_part_of_the_prefix(tmp_path):
    # trtllm-180: '  [TRT-LLM] [I] [_torch] Use 14.79 GB for model weights.' (1.3.0rc17); at first sight the
    # run ended at line 3
    (run,) = _runs(FIX / "trtllm" / "trtllm-180.log")
    assert (run["first_line"], run["last_line"]) == (1, 9)
    assert _codes(run) == set()
    # '[_torch][RANK 0]' / '[executor][RANK 1]': the rank glued to the module tag is the line's rank
    log = write_log(tmp_path, "[09/04/2026-00:08:52] [TRT-LLM] [I] [_torch][RANK 0] Using Sampler: TorchSampler\n"
                              "[06/03/2026-08:27:38] [TRT-LLM] [E] [executor][RANK 1] Failed to initialize executor "
                              "on rank 1: auto_deploy::torch_dist_all_gather() expected at most 3 argument(s)\n")
    doc = scan_json(log)
    assert [(e["line"], e["rank"]) for e in doc["events"]] == [(1, "0"), (2, "1")]
    assert doc["runs"][0]["start_failure"]["line"] == 2


def test_another_bracketed_word_after_the_level_stays_in_the_message(tmp_path):
    # counter-example: only the _torch / executor module tags are prefix; '[foo] Using Sampler' is no start line
    log = write_log(tmp_path, "[09/04/2026-00:08:52] [TRT-LLM] [I] [foo] Using Sampler: TorchSampler\n")
    assert scan_json(log)["events"] == []


# --- engines11a-2 (a second first sight after the fixes, 1.000) ------------------------------------

def test_a_hipblas_internal_error_on_a_mixed_rocm_machine_is_no_arch_refusal():
    # llamacpp-223: four ROCm devices (gfx908, gfx1100, gfx906) and 'ROCm error: CUBLAS_STATUS_INTERNAL_ERROR'
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-223.log")
    assert (run["engine"]["platform"], run["config"]["gpu"]) == ("ROCM", "AMD Instinct MI100")
    assert _codes(run) == set()


def test_an_nccl_assertion_and_an_import_failure_end_the_start_without_a_finding():
    # trtllm-186: '[TRT-LLM] [RANK 0] [E] Failed to initialize executor ... NCCL error'; trtllm-188:
    # flash_attn_2_cuda's undefined symbol under transformers' import error (no OPTIONAL_PACKAGE_MISSING)
    (run,) = _runs(FIX / "trtllm" / "trtllm-186.log")
    assert run["start_failure"]["line"] == 13
    assert _codes(run) == set()
    (run,) = _runs(FIX / "trtllm" / "trtllm-188.log")
    assert run["start_failure"] is not None
    assert _codes(run) == set()


def test_a_frame_in_the_hip_library_names_the_rocm_platform(tmp_path):
    # llamacpp-224: gdb frames 'ggml_backend_cuda_graph_compute(...) () from .../libggml-hip.so'; no platform
    # at first sight
    (run,) = _runs(FIX / "llamacpp" / "llamacpp-224.log")
    assert run["engine"]["platform"] == "ROCM"
    assert _codes(run) == set()
    # counter-example: the same frame in the CUDA build's library names no platform
    log = write_log(tmp_path, "#4  0x00007009be2eed2a in ggml_backend_cuda_graph_compute(ggml_backend*, ggml_cgraph*) "
                              "() from /home/user/llama.cpp/build/bin/libggml-cuda.so\n")
    (run,) = _runs(log)
    assert run["engine"]["platform"] is None
