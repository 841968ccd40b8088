"""Corpus batch 12 (docs/corpus.md, "Batch 12"): the general mechanisms its first sight showed, each
on the real logs (fixtures/<engine>/ vllm-330..337, sglang-301..302, tgi-174..179, lmdeploy-168..169,
mlc-llm-171, trtllm-189, llamacpp-226..230) with counter-examples that must stay as they were.

- an MoE method states its kernels as the second clause of a detection, with the format and 'MOE'
  as the object ('Detected Blackwell GPUs, using FlashInfer TensorRT-LLM kernels for FP8 MOE.',
  vllm#25895): ``vllm.moe.detected-using-kernels``, placed on the 0.11 FP8 MoE if-chain through the
  FlashinferMoeBackend values (tools/ladder_aliases.toml; vllm-330);
- a ``docker run`` of vLLM's image names vLLM, as ``vllm serve`` does (``names_engine`` on
  ``vllm.config.docker-image-command``; vllm-331 was an engine-``unknown`` run);
- LMDeploy's engine-config repr states the TP size (``lmdeploy.config.input-backend``; lmdeploy-169);
- the batch's refusals keep their findings and its precision windows raise none.
"""
from __future__ import annotations

import pytest

from tests.conftest import finding_codes, one_run, runs_of, write_log

PREFIX = "(EngineCore_DP0 pid=101213) (Worker_TP3 pid=101225) INFO 09-29 10:14:46 [fp8.py:454] "


# -- an MoE kernel stated after a detection clause ------------------------------------------------

def test_the_detected_blackwell_line_selects_flashinfer_trtllm_for_fp8_moe_natively():
    run = one_run("vllm-330")
    (sel,) = run["selections"]
    assert sel["kernel"] == "FlashInfer TensorRT-LLM"
    assert sel["family"] == "MoE (FP8)"
    assert sel["cost_class"] == "native"
    assert sel["rule"] == "vllm.moe.detected-using-kernels"
    assert run["unexplained"] == []  # the sentence was listed as an unread kernel sentence
    assert finding_codes(run) == set()  # 'DeepGemm disabled: FlashInfer MOE is enabled.' is no override


def test_the_fp8_moe_flashinfer_values_sit_on_the_fp8_moe_ladder(tmp_path):
    (run,) = runs_of(write_log(tmp_path, PREFIX + "Detected Blackwell GPUs, using FlashInfer CUTLASS kernels for FP8 MOE.\n"))
    (sel,) = run["selections"]
    assert sel["kernel"] == "FlashInfer CUTLASS" and sel["cost_class"] == "native"
    # on the FP8 MoE if-chain (0.11.2's get_fp8_moe_backend), not a name no ladder holds
    assert sel["ladder"]["kernel_class"] == "FLASHINFER_CUTLASS" and sel["ladder"]["role"] == "fp8 moe"


def test_the_real_line_is_rung_one_of_the_fp8_moe_if_chain():
    (sel,) = one_run("vllm-330")["selections"]
    assert (sel["ladder"]["kernel_class"], sel["ladder"]["rung"], sel["ladder"]["fell"]) == ("FLASHINFER_TRTLLM", 1, 0)


@pytest.mark.parametrize("text", [
    "Detected Blackwell GPUs, not using FlashInfer TensorRT-LLM kernels for FP8 MOE.",
    "Detected Blackwell GPUs, using FlashInfer TensorRT-LLM kernels for FP8 MOE is not supported",
    "DeepGemm disabled: FlashInfer MOE is enabled.",
])
def test_a_negated_or_unfinished_detection_clause_selects_nothing(tmp_path, text):
    runs = runs_of(write_log(tmp_path, PREFIX + text + "\n"))
    assert [s for r in runs for s in r["selections"]] == []


def test_the_nvfp4_method_line_keeps_its_own_rule(tmp_path):
    # the older 'Using FlashInfer {value} kernels for <method>.' stays with vllm.moe.using-kernels
    (run,) = runs_of(write_log(tmp_path, PREFIX + "Using FlashInfer TensorRT-LLM kernels for ModelOptNvFp4FusedMoE.\n"))
    (sel,) = run["selections"]
    assert sel["rule"] == "vllm.moe.using-kernels" and sel["family"] == "MoE"


# -- a docker run of vLLM's image names the engine ------------------------------------------------

def test_a_vllm_image_docker_command_names_vllm_and_keeps_the_arch_refusal():
    run = one_run("vllm-331")
    assert run["engine"]["name"] == "vllm"
    assert run["config"]["model"] == "/models/Qwen3.8-Flash-Next-FP8"
    assert run["config"]["tensor_parallel_size"] == 4
    assert finding_codes(run) == {"UNSUPPORTED_ON_ARCH"}


@pytest.mark.parametrize("text", [
    "I run the vllm/vllm-openai:v0.10.1 image with --quantization fp8\nValueError: boom\n",
    "docker pull vllm/vllm-openai:latest\nValueError: boom\n",
])
def test_an_image_named_in_prose_or_a_pull_names_no_engine(tmp_path, text):
    assert all(r["engine"]["name"] != "vllm" for r in runs_of(write_log(tmp_path, text)))


def test_a_tgi_docker_command_is_not_read_as_vllm(tmp_path):
    log = write_log(tmp_path, "docker run --gpus all ghcr.io/huggingface/text-generation-inference:2.0 --model-id x\n"
                              "ValueError: boom\n")
    assert all(r["engine"]["name"] != "vllm" for r in runs_of(log))


# -- LMDeploy's engine config repr states the TP size ---------------------------------------------

def test_the_turbomind_engine_config_repr_gives_quantization_and_tp():
    run = one_run("lmdeploy-169")
    assert run["config"]["quantization"] == "awq"
    assert run["config"]["tensor_parallel_size"] == 2


def test_an_engine_config_without_tp_sets_no_tp(tmp_path):
    log = write_log(tmp_path, "2024-04-30 08:57:04,150 - lmdeploy - INFO - input backend=turbomind, "
                              "backend_config=TurbomindEngineConfig(model_name=None, model_format='awq', "
                              "session_len=None, max_prefill_token_num=8192)\n")
    (run,) = runs_of(log)
    assert run["config"]["quantization"] == "awq"
    assert run["config"]["tensor_parallel_size"] is None


# -- refusals keep their findings; precision windows raise none -----------------------------------

@pytest.mark.parametrize("name,codes", [
    ("tgi-178", {"UNSUPPORTED_ON_ARCH"}),        # TGI's AWQ GEMM: 'no kernel image' on T4
    ("llamacpp-226", {"UNSUPPORTED_ON_ARCH"}),   # llamafile: 'no device code compatible with CUDA arch 600'
    ("llamacpp-229", {"BACKEND_OVERRIDE_IGNORED"}),  # -fa forced off (attn_soft_cap)
])
def test_the_batch_refusals_keep_their_findings(name, codes):
    assert finding_codes(one_run(name)) == codes


@pytest.mark.parametrize("name", [
    "vllm-332", "vllm-333", "vllm-334", "vllm-335", "vllm-336", "vllm-337", "sglang-301",
    "tgi-174", "tgi-175", "tgi-176", "tgi-177", "tgi-179", "lmdeploy-169", "mlc-llm-171",
    "trtllm-189", "llamacpp-227", "llamacpp-228", "llamacpp-230",
])
def test_the_precision_windows_raise_no_finding_and_select_nothing(name):
    engine = name.rsplit("-", 1)[0]
    from tests.conftest import FIXTURES

    for run in runs_of(FIXTURES / engine / f"{name}.log"):
        assert finding_codes(run) == set(), name
        assert run["selections"] == [], name
