"""The engines2 batch of issue 16 (second round): what its first sight showed, read by mechanism.

The batch's real logs (fixtures/<engine>/<engine>-1NN.log from tgi-103, lmdeploy-104, mlc-llm-103,
trtllm-108, llamacpp-110) carry the checks where a free thread showed the shape; the threads that
showed the TGI ExLlama swap and MLC-LLM's FlashInfer probe are reserved for evaluation, so those
two shapes are checked on the single lines the engines' sources print (TGI 1.2-1.4
server/text_generation_server/utils/layers.py; mlc_llm/interface/compiler_flags.py).
"""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

BATCH = [
    ("tgi", "tgi-103"), ("tgi", "tgi-104"), ("tgi", "tgi-105"), ("tgi", "tgi-106"), ("tgi", "tgi-107"),
    ("lmdeploy", "lmdeploy-104"), ("lmdeploy", "lmdeploy-105"), ("lmdeploy", "lmdeploy-106"), ("lmdeploy", "lmdeploy-107"),
    ("mlc-llm", "mlc-llm-103"), ("mlc-llm", "mlc-llm-104"), ("mlc-llm", "mlc-llm-105"), ("mlc-llm", "mlc-llm-106"),
    ("mlc-llm", "mlc-llm-107"),
    ("trtllm", "trtllm-108"), ("trtllm", "trtllm-109"), ("trtllm", "trtllm-110"), ("trtllm", "trtllm-111"),
    ("trtllm", "trtllm-112"), ("trtllm", "trtllm-113"), ("trtllm", "trtllm-114"), ("trtllm", "trtllm-115"),
    ("lmdeploy", "lmdeploy-108"), ("lmdeploy", "lmdeploy-109"),
    ("llamacpp", "llamacpp-110"), ("llamacpp", "llamacpp-112"), ("llamacpp", "llamacpp-113"), ("llamacpp", "llamacpp-114"),
    ("llamacpp", "llamacpp-115"),
]


def _scan_text(tmp_path, text):
    p = tmp_path / "x.log"
    p.write_text(text)
    return scan_inputs([str(p)])


@pytest.mark.parametrize("engine,stem", BATCH, ids=[s for _, s in BATCH])
def test_the_batch_names_its_engine(engine, stem):
    # llamacpp-111 (rocBLAS lines only, no llama.cpp text) is left out: 'unknown' is right there
    runs = scan_inputs([str(FIXTURES / engine / f"{stem}.log")]).runs
    assert runs and {r.engine.name for r in runs} == {engine}


def test_a_quoted_mlc_line_above_its_command_is_a_run_of_mlc_llm():
    # mlc-llm-105: the issue quotes 'Error caught when creating FlashInfer PagedKVCache: ...' (line 1),
    # then the compile command (line 3). A launch command after a run that said something opens the
    # next run (docs/run-splitting.md, "A launch command after a failure"): the log alone cannot tell
    # the quoted line came from the command below it, so there are two runs. Each is MLC-LLM's: the
    # quoted sentence is MLC-LLM's own (compiler_pass/dispatch_kv_cache_creation.py), and the run it
    # makes keeps the missing-FlashInfer finding
    runs = scan_inputs([str(FIXTURES / "mlc-llm" / "mlc-llm-105.log")]).runs
    assert [(r.first_line, r.engine.name) for r in runs] == [(1, "mlc-llm"), (3, "mlc-llm")]
    assert "KV-cache dispatch" in runs[0].engine.identified_by
    assert [f.code for f in runs[0].findings] == ["OPTIONAL_PACKAGE_MISSING"] and not runs[1].findings


def test_a_tgi_log_of_lifecycle_lines_only_is_a_tgi_run_not_silence(tmp_path):
    text = ("2023-12-05T23:28:45.573979Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0\n"
            "2023-12-05T23:28:55.583113Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1\n")
    runs = _scan_text(tmp_path, text).runs
    assert [r.engine.name for r in runs] == ["tgi"]
    assert not runs[0].findings


