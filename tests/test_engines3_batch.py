"""The engines3 batch of issue 16 (third round): what its first sight showed, read by mechanism.

First sight (docs/corpus.md, labels committed at d37a7bb before logscan ran): two logs gave no run
(a Gaudi shard traceback relayed under the launcher prefix; a bare TensorRT warning), three were
``unknown`` (LMDeploy's logger prefix without its timestamp, its bare fallback sentence, TGI's
``Runtime environment:`` block), one TGI launch split into ten runs (one per ``Starting shard``),
and the platform was named on 2 of 28 logs, never HPU on the Gaudi ones. Each test reads a real
log of the batch where one shows the shape; a synthetic line only where no free thread had it.
"""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

BATCH = ([("tgi", f"tgi-{n}") for n in range(108, 117)] + [("lmdeploy", f"lmdeploy-{n}") for n in range(110, 115)]
         + [("mlc-llm", f"mlc-llm-{n}") for n in range(108, 115)] + [("trtllm", f"trtllm-{n}") for n in range(116, 122)]
         + [("llamacpp", f"llamacpp-{n}") for n in range(116, 121)])


def _runs(engine, stem):
    return scan_inputs([str(FIXTURES / engine / f"{stem}.log")]).runs


def _scan_text(tmp_path, text):
    p = tmp_path / "x.log"
    p.write_text(text)
    return scan_inputs([str(p)]).runs


@pytest.mark.parametrize("engine,stem", BATCH, ids=[s for _, s in BATCH])
def test_the_batch_names_its_engine_in_one_run(engine, stem):
    runs = _runs(engine, stem)
    assert [r.engine.name for r in runs] == [engine]


@pytest.mark.parametrize("stem", ["tgi-107", "tgi-113", "tgi-114", "tgi-115"])
def test_a_gaudi_tgi_log_is_on_the_hpu_branch(stem):
    # tgi-113: SynapseAI's synStatus; tgi-114: habana_frameworks frames; tgi-107 / tgi-115: docker --runtime=habana
    (run,) = _runs("tgi", stem)
    assert run.engine.platform == "HPU" and run.engine.platform_source == "logged"


@pytest.mark.parametrize("engine,stem,platform", [
    ("tgi", "tgi-112", "CUDA"),  # nvidia-smi's header in the launcher's --env block
    ("trtllm", "trtllm-120", "CUDA"),  # the builder's 'Compute capability: (7, 5)'
    ("llamacpp", "llamacpp-120", "ROCM"),  # llamafile's hipcc --offload-arch=gfx1032 ... ggml-cuda.cu
])
def test_the_platform_comes_from_the_logs_own_lines(engine, stem, platform):
    (run,) = _runs(engine, stem)
    assert run.engine.platform == platform


def test_a_cuda_tgi_log_is_not_read_as_gaudi():
    # counter-case: a CUDA TGI launch (tgi-116: docker --gpus all, --quantize awq) names no HPU
    (run,) = _runs("tgi", "tgi-116")
    assert run.engine.platform != "HPU"


def test_the_gaudi_branch_is_walked_when_the_log_says_hpu(tmp_path):
    # no free thread showed a quantized Gaudi launch: the docker line of tgi-107 / tgi-115 with --quantize fp8
    args = ('2025-06-01T10:00:00.000000Z  INFO text_generation_launcher: Args { model_id: "m", revision: None, '
            'quantize: Some(Fp8), dtype: None }\n')
    gaudi = "root@h:~# docker run --runtime=habana -e HABANA_VISIBLE_DEVICES=all tgi_gaudi --model-id m --quantize fp8\n" + args
    (run,) = _scan_text(tmp_path, gaudi)
    assert [(s.kernel, s.observed, s.cost_class.value) for s in run.selections] == [
        ("Fp8Linear (HPU fp8_gemm_v2)", False, "native")]
    assert "HPU" in run.selections[0].evidence
    # counter-case: the same launch with no Gaudi line is CUDA with an unknown GPU: no walk, nothing claimed
    (run,) = _scan_text(tmp_path, "root@h:~# docker run --gpus all tgi --model-id m --quantize fp8\n" + args)
    assert run.selections == []


def test_the_gaudi_server_start_line_gives_quantization_and_platform(tmp_path):
    # backends/gaudi/server/text_generation_server/cli.py:102 (TGI 3.3.7), relayed by the launcher
    (run,) = _scan_text(tmp_path, "2025-06-01T10:00:00.000000Z  INFO text_generation_launcher: quantize=fp8 kv_cache_dtype=fp8_e4m3fn\n")
    assert run.engine.platform == "HPU" and run.config.quantization == "fp8"


