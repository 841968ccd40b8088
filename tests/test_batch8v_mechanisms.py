"""Corpus batch 8v (docs/corpus.md): the general mechanisms its first sight showed missing, each on
the real log of the batch (fixtures/vllm/vllm-260..278) and with a counter-example that must stay
as it was."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import runs_of, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "vllm"
PREFIX = "(EngineCore pid=7) INFO 05-13 16:44:09 [{f}] "


# --- a 'Selected <kernel>' line cut before 'for <scheme>' is still a selection ----------------

def test_a_selection_line_cut_inside_the_kernel_name_is_read_and_placed():
    # vllm-261: 'Selected CutlassFP8ScaledMMLinea' is the paste's own cut, then CUTLASS frames
    (run,) = runs_of(FIX / "vllm-261.log")
    (sel,) = run["selections"]
    assert sel["kernel"] == "CutlassFP8ScaledMMLinea" and sel["line"] == 9
    assert sel["ladder"]["kernel_class"] == "CutlassFP8ScaledMMLinearKernel"
    assert run["unexplained"] == []


def test_a_complete_selection_line_keeps_its_scheme(tmp_path):
    log = write_log(tmp_path, PREFIX.format(f="__init__.py:665") +
                    "Selected CutlassFP8ScaledMMLinearKernel for CompressedTensorsW8A8Fp8\n")
    (run,) = runs_of(log)
    (sel,) = run["selections"]
    assert sel["family"] == "linear (CompressedTensorsW8A8Fp8)"


def test_a_cut_backend_sentence_or_a_short_stub_is_no_kernel(tmp_path):
    log = write_log(tmp_path, PREFIX.format(f="selector.py:80") + "Selected backend ROCM_AITER_FA\n"
                    + PREFIX.format(f="__init__.py:665") + "Selected CutlassFP8\n")
    assert all(r["selections"] == [] for r in runs_of(log))


# --- the rank line of any release, and the distributed-init line, are vLLM's ----------------

def test_pcp_era_rank_lines_alone_are_a_vllm_run():
    # vllm-274: world_size line, 'rank 0 ... DP rank 0, PP rank 0, PCP rank 0, TP rank 0, EP rank N/A, EPLB rank N/A'
    (run,) = runs_of(FIX / "vllm-274.log")
    assert run["engine"]["name"] == "vllm"
    assert run["config"]["extra"]["world_size"] == "1"
    assert run["first_line"] == 3


def test_the_world_size_words_in_prose_name_no_engine(tmp_path):
    log = write_log(tmp_path, "torchrun sets world_size=2 rank=0 local_rank=0 distributed_init_method=env:// backend=nccl for you\n")
    assert all(r["engine"]["name"] != "vllm" for r in runs_of(log))


# --- the sampler's FlashInfer / PyTorch-native choice is a run fact, not a kernel line --------

def test_the_sampler_fallback_is_a_fact_not_a_line_not_understood():
    # vllm-275: 'FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling.'
    (run,) = runs_of(FIX / "vllm-275.log")
    assert run["config"]["extra"]["sampler"] == "PyTorch-native"
    assert run["unexplained"] == [] and run["findings"] == []


def test_a_missing_kernel_package_still_raises_its_finding(tmp_path):
    log = write_log(tmp_path, "(EngineCore pid=7) WARNING 05-13 16:44:09 [fp8.py:88] Failed to import DeepGemm kernels.\n")
    (run,) = runs_of(log)
    assert [f["code"] for f in run["findings"]] == ["OPTIONAL_PACKAGE_MISSING"]


# --- VLLM_DISABLED_KERNELS in the log explains the fall --------------------------------------

def test_a_kernel_the_log_disabled_is_said_disabled_not_needing_a_gpu():
    # vllm-276: 'export VLLM_DISABLED_KERNELS=CutlassFp8BlockScaledMMKernel', then Triton block FP8 selected
    (run,) = runs_of(FIX / "vllm-276.log")
    (sel,) = run["selections"]
    stopped = sel["ladder"]["stopped_by"]
    assert "VLLM_DISABLED_KERNELS" in stopped["CutlassFp8BlockScaledMMKernel"]
    assert "VLLM_DISABLED_KERNELS" not in stopped["DeepGemmFp8BlockScaledMMKernel"]


def test_without_the_switch_the_fall_gives_the_gate(tmp_path):
    lines = (FIX / "vllm-276.log").read_text(encoding="utf-8").splitlines()
    log = write_log(tmp_path, "\n".join(line for line in lines if "VLLM_DISABLED_KERNELS" not in line) + "\n")
    (run,) = runs_of(log)
    (sel,) = run["selections"]
    assert "VLLM_DISABLED_KERNELS" not in sel["ladder"]["stopped_by"]["CutlassFp8BlockScaledMMKernel"]


def test_a_suggestion_to_set_the_switch_disables_nothing(tmp_path):
    lines = (FIX / "vllm-276.log").read_text(encoding="utf-8").splitlines()
    text = "\n".join("Set VLLM_DISABLED_KERNELS=CutlassFp8BlockScaledMMKernel to work around it."
                     if "VLLM_DISABLED_KERNELS" in line else line for line in lines)
    (run,) = runs_of(write_log(tmp_path, text + "\n"))
    (sel,) = run["selections"]
    assert "VLLM_DISABLED_KERNELS" not in sel["ladder"]["stopped_by"]["CutlassFp8BlockScaledMMKernel"]


# --- Marlin's tile-shape refusal names Marlin as the failing kernel ---------------------------

def test_marlins_shape_refusal_names_marlin():
    # vllm-270: 'ValueError: Weight input_size_per_partition = 10944 is not divisible by min_thread_k = 128. ...'
    (run,) = runs_of(FIX / "vllm-270.log")
    failure = run["start_failure"]
    assert failure is not None and failure["failing_kernel"] == "Marlin"


def test_another_divisibility_error_names_no_kernel(tmp_path):
    log = write_log(tmp_path, "python -m vllm.entrypoints.openai.api_server --model x\n"
                              "ValueError: The input size 10944 is not divisible by the group size 128.\n")
    (run,) = runs_of(log)
    assert run["start_failure"] is not None and run["start_failure"]["failing_kernel"] is None


# --- a launch command pasted before the log states what the run asked for --------------------

def test_a_vllm_serve_command_gives_the_config():
    # vllm-267: 'vllm serve Intel/Qwen3-Next-80B-A3B-Instruct-int4-mixed-AutoRound ... --tensor-parallel-size 4 ... --dtype float16'
    (run,) = runs_of(FIX / "vllm-267.log")
    c = run["config"]
    assert c["model"] == "Intel/Qwen3-Next-80B-A3B-Instruct-int4-mixed-AutoRound"
    assert c["tensor_parallel_size"] == 4 and c["dtype"] == "float16"


def test_an_api_server_module_command_gives_the_config():
    # vllm-263: 'python3 -m vllm.entrypoints.openai.api_server ... --dtype=float16  --model  TinyLlama-1.1B-Chat-v1.0-NVFP4'
    (run,) = runs_of(FIX / "vllm-263.log")
    assert run["config"]["model"] == "TinyLlama-1.1B-Chat-v1.0-NVFP4" and run["config"]["dtype"] == "float16"


def test_a_sentence_about_a_command_or_an_sglang_launch_gives_no_vllm_config(tmp_path):
    log = write_log(tmp_path, "I started it with vllm serve Qwen/Qwen3-8B --quantization fp8 and it failed\n")
    assert all(r["config"]["quantization"] is None for r in runs_of(log))
    # an SGLang launch command is SGLang's (batch 10s: its config is read), never a vLLM run's
    log = write_log(tmp_path, "INFO 06-15 00:04:48 api_server.py:177] vLLM API server version 0.5.5\n"
                              "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --quantization fp8\n")
    runs = runs_of(log)
    assert [(r["engine"]["name"], r["config"]["quantization"]) for r in runs] == [("vllm", None), ("sglang", "fp8")]
