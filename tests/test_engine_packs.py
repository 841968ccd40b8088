"""TGI, LMDeploy and MLC-LLM packs, and the TensorRT-LLM / llama.cpp shapes of issue 16.

Real logs (fixtures/<engine>/<engine>-1NN.log, labelled before logscan read them) carry most
checks; single lines quoted from the engines' sources (shared/reference/other-engines/*.md,
templates-other.jsonl) cover shapes no bundled real log shows.
"""
from __future__ import annotations

import json

import pytest

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _scan_text(tmp_path, text, name="x.log"):
    p = tmp_path / name
    p.write_text(text)
    return scan_inputs([str(p)])


def _scan(path):
    return scan_inputs([str(path)])


@pytest.mark.parametrize("log,engine", [
    ("tgi/tgi-101.log", "tgi"), ("tgi/tgi-102.log", "tgi"),
    ("lmdeploy/lmdeploy-101.log", "lmdeploy"), ("lmdeploy/lmdeploy-102.log", "lmdeploy"),
    ("mlc-llm/mlc-llm-101.log", "mlc-llm"), ("mlc-llm/mlc-llm-102.log", "mlc-llm"),
    ("trtllm/trtllm-106.log", "trtllm"), ("trtllm/trtllm-107.log", "trtllm"),
    ("llamacpp/llamacpp-107.log", "llamacpp"), ("llamacpp/llamacpp-108.log", "llamacpp"),
    ("llamacpp/llamacpp-109.log", "llamacpp"), ("lmdeploy/lmdeploy-103.log", "lmdeploy"),
])
def test_engine_is_identified_on_every_real_log(log, engine):
    runs = _scan(FIXTURES / log).runs
    assert runs and {r.engine.name for r in runs} == {engine}


def test_tgi_states_that_the_quantization_is_not_logged():
    run = _scan(FIXTURES / "tgi" / "tgi-101.log").runs[0]
    src = run.config.extra["quantization_source"]
    assert src.startswith("inferred from the Marlin FP8 line") and "config.json" in src
    assert run.config.quantization == "fp8"


def test_tgi_cli_quantize_is_logged_and_not_flagged_as_inferred(tmp_path):
    run = _scan_text(tmp_path, '2024-01-17T19:54:02.802403Z  INFO text_generation_launcher: Args { model_id: "TheBloke/Llama-2-7B-GPTQ", '
                               'revision: None, quantize: Some(Gptq), dtype: None }\n'
                               "2024-01-17T19:54:09.100000Z  INFO text_generation_launcher: Using exllama kernels v2\n").runs[0]
    assert run.config.quantization == "Gptq"
    assert run.config.extra["quantization_source"].startswith("logged")


def test_tgi_json_output_mode_reads_like_the_compact_lines(tmp_path):
    line = {"timestamp": "2024-09-01T10:00:00.123456Z", "level": "INFO",
            "fields": {"message": "GPU supports FP8, but using Marlin FP8 kernel for better performance"},
            "target": "text_generation_launcher"}
    run = _scan_text(tmp_path, json.dumps(line) + "\n").runs[0]
    assert run.engine.name == "tgi"
    assert [(s.kernel, s.cost_class.value) for s in run.selections] == [("Marlin FP8", "weight_only")]


def test_tgi_false_alarm_unknown_method_is_not_a_failure(tmp_path):
    # models/__init__.py (v2.4.1+) warns 'Unknown quantization method gptq' for every method but
    # compressed-tensors: a false alarm (tgi.md section 2 step 1)
    text = "2024-10-01T10:00:00.000000Z  WARN text_generation_launcher: Unknown quantization method gptq\n"
    assert not [f for r in _scan_text(tmp_path, text).runs for f in r.findings]


def test_lmdeploy_no_feasible_kernel_names_the_arch(tmp_path):
    text = "[TM][FATAL][0816.10:00:00.000000][gemm.cu:341] No feasible kernel found for the problem: sm75_f16_e4m3b128_f16\n"
    run = _scan_text(tmp_path, text).runs[0]
    assert run.engine.name == "lmdeploy" and run.config.compute_capability == "75"
    f = {x.code: x for x in run.findings}["KERNEL_NOT_FOUND"]
    assert f.kernel == "TurboMind GEMM (sm75_f16_e4m3b128_f16)"


def test_lmdeploy_old_turbomind_format_is_the_older_era(tmp_path):
    text = "[TM][WARNING] Invalid logger level TM_LOG_LEVEL=REQUEST. Ignore the environment variable and use a default logging level.\n"
    run = _scan_text(tmp_path, text).runs[0]
    assert run.engine.name == "lmdeploy" and run.engine.version_source == "inferred"
    assert "<0.13.0" in run.engine.version_evidence


def test_lmdeploy_fallback_to_pytorch_is_an_engine_switch():
    run = _scan(FIXTURES / "lmdeploy" / "lmdeploy-101.log").runs[0]
    assert run.config.extra["lmdeploy_backend"] == "pytorch"
    assert [f.code for f in run.findings] == ["BACKEND_OVERRIDE_IGNORED"]


