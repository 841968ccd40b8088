"""Corpus batch 6 (docs/corpus.md): the general mechanisms its first sight showed missing, each on
the real log of the batch (fixtures/) and with a counter-example that must stay as it was."""
from __future__ import annotations

from pathlib import Path

from packaging.version import Version

from tests.conftest import runs_of, scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures"
VLLM = "(EngineCore_DP0 pid=7) INFO 09-20 10:00:00 [__init__.py:1] "
VLLM_WARN = "(EngineCore_DP0 pid=7) WARNING 09-20 10:00:00 [__init__.py:1] "
SGL = "[2026-02-06 20:49:42] "


def _codes(run: dict) -> list[str]:
    return [f["code"] for f in run["findings"]]


# --- a column-aligned paste pads after the kernel name ---------------------------------------

def test_a_selection_padded_after_its_name_is_still_read():
    # vllm-191: the reporter's two-arm table aligns 'for NVFP4 GEMM' after names of two lengths
    (run,) = runs_of(FIX / "vllm" / "vllm-191.log")
    kernels = {s["kernel"]: s["cost_class"] for s in run["selections"]}
    assert kernels == {"FlashInferCuteDslNvFp4W4A16LinearKernel": "weight_only",
                       "FlashInferCutlassNvFp4LinearKernel": "native"}


def test_padding_is_spaces_only_not_other_words(tmp_path):
    log = write_log(tmp_path, VLLM + "Using FlashInferCutlassNvFp4LinearKernel and then MarlinNvFp4LinearKernel for NVFP4 GEMM\n")
    assert all(s["kernel"] != "FlashInferCutlassNvFp4LinearKernel" for r in runs_of(log) for s in r["selections"])


# --- a package that only media inputs need is not a kernel package ---------------------------

def test_a_missing_audio_decoder_is_no_optional_kernel_package():
    (run,) = runs_of(FIX / "sglang" / "sglang-190.log")
    assert "OPTIONAL_PACKAGE_MISSING" not in _codes(run)


def test_a_missing_kernel_package_is_still_raised(tmp_path):
    log = write_log(tmp_path, VLLM_WARN + "Failed to import DeepGemm kernels.\n")
    (run,) = runs_of(log)
    assert _codes(run) == ["OPTIONAL_PACKAGE_MISSING"]


# --- quantization method names carry hyphens ------------------------------------------------

def test_auto_round_is_read_whole():
    (run,) = runs_of(FIX / "sglang" / "sglang-190.log")
    assert run["config"]["quantization"] == "auto-round"


def test_a_plain_method_name_is_unchanged(tmp_path):
    log = write_log(tmp_path, SGL + "awq quantization is not fully optimized yet. The speed can be slower than non-quantized models.\n")
    (run,) = runs_of(log)
    assert run["config"]["quantization"] == "awq"


# --- SGLang's registries skipping a model module is no kernel event --------------------------

def test_skipped_model_modules_are_understood():
    (run,) = runs_of(FIX / "sglang" / "sglang-192.log")
    assert run["unexplained"] == [] and run["findings"] == []


def test_a_module_skipped_for_a_kernel_package_is_left_to_the_package_rules(tmp_path):
    log = write_log(tmp_path, SGL + "Ignore import error when loading sglang.srt.models.deepseek_v2: No module named 'deep_gemm'\n")
    rules = {e["rule"] for e in scan_json(log)["events"]}
    assert "sglang.run.module-import-skipped" not in rules


# --- a config-file device name cut by a wrapped paste sets no GPU ---------------------------

def test_a_cut_device_name_sets_no_gpu():
    (run,) = runs_of(FIX / "sglang" / "sglang-197.log")
    assert run["config"]["gpu"] is None


def test_a_whole_device_name_is_still_read():
    runs = runs_of(FIX / "sglang" / "sglang-001.log")
    assert runs[0]["config"]["gpu"] == "NVIDIA_A100-SXM4-80GB"


# --- SGLang 0.5.10+'s weight-load line states the checkpoint's quantization -----------------

def test_the_0510_load_weight_line_is_read_with_its_quant_config():
    report = scan_json(FIX / "sglang" / "sglang-194.log")
    loads = [e for e in report["events"] if e["rule"] == "sglang.run.load-weight"]
    assert [e["groups"]["quant"] for e in loads] == ["fp8", "fp8"]
    assert report["runs"][0]["unexplained"] == []


def test_the_old_load_weight_line_is_unchanged(tmp_path):
    log = write_log(tmp_path, "[2025-02-05 15:49:20 TP6] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=104.22 GB\n")
    (ev,) = [e for e in scan_json(log)["events"] if e["rule"] == "sglang.run.load-weight"]
    assert ev["groups"]["dtype"] == "torch.bfloat16" and ev["groups"].get("quant") is None


# --- an unset MoE runner backend is a default with an era ---------------------------------

def test_an_unset_moe_runner_backend_dates_the_run():
    (run,) = runs_of(FIX / "sglang" / "sglang-191.log")
    lo, hi = run["engine"]["release_range"]
    assert Version(lo) >= Version("0.5.3.post1") and Version(hi) <= Version("0.5.8.post1")
    assert all("MOE_RUNNER_BACKEND" not in u["message"] for u in run["unexplained"])


def test_the_speculative_default_keeps_its_grammar_reading(tmp_path):
    # '<option> is not initialized, using <value>' is the generic shape, read with its parts and
    # no era of the 0.5.3-0.5.8 line
    log = write_log(tmp_path, SGL + "SPECULATIVE_MOE_RUNNER_BACKEND is not initialized, using auto backend\n")
    report = scan_json(log)
    (ev,) = report["events"]
    assert ev["rule"] == "sglang.grammar.not-initialized" and ev["groups"]["value"] == "auto"
    rng = report["runs"][0]["engine"]["release_range"]
    assert rng is None or Version(rng[1]) >= Version("0.5.23")
