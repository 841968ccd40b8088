"""Corpus batch 15 (docs/corpus.md, "Batch 15"): a first-sight batch of the five engines besides vLLM and SGLang
(TensorRT-LLM, TGI, MLC-LLM, LMDeploy, llama.cpp with Ollama / llama-bench / ik_llama.cpp / node-llama-cpp) and one
trtexec log (engine null). First sight 1.000 on every engine (one scored finding, met) with the engine right or
`unknown` on 21 of 21; the unscored gaps it showed are general line shapes, each tested on the real log
(fixtures/<engine>/ trtllm-194..197, tgi-184..187, mlc-llm-176..177, lmdeploy-172..173, llamacpp-244..251,
other-138) with counter-examples that must stay:

- llama-bench's table footer names the build commit first ('build: 26df32543 (8808)', llama-bench.cpp
  print_footer): the release b8808 (llamacpp-244); the start line's 'build: 6448 (24a6734d) with cc' order stays
  the start rule's;
- Ollama's scheduler line 'msg="error loading llama server" error="llama runner process has terminated: ..."'
  (server/sched.go) is a failed start, whatever level= says and even without it (llamacpp-248, a Jetson cuBLAS
  abort), and names Ollama on its own;
- the legacy mlc_chat_cli's 'Use MLC config / model weights / model library' paths carry the quantization scheme
  (q3f16_0, q4f16_1) and the library's device (-vulkan.dll) (mlc-llm-176, and the older -143 / -169 / -173);
- the TGI image alone on a continuation line of a multi-line docker run names the release (tgi-186, 3.3.4,
  behind a Markdown '> ');
- ggml's test-backend-ops lines ('  OP(params): not supported [Vulkan0]' / OK / FAIL) are llama.cpp's tool: a run
  named llamacpp with no finding (llamacpp-251 had no recognised line at all).
"""
from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, finding_codes, one_run, runs_of, write_log


# -- llama-bench's footer ------------------------------------------------------------------------------

def test_llama_bench_footer_names_the_build():
    run = one_run("llamacpp-244")  # sm_120 NVFP4 llama-bench table, footer 'build: 26df32543 (8808)'
    assert run["engine"]["version"] == "b8808"
    assert run["config"]["compute_capability"] == "120"
    assert not finding_codes(run)


@pytest.mark.parametrize("line, version", [
    ("build: 26df32543 (8808)\n", "b8808"),
    ("build: 6448 (24a6734d) with cc (Ubuntu 14.2.0-4ubuntu2~24.04) 14.2.0 for x86_64-linux-gnu\n", "b6448"),
])
def test_both_orders_of_the_build_line(tmp_path, line, version):
    log = write_log(tmp_path, "ggml_cuda_init: found 1 CUDA devices:\n"
                              "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n" + line)
    assert [r["engine"]["version"] for r in runs_of(log)] == [version]


# -- Ollama's failed load ------------------------------------------------------------------------------

def test_ollamas_error_loading_llama_server_is_a_failed_start():
    run = one_run("llamacpp-248")  # the line from 'source=' on: no time=, no level=
    assert run["engine"]["name"] == "llamacpp"
    assert run["start_failure"] and run["start_failure"]["rule"] == "llamacpp.run.ollama-load-failed"
    assert not finding_codes(run)  # a cuBLAS execution failure is no arch refusal


def test_the_failed_load_line_alone_names_ollama(tmp_path):
    log = write_log(tmp_path, 'time=2024-08-28T18:43:24.644Z level=ERROR source=sched.go:456 msg="error loading llama '
                              'server" error="llama runner process has terminated: exit status 127"\n')
    (run,) = runs_of(log)
    assert run["engine"]["name"] == "llamacpp" and run["start_failure"]


def test_waiting_for_the_runner_is_no_failure(tmp_path):
    log = write_log(tmp_path, 'time=2024-12-15T01:34:58.907+09:00 level=INFO source=server.go:555 msg="waiting for '
                              'llama runner to start responding"\n')
    (run,) = runs_of(log)
    assert run["engine"]["name"] == "llamacpp" and not run["start_failure"]


