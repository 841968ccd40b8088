"""Corpus batch 7s (docs/corpus.md): the general mechanisms its first sight showed missing, each on
the real log of the batch (fixtures/sglang-210..224) and with a counter-example that must stay as
it was."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import runs_of, scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "sglang"
SGL = "[2026-02-06 20:49:42 TP0] "
VLLM_INFO = "(EngineCore_DP0 pid=7) INFO 09-20 10:00:00 [import_utils.py:1] "


def _events(path: Path, rule: str) -> list[dict]:
    return [e for e in scan_json(path)["events"] if e["rule"] == rule]


# --- a bracketed outer timestamp (a CI / log relay) before SGLang's prefix is a wrapper --------

def test_a_bracketed_outer_timestamp_keeps_sglangs_prefix_readable():
    # sglang-212: '[2025-11-06T02:09:46.576Z] [2025-11-06 02:09:46] Ignore import error ...'
    (run,) = runs_of(FIX / "sglang-212.log")
    assert run["engine"]["name"] == "sglang"
    (skip,) = _events(FIX / "sglang-212.log", "sglang.run.module-import-skipped")
    assert skip["groups"]["module"] == "sglang.srt.multimodal.processors.glm4v"


def test_a_bracketed_timestamp_before_no_sglang_prefix_is_left_alone(tmp_path):
    # the same relay timestamp before a line of no SGLang prefix names no engine
    log = write_log(tmp_path, "[2025-11-06T02:09:46.576Z] Load weight end. type=X, dtype=torch.bfloat16, avail mem=60.00 GB\n")
    assert all(r["engine"]["name"] != "sglang" for r in runs_of(log))


# --- a missing package tied to no kernel is not a kernel-relevant line -----------------------

def test_a_missing_tracing_package_is_not_left_not_understood():
    # sglang-211: 'opentelemetry package is not installed, tracing disabled' (srt/tracing/trace.py)
    (run,) = runs_of(FIX / "sglang-211.log")
    assert run["unexplained"] == [] and run["findings"] == []
    assert [a["backend"] for a in run["attention"]] == ["aiter"]


def test_a_missing_kernel_package_note_is_still_not_understood(tmp_path):
    # at info level a kernel package's absence is an event no rule reads: it stays listed
    log = write_log(tmp_path, VLLM_INFO + "triton_kernels unavailable in this build. Please consider installing triton_kernels\n")
    (run,) = runs_of(log)
    assert [u["message"][:28] for u in run["unexplained"]] == ["triton_kernels unavailable i"]


# --- SGLang's check_env report names the engine, its release and the NPU platform ----------

def test_check_env_output_is_an_sglang_run_on_npu():
    (run,) = runs_of(FIX / "sglang-218.log")
    assert run["engine"]["name"] == "sglang"
    assert run["engine"]["version"] == "0.5.18" and run["engine"]["platform"] == "NPU"


def test_vllm_collect_env_listing_sglang_names_no_sglang_run(tmp_path):
    log = write_log(tmp_path, "[pip3] sglang==0.5.1\n[pip3] torch==2.8.0\nvllm: Module Not Found\n")
    assert all(r["engine"]["name"] != "sglang" for r in runs_of(log))


# --- a quantization-method registry holding SGLang-only keys names SGLang --------------------

def test_sglangs_method_list_names_the_engine():
    # sglang-222: 'Unknown quantization method: mxfp4. Must be one of [..., 'w8a8_int8', 'w4afp8', ...]'
    (run,) = runs_of(FIX / "sglang-222.log")
    assert run["engine"]["name"] == "sglang" and run["findings"] == []


def test_vllms_method_list_does_not(tmp_path):
    log = write_log(tmp_path, "ValueError: Unknown quantization method: foo. Must be one of ['aqlm', 'awq', "
                              "'fp8', 'ptpc_fp8', 'fbgemm_fp8', 'modelopt', 'gptq_marlin', 'awq_marlin', 'gptq', "
                              "'compressed-tensors', 'moe_wna16', 'mxfp4', 'petit_nvfp4'].\n")
    assert all(r["engine"]["name"] != "sglang" for r in runs_of(log))


# --- AITER's MoE lines relayed under SGLang's prefix (the tag gone) are AITER's --------------

def test_aiter_moe_lines_relayed_by_sglang_are_read_with_their_quant_type():
    path = FIX / "sglang-220.log"
    (run,) = runs_of(path)
    assert run["unexplained"] == [] and run["selections"] == []
    assert {e["groups"]["q_type"] for e in _events(path, "sglang.aiter.run-config")} == {"QuantType.No"}
    (cut,) = _events(path, "sglang.aiter.moe-default-config")
    assert cut["groups"]["stages"] == "2stage"  # the key cut by the paste still reads


def test_a_run_1stage_word_in_prose_is_not_aiters(tmp_path):
    log = write_log(tmp_path, SGL + "the run_1stage = flag of aiter is documented elsewhere\n")
    assert _events(log, "sglang.aiter.run-config") == []


# --- communication and KV-pool set-up lines are read, not "not understood" -------------------

def test_custom_allreduce_graph_registration_is_understood():
    # sglang-213: 'Registering 0 cuda graph addresses' (custom all-reduce), before a failed start
    (run,) = runs_of(FIX / "sglang-213.log")
    assert run["unexplained"] == []
    (ev,) = _events(FIX / "sglang-213.log", "sglang.run.custom-allreduce")
    assert ev["groups"]["graph_addresses"] == "0"


def test_a_disabled_custom_allreduce_is_not_the_set_up_rule(tmp_path):
    log = write_log(tmp_path, SGL + "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs.\n")
    assert _events(log, "sglang.run.custom-allreduce") == []


def test_the_kv_pool_line_without_dtype_is_understood():
    # sglang-224: 0.4.3 -> 0.5.12 'KV Cache is allocated. #tokens: N, K size: .. GB, V size: .. GB'
    (run,) = runs_of(FIX / "sglang-224.log")
    assert run["unexplained"] == []
    assert {e["groups"]["tokens"] for e in _events(FIX / "sglang-224.log", "sglang.kv.pool-allocated")} == {"3059425"}


def test_the_kv_pool_line_with_dtype_still_states_the_dtype(tmp_path):
    log = write_log(tmp_path, SGL + "KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 1000, K size: 1.00 GB, V size: 1.00 GB\n")
    (run,) = runs_of(log)
    assert run["kv_cache"]["in_effect"] == "torch.float8_e4m3fn"


# --- DeepGEMM's missing-ops warning is read with its op list ---------------------------------

def test_deepgemm_missing_ops_are_read():
    (first, _second) = _events(FIX / "sglang-212.log", "sglang.run.deepgemm-missing-ops")
    assert "'fp8_gemm_nt'" in first["groups"]["ops"]
    assert runs_of(FIX / "sglang-212.log")[0]["findings"] == []


def test_a_missing_ops_list_of_other_names_is_not_deepgemms(tmp_path):
    log = write_log(tmp_path, SGL + "Warning: Missing operations: ['foo', 'bar']\n")
    assert _events(log, "sglang.run.deepgemm-missing-ops") == []


# --- the batch's one kernel line: DeepGEMM's F8F8BF16 JIT compile is native FP8 -------------

def test_deepgemm_fp8_jit_is_the_native_selection():
    (run,) = runs_of(FIX / "sglang-210.log")
    assert [(s["kernel"], s["cost_class"]) for s in run["selections"]] == [("DeepGEMM", "native")]


# --- AITER's own lines name the ROCm platform ---------------------------------------------

def test_aiter_lines_name_rocm():
    (run,) = runs_of(FIX / "sglang-220.log")
    assert run["engine"]["platform"] == "ROCM"


def test_a_cuda_run_is_not_made_rocm_by_prose_about_aiter(tmp_path):
    log = write_log(tmp_path, SGL + "Load weight end. type=X, dtype=torch.bfloat16, avail mem=60.00 GB\n"
                              + SGL + "aiter is not used on this platform; see https://github.com/ROCm/aiter\n")
    assert all(r["engine"]["platform"] != "ROCM" for r in runs_of(log))


# --- batch 7s-2: the tuned block-FP8 config line names its device in the path ---------------

def test_the_tuned_config_line_names_the_gpu_and_narrows_the_fall():
    # sglang-226: 'Using configuration from <.../device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,...json>
    # for W8A8 Block FP8 kernel.': the device precedes the kernel name
    (run,) = runs_of(FIX / "sglang-226.log")
    assert run["config"]["gpu"] == "NVIDIA_H100_80GB_HBM3"
    (sel,) = run["selections"]
    assert (sel["kernel"], sel["cost_class"]) == ("W8A8 Block FP8 kernel", "portable")


def test_the_default_config_line_still_names_its_gpu():
    # sglang-225: the default shape names the file after the kernel ('Config file not found at <path>')
    (run,) = runs_of(FIX / "sglang-225.log")
    assert run["config"]["gpu"] == "NVIDIA_H20-3e"


def test_a_tuned_config_path_without_a_device_sets_no_gpu(tmp_path):
    log = write_log(tmp_path, SGL + "Using configuration from /sgl/configs/custom_block_fp8.json for W8A8 Block FP8 kernel.\n")
    (run,) = runs_of(log)
    assert run["config"]["gpu"] is None and [s["kernel"] for s in run["selections"]] == ["W8A8 Block FP8 kernel"]


# --- batch 7s-3: Python's default logging format with an sglang logger is SGLang's line ------

def test_the_basic_logging_format_of_an_sglang_logger_names_sglang():
    # sglang-228: vLLM's platform line (imported) then 'WARNING:sglang.srt.utils:MOE_RUNNER_BACKEND ...'
    (run,) = runs_of(FIX / "sglang-228.log")
    assert run["engine"]["name"] == "sglang" and run["engine"]["platform"] == "CUDA"
    # line 12 names the MoE runner's default, triton, as its choice: no ladder places a bare
    # 'triton', so it is listed (analysis/targets.py), never a selection
    assert [(u["line"], u["kind"]) for u in run["unexplained"]] == [(12, "unread")] and run["selections"] == []


def test_the_basic_logging_format_of_another_logger_is_not_sglangs(tmp_path):
    log = write_log(tmp_path, "WARNING:urllib3.connectionpool:Retrying (Retry(total=4)) after connection broken\n"
                              "WARNING:vllm.utils:Using default MoE kernel config\n")
    assert all(r["engine"]["name"] != "sglang" for r in runs_of(log))


def test_sglangs_benchmark_script_lines_name_sglang():
    # sglang-227: SGLang's fused-MoE benchmark quoted in a vLLM PR; BF16, so no kernel
    (run,) = runs_of(FIX / "sglang-227.log")
    assert run["engine"]["name"] == "sglang" and run["selections"] == []
    assert run["config"]["gpu"] == "NVIDIA_H20"
