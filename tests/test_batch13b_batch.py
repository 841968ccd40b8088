"""Corpus batch 13b (docs/corpus.md, "Batch 13b"): logs from projects that RUN the engines (KServe, Dynamo,
Ray Serve, Unsloth, MinerU, llm-d, ipex-llm, ollama, Triton's tensorrtllm_backend, MLC's Android apps). Its first
sight scored 1.000 (one kernel to score) but named no engine on five logs; the general mechanisms it showed,
each on the real logs (fixtures/<engine>/ vllm-344..352, sglang-305..306, tgi-182, lmdeploy-171, trtllm-192..193,
llamacpp-238..241, mlc-llm-174..175) with counter-examples that must stay as they were:

- Ollama's own slog messages of its 0.2-0.5 runner era (the ollama_llama_server binary, 'starting llama server',
  'offload to <library>', 'waiting for llama runner ...') name llama.cpp (llamacpp-240 made no run);
- Ollama's flash-attention decision ('enabling flash attention' / 'Flash attention not enabled') is an
  attention fact (llamacpp-238: unread);
- MLC-LLM's Android library and app (ai.mlc.mlcllm / ai.mlc.mlcchat frames) and its 2023-24 ChatModule source
  (cpp/llm_chat.cc) name MLC-LLM (mlc-llm-174 / -175: engine unknown);
- TensorRT-LLM's C++ symbols and libraries in a native backtrace, and Triton loading tensorrtllm_backend's
  tensorrt_llm model, name TensorRT-LLM (trtllm-192 / -193 made no run);
- the batch's one stated kernel (vLLM's B12X NvFp4 MoE oracle line behind a bare 'INFO: ') is read; its
  precision windows give no finding.
"""
from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, finding_codes, one_run, runs_of, scan_json, write_log


def _rules(doc: dict, line: int) -> set[str]:
    return {e["rule"] for e in doc["events"] if e["line"] == line}


# -- Ollama's runner-era lines and its flash-attention decision -----------------------------------

def test_ollamas_0_5_runner_lines_make_a_llamacpp_run():
    run = one_run("llamacpp-240")  # no run at all before
    assert run["engine"]["name"] == "llamacpp"
    assert "Ollama's own server lines" in run["engine"]["identified_by"]
    assert (run["first_line"], run["last_line"]) == (1, 4)  # 'offload to cuda' .. 'waiting for llama runner'


def test_ollamas_flash_attention_decision_is_an_attention_fact():
    run = one_run("llamacpp-238")
    assert [a["backend"] for a in run["attention"]] == ["flash attention (Ollama: enabled)"]
    assert run["first_line"] == 1  # 'model wants flash attention' now opens the run (was line 3)
    assert not finding_codes(run)


def test_a_dropped_flash_attention_stays_a_finding_not_an_enabled_backend():
    run = one_run("llamacpp-180")  # 'flash attention enabled but not supported by gpu' (a Vulkan GPU)
    assert "BACKEND_OVERRIDE_IGNORED" in finding_codes(run)
    assert not any("Ollama: enabled" in (a["backend"] or "") for a in run["attention"])


@pytest.mark.parametrize("text", [
    "Enabling flash attention\n",  # a diffusers script's print, no slog msg="..."
    "starting llama server on port 8080\n",
    'SERVER_NAMES = ("ollama", "ollama_llama_server")\n',
    "offload to cuda\n",
])
def test_the_words_without_ollamas_slog_message_are_nobodys(tmp_path, text):
    assert runs_of(write_log(tmp_path, text)) == []


# -- MLC-LLM's Android frames and its legacy ChatModule source ------------------------------------

@pytest.mark.parametrize("name, line", [("mlc-llm-174", 6), ("mlc-llm-175", 9)])
def test_mlc_android_frames_and_the_chat_module_source_name_mlc_llm(name, line):
    run = one_run(name)  # engine unknown before
    assert run["engine"]["name"] == "mlc-llm"
    assert run["engine"]["identified_by"].startswith(f"line {line}:")


def test_tvms_own_java_frames_name_no_engine(tmp_path):
    text = ("org.apache.tvm.Base$TVMError: InternalError: Check failed: x\n"
            "\tat org.apache.tvm.Base.checkCall(Base.java:173)\n"
            "\tat org.apache.tvm.Function.invoke(Function.java:130)\n"
            "Process: ai.mlc.mlcengineexample, PID: 9656\n")
    assert all(r["engine"]["name"] != "mlc-llm" for r in runs_of(write_log(tmp_path, text)))


# -- TensorRT-LLM's C++ symbols and Triton's tensorrt_llm model -----------------------------------

def test_tensorrt_llm_cpp_frames_make_a_trtllm_run():
    run = one_run("trtllm-192")  # no run at all before
    assert run["engine"]["name"] == "trtllm"
    assert "TensorRT-LLM's C++ runtime" in run["engine"]["identified_by"]
    assert not finding_codes(run)


def test_triton_loading_the_tensorrt_llm_model_makes_a_trtllm_run():
    doc = scan_json(FIXTURES / "trtllm" / "trtllm-193.log")
    (run,) = doc["runs"]  # no run at all before
    assert run["engine"]["name"] == "trtllm"
    assert "trtllm.identity.triton-model" in _rules(doc, 20)  # 'loading: llm1_tensorrt_llm:1'
    assert not _rules(doc, 19) & {"trtllm.identity.triton-model"}  # 'loading: llm1_preprocessing:1'


@pytest.mark.parametrize("text", [
    "I0304 23:16:52.726675 92 model_lifecycle.cc:469] loading: vllm_model:1\n",
    "7       0x7fb4f02123f2 /opt/tritonserver/backends/python/libtriton_python.so(+0x193f2) [0x7fb4f02123f2]\n",
    "see the tensorrt_llm namespace docs\n",
])
def test_other_triton_models_and_backends_are_no_tensorrt_llm(tmp_path, text):
    assert all(r["engine"]["name"] != "trtllm" for r in runs_of(write_log(tmp_path, text)))


# -- the batch's one stated kernel, and its precision windows ------------------------------------

def test_the_b12x_oracle_line_behind_a_bare_info_prefix_is_read():
    run = one_run("vllm-352")
    (sel,) = run["selections"]
    assert (sel["kernel"], sel["cost_class"], sel["family"]) == ("B12X", "native", "MoE (NvFp4)")
    assert not finding_codes(run)


@pytest.mark.parametrize("name", [
    "vllm-344", "vllm-345", "vllm-346", "vllm-347", "vllm-348", "vllm-349", "vllm-350", "vllm-351",
    "sglang-305", "sglang-306", "tgi-182", "lmdeploy-171", "trtllm-192", "trtllm-193",
    "llamacpp-238", "llamacpp-239", "llamacpp-240", "llamacpp-241", "mlc-llm-174", "mlc-llm-175",
])
def test_the_precision_windows_give_no_finding(name):
    engine = name.rsplit("-", 1)[0]
    for run in runs_of(FIXTURES / engine / f"{name}.log"):
        assert not finding_codes(run), name
