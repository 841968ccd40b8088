"""Corpus batch 10s (docs/corpus.md): an SGLang launch command pasted before the log gives the
run's config, as vLLM's ``vllm serve`` command does (``sglang.config.launch-command`` and the
SGLang pack's ``[pack.cli]``: ``--model-path`` names the model, ``--tp`` / ``--tp-size`` the TP
size, ``--moe-runner-backend`` the requested MoE backend). Each on the real logs
(fixtures/sglang/sglang-270..279 and older ones) with a counter-example that must stay as it was.
"""
from __future__ import annotations

from pathlib import Path

from logscan.analysis.cli_args import arguments
from logscan.packs.loader import default_packs
from tests.conftest import scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "sglang"
CLI = default_packs().packs["sglang"].meta.pack.cli


def _one(path: Path) -> dict:
    (run,) = scan_json(path)["runs"]
    return run


def test_a_wrapped_sglang_serve_command_after_a_docker_image_gives_model_and_parallel_sizes():
    # sglang-270: 'sudo docker run ... \' .. '  lmsysorg/sglang:qwen38flashnext \' / '  sglang serve \'
    # / '    --model-path Qwen/Qwen3.8-Flash-Next-FP8 \' / '    --tp 4 \' / '    --ep 4 \' ...
    run = _one(FIX / "sglang-270.log")
    assert run["engine"]["name"] == "sglang"
    assert run["config"]["model"] == "Qwen/Qwen3.8-Flash-Next-FP8"
    assert run["config"]["tensor_parallel_size"] == 4
    assert run["config"]["extra"]["ep"] == "4"
    assert (run["first_line"], run["last_line"]) == (8, 19)


def test_an_env_prefixed_launch_server_command_gives_quantization_and_requested_backends():
    # sglang-272: 'SGLANG_USE_AITER=1 python3 -m sglang.launch_server \' wrapped over 8 lines
    run = _one(FIX / "sglang-272.log")
    c = run["config"]
    assert (c["model"], c["quantization"], c["dtype"], c["tensor_parallel_size"]) == \
        ("MiniMaxAI/MiniMax-M3-MXFP8", "mxfp8", "bfloat16", 8)
    assert c["extra"]["moe_backend"] == "triton" and c["extra"]["attention_backend"] == "aiter"
    # a requested backend is no selection: nothing to report as a kernel
    assert run["selections"] == []


def test_prompts_and_the_model_alias_are_read():
    # sglang-275: 'root@e1448ef40573:/sgl-workspace/sglang_dev/python# python3 -m sglang.launch_server --model ... --tp-size 2'
    c = _one(FIX / "sglang-275.log")["config"]
    assert (c["model"], c["tensor_parallel_size"]) == ("Qwen/Qwen3.5-35B-A3B-FP8", 2)
    # sglang-279: one line, '--moe-runner-backend flashinfer_trtllm --quantization fp8'
    c = _one(FIX / "sglang-279.log")["config"]
    assert (c["quantization"], c["extra"]["moe_backend"]) == ("fp8", "flashinfer_trtllm")


def test_a_command_before_the_server_args_dump_agrees_with_it():
    # sglang-251: the command asks awq_turbomind and tp 2; sglang-261: '--tp 1' before ServerArgs
    c = _one(FIX / "sglang-251.log")["config"]
    assert (c["quantization"], c["tensor_parallel_size"]) == ("awq_turbomind", 2)
    c = _one(FIX / "sglang-261.log")["config"]
    assert c["tensor_parallel_size"] == 1 and c["model"] == "/mnt/llms/models/Qwen/Qwen3-8B-FP8/"


def test_sglang_flag_names_parse_from_pack_data():
    got = dict(arguments("--model-path m --tp 4 --dp-size 2 --ep 8 --trust-remote-code "
                         "--fp8-gemm-backend cutlass --moe-runner-backend deep_gemm", CLI))
    assert got == {"model": "m", "tensor_parallel_size": "4", "data_parallel_size": "2",
                   "expert_parallel_size": "8", "trust_remote_code": "true",
                   "fp8_gemm_runner_backend": "cutlass", "moe_backend": "deep_gemm"}
    # no positional argument in SGLang's parser: a stray word names no model
    assert "model" not in dict(arguments("serve --port 30000", CLI))


def test_a_command_in_prose_or_the_entrypoint_warning_is_no_launch(tmp_path):
    p = write_log(tmp_path, "I started it with python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                  "--quantization fp8 and it failed\n"
                  "/sgl-workspace/sglang/python/sglang/launch_server.py:63: UserWarning: 'python -m "
                  "sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.\n"
                  "  Example: sglang serve --model-path <model> [options]\n")
    for run in scan_json(p)["runs"]:
        assert run["config"]["model"] is None and run["config"]["quantization"] is None


def test_a_vllm_command_is_not_read_by_the_sglang_rule(tmp_path):
    p = write_log(tmp_path, "vllm serve Qwen/Qwen3-8B --quantization fp8 --tensor-parallel-size 2\n")
    (run,) = scan_json(p)["runs"]
    assert run["engine"]["name"] == "vllm"


# --- an exception on the scheduler's own failure line ------------------------------------------

