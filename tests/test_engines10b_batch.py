"""The engines10b first-sight batch (issue 16, docs/corpus.md "engines10b"): TGI, LMDeploy and
MLC-LLM logs, and the general mechanisms the batch showed missing, each on the batch's real logs
with a counter-example that must stay as it was:

- MLC-LLM's device probe ('Found device: rocm:0', auto_device.py) and an explicit ``--device`` on
  an mlc_llm command name the platform (a weak fact: the first one found, until 'Using device:');
- TurboMind's new (>= 0.13.0) logger prefix dates a line only by what the new logger alone prints
  (its [MMDD.HH:MM:SS.uuuuuu] stamp, the level spelled WARN), and TurboMind's own start-up state
  lines ([BlockManager], [Gemm2] tuning, ...) are lines of the LMDeploy run;
- TGI's shard interceptor 'Method Warmup encountered an error.' is a failed start, and a shard
  exception relayed with the launcher's span field (' rank=0' at its end) names TGI;
- lmdeploy check_env's 'GPU 0,1: NVIDIA ...' line names a CUDA machine.
"""
from __future__ import annotations

import pytest

from tests.conftest import one_run as _run, scan_json, write_log


# --- MLC-LLM: the device probe and --device name the platform ---------------------------------

@pytest.mark.parametrize("name, platform", [
    ("mlc-llm-158", "ROCM"),    # 'Found device: rocm:0' / 'rocm:1' (an explicit --device rocm)
    ("mlc-llm-160", "METAL"),   # mlc_chat compile --device metal; 'Found device: metal:0'
    ("mlc-llm-161", "OPENCL"),  # the legacy ChatModule's JIT on 'opencl:0'
    ("mlc-llm-164", "ROCM"),    # only the command: mlc_llm serve ... --device="rocm:0"
])
def test_mlc_device_probe_and_flag_name_the_platform(name, platform):
    run = _run(name)
    assert run["engine"]["name"] == "mlc-llm"
    assert run["engine"]["platform"] == platform


def test_mlc_first_found_device_until_using_device(tmp_path):
    # --device auto probes cuda, rocm, metal, vulkan, opencl, cpu in that order and uses the first
    probe = "[2024-05-01 10:00:00] INFO auto_device.py:79: Found device: {}\n"
    first = write_log(tmp_path, probe.format("cuda:0") + probe.format("vulkan:0") + probe.format("cpu:0")
                      + "[2024-05-01 10:00:00] INFO jit.py:43: MLC_JIT_POLICY = ON. Can be one of: ON, OFF, REDO, READONLY\n")
    assert scan_json(first)["runs"][0]["engine"]["platform"] == "CUDA"
    chosen = write_log(tmp_path, probe.format("cuda:0") + probe.format("vulkan:0")
                       + "[2024-05-01 10:00:00] INFO auto_device.py:89: Using device: vulkan:0\n"
                       + "[2024-05-01 10:00:00] INFO jit.py:43: MLC_JIT_POLICY = ON. Can be one of: ON, OFF, REDO, READONLY\n",
                       "b.log")
    assert scan_json(chosen)["runs"][0]["engine"]["platform"] == "VULKAN"
    # a CPU-only probe and an 'auto' command name no GPU platform
    cpu = write_log(tmp_path, "mlc_llm serve HF://mlc-ai/x-q4f16_1-MLC --device auto\n" + probe.format("cpu:0")
                    + "[2024-05-01 10:00:00] INFO jit.py:43: MLC_JIT_POLICY = ON. Can be one of: ON, OFF, REDO, READONLY\n",
                    "c.log")
    assert all(r["engine"]["platform"] is None for r in scan_json(cpu)["runs"])


# --- LMDeploy: TurboMind's prefixes and state lines --------------------------------------------

def test_bare_tm_level_prefix_dates_no_new_release():
    run = _run("lmdeploy-156")  # Sep 2025: '[TM][DEBUG] ...' lines and '[TM][WARNING] [SegMgr] ...'
    assert run["engine"]["name"] == "lmdeploy"
    assert run["engine"]["release_range"] == ["0.9.2", "0.12.3"]
    # and TurboMind's own state lines are the run's lines, not only the LlamaV2 signature line
    assert (run["first_line"], run["last_line"]) == (1, 14)


def test_new_tm_prefix_still_dates_a_new_release(tmp_path):
    log = write_log(tmp_path, "[TM][WARN][0914.14:00:25.876730][turbomind.cc:123] `max_context_token_num` is not set, default to 16384.\n")
    run = scan_json(log)["runs"][0]
    assert run["engine"]["name"] == "lmdeploy"
    assert run["engine"]["release_range"][0] == "0.13.0"


