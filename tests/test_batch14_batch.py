"""Corpus batch 14 (docs/corpus.md, "Batch 14"): log files committed to public repositories (a DGX Spark GB10
benchmark repository's vLLM 0.25.1 / SGLang runs, NGC vLLM 26.01 on a GB10, ROCm AITER, vLLM 0.10-0.15 behind raw
ANSI escapes, SGLang on Ascend, a TGI fork, llama.cpp on Metal). First sight 0.833: every labelled kernel read,
two false WEIGHT_ONLY_SUBSTITUTION findings. The general mechanisms it showed, each on the real logs
(fixtures/<engine>/ vllm-353..364, sglang-307..308, tgi-183, llamacpp-242..243), with counter-examples that must stay:

- vLLM's FP4 Marlin sentence under quantization=mxfp4 (gpt-oss: MXFP4 experts, BF16 activations) is printed by
  prepare_moe_fp4_layer_for_marlin for the MoE's own weight-only path (rule ``checkpoint_own``): no substitution
  (vllm-358); under an NVFP4 W4A4 checkpoint it stays WEIGHT_ONLY_SUBSTITUTION;
- a Marlin name that spells its weight-only scheme (CompressedTensorsWNA16MarlinMoEMethod) is native whatever
  container format the run names (sglang-307: the lexicon read 'compressed' as an activation-quantized scheme);
- vLLM's unquantized MoE oracle names spaced backends ('Using FlashInfer CUTLASS Unquantized MoE backend'):
  the unquantized MoE's FlashInfer CUTLASS rung, not a quantized kernel of that whole name (vllm-353 / -354);
- vLLM's orderly-shutdown lines ('[shutdown] EngineCore: exiting busy loop', '[shutdown] API server: ...') say
  the engine was past its start: AsyncLLM's EngineDeadError after a SIGTERM is no failed start (vllm-357);
- vLLM 0.13-0.15 print the attention candidates as a tuple ('... out of potential backends: ('TRITON_ATTN',)'):
  an attention choice (vllm-358, vllm-361..363 had none).
"""
from __future__ import annotations

import pytest

from logscan.analysis.lexicon import classify
from logscan.packs.loader import default_packs
from tests.conftest import FIXTURES, finding_codes, one_run, runs_of, write_log


def _fx(name: str):
    return FIXTURES / name.rsplit("-", 1)[0] / f"{name}.log"


def _quant_run(name: str, quantization: str) -> dict:
    runs = [r for r in runs_of(_fx(name)) if r["config"]["quantization"] == quantization]
    assert len(runs) == 1, [(r["first_line"], r["config"]["quantization"]) for r in runs_of(_fx(name))]
    return runs[0]


def _sel(run: dict) -> list[tuple]:
    return [(s["family"], s["kernel"], s["cost_class"]) for s in run["selections"]]


# -- the FP4 Marlin sentence under a gpt-oss MXFP4 checkpoint ---------------------------------------

def test_gpt_oss_fp4_marlin_sentence_is_the_moes_own_weight_only_path():
    run = _quant_run("vllm-358", "mxfp4")  # NGC vLLM 0.13.0+nv26.01 on a GB10
    assert "WEIGHT_ONLY_SUBSTITUTION" not in finding_codes(run)
    assert _sel(run) == [("MoE (MXFP4, gpt-oss)", "Marlin", "native")]  # no 'linear (NVFP4)' Marlin


_CONFIG = ("(EngineCore_DP0 pid=165) INFO 02-05 00:05:44 [core.py:93] Initializing a V1 LLM engine (v0.13.0) with "
           "config: model='m', speculative_config=None, tokenizer='m', dtype=torch.bfloat16, quantization={q}, "
           "enforce_eager=False, kv_cache_dtype=auto, device_config=cuda\n")
_FP4 = ("(EngineCore_DP0 pid=165) WARNING 02-05 00:06:11 [marlin_utils_fp4.py:226] Your GPU does not have native "
        "support for FP4 computation but FP4 quantization is being used. Weight-only FP4 compression will be used "
        "leveraging the Marlin kernel. This may degrade performance for compute-heavy workloads.\n")


@pytest.mark.parametrize("quantization, substituted", [
    ("mxfp4", False),          # gpt-oss: weight-only MXFP4 experts
    ("modelopt_fp4", True),    # NVFP4 W4A4: Marlin replaces the FP4 path
    ("compressed-tensors", True),
])
def test_the_fp4_sentence_is_a_substitution_unless_the_checkpoint_is_gpt_oss_mxfp4(tmp_path, quantization, substituted):
    run = runs_of(write_log(tmp_path, _CONFIG.format(q=quantization) + _FP4))[-1]
    assert run["config"]["quantization"] == quantization
    assert ("WEIGHT_ONLY_SUBSTITUTION" in finding_codes(run)) is substituted