def test_an_exception_on_the_scheduler_line_is_the_failures_cause():
    # sglang-277: 'Scheduler hit an exception: torch._dynamo.exc.Unsupported: Logger not supported ...',
    # then 'The above exception was the direct cause ...' and a traceback cut mid-name
    sf = _one(FIX / "sglang-277.log")["start_failure"]
    assert sf["cause_line"] == 1 and sf["cause"].startswith("torch._dynamo.exc.Unsupported: Logger not supported")
    assert "is not in the log" not in sf["headline"]
    assert sf["raised_in"].endswith("in _init_model_runner")  # the frames after the line still count


def test_a_scheduler_line_that_opens_a_traceback_keeps_no_inline_cause():
    # sglang-274: 'Scheduler hit an exception: Traceback (most recent call last):', cut before the exception
    sf = _one(FIX / "sglang-274.log")["start_failure"]
    assert sf["cause"] is None and "the exception that caused it is not in the log" in sf["headline"]


# --- an op traced with fake tensors is no failing kernel ---------------------------------------

def test_an_op_without_a_fake_impl_names_no_failing_kernel():
    # sglang-276: 'NotImplementedError: sgl_kernel::fp8_blockwise_scaled_mm: attempted to run this
    # operator with Meta tensors, but there was no fake impl ...' (piecewise CUDA graph compile)
    sf = _one(FIX / "sglang-276.log")["start_failure"]
    assert sf["exception_type"] == "NotImplementedError" and sf["failing_kernel"] is None


def test_the_traced_wording_is_data_with_examples():
    import regex

    from logscan.packs.loader import default_packs as packs

    f = packs().lexicon.failing
    assert all(regex.search(f.traced, e) for e in f.traced_examples)
    assert not any(regex.search(f.traced, e) for e in f.traced_counter_examples)


def test_a_kernel_that_raised_while_running_is_still_named(tmp_path):
    p = write_log(tmp_path, "[2026-02-24 04:43:15 TP4] Scheduler hit an exception: Traceback (most recent call last):\n"
                  '  File "/x/sglang/srt/layers/quantization/fp8_kernel.py", line 10, in apply\n'
                  "    return fp8_blockwise_scaled_mm(a, b)\n"
                  "RuntimeError: fp8_blockwise_scaled_mm: CUDA error: an illegal memory access was encountered\n")
    (run,) = scan_json(p)["runs"]
    assert run["start_failure"]["failing_kernel"] == "CUTLASS"


# --- a code span inside a wrapper ----------------------------------------------------------------

def test_a_backticked_command_inside_a_markdown_quote_is_read():
    # sglang-280: '> `SGL_ENABLE_JIT_DEEPGEMM=0 python -m sglang.launch_server --model /mnt/gpt-oss-120b/ --tp 2 ...`'
    c = _one(FIX / "sglang-280.log")["config"]
    assert (c["model"], c["tensor_parallel_size"]) == ("/mnt/gpt-oss-120b/", 2)


def test_a_code_span_inside_a_quote_unwraps_for_every_engine_but_a_half_span_stays(tmp_path):
    p = write_log(tmp_path, "> `vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2`\n")
    (run,) = scan_json(p)["runs"]
    assert run["engine"]["name"] == "vllm" and run["config"]["tensor_parallel_size"] == 2
    # one backtick closing a span opened on another line is no span: the text stays as it was
    p = write_log(tmp_path, "> python3 -m sglang.launch_server --model-path m/x --tp 2 # see `docs`\n", "y.log")
    (run,) = scan_json(p)["runs"]
    assert run["config"]["model"] == "m/x"


def test_a_wrapped_curl_body_after_the_command_names_no_model():
    # sglang-283: the command's model, not the '"model_path": ...' of the curl JSON after it
    c = _one(FIX / "sglang-283.log")["config"]
    assert c["model"] == "nvidia/Qwen3-30B-A3B-NVFP4" and c["extra"]["moe_backend"] == "flashinfer_trtllm_routed"


# --- the deprecated MoE backend switches -----------------------------------------------------------

def test_a_deprecated_moe_switch_states_the_backend_it_stands_for():
    # sglang-284: '--quantization modelopt_fp4 --tp 8 --enable-flashinfer-moe --enable-ep-moe' (0.4.9)
    assert _one(FIX / "sglang-284.log")["config"]["extra"]["moe_backend"] == "flashinfer_cutlass"
    got = list(arguments("--enable-flashinfer-trtllm-moe --enable-triton-kernel-moe --trust-remote-code", CLI))
    assert got == [("moe_backend", "flashinfer_trtllm"), ("moe_backend", "triton_kernel"), ("trust_remote_code", "true")]
    # a switch another engine does not have stays a plain boolean there
    vllm_cli = default_packs().packs["vllm"].meta.pack.cli
    assert dict(arguments("--enable-flashinfer-trtllm-moe", vllm_cli)) == {"enable_flashinfer_trtllm_moe": "true"}


def test_a_commands_expert_parallel_switch_is_read_like_the_dumps_true():
    # vllm-267: 'vllm serve ... --tensor-parallel-size 4 ... --enable-expert-parallel' (cli_args gives "true",
    # an argument dump 'enable_expert_parallel=True'): both are EP on
    (run,) = scan_json(Path(__file__).parent.parent / "fixtures" / "vllm" / "vllm-267.log")["runs"]
    assert run["config"]["extra"]["ep"] == "on"