def test_mlc_walks_the_compile_ladder_when_scheme_and_arch_are_known(tmp_path):
    head = ("[2025-02-08 12:57:09] INFO auto_target.py:334: Generating code for CUDA architecture: sm_90a\n"
            "Compiling with arguments:\n")
    q4 = head + "  --quantization    GroupQuantize(name='q4f16_1', kind='group-quant', group_size=32)\n"
    run = _scan_text(tmp_path, q4, "q4.log").runs[0]
    assert run.engine.name == "mlc-llm" and run.config.extra["mlc_target_arch"] == "sm_90a"
    (sel,) = run.selections
    assert (sel.kernel, sel.cost_class.value, sel.observed) == ("GroupQuantize dequantize-matmul (TIR)", "portable", False)
    # FP8 per-tensor on sm_86: CUTLASS (sm_90a / sm_100a) and cuBLAS FP8 (sm89+) refuse, TVM's own
    # FP8 lowering is unknown: no guess
    fp8 = head.replace("sm_90a", "sm_86") + "  --quantization    PerTensorQuantize(name='e4m3_e4m3_f16', kind='per-tensor-quant')\n"
    run = _scan_text(tmp_path, fp8, "fp8.log").runs[0]
    assert run.config.quantization == "e4m3_e4m3_f16" and run.selections == []


def test_trtllm_build_plugin_lines_name_the_gemm_plugin():
    run = _scan(FIXTURES / "trtllm" / "trtllm-107.log").runs[0]
    assert [s.kernel for s in run.selections] == ["weight_only_groupwise_quant_matmul_plugin"]
    assert run.findings == []  # None/False/auto plugin lines select nothing


@pytest.mark.parametrize("line,code", [
    ("  what():  [TensorRT-LLM][ERROR] Assertion failed: W4A(fp)8 kernel is unsupported on pre-Hopper architectures!", "UNSUPPORTED_ON_ARCH"),
    ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: W4A(fp)8 kernel is unsupported on pre-Ada (sm<89) architectures!", "UNSUPPORTED_ON_ARCH"),
    ("  what():  [TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA cannot be enabled except on Ada or Hopper Arch.", "UNSUPPORTED_ON_ARCH"),
    ("RuntimeError: [TensorRT-LLM Error][CutlassFp4GemmRunner][GEMM Dispatch] Arch unsupported for CUTLASS FP4 GEMM", "UNSUPPORTED_ON_ARCH"),
    ("  what():  [TensorRT-LLM][ERROR] Assertion failed: No valid weight only groupwise GEMM tactic(It is usually caused by the failure to execute all candidate configurations of the CUTLASS kernel)", "KERNEL_NOT_FOUND"),
])
def test_trtllm_tllm_exception_wordings(tmp_path, line, code):
    run = _scan_text(tmp_path, line + "\n").runs[0]
    assert run.engine.name == "trtllm" and [f.code for f in run.findings] == [code]


def test_trtllm_runtime_only_info_lines_make_a_run(tmp_path):
    text = ("[TensorRT-LLM][INFO] Engine version 0.9.0 found in the config file, assuming engine(s) built by new builder API.\n"
            "[TensorRT-LLM][INFO] Loaded engine size: 5446 MiB\n")
    runs = _scan_text(tmp_path, text).runs
    assert [r.engine.name for r in runs] == ["trtllm"]


def test_llamacpp_rocm_device_line_sets_the_platform(tmp_path):
    text = ("ggml_cuda_init: found 1 ROCm devices (Total VRAM: 196592 MiB):\n"
            "  Device 0: AMD Instinct MI300X, gfx942:sramecc+:xnack- (0x942), VMM: no, Wave Size: 64, VRAM: 196592 MiB\n"
            "build: 6448 (24a6734d) with cc (Ubuntu 14.2.0) for x86_64-linux-gnu\n")
    run = _scan_text(tmp_path, text).runs[0]
    assert run.engine.name == "llamacpp" and run.engine.platform == "ROCM"
    assert run.config.gpu == "AMD Instinct MI300X" and run.config.extra["gfx_arch"] == "gfx942"


def test_llamacpp_cmake_build_log_is_llamacpp_not_sglang(tmp_path):
    text = ("-- ggml version: 0.9.4\n-- Including CUDA backend\n"
            "[ 12%] Building CUDA object ggml/src/ggml-cuda/CMakeFiles/ggml-cuda.dir/template-instances/mmq-instance-mxfp4.cu.o\n"
            "ptxas /tmp/tmpxft_00083097_00000000-6_mmq-instance-mxfp4.ptx, line 121826; error   : Instruction 'mma with block scale' not supported on .target 'sm_120'\n")
    runs = _scan_text(tmp_path, text).runs
    assert {r.engine.name for r in runs} == {"llamacpp"}
    assert [f.code for r in runs for f in r.findings] == ["UNSUPPORTED_ON_ARCH"]


