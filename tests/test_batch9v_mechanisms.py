"""Corpus batch 9v (docs/corpus.md) and the vLLM limits left by batch 8v: the general mechanisms,
each on the real logs (fixtures/vllm/vllm-265, -270, -283..297, -101, -222) and with a
counter-example that must stay as it was.

- a backslash-wrapped launch command is one command (``Continuation.joined_by``);
- a ``docker run`` of vLLM's image is read from the image's line (``vllm.config.docker-image-command``);
- the command's words parse as vLLM's argparse does, from pack data (``[pack.cli]``: boolean
  flags, short aliases, the positional model);
- the logger's module (``[cuda.py:N]``) is the weakest platform evidence (``platform_files``).
"""
from __future__ import annotations

from pathlib import Path

from logscan.analysis.cli_args import arguments, words
from logscan.packs.loader import default_packs
from tests.conftest import runs_of, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "vllm"
CLI = default_packs().packs["vllm"].meta.pack.cli


def _one(path: Path) -> dict:
    (run,) = runs_of(path)
    return run


# --- a wrapped command's lines are one command ------------------------------------------------

def test_a_wrapped_serve_command_reads_the_flags_of_its_continuation_lines():
    # vllm-283: 'vllm serve <m> \' / '--dtype auto --enforce-eager --trust-remote-code \' / '--max-model-len 8192 --tensor-parallel-size 1'
    run = _one(FIX / "vllm-283.log")
    assert run["config"]["model"] == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8"
    assert run["config"]["tensor_parallel_size"] == 1
    assert run["config"]["extra"]["enforce_eager"] == "true"
    assert run["first_line"] == 1 and run["selections"][0]["kernel"] == "FLASHINFER_CUTLASS"


def test_a_continuation_line_of_flags_is_no_line_not_understood():
    # vllm-284: '--trust-remote-code --async-scheduling --kv-cache-dtype fp8 --tensor-parallel-size 1' was
    # read alone as a KV-cache line nothing explained; '$MODEL_PATH' names no model
    run = _one(FIX / "vllm-284.log")
    assert run["unexplained"] == []
    assert run["config"]["kv_cache_dtype"] == "fp8" and run["config"]["tensor_parallel_size"] == 1
    assert run["config"]["model"] is None


def test_a_wrapped_docker_run_of_the_vllm_image_gives_the_config():
    # vllm-265: 'docker run --rm \' + eleven docker flags, '  vllm/vllm-openai:nightly-... \', the model, vLLM flags
    run = _one(FIX / "vllm-265.log")
    c = run["config"]
    assert c["model"] == "/model/Qwen3-Next-80B-A3B-Thinking-AWQ-4bit"
    assert (c["quantization"], c["dtype"], c["tensor_parallel_size"]) == ("compressed-tensors", "float16", 4)
    assert run["engine"]["version"] == "0.13.0rc2.dev211+gd4d275173"  # the log line after the command is read
    assert run["first_line"] == 13


def test_a_docker_command_with_the_model_in_a_variable_keeps_the_quantization_only():
    run = _one(FIX / "vllm-297.log")
    assert run["config"]["quantization"] == "awq" and run["config"]["model"] is None


def test_a_line_after_one_without_the_marker_is_not_part_of_the_command(tmp_path):
    log = write_log(tmp_path, "vllm serve Qwen/Qwen3-8B --dtype half\n--quantization fp8 was what I tried next\n")
    run = _one(log)
    assert run["config"]["model"] == "Qwen/Qwen3-8B" and run["config"]["quantization"] is None


def test_a_log_line_ends_a_wrapped_command(tmp_path):
    log = write_log(tmp_path, "vllm serve Qwen/Qwen3-8B \\\n"
                    "INFO 05-13 16:44:09 [api_server.py:1351] vLLM API server version 0.9.2\n")
    run = _one(log)
    assert run["engine"]["version"] == "0.9.2" and run["config"]["model"] == "Qwen/Qwen3-8B"