def test_an_nvfp4_checkpoints_fp4_sentence_stays_a_substitution():
    assert "WEIGHT_ONLY_SUBSTITUTION" in finding_codes(one_run("vllm-005"))


# -- a Marlin name that spells its weight-only scheme ----------------------------------------------

def test_sglangs_wna16_marlin_moe_method_is_native_under_compressed_tensors():
    run = one_run("sglang-307")  # the window states no quantization: only the family names the container
    assert not finding_codes(run)
    assert ("MoE (compressed-tensors)", "CompressedTensorsWNA16MarlinMoEMethod", "native") in _sel(run)


@pytest.mark.parametrize("name, scheme, cost", [
    ("CompressedTensorsWNA16MarlinMoEMethod", " MoE (compressed-tensors)", "native"),
    ("MarlinFp8Experts", "fp8 MoE", "weight_only"),           # an activation-quantized checkpoint on Marlin
    ("MarlinExperts", "compressed-tensors MoE", "weight_only"),  # the name spells no scheme: the run's text decides
])
def test_the_name_decides_before_the_runs_scheme_text(name, scheme, cost):
    assert classify(default_packs().lexicon, name, scheme).cost_class == cost


# -- vLLM's unquantized MoE oracle with spaced backend names ---------------------------------------

@pytest.mark.parametrize("name, line", [("vllm-353", 36), ("vllm-354", 49)])
def test_the_unquantized_moe_oracle_line_is_the_unquantized_rung(name, line):
    sels = [s for r in runs_of(_fx(name)) for s in r["selections"] if s["line"] == line]
    assert [(s["family"], s["kernel"], s["ladder"]["role"]) for s in sels] == [
        ("MoE (Unquantized)", "FlashInfer CUTLASS", "unquantized moe")]


def test_the_nvfp4_moe_oracle_line_beside_it_is_unchanged():
    sels = [s for r in runs_of(_fx("vllm-353")) for s in r["selections"] if s["line"] == 35]
    assert [(s["family"], s["kernel"], s["cost_class"]) for s in sels] == [("MoE (NvFp4)", "FLASHINFER_CUTLASS", "native")]


# -- vLLM's orderly shutdown ------------------------------------------------------------------------

def test_a_teardown_traceback_after_the_shutdown_lines_is_no_failed_start():
    run = [r for r in runs_of(_fx("vllm-357")) if r["selections"]][0]
    # was a failed start at the AsyncLLM traceback (line 50), then a failure WHILE SERVING: it is the
    # SIGTERM's teardown, so the run was served and stopped (docs/lifecycle.md "Stopped")
    assert run["start_failure"] is None and run.get("serving_failure") is None
    assert (run["stopped"]["signal"], run["stopped"]["line"], run["stopped"]["served"],
            run["stopped"]["teardown_line"]) == ("SIGTERM", 37, True, 50)


def test_a_traceback_without_the_shutdown_lines_stays_a_failed_start(tmp_path):
    text = ("(EngineCore pid=30070) INFO 08-01 23:20:03 [gpu_model_runner.py:5209] Starting to load model m...\n"
            "(EngineCore pid=30070) INFO 08-01 23:37:28 [core.py:1214] [shutdown] EngineCore: trigger received signal=SIGTERM\n"
            "(EngineCore pid=30070) ERROR 08-01 23:37:28 [core.py:900] Traceback (most recent call last):\n"
            "(EngineCore pid=30070) ERROR 08-01 23:37:28 [core.py:900] RuntimeError: CUDA error: out of memory\n")
    run = runs_of(write_log(tmp_path, text))[-1]
    assert run["start_failure"] is not None and run.get("serving_failure") is None


# -- vLLM 0.13-0.15's tuple of attention candidates -------------------------------------------------

@pytest.mark.parametrize("name, backend", [("vllm-358", "TRITON_ATTN"), ("vllm-361", "FLASH_ATTN"),
                                           ("vllm-362", "FLASH_ATTN"), ("vllm-363", "FLASH_ATTN")])
def test_a_tuple_of_attention_candidates_is_an_attention_choice(name, backend):
    assert backend in [a["backend"] for r in runs_of(_fx(name)) for a in r["attention"]]


# -- the batch's precision windows -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["vllm-353", "vllm-354", "vllm-355", "vllm-356", "vllm-359", "vllm-360", "vllm-361",
                                  "vllm-363", "vllm-364", "sglang-308", "tgi-183", "llamacpp-242", "llamacpp-243"])
def test_the_batchs_windows_raise_no_finding(name):
    assert not [c for r in runs_of(_fx(name)) for c in finding_codes(r)]


def test_forcing_awq_stays_slow_quant_method():
    assert {c for r in runs_of(_fx("vllm-362")) for c in finding_codes(r)} == {"SLOW_QUANT_METHOD"}
