"""Corpus batch 16b (docs/corpus.md, "Batch 16b"): a first-sight batch of TensorRT-LLM, the llama.cpp family, TGI and
LMDeploy, 1.000 at first sight (kernels 1/1, findings 2 of 2, no false finding). Its two unscored faults were runs
never made for llama.cpp lines the identity rule did not know: llama.cpp's LoRA loader ('llama_lora_adapter_set: ...',
src/llama-adapter.cpp; llama_adapter_lora_* after the 2025 rename) and common/'s functions under the 2026 timestamped
logger ('0.00.213.693 I cmn  common_param: common_params_print_info: build 10644 (d7a207411) ...'). The lines below are
the real logs' lines (corpus-incoming/batch-16b llamacpp-254, -255), verbatim; the counter-examples must stay nobody's.
"""
from __future__ import annotations

import pytest

from tests.conftest import finding_codes, runs_of, write_log

LLAMACPP_254 = (
    "llama_lora_adapter_set: flash_attn is not compatible with LoRA\n"
    "panic: error applying lora from file\n"
)
LLAMACPP_255 = (
    "Aug 27 11:20:56 host-a llama[55755]: 9d47c4933b0afa2cf4a1205a8495a5cf5778cc2282154278db96bd19d418e1a5\n"
    "Aug 27 11:20:56 host-a llama[55781]: 0.00.213.559 W server tools or MCP servers are enabled, using localhost as "
    "default CORS origin (change via --cors-origins)\n"
    "Aug 27 11:20:56 host-a llama[55781]: 0.00.213.693 I cmn  common_param: common_params_print_info: build 10644 "
    "(d7a207411) with GNU 13.3.0 for Linux x86_64\n"
    "Aug 27 11:20:56 host-a llama[55781]: 0.00.213.695 I cmn  common_param: common_params_print_info: verbosity = 4 "
    "(adjust with the `-lv N` CLI arg)\n"
)


def test_lora_loader_line_names_llamacpp_and_raises_nothing(tmp_path):
    runs = runs_of(write_log(tmp_path, LLAMACPP_254))
    assert [r["engine"]["name"] for r in runs] == ["llamacpp"]
    # the refused flash attention stops the load (a panic), it is not a 'forcing off' override
    assert not finding_codes(runs[0])


def test_common_logger_build_line_names_llamacpp(tmp_path):
    runs = runs_of(write_log(tmp_path, LLAMACPP_255))
    assert runs and all(r["engine"]["name"] == "llamacpp" for r in runs)
    assert not any(finding_codes(r) for r in runs)


@pytest.mark.parametrize("text", [
    "llama_lora_adapter = load(path)\n",
    "def common_params_default(): pass\n",
    "Loading safetensors checkpoint shards\n",
])
def test_counter_examples_name_no_engine(tmp_path, text):
    assert not [r for r in runs_of(write_log(tmp_path, text)) if r["engine"]["name"] == "llamacpp"]
