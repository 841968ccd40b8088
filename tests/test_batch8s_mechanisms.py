"""Corpus batch 8s (docs/corpus.md): the general mechanisms its first sight showed missing, each on
the real log of the batch (fixtures/sglang/sglang-230..247, and sglang-003 for the same noise) and
with a counter-example that must stay as it was."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import runs_of, scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "sglang"
SGL = "[2026-02-06 20:49:42 TP0] "
VLLM_WARN = "(EngineCore_DP0 pid=7) WARNING 09-20 10:00:00 [utils.py:1] "


def _events(path: Path, rule: str) -> list[dict]:
    return [e for e in scan_json(path)["events"] if e["rule"] == rule]


def _codes(run: dict) -> list[str]:
    return [f["code"] for f in run["findings"]]


# --- upgrade advice for a package tied to no kernel is no missing optional package ------------

def test_transformers_upgrade_advice_is_no_missing_package_and_not_listed():
    # sglang-243: transformers' 'You can update Transformers with the command `pip install
    # --upgrade transformers`' after 'model type `glm_moe_dsa` ... not recognize this architecture'
    (run,) = runs_of(FIX / "sglang-243.log")
    assert "OPTIONAL_PACKAGE_MISSING" not in _codes(run)
    assert run["unexplained"] == []
    assert run["start_failure"]["cause"].startswith("ValueError: The checkpoint you are trying to load")


def test_upgrade_advice_for_a_kernel_package_is_still_a_finding(tmp_path):
    # the same advice shape for a package the lexicon ties to a kernel keeps its finding
    log = write_log(tmp_path, VLLM_WARN + "This DeepGEMM build lacks fp8_gemm_nt; run `pip install --upgrade deep_gemm` "
                                          "to enable the block FP8 kernel.\n")
    (run,) = runs_of(log)
    assert _codes(run) == ["OPTIONAL_PACKAGE_MISSING"]


def test_a_raised_import_error_of_a_non_kernel_module_stays_listed():
    # sglang-113: 'ModuleNotFoundError: No module named 'sglang.srt.flashmla_tests'' is a raised
    # exception: dropped as a finding, still shown as not understood
    (run,) = runs_of(FIX / "sglang-113.log")
    assert [u["message"] for u in run["unexplained"]] == ["ModuleNotFoundError: No module named 'sglang.srt.flashmla_tests'"]


# --- state-pool, snapshot and model-architecture bookkeeping is read, not "not understood" -----

def test_mamba_pool_lines_are_read_with_their_sizes_even_when_cut():
    # sglang-246: two 'Mamba Cache is allocated. conv_state size: .., ssm_state size: ..' lines and a
    # third cut at 'Mamba Cache is alloca'
    (run,) = runs_of(FIX / "sglang-246.log")
    assert run["unexplained"] == []
    pools = _events(FIX / "sglang-246.log", "sglang.mem.mamba-pool-allocated")
    assert [p["line"] for p in pools] == [6, 7, 8]
    assert pools[0]["groups"]["ssm_gb"] == "0.86"


def test_sglang_003_lists_none_of_its_bookkeeping_lines():
    # the HF snapshot check, 'using attn output gate!' and the Mamba pool line of sglang-003
    (run,) = runs_of(FIX / "sglang-003.log")
    assert run["unexplained"] == []
    assert _events(FIX / "sglang-003.log", "sglang.run.hf-snapshot")[0]["groups"]["model"] == "Qwen/Qwen3.6-27B-FP8"


def test_a_mamba_kernel_line_is_still_not_understood(tmp_path):
    # a kernel statement that mentions Mamba is no pool line: it stays listed
    log = write_log(tmp_path, SGL + "Warmed fused Mamba slot copy kernel in 1.512 ms\n")
    (run,) = runs_of(log)
    assert [u["message"] for u in run["unexplained"]] == ["Warmed fused Mamba slot copy kernel in 1.512 ms"]


def test_a_cut_cuda_graph_phase_line_is_capture_bookkeeping():
    # sglang-236: 'Capture cuda graph num to' (piecewise_cuda_graph_runner's 'num tokens [...]', cut)
    (run,) = runs_of(FIX / "sglang-236.log")
    assert run["unexplained"] == []
    (cut,) = [e for e in _events(FIX / "sglang-236.log", "sglang.run.cuda-graph-capture") if e["line"] == 14]
    assert cut["groups"]["phase_cut"] == "num to"


def test_a_cuda_graph_capture_failure_is_not_capture_progress(tmp_path):
    log = write_log(tmp_path, SGL + "Capture cuda graph failed: CUDA error: out of memory\n")
    assert _events(log, "sglang.run.cuda-graph-capture") == []


# --- the overlap worker thread's batch loop is serving ------------------------------------------

def test_the_overlap_threads_failure_under_pm2_is_a_failure_while_serving():
    # sglang-240: '`[... TP0] TpModelWorkerClient hit an exception: ...' then frames behind pm2's
    # '3|qwen  | ' prefix through forward_thread_func -> self.forward_thread_func_()
    (run,) = runs_of(FIX / "sglang-240.log")
    assert run["engine"]["name"] == "sglang"
    assert run.get("start_failure") is None and run["serving_failure"]["line"] == 1


def test_a_scheduler_init_traceback_is_still_a_failed_start():
    # sglang-232: 'Scheduler hit an exception' through Scheduler.__init__ -> ModelRunner.initialize
    (run,) = runs_of(FIX / "sglang-232.log")
    assert run.get("serving_failure") is None and run["start_failure"]["line"] == 1


def test_a_markdown_table_row_is_no_pm2_prefix(tmp_path):
    log = write_log(tmp_path, "| 3|qwen | Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB |\n")
    assert all(r["engine"]["name"] != "sglang" for r in runs_of(log))


# --- AITER's JIT module lines name ROCm ---------------------------------------------------------

def test_aiters_module_import_names_rocm_and_keeps_the_start_in_the_run():
    # sglang-243: '[aiter] import [module_aiter_enum] under /sgl-workspace/aiter/aiter/jit/...' and
    # its relay under '[time] INFO core.py:501: '
    (run,) = runs_of(FIX / "sglang-243.log")
    assert run["engine"]["platform"] == "ROCM"
    assert run["first_line"] == 1


def test_a_module_import_outside_aiter_names_no_platform(tmp_path):
    log = write_log(tmp_path, SGL + "import [module_x] under /usr/lib/python3/site-packages/other/module_x.so\n"
                              + SGL + "Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB\n")
    (run,) = runs_of(log)
    assert run["engine"]["platform"] != "ROCM"


# --- DeepGEMM's warmup sizing line is part of the run -------------------------------------------

def test_deepgemm_warmup_memory_line_opens_the_window():
    # sglang-231 begins with 'Required memory for warmup: ..GB, Available memory: ..GB'
    (run,) = runs_of(FIX / "sglang-231.log")
    assert run["first_line"] == 1
    (mem,) = [e for e in _events(FIX / "sglang-231.log", "sglang.run.deepgemm-warmup-memory") if e["line"] == 1]
    assert mem["groups"]["required_gb"] == "0.1640625"


# --- batch 8s-2: windows of SGLang bookkeeping alone are SGLang runs, not silence ---------------

def test_host_pool_lines_alone_are_an_sglang_run():
    # sglang-249: nine 'Allocating 0.03 GB host memory for V4 state pool '...' (...)' lines (HiCache)
    (run,) = runs_of(FIX / "sglang-249.log")
    assert run["engine"]["name"] == "sglang" and run["unexplained"] == []
    assert {e["groups"]["pool"] for e in _events(FIX / "sglang-249.log", "sglang.mem.host-pool-allocated")} == {
        "V4 state pool", "V4 paged pool"}


def test_a_host_pool_shortage_is_not_an_allocation(tmp_path):
    log = write_log(tmp_path, SGL + "Not enough host memory for V4 paged pool deepseek_v4_c128. Need 1 GB\n")
    assert _events(log, "sglang.mem.host-pool-allocated") == []


def test_a_server_args_fragment_names_sglang():
    # sglang-250: the middle of a ServerArgs repr, no prefix, no 'server_args=' start
    (run,) = runs_of(FIX / "sglang-250.log")
    assert run["engine"]["name"] == "sglang" and run["findings"] == []


def test_vllm_engine_args_are_no_sglang_fragment(tmp_path):
    log = write_log(tmp_path, "model='x', gpu_memory_utilization=0.9, enable_expert_parallel=True, all2all_backend='naive', "
                              "max_num_batched_tokens=8192\n")
    assert all(r["engine"]["name"] != "sglang" for r in runs_of(log))
