"""Corpus batch 13 (docs/corpus.md, "Batch 13"): the general mechanisms its first sight showed, each
on the real logs (fixtures/<engine>/ vllm-338..343, sglang-303..304, tgi-180..181, lmdeploy-170,
mlc-llm-172..173, trtllm-190..191, llamacpp-231..237, and older fixtures the same shapes reach)
with counter-examples that must stay as they were.

- TurboMind's start lines under LMDeploy's own loggers: the context budget behind 0.12.x
  turbomind.cc's '[TM] ' tag and the converter's 'get N model params' (lmdeploy-170 made no run);
- a terminal width is no terminal width when the "cut" falls between two sentences (lmdeploy-170's
  repeated 147-column transformers warning was read as a hard wrap and four lines were rejoined);
- PyTorch's 'sm_120 is not compatible with the current PyTorch installation' is PyTorch's, trusted on
  any engine's run (trtllm-190: not trusted, listed as not understood);
- a TVM check failure (ICHECK's InternalError) the legacy MLC chat CLI prints is a failed start
  (mlc-llm-173), TVM's survived 'Error: Using LLVM ...' warnings are not;
- llama.cpp's init function before its rename (ggml_init_cublas) and its argument parser's error
  name llama.cpp and its platform (llamacpp-233, 237; llamacpp-102, 110, 209, 213);
- the batch's one stated kernel is read, its precision windows give no kernel and no finding.
"""
from __future__ import annotations

import pytest

from logscan.pipeline import Pipeline
from logscan.packs.loader import default_packs
from logscan.sources import rewrap

from tests.conftest import FIXTURES, finding_codes, one_run, runs_of, scan_json, write_log


def _rules(run_or_doc: dict, line: int) -> set[str]:
    return {e["rule"] for e in run_or_doc["events"] if e["line"] == line}


# -- TurboMind's start lines ----------------------------------------------------------------------

def test_turbomind_start_lines_under_lmdeploy_loggers_make_an_lmdeploy_run():
    doc = scan_json(FIXTURES / "lmdeploy" / "lmdeploy-170.log")
    (run,) = doc["runs"]  # no run at all before
    assert run["engine"]["name"] == "lmdeploy"
    assert (run["first_line"], run["last_line"]) == (7, 12)
    assert "lmdeploy.config.max-context" in _rules(doc, 7)  # '[TM][WARNING] [TM] `max_context_token_num` ...'
    assert "lmdeploy.run.model-params" in _rules(doc, 12)  # '... turbomind.py:246 - get 1197 mod' (cut)
    assert run["config"]["extra"]["lmdeploy_backend"] == "turbomind"


def test_the_model_params_line_joins_the_turbomind_start_it_begins():
    run = one_run("lmdeploy-141")
    assert run["first_line"] == 1  # '2024-04-29 13:01:58,599 - lmdeploy - WARNING - get 771 model params'
    assert run["start_failure"] is not None


@pytest.mark.parametrize("text", [
    "[TM][WARNING] [Gemm2] `max_context_token_num` is not set, default to 16384.\n",  # another tag
    "2024-08-05 05:41:11,482 - lmdeploy - WARNING - get 5 models\n",
    "2024-08-05 05:41:11,482 - lmdeploy - WARNING - forget 723 model params\n",
    "get 723 model params\n",  # no LMDeploy logger prefix: nobody's line
])
def test_other_tags_words_or_unprefixed_lines_are_no_turbomind_start(tmp_path, text):
    doc = scan_json(write_log(tmp_path, text))
    assert not _rules(doc, 1) & {"lmdeploy.config.max-context", "lmdeploy.run.model-params"}


# -- a sentence boundary is no terminal's cut -----------------------------------------------------

def test_a_repeated_warning_as_long_as_the_longest_line_is_no_hard_wrap():
    doc = scan_json(FIXTURES / "lmdeploy" / "lmdeploy-170.log")
    (inp,) = doc["inputs"]
    assert not inp.get("rejoined_lines")  # 4 lines were rejoined at '147 columns'
    assert not inp.get("wrap_width")


def test_the_joiner_keeps_a_line_that_ends_a_sentence_before_a_new_one():
    joins = rewrap.joiner(Pipeline(default_packs()).parser)
    line = "You are using a model of type qwen3_5 to instantiate a model of type . This is not supported."
    assert not joins(line, "The argument `trust_remote_code` is to be used with Auto classes.")
    # a cut inside a sentence, or after a dotted name's dot, is still a cut
    assert joins("INFO 05-06 12:21:08 [awq_marlin.py:117] Detected that the model can run with awq_mar",
                 "lin, however you specified quantization=awq explicitly")
    assert joins("Using MarlinLinearKernel for vllm.model_executor.layers.quantization.",
                 "GPTQMarlinLinearMethod")


# -- PyTorch's arch warning is PyTorch's ----------------------------------------------------------

def test_pytorch_arch_warning_is_trusted_on_a_trtllm_run():
    run = one_run("trtllm-190")
    assert run["engine"]["name"] == "trtllm" and run["engine"]["version"] == "0.19.0"
    (f,) = run["findings"]
    assert (f["code"], f["rule"], f["line"]) == ("UNSUPPORTED_ON_ARCH", "sglang.arch.torch-not-built-for-sm", 2)
    assert run["unexplained"] == []  # 'its finding was not trusted: an error from a sglang rule ...'