def test_tgi_pretty_args_dump_gives_the_cli_quantize(tmp_path):
    # TGI 2.x-3.x: tracing::info!("{:#?}", args), one field a line (tgi.md section 1)
    text = ('2024-06-17T13:11:09.543717Z  INFO text_generation_launcher: Args {\n'
            '    model_id: "TheBloke/Llama-2-7B-GPTQ",\n'
            '    revision: None,\n'
            '    quantize: Some(\n'
            '        Gptq,\n'
            '    ),\n'
            '    dtype: Some(\n'
            '        BFloat16,\n'
            '    ),\n'
            '}\n'
            '2024-06-17T13:11:20.100000Z  INFO text_generation_launcher: Using GPTQ-Marlin kernels\n')
    run = _scan_text(tmp_path, text).runs[0]
    assert run.engine.name == "tgi" and run.config.model == "TheBloke/Llama-2-7B-GPTQ"
    assert run.config.quantization == "Gptq" and run.config.extra["quantization_source"].startswith("logged")
    assert [s.kernel for s in run.selections] == ["GPTQMarlinWeightsLoader"]


def test_tgi_walks_its_fp8_ladder_for_a_given_gpu(tmp_path):
    # TGI never logs the GPU; with --gpu and the shard's auto-selected method, the FP8 rung is
    # inferred: CC 8.x (8.9 included) -> Marlin FP8, W8A16 (layers/fp8.py get_fp8_linear)
    p = tmp_path / "t.log"
    p.write_text("2024-09-01T10:00:00.000000Z  INFO text_generation_launcher: Auto selecting quantization method fp8\n")
    (sel,) = scan_inputs([str(p)], gpu="L40S").runs[0].selections
    assert (sel.kernel, sel.cost_class.value, sel.observed) == ("GPTQMarlinFP8Linear", "weight_only", False)
    assert scan_inputs([str(p)], gpu="H100").runs[0].selections == []  # CUTLASS FP8 unknown above torch: no guess


@pytest.mark.parametrize("text,engine", [
    # an MLC-LLM compile traceback: no logger prefix at all, only its package path names it
    ('Traceback (most recent call last):\n'
     '  File "/home/user/mlc-llm/python/mlc_llm/interface/compile.py", line 121, in _compile\n'
     '    args.model.quantize[args.quantization.kind](model, quant_config)\n'
     'tvm.error.InternalError: Check failed: (MatchDType(value->dtype)) is false:\n', "mlc-llm"),
    ('Traceback (most recent call last):\n'
     '  File "/usr/local/lib/python3.10/dist-packages/lmdeploy/turbomind/turbomind.py", line 120, in __init__\n'
     'RuntimeError: [TM][FATAL] CUDA error: no kernel image is available for execution on the device\n', "lmdeploy"),
    ('  File "/opt/conda/lib/python3.11/site-packages/text_generation_server/layers/fp8.py", line 99, in get_fp8_linear\n'
     'RuntimeError: Using quantized Marlin models requires a GPU with CUDA capability 8.0 or later.\n', "tgi"),
])
def test_engine_from_a_bare_traceback(tmp_path, text, engine):
    runs = _scan_text(tmp_path, text).runs
    assert runs and {r.engine.name for r in runs} == {engine}


def test_lmdeploy_borrows_the_generic_triton_ptxas_reading(tmp_path):
    # PyTorch engine on an RTX 5090 with a Triton whose ptxas predates sm_120 (lmdeploy#3410 shape)
    text = ("2025-04-09 10:00:00,000 - lmdeploy - ERROR - base.py:53 - RuntimeError: Internal Triton PTX codegen "
            "error: ptxas fatal : Value 'sm_120' is not defined for option 'gpu-name'\n")
    run = _scan_text(tmp_path, text).runs[0]
    assert run.engine.name == "lmdeploy" and [f.code for f in run.findings] == ["UNSUPPORTED_ON_ARCH"]


def test_selection_grammar_of_tgi_and_lmdeploy_reads_new_wordings(tmp_path):
    text = ("2024-09-01T10:00:00.000000Z  INFO text_generation_launcher: Using machete kernels\n"
            "2024-09-01T10:00:01.000000Z  INFO text_generation_launcher: Using wombat kernels\n"
            "2026-04-01 16:16:59,225 - lmdeploy - DEBUG - w8a8_modules.py:30 - Build LinearW8A8 with TritonLinearW8A8Impl.\n")
    tgi, lmd = _scan_text(tmp_path, text).runs
    # a name the lexicon knows becomes a selection; an unknown one ('wombat') does not
    assert [(s.kernel, s.cost_class.value) for s in tgi.selections] == [("machete", "native")]
    assert [(s.family, s.kernel, s.cost_class.value) for s in lmd.selections] == [("LinearW8A8", "TritonLinearW8A8Impl", "portable")]