def test_check_env_nvidia_gpu_is_a_cuda_machine():
    run = _run("lmdeploy-158")  # lmdeploy check_env: 'GPU 0,1: NVIDIA GeForce RTX 5090 D'
    assert run["engine"]["platform"] == "CUDA"
    assert run["config"]["gpu"] == "NVIDIA GeForce RTX 5090 D"


# --- TGI: the shard interceptor's Warmup failure, relayed exceptions ---------------------------

def test_warmup_method_error_is_a_failed_start():
    run = _run("tgi-167")  # behind '> ' and an outer RFC 3339 stamp
    assert run["engine"]["name"] == "tgi"
    assert run["first_line"] == 1
    assert run["start_failure"]["rule"] == "tgi.run.warmup-method-failed"
    assert run["start_failure"]["line"] == 1


def test_prefill_method_error_is_no_start_failure_by_itself(tmp_path):
    log = write_log(tmp_path, "\n".join([
        "2024-10-05T15:59:21.648308Z  INFO text_generation_launcher: Starting Webserver",
        "2024-10-05T16:10:00.000000Z ERROR text_generation_launcher: Method Prefill encountered an error.",
    ]) + "\n")
    for run in scan_json(log)["runs"]:
        assert run["start_failure"] is None or run["start_failure"]["rule"] != "tgi.run.warmup-method-failed"


def test_relayed_shard_exception_names_tgi():
    run = _run("tgi-165")  # rich-box locals, then 'NotImplementedError: ... for AutoModel rank=0'
    assert run["engine"]["name"] == "tgi"
    assert "rank" in run["engine"]["identified_by"] or "launcher" in run["engine"]["identified_by"]


def test_torch_rank_prefix_is_no_tgi_relay(tmp_path):
    log = write_log(tmp_path, "[rank0]: RuntimeError: CUDA error: out of memory\n")
    assert all(r["engine"]["name"] != "tgi" for r in scan_json(log)["runs"])


def test_pip_install_line_and_wrapped_command_make_one_lmdeploy_run(tmp_path):
    run = _run("lmdeploy-161")  # pip's 'Successfully installed lmdeploy-0.7.0.post3', then the command
    assert run["engine"]["name"] == "lmdeploy"
    assert run["engine"]["version"] == "0.7.0.post3"
    # pip's other lines (uninstalling the same release) and another package's install say nothing
    other = write_log(tmp_path, "Successfully uninstalled lmdeploy-0.7.0.post3\nSuccessfully installed vllm-0.6.4\n")
    assert all(r["engine"]["version"] is None for r in scan_json(other)["runs"])


# --- TGI: a 1.x Args dump dates the log before 2.0.0 ------------------------------------------

def _text(path) -> str:
    from click.testing import CliRunner

    from logscan.cli import cli
    return CliRunner().invoke(cli, ["scan", str(path)], catch_exceptions=False).output


@pytest.mark.parametrize("name", ["tgi-168", "tgi-164", "tgi-115"])
def test_pre_2_args_dump_is_read_against_no_ladder(name):
    run = _run(name)  # 'max_input_length' and no 'max_input_tokens' in the launcher's Args
    assert run["engine"]["release_range"] == ["0.8.2", "1.4.5"]
    assert run["engine"]["ladder_version"] is None


def test_pre_2_era_and_platform_are_said_in_text():
    from tests.conftest import FIXTURES
    out = _text(FIXTURES / "tgi" / "tgi-115.log")  # tgi-gaudi on a 1.x launcher
    assert "ladders  none shipped for tgi 0.8.2 .. 1.4.5, platform HPU" in out


def test_2x_args_dump_is_not_dated_before_2(tmp_path):
    log = write_log(tmp_path, '2024-04-20T10:00:00.000000Z  INFO text_generation_launcher: Args { model_id: "x/y", '
                    'revision: None, validation_workers: 2, sharded: None, num_shard: None, quantize: Some(Gptq), '
                    'speculate: None, dtype: None, trust_remote_code: false, max_concurrent_requests: 128, '
                    'max_input_tokens: None, max_input_length: None, max_total_tokens: None }\n')
    run = scan_json(log)["runs"][0]
    assert run["engine"]["ladder_version"] == "3.3.7"
    assert run["config"]["quantization"] == "Gptq"


@pytest.mark.parametrize("name, gpu", [("tgi-162", "NVIDIA H100 80GB HBM3"), ("tgi-166", "NVIDIA GeForce RTX 3090")])
def test_env_block_nvidia_smi_row_names_the_gpu(name, gpu):
    run = _run(name)  # the launcher's --env block: nvidia-smi's first device row
    assert run["config"]["gpu"] == gpu
    assert run["engine"]["platform"] == "CUDA"