@pytest.mark.parametrize("text", [
    "[TensorRT-LLM][WARNING] sm_120 is not compatible with this engine plan\n",
    "[TensorRT-LLM][WARNING] FMHA kernels are not found with these parameters:\n",
])
def test_other_compatibility_words_on_a_trtllm_run_raise_nothing(tmp_path, text):
    runs = runs_of(write_log(tmp_path, "[TensorRT-LLM] TensorRT-LLM version: 0.19.0\n" + text))
    assert [finding_codes(r) for r in runs] == [set()]


# -- a TVM check failure ends the MLC start -------------------------------------------------------

def test_a_tvm_check_failure_of_the_legacy_chat_cli_is_a_failed_start():
    run = one_run("mlc-llm-173")
    sf = run["start_failure"]
    assert sf is not None and sf["line"] == 12 and sf["rule"] == "mlc-llm.run.tvm-check-failed"
    assert finding_codes(run) == set()  # a config check: no arch, no kernel cause


@pytest.mark.parametrize("name", ["mlc-llm-106", "mlc-llm-141"])  # TVM's 'Error: Using LLVM ...' warnings
def test_tvm_llvm_warnings_with_the_same_position_are_no_failed_start(name):
    doc = scan_json(FIXTURES / "mlc-llm" / f"{name}.log")
    assert all(r["start_failure"] is None or r["start_failure"]["rule"] != "mlc-llm.run.tvm-check-failed"
               for r in doc["runs"])


def test_the_uncaught_terminate_keeps_its_own_rule():
    doc = scan_json(FIXTURES / "mlc-llm" / "mlc-llm-151.log")
    assert "mlc-llm.run.tvm-check-failed" not in {e["rule"] for e in doc["events"]}


# -- llama.cpp's older init name and its argument parser ------------------------------------------

@pytest.mark.parametrize("name, first, platform, command", [
    ("llamacpp-233", 2, "CUDA", True),  # 'ggml_init_cublas: found 2 CUDA devices:' (Dec 2023)
    ("llamacpp-209", 2, "CUDA", True),
    ("llamacpp-110", 3, "ROCM", False),  # 'ggml_init_cublas: found 1 ROCm devices:' after a cmake build
])
def test_ggml_init_cublas_names_llamacpp_and_its_platform(name, first, platform, command, tmp_path):
    # 233 and 209 open with the reporter's launch command ('./server -m ...', '.../bin/main -m ...'):
    # llamacpp.config.launch-command (runs31) opens the run there, as vLLM's and SGLang's commands
    # do; the same log without its command shows the ggml_init_cublas line alone names llama.cpp
    # and opens the run at its first line
    run = one_run(name)
    assert run["engine"]["name"] == "llamacpp"
    assert run["first_line"] == (1 if command else first)
    assert run["engine"]["platform"] == platform
    assert ("launch command" in run["engine"]["identified_by"]) == command
    lines = (FIXTURES / "llamacpp" / f"{name}.log").read_text(encoding="utf-8").splitlines(keepends=True)
    bare = tmp_path / f"{name}.log"
    bare.write_text("".join(lines[first - 1:]), encoding="utf-8")
    (run,) = scan_json(bare)["runs"]
    assert (run["engine"]["name"], run["first_line"], run["engine"]["platform"]) == ("llamacpp", 1, platform)
    assert "launch command" not in run["engine"]["identified_by"]


def test_a_rocm_device_capability_stays_no_cuda_compute_capability():
    run = one_run("llamacpp-110")
    assert run["config"]["compute_capability"] is None
    assert run["config"]["extra"]["hip_compute_capability"] == "110"


@pytest.mark.parametrize("name, last, codes", [
    ("llamacpp-237", 10, set()),  # a refused -fa value is no ignored override
    ("llamacpp-102", 5, {"BACKEND_OVERRIDE_IGNORED"}),  # its label's: '--gpu-layers option will be ignored'
])
def test_the_argument_parser_error_is_llamacpp_s(name, last, codes):
    run = one_run(name)
    assert run["engine"]["name"] == "llamacpp" and run["last_line"] == last
    assert finding_codes(run) == codes


@pytest.mark.parametrize("text", [
    "vllm: error: argument --quantization/-q: invalid choice: 'gguf'\n",
    "error while handling argument\n",
])
def test_other_argument_errors_name_no_llamacpp(tmp_path, text):
    assert [r["engine"]["name"] for r in runs_of(write_log(tmp_path, text)) if r["engine"]["name"] == "llamacpp"] == []


# -- the batch's kernel and its precision windows -------------------------------------------------

def test_the_reformatted_fp8_marlin_warning_is_weight_only():
    run = one_run("vllm-338")
    (sel,) = run["selections"]
    assert (sel["kernel"], sel["cost_class"], sel["line"]) == ("Marlin", "weight_only", 10)
    assert finding_codes(run) == {"WEIGHT_ONLY_SUBSTITUTION"}
    assert run["config"]["quantization"] == "fp8" and run["config"]["tensor_parallel_size"] == 2


@pytest.mark.parametrize("name", ["vllm-339", "vllm-340", "vllm-341", "vllm-342", "vllm-343", "sglang-303",
                                  "sglang-304", "tgi-180", "trtllm-191", "llamacpp-231", "llamacpp-232",
                                  "llamacpp-234", "llamacpp-235", "llamacpp-236", "mlc-llm-172"])
def test_the_precision_windows_give_no_kernel_and_no_finding(name):
    engine = name.rsplit("-", 1)[0]
    for run in runs_of(FIXTURES / engine / f"{name}.log"):
        assert run["selections"] == [] and finding_codes(run) == set()