def test_an_image_named_in_prose_or_another_engines_image_is_no_vllm_command(tmp_path):
    log = write_log(tmp_path, "using docker: vllm/vllm-openai:latest (0.9.2)\n"
                    "docker run --gpus all ghcr.io/huggingface/text-generation-inference:2.0 --model-id x \\\n"
                    "  --quantize awq\n")
    assert all(r["engine"]["name"] != "vllm" and r["config"]["quantization"] != "awq"
               for r in runs_of(log) if r["engine"]["read_with"] == "vllm")


# --- the words parse as vLLM's argparse does ----------------------------------------------------

def test_a_boolean_flag_before_the_positional_model_takes_no_value(tmp_path):
    log = write_log(tmp_path, "vllm serve --enforce-eager Qwen/Qwen3-8B-AWQ --quantization awq_marlin -tp 2\n")
    c = _one(log)["config"]
    assert c["model"] == "Qwen/Qwen3-8B-AWQ" and c["extra"]["enforce_eager"] == "true"
    assert c["quantization"] == "awq_marlin" and c["tensor_parallel_size"] == 2


def test_a_trailing_boolean_flag_is_true_and_a_value_flag_keeps_its_value():
    # vllm-270: '... --trust-remote-code --enforce-eager' at the end of the command
    assert _one(FIX / "vllm-270.log")["config"]["extra"]["enforce_eager"] == "true"
    assert list(arguments(" --max-model-len 4096 Qwen/Qwen3-8B", CLI)) == [
        ("max_model_len", "4096"), ("model", "Qwen/Qwen3-8B")]


def test_negated_and_worded_booleans_short_aliases_and_shell_operators():
    got = list(arguments(" --no-enable-prefix-caching --enable-chunked-prefill false -q fp8 "
                         "--kv-cache-dtype=fp8 2>&1 | tee serve.log", CLI))
    assert got == [("enable_prefix_caching", "false"), ("enable_chunked_prefill", "false"),
                   ("quantization", "fp8"), ("kv_cache_dtype", "fp8")]


def test_a_flag_unknown_to_the_spec_still_takes_the_next_word():
    # without the pack's booleans the old reading holds: the next word is the value
    assert list(arguments(" --enforce-eager Qwen/Qwen3-8B")) == [("enforce_eager", "Qwen/Qwen3-8B")]


def test_a_cut_quote_or_a_comment_is_no_error():
    assert words("--model 'Qwen/Qwen3 8B") == ["--model", "Qwen/Qwen3", "8B"]
    assert words("--dtype half  # fp16 for AWQ") == ["--dtype", "half"]


def test_a_prompt_with_a_conda_env_and_a_root_shell_before_the_command():
    # vllm-295: '(vllm) /tmp# vllm serve facebook/opt-125m --device cpu'
    run = _one(FIX / "vllm-295.log")
    assert run["first_line"] == 1 and run["engine"]["platform"] == "CPU"


# --- the platform from the logger's module, and from the async-output check --------------------

def test_the_platform_modules_file_tag_names_the_platform_when_nothing_else_does():
    # vllm-101: '[cuda.py:378] Using FLASH_ATTN attention backend ...', no platform line
    eng = _one(FIX / "vllm-101.log")["engine"]
    assert (eng["platform"], eng["platform_source"]) == ("CUDA", "inferred")
    assert "cuda.py" in eng["platform_evidence"]
    # vllm-222: an XPU window, tagged [xpu.py:N]
    assert _one(FIX / "vllm-222.log")["engine"]["platform"] == "XPU"


def test_a_stated_platform_outranks_a_file_tag_and_other_modules_name_none(tmp_path):
    p = "(EngineCore pid=7) INFO 05-13 16:44:09 [{f}] "
    log = write_log(tmp_path, p.format(f="__init__.py:235") + "Automatically detected platform rocm.\n"
                    + p.format(f="cpu.py:120") + "Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN'].\n")
    assert _one(log)["engine"]["platform"] == "ROCM"
    log = write_log(tmp_path, p.format(f="cuda_communicator.py:70") +
                    "Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN'].\n")
    assert _one(log)["engine"]["platform"] is None


def test_the_async_output_check_names_a_cpu_platform():
    # vllm-287: 'Async output processing is not supported on the current platform type cpu.'
    assert _one(FIX / "vllm-287.log")["engine"]["platform"] == "CPU"