def test_tgi_exllama_v2_swapped_for_v1_is_a_process_fact_not_a_selection(tmp_path):
    # TGI 1.2-1.3 print the swap at import for every sharded model, GPTQ or not (tgi-108, engines3
    # batch): it names no kernel that runs and replaces no option the user set
    text = ("2023-12-05T23:28:40.426961Z  WARN text_generation_launcher: Disabling exllama v2 and using v1 instead "
            "because there are issues when sharding\n")
    run = _scan_text(tmp_path, text).runs[0]
    assert run.selections == [] and run.findings == []
    assert run.config.extra["exllama_version"] == "v1"
    assert run.config.quantization is None


def test_tgi_exllama_desc_act_stays_a_selection_without_a_finding(tmp_path):
    # counter-case of the swap above: desc_act disables ExLlama for the portable Triton kernel, no choice replaced
    run = _scan_text(tmp_path, "2024-01-01T00:00:00.000000Z  WARN text_generation_launcher: Disabling exllama because desc_act=True\n").runs[0]
    assert [s.kernel for s in run.selections] == ["Triton QuantLinear"] and not run.findings


def test_mlc_flashinfer_arch_probe_is_an_enabled_backend_turned_off(tmp_path):
    text = ("flashinfer is not supported on CUDA arch < 80\n"
            "  --quantization    GroupQuantize(name='q4f16_1', kind='group-quant', group_size=32, quantize_dtype='int4')\n")
    run = _scan_text(tmp_path, text).runs[0]
    assert run.engine.name == "mlc-llm"
    assert [f.code for f in run.findings] == ["BACKEND_OVERRIDE_IGNORED"]
    assert run.config.quantization == "q4f16_1"


@pytest.mark.parametrize("line,kernel", [
    ("[08/01/2024-10:53:42] [TRT-LLM] [I] Set gemm_plugin to fp8.", "gemm_plugin"),
    ("[08/01/2024-10:53:42] [TRT-LLM] [I] Set gemm_plugin to nvfp4.", "gemm_plugin"),
    ("[08/01/2024-10:53:42] [TRT-LLM] [I] Set gemm_plugin to float16.", None),
    ("[08/01/2024-10:53:42] [TRT-LLM] [I] Set gemm_plugin to auto.", None),
])
def test_trtllm_gemm_plugin_is_a_kernel_only_at_a_quantized_dtype(tmp_path, line, kernel):
    run = _scan_text(tmp_path, "[TensorRT-LLM] TensorRT-LLM version: 0.11.0\n" + line + "\n").runs[0]
    assert [s.kernel for s in run.selections] == ([kernel] if kernel else [])


def test_a_cmake_ccache_hint_is_not_a_missing_kernel_package():
    run = scan_inputs([str(FIXTURES / "llamacpp" / "llamacpp-115.log")]).runs[0]
    assert run.engine.name == "llamacpp" and not run.findings


def test_lmdeploy_missing_turbomind_is_a_missing_package_and_a_pytorch_run():
    run = scan_inputs([str(FIXTURES / "lmdeploy" / "lmdeploy-106.log")]).runs[0]
    assert [f.code for f in run.findings] == ["OPTIONAL_PACKAGE_MISSING"]
    assert run.config.extra["lmdeploy_backend"] == "pytorch"


def test_a_warning_line_states_a_warning_and_a_later_fatal_line_makes_it_an_error():
    # trtllm-108: only the build's '[TensorRT-LLM][WARNING] Have not found any valid GEMM config'
    # lines, the engine goes on with a default tactic: KERNEL_NOT_FOUND, but as a warning
    f108 = scan_inputs([str(FIXTURES / "trtllm" / "trtllm-108.log")]).runs[0].findings
    assert [(f.code, f.severity.value) for f in f108] == [("KERNEL_NOT_FOUND", "warning")]
    # trtllm-102: the same warnings, then the fatal 'Config is not set': the error and its line win
    f102 = scan_inputs([str(FIXTURES / "trtllm" / "trtllm-102.log")]).runs[0].findings
    assert [(f.code, f.severity.value, f.rule) for f in f102] == [
        ("KERNEL_NOT_FOUND", "error", "trtllm.limits.gemm-config-not-set")]
    assert not [r for f in f102 for r in f.reasons if r.startswith("severity lowered")]