def test_one_tgi_launch_is_one_run_however_many_shards_start():
    (run,) = _runs("tgi", "tgi-108")  # Sharding model on 8 processes, download, 8 x Starting shard
    assert (run.first_line, run.last_line) == (1, 14)


def test_a_second_tgi_launch_after_a_finding_is_a_second_run(tmp_path):
    # counter-case of the above: a start marker after substance (a stated finding) still opens a run
    text = ("2024-02-06T18:48:34.589125Z  INFO download: text_generation_launcher: Starting download process.\n"
            "2024-02-06T18:48:37.486233Z ERROR text_generation_launcher: exllamav2_kernels not installed.\n"
            "2024-02-06T18:50:34.589125Z  INFO download: text_generation_launcher: Starting download process.\n")
    assert len(_scan_text(tmp_path, text)) == 2


def test_a_relayed_shard_traceback_under_the_launcher_prefix_is_a_tgi_run():
    # tgi-113: every line carries the TGI prefix, none is read by a rule but the identity text of a frame
    (run,) = _runs("tgi", "tgi-113")
    assert run.engine.name == "tgi" and run.engine.identified_by


def test_the_sharding_exllama_swap_selects_nothing():
    # tgi-108: TGI 1.2-1.3 print it for every sharded model; no kernel, no finding, no invented quantization
    (run,) = _runs("tgi", "tgi-108")
    assert run.selections == [] and run.findings == [] and run.config.quantization is None
    assert run.config.extra["exllama_version"] == "v1"


def test_tgi_imports_vllm_so_vllm_chatter_before_its_lines_is_not_a_vllm_run(tmp_path):
    # pack.toml imports = ["vllm"] (server/.../layers/attention/rocm.py 'import vllm._custom_ops', 3.3.7 ROCm)
    text = ("INFO 10-05 15:58:10 __init__.py:190] Automatically detected platform rocm.\n"
            "2024-10-05T15:59:21.578641Z  INFO shard-manager: text_generation_launcher: Shard ready in 90.2s rank=7\n")
    runs = _scan_text(tmp_path, text)
    assert [(r.engine.name, r.engine.platform) for r in runs] == [("tgi", "ROCM")]


@pytest.mark.parametrize("stem", ["lmdeploy-110", "lmdeploy-111"])
def test_lmdeploy_sentences_without_timestamp_name_the_engine(stem):
    (run,) = _runs("lmdeploy", stem)
    assert run.engine.name == "lmdeploy"


def test_turbomind_runtime_error_wording_is_the_arch_refusal():
    # lmdeploy-113: '[TM][ERROR] CUDA runtime error: no kernel image ...' (<= 0.12 wording; 0.13 says 'CUDA error:')
    (run,) = _runs("lmdeploy", "lmdeploy-113")
    assert [f.code for f in run.findings] == ["UNSUPPORTED_ON_ARCH"]


def test_a_trtllm_version_ends_where_a_joined_timestamp_begins():
    (run,) = _runs("trtllm", "trtllm-116")
    assert run.engine.version == "0.8.0.dev2024013000"


def test_a_tensorrt_warning_alone_is_a_trtllm_build_run():
    (run,) = _runs("trtllm", "trtllm-117")  # '[TRT] [W] TensorRT was linked against cuDNN 8.9.6 but loaded cuDNN 8.9.4'
    assert run.engine.name == "trtllm" and not run.findings


def test_no_valid_weight_only_groupwise_gemm_tactic_is_kernel_not_found():
    (run,) = _runs("trtllm", "trtllm-121")
    assert "KERNEL_NOT_FOUND" in {f.code for f in run.findings}


def test_mlc_llm_model_is_the_folder_not_its_config_file():
    (run,) = _runs("mlc-llm", "mlc-llm-108")
    assert run.config.model == "llm/Mistral-Large-Instruct-2407"


def test_a_defaulted_tvm_target_is_not_the_devices_compute_capability():
    # mlc-llm-113 (engines3b): TVM could not detect CUDA and defaulted to -arch=sm_50; the GPU is unknown
    (run,) = _runs("mlc-llm", "mlc-llm-113")
    assert run.config.compute_capability.startswith("unknown")
    assert run.selections == [] and run.findings == []


def test_mlc_llm_hf_download_names_the_model_and_its_scheme():
    (run,) = _runs("mlc-llm", "mlc-llm-111")  # 'Downloading model from HuggingFace: HF://mlc-ai/phi-2-q4f16_1-MLC'
    assert run.config.quantization == "q4f16_1" and run.engine.platform == "CUDA"