# -- the legacy MLC chat CLI's file names --------------------------------------------------------------

@pytest.mark.parametrize("name, quantization, platform", [
    ("mlc-llm-176", "q3f16_0", "VULKAN"),   # batch 15: vicuna-v1-7b-q3f16_0-vulkan.dll, Vulkan OOM on a GTX 1650
    ("mlc-llm-143", "q3f16_0", None),       # config / weights only (no library line in the window)
    ("mlc-llm-169", "q4f16_1", "VULKAN"),
    ("mlc-llm-173", "q4f16_1", "VULKAN"),
])
def test_legacy_cli_paths_name_the_scheme_and_the_librarys_device(name, quantization, platform):
    run = one_run(name)
    assert run["engine"]["name"] == "mlc-llm"
    assert run["config"]["quantization"] == quantization
    assert run["engine"]["platform"] == platform


def test_a_library_path_without_scheme_or_device_sets_nothing(tmp_path):
    log = write_log(tmp_path, 'Use MLC config: "/opt/m/mlc-chat-config.json"\n'
                              'Use model library: "/opt/m/custom-model.so"\n')
    (run,) = runs_of(log)
    assert run["config"]["quantization"] is None and run["engine"]["platform"] is None


# -- the TGI image on a continuation line --------------------------------------------------------------

def test_tgi_image_on_a_continuation_line_names_the_release():
    run = one_run("tgi-186")  # '>   ghcr.io/huggingface/text-generation-inference:3.3.4 \'
    assert run["engine"]["name"] == "tgi"
    assert run["engine"]["version"] == "3.3.4"


def test_a_latest_tag_on_a_continuation_line_names_no_release(tmp_path):
    log = write_log(tmp_path, "docker run --rm \\\n  ghcr.io/huggingface/text-generation-inference:latest \\\n"
                              "  --model-id m\n"
                              "2024-06-01T14:23:31.232062Z ERROR text_generation_launcher: Method Warmup encountered an error.\n")
    assert [r["engine"]["version"] for r in runs_of(log)] == [None]


# -- the batch as a whole -------------------------------------------------------------------------------

def test_the_one_scored_finding_is_the_fp8_block_scaling_sm_refusal():
    run = one_run("trtllm-195")  # 'Unsupported SM version for FP8 block scaling GEMM' (RTX PRO 6000, thread)
    assert finding_codes(run) == {"UNSUPPORTED_ON_ARCH"}


@pytest.mark.parametrize("name", ["trtllm-194", "trtllm-196", "trtllm-197", "tgi-184", "tgi-185", "tgi-186", "tgi-187",
                                  "mlc-llm-176", "mlc-llm-177", "lmdeploy-172", "lmdeploy-173", "llamacpp-244",
                                  "llamacpp-245", "llamacpp-246", "llamacpp-247", "llamacpp-248", "llamacpp-249",
                                  "llamacpp-250"])
def test_the_batchs_windows_raise_no_finding_and_name_their_engine(name):
    run = one_run(name)
    assert run["engine"]["name"] == name.rsplit("-", 1)[0]
    assert not finding_codes(run) and not run["selections"]


def test_test_backend_ops_lines_name_llamacpp_and_refuse_nothing():
    run = one_run("llamacpp-251")  # ten 'FLASH_ATTN_EXT(...): not supported [Vulkan0]' lines (Snapdragon X)
    assert run["engine"]["name"] == "llamacpp"
    assert not finding_codes(run) and not run["start_failure"] and not run["unexplained"]


def test_a_not_supported_error_sentence_is_no_test_backend_ops_line(tmp_path):
    log = write_log(tmp_path, "ValueError: FLASH_ATTN(head_dim=512): not supported\n")
    assert all(r["engine"]["name"] != "llamacpp" for r in runs_of(log))


def test_trtexec_fp8_refusal_names_no_engine():
    runs = runs_of(FIXTURES / "other" / "other-138.log")
    assert [r["engine"]["name"] for r in runs] in ([], ["unknown"])
    assert not any(r["selections"] for r in runs)
