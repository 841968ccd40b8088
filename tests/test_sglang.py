"""SGLang: line formats by era, the server_args dump, inference from args + GPU, hard failures,
engine detection in mixed files, and the template-coverage targets of issue 4."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from logscan.analysis.server_args import parse_repr
from logscan.analysis.infer import server_args_config
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from logscan.sources.prefix import PrefixParser
from tests.conftest import FIXTURES, SHARED, corpus_params

SYNTH = FIXTURES / "sglang" / "synthetic-modelopt-nvfp4-hopper.log"


def _scan_text(tmp_path: Path, text: str, name: str = "x.log", **kw):
    p = tmp_path / name
    p.write_text(text)
    return scan_inputs([str(p)], **kw)


def _dump_line() -> str:
    return next(ln for ln in SYNTH.read_text().splitlines() if "server_args=" in ln)


# -- server_args ------------------------------------------------------------------------
def test_dataclass_repr_is_read_without_eval():
    text = ("ServerArgs(model_path='m/x, y', tp_size=4, quantization='modelopt_fp4', "
            "json_model_override_args='{\"a\": [1, 2]}', lora_paths=None, enable_ep_moe=True, "
            "dtype=torch.bfloat16, hook=__import__('os').system('false'), nested=Foo(a=(1, 2), b=[3]))")
    p = parse_repr(text)
    assert p.shape == "dataclass" and not p.truncated
    assert p.values["model_path"] == "m/x, y"  # a comma inside quotes does not split
    assert p.values["tp_size"] == 4 and p.values["lora_paths"] is None
    assert p.values["json_model_override_args"] == '{"a": [1, 2]}'
    assert p.values["dtype"] == "torch.bfloat16"  # not a literal: kept as text
    assert p.values["hook"] == "__import__('os').system('false')"  # never evaluated
    assert p.values["nested"] == "Foo(a=(1, 2), b=[3])"


def test_dict_repr_of_0_5_23_and_typed_fields():
    sa = server_args_config(_dump_line().split("server_args=", 1)[1], 7)
    assert sa.shape == "dict" and sa.line == 7 and not sa.truncated
    assert (sa.quantization, sa.fp4_gemm_runner_backend, sa.moe_runner_backend) == ("modelopt_fp4", "auto", "auto")
    assert (sa.tp_size, sa.dp_size, sa.ep_size, sa.pp_size) == (2, 1, 1, 1)
    assert sa.attention_backend == "fa3" and sa.model_path == "nvidia/Llama-3.3-70B-Instruct-FP4"
    assert sa.other["watermark_secret"] == "'<redacted>'"  # unknown fields kept as printed
    assert sa.other["mem_fraction_static"] == "0.85"


def test_truncated_dump_keeps_complete_pairs():
    text = _dump_line().split("server_args=", 1)[1]
    cut = text[: text.index("'moe_runner_backend'") + 25]
    sa = server_args_config(cut, 1)
    assert sa.truncated
    assert sa.fp4_gemm_runner_backend == "auto" and sa.quantization == "modelopt_fp4"
    assert sa.moe_runner_backend != "auto"  # the cut value is not taken for a full one


@pytest.mark.parametrize("bad", ["", "ServerArgs(", "{", "no dump here", "ServerArgs(x=')", "{'a': [1, 2"])
def test_broken_dumps_never_raise(bad):
    p = parse_repr(bad)
    assert isinstance(p.values, dict)


def test_0_4_flags_are_typed():
    sa = server_args_config("ServerArgs(model_path='m', enable_deepep_moe=True, enable_ep_moe=False, ep_size=8)", 1)
    assert sa.flags == ["enable_deepep_moe"] and sa.ep_size == 8


# -- prefixes by era ----------------------------------------------------------------------
@pytest.mark.parametrize("line,fmt,rank", [
    ("[2026-01-10 09:12:03 DP1 PP0 TP1 EP1] x", "sglang-ranks-pp-first", "DP1 PP0 TP1 EP1"),
    ("[2025-06-01 10:00:00 TP1 PP0] x", "sglang-ranks-tp-then-pp", "TP1 PP0"),
    ("[2025-12-26 23:02:39 DP0 TP0 EP0] x", "sglang-ranks-ep", "DP0 TP0 EP0"),
    ("[2026-01-10 09:12:03.417 TP1] x", "sglang-ms", "TP1"),
    ("[2025-03-01 10:00:00] x", "sglang-bracketed", None),
])
def test_rank_order_tells_the_era(line, fmt, rank):
    rec = PrefixParser(default_packs()).parse("t", 1, line)
    assert (rec.prefix_format, rec.rank, rec.message) == (fmt, rank, "x")


def test_pp_before_tp_dates_the_log(tmp_path):
    rep = _scan_text(tmp_path, "[2026-01-10 09:12:03 PP0 TP1] Detected nvfp4 checkpoint.\n")
    eng = rep.runs[0].engine
    assert eng.name == "sglang" and eng.version_source == "inferred" and "0.5.23" in eng.version_evidence


# -- inference: server args + GPU ----------------------------------------------------------
def _no_tell(tmp_path: Path) -> str:
    text = "".join(ln + "\n" for ln in SYNTH.read_text().splitlines() if "Attention backend" not in ln)
    return text


def _fp4(rep):
    return [s for s in rep.runs[0].selections if "NVFP4" in s.family]


def test_silent_marlin_on_hopper_is_inferred_not_observed():
    rep = scan_inputs([str(SYNTH)])
    (sel,) = _fp4(rep)
    assert sel.kernel == "FP4 Marlin (W4A16)" and sel.cost_class.value == "weight_only"
    assert sel.observed is False and "fa3" in sel.reasoning and "sm80_to_sm90" in sel.reasoning
    f = {f.code: f for f in rep.runs[0].findings}["WEIGHT_ONLY_SUBSTITUTION"]
    assert f.inferred


def test_no_gpu_no_inference(tmp_path):
    rep = _scan_text(tmp_path, _no_tell(tmp_path))
    assert _fp4(rep) == []


@pytest.mark.parametrize("gpu,cuda,kernel,cost", [
    ("H100", None, "FP4 Marlin (W4A16)", "weight_only"),
    ("A100", None, "FP4 Marlin (W4A16)", "weight_only"),
    ("B200", "12.8", "FlashInfer mm_fp4 (cute-dsl)", "native"),
    ("sm120", "12.9", "FlashInfer mm_fp4 (cutlass)", "native"),
    # a B200 with a cu126 torch is not Blackwell to SGLang: no native path, the start raises
    ("B200", "12.6", None, None),
])
def test_cuda_version_windows_decide(tmp_path, gpu, cuda, kernel, cost):
    rep = _scan_text(tmp_path, _no_tell(tmp_path), gpu=gpu, cuda=cuda)
    sels = _fp4(rep)
    if kernel is None:
        assert sels == []
    else:
        (sel,) = sels
        assert (sel.kernel, sel.cost_class.value, sel.observed) == (kernel, cost, False)
        assert "--gpu" in sel.reasoning
        assert ("assumed 12.8" in sel.reasoning) == (cuda is None and gpu.startswith("B"))


def test_explicit_backend_in_args_beats_the_ladder(tmp_path):
    text = _no_tell(tmp_path).replace("'fp4_gemm_runner_backend': 'auto'", "'fp4_gemm_runner_backend': 'marlin'")
    rep = _scan_text(tmp_path, text, gpu="B200", cuda="12.8")
    (sel,) = _fp4(rep)
    assert sel.kernel == "FP4 Marlin (W4A16)" and "fp4_gemm_runner_backend='marlin'" in sel.reasoning


def test_cli_gpu_option(tmp_path):
    p = tmp_path / "x.log"
    p.write_text(_no_tell(tmp_path))
    exe = Path(sys.executable).parent / "logscan"
    out = subprocess.run([str(exe), "scan", "--format", "json", "--gpu", "H100", str(p)], capture_output=True)
    doc = json.loads(out.stdout)
    assert any(s["kernel"] == "FP4 Marlin (W4A16)" and s["observed"] is False for s in doc["runs"][0]["selections"])
    bad = subprocess.run([str(exe), "scan", "--gpu", "Z9000", str(p)], capture_output=True)
    assert bad.returncode == 2 and b"unknown GPU" in bad.stderr


# -- hard failures and version gates --------------------------------------------------------
@pytest.mark.parametrize("line", [
    # a package the lexicon ties to no kernel: read, but no OPTIONAL_PACKAGE_MISSING (trust.py)
    "RuntimeError: The standard SGLang MPS model path requires Torch >= 2.13.0; found Torch 2.9.0; reinstall with the srt_mps extra",
    # a device named as the place of a shape check, not as what lacks support
    "ValueError: GPTQ on XPU requires group_size in [32, 64, 128], got 256.",
    "ValueError: --sampling-backend intel_xpu requires --device xpu, got --device cuda",
])
def test_raised_refusals_of_other_objects_give_no_finding(tmp_path, line):
    rep = _scan_text(tmp_path, "[2026-11-29 10:00:00 TP0] Scheduler hit an exception: Traceback\n" + line + "\n")
    (run,) = rep.runs
    assert run.engine.name == "sglang" and run.start_failure is not None
    assert {f.code for f in run.findings} <= {"START_FAILED"}


@pytest.mark.parametrize("line,code,remedy", [
    ("ValueError: ModelOpt NVFP4 native dense GEMM backends require SM100+. Use --fp4-gemm-backend marlin on SM80-SM90.",
     "UNSUPPORTED_ON_ARCH", "--fp4-gemm-backend marlin"),
    ("ValueError: NVFP4 Marlin requires group_size=16, got 32.", "KERNEL_NOT_FOUND", "group_size=16"),
    ("RuntimeError: moe_runner_backend=flashinfer_mxfp4 on SM90 requires the interleave_moe_{weights,scales}_for_sm90_"
     "mixed_gemm helpers from FlashInfer PR #3084 (>= 0.6.11). Upgrade flashinfer-python or pick a different backend "
     "(e.g. marlin / triton_kernel).", "OPTIONAL_PACKAGE_MISSING", ">= 0.6.11"),
    ("ValueError: Unsupported kv_cache_dtype: int4.", "KV_CACHE_UNSUPPORTED", None),
    ("ValueError: --kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120. Use --kv-cache-dtype=fp4_mx_block16 "
     "for the block-size-16 FP4 recipe.", "UNSUPPORTED_ON_ARCH", "--kv-cache-dtype=fp4_mx_block16"),
    ("ValueError: --kv-cache-dtype=nvfp4 requires torch.float4_e2m1fn_x2 support. Please use PyTorch 2.8.0+ with "
     "CUDA 12.8+.", "OPTIONAL_PACKAGE_MISSING", "PyTorch 2.8.0+"),
    ("ValueError: Current platform does not support NVFP4 quantization with the selected MoE backend. Please use "
     "Blackwell and above, or use moe_runner_backend=marlin on SM80+.", "UNSUPPORTED_ON_ARCH", "moe_runner_backend=marlin"),
    # the refusal grammar by object (docs/grammar.md, Raised refusals; shared/reference/sglang/templates.jsonl)
    ("ValueError: --dsa-prefill-backend flashmla_sparse_q8 is SM90-only; got compute capability sm_8x.", "UNSUPPORTED_ON_ARCH", None),
    ("NotImplementedError: AWQ MoE is not yet supported on XPU (dense-only phase).", "UNSUPPORTED_ON_ARCH", None),
    ("ValueError: --fp4-gemm-backend flashinfer_cudnn needs cuDNN >= 9.23.1 for the bf16 x fp4 GEMM (found 9.10.0).",
     "OPTIONAL_PACKAGE_MISSING", None),
    ("ValueError: TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax.", "KV_CACHE_UNSUPPORTED", None),
])
def test_hard_failures_name_the_engines_remedy(tmp_path, line, code, remedy):
    rep = _scan_text(tmp_path, "[2026-11-29 10:00:00 TP0] Scheduler hit an exception: Traceback\n" + line + "\n")
    (run,) = rep.runs
    assert run.engine.name == "sglang"
    f = {f.code: f for f in run.findings}[code]
    assert not f.inferred
    if remedy:
        assert remedy in (f.remedy or "")


# -- engine detection ---------------------------------------------------------------------
def test_vllm_and_sglang_in_one_file_give_one_run_each(tmp_path):
    vllm = (FIXTURES / "vllm" / "vllm-005.log").read_text()
    sgl = (FIXTURES / "sglang" / "sglang-009.log").read_text()
    rep = _scan_text(tmp_path, vllm.rstrip("\n") + "\n" + sgl)
    assert [r.engine.name for r in rep.runs] == ["vllm", "sglang"]
    assert any(s.kernel == "W8A8 Block FP8 kernel" for s in rep.runs[1].selections)
    assert not any(s.kernel == "W8A8 Block FP8 kernel" for s in rep.runs[0].selections)


def test_two_sglang_servers_give_two_runs(tmp_path):
    text = SYNTH.read_text()
    rep = _scan_text(tmp_path, text + text)
    assert [r.engine.name for r in rep.runs] == ["sglang", "sglang"]
    assert all(r.config.server_args is not None for r in rep.runs)


def test_unprefixed_traceback_tail_stays_with_the_open_run(tmp_path):
    """A generic ptxas error (recognised by the SGLang pack) inside a vLLM start is that start's."""
    vllm = (FIXTURES / "vllm" / "vllm-005.log").read_text().rstrip("\n")
    tail = (FIXTURES / "sglang" / "sglang-006.log").read_text()
    rep = _scan_text(tmp_path, vllm + "\n" + tail)
    assert [r.engine.name for r in rep.runs] == ["vllm"]
    assert "UNSUPPORTED_ON_ARCH" in {f.code for f in rep.runs[0].findings}


def test_sglang_line_borrows_an_exact_rule_of_another_pack(tmp_path):
    """SGLang reuses Triton/vLLM utilities: their exact rules apply to its lines before its broad topic rules."""
    line = ("[2026-11-29 10:00:00 TP0] ValueError(\"type fp8e4nv not supported in this architecture. "
            "The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")\n")
    rep = _scan_text(tmp_path, line)
    (run,) = rep.runs
    assert run.engine.name == "sglang"
    assert [e.rule for e in rep.events] == ["vllm.arch.triton-fp8-type"]
    assert "UNSUPPORTED_ON_ARCH" in {f.code for f in run.findings}


@pytest.mark.parametrize("log", corpus_params(sorted((FIXTURES / "vllm").glob("*.log"))))
def test_sglang_prefix_never_takes_vllm_lines(log):
    rep = scan_inputs([str(log)])
    assert {r.engine.name for r in rep.runs} <= {"vllm", "unknown"}, log.name  # unknown: generic lines only
    assert not any(e.rule.startswith("sglang.") and e.rule.split(".")[1] == "topic" for e in rep.events)


# -- template coverage targets of issue 4 ------------------------------------------------------
_TOOL = SHARED / "tools" / "template_coverage.py"
_TEMPLATES = SHARED / "reference" / "sglang" / "templates.jsonl"
_ARCH = r"(?i)\bSM ?\d|capabilit|blackwell|hopper|ampere|not supported on|pip install"


@pytest.mark.skipif(not _TOOL.exists() or not _TEMPLATES.exists(), reason="shared reference data absent")
@pytest.mark.parametrize("args,target", [
    (["--version", "0.5.23", "--tags", "degradation"], 1.0),
    (["--version", "0.5.23", "--levels", "info,warning,error", "--kinds",
      "linear_kernel,moe_kernel,fallback_warning,kernel_not_found,backend_override,quant_method,kv_cache"], 0.90),
    (["--levels", "raise", "--match", _ARCH], 0.90),
], ids=["degradation-0.5.23", "info-warning-error-0.5.23", "raise-arch"])
def test_template_coverage_targets(args, target):
    exe = Path(sys.executable).parent / "logscan"
    out = subprocess.run([sys.executable, str(_TOOL), str(_TEMPLATES), "--engine", "sglang", *args,
                          "--cmd", f"{exe} scan --format json {{log}}"], capture_output=True, text=True, timeout=600)
    last = out.stdout.strip().splitlines()[-1]
    hit, total = last.split("=")[1].split("/")
    assert int(hit) / int(total) >= target, out.stdout[-2000:]


# -- KV cache: requested (server_args) versus in effect (the pool's torch dtype) ----------------
@pytest.mark.parametrize("used,fallback", [("torch.float8_e4m3fn", False), ("torch.bfloat16", True)])
def test_kv_cache_torch_dtype_is_compared_with_the_request(tmp_path, used, fallback):
    text = ("[2025-06-01 10:00:00] server_args=ServerArgs(model_path='m', kv_cache_dtype='fp8_e4m3', tp_size=1)\n"
            f"[2025-06-01 10:00:09 TP0] Using KV cache dtype: {used}\n")
    (run,) = _scan_text(tmp_path, text).runs
    assert ("KV_CACHE_DTYPE_FALLBACK" in {f.code for f in run.findings}) is fallback


def test_fp4_kv_silently_falling_back_is_flagged(tmp_path):
    text = ("[2025-10-01 10:00:00] server_args=ServerArgs(model_path='m', kv_cache_dtype='fp4_e2m1', tp_size=1)\n"
            "[2025-10-01 10:00:09 TP0] --kv-cache-dtype falls back to 'auto' because this torch version does not "
            "support torch.float4_e2m1fn_x2\n")
    (run,) = _scan_text(tmp_path, text).runs
    f = {f.code: f for f in run.findings}["KV_CACHE_DTYPE_FALLBACK"]
    assert not f.inferred and "PyTorch 2.8.0+" in (f.remedy or "")


def test_ladder_release_follows_the_rank_order_era(tmp_path):
    """TP before PP is the prefix of 0.5.6.post2 and older (scheduler.py of each release): rungs
    come from the newest such release's own ladder (the history), not from 0.5.23's."""
    line = ("[2025-06-01 10:00:00 TP1 PP0] Using default W8A8 Block FP8 kernel config. Performance might be "
            "sub-optimal! Config file not found at /x/N=4096,K=7168,device_name=NVIDIA_H100_80GB_HBM3,"
            "dtype=fp8_w8a8,block_shape=[128, 128].json\n")
    (run,) = _scan_text(tmp_path, line).runs
    assert run.engine.ladder_version == "0.5.6.post2"
    (sel,) = run.selections
    assert (sel.ladder.rung, sel.ladder.rungs, sel.cost_class.value) == (5, 5, "portable")
    assert run.config.gpu == "NVIDIA_H100_80GB_HBM3"


def test_torch_without_the_gpus_arch_names_the_capability(tmp_path):
    text = ("[2026-02-01 10:00:00] server_args=ServerArgs(model_path='m', quantization='modelopt_fp4', tp_size=1)\n"
            "/usr/lib/python3/dist-packages/torch/cuda/__init__.py:235: UserWarning: \n"
            "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
            "installation.\n")
    (run,) = _scan_text(tmp_path, text).runs
    assert run.engine.name == "sglang" and run.config.compute_capability == "sm_120"
    f = {f.code: f for f in run.findings}["UNSUPPORTED_ON_ARCH"]
    assert "sm_120" in f.remedy
    assert run.selections == []  # the start failed: no kernel is inferred for it


@pytest.mark.parametrize("cu,kernel", [("cu128", "FlashInfer mm_fp4 (cute-dsl)"), ("cu126", None)])
def test_check_env_block_gives_gpu_cuda_and_release(tmp_path, cu, kernel):
    env = ("Python: 3.12.3\nCUDA available: True\nGPU 0,1: NVIDIA B200\nGPU 0,1 Compute Capability: 10.0\n"
           f"PyTorch: 2.7.1+{cu}\nsglang: 0.5.23\n")
    (run,) = _scan_text(tmp_path, env + _no_tell(tmp_path)).runs
    assert (run.engine.name, run.engine.version, run.engine.version_source) == ("sglang", "0.5.23", "reported")  # check_env: the reporter's environment (env37)
    sels = [s for s in run.selections if "NVFP4" in s.family]
    if kernel is None:
        assert sels == []  # torch built with CUDA 12.6: not Blackwell to SGLang, the native path raises
    else:
        (sel,) = sels
        assert sel.kernel == kernel and not sel.observed and "assumed" not in sel.reasoning


def test_scheduler_stats_are_noise_not_events():
    """Per-step 'Prefill/Decode batch' lines would feed the topic rules; the pack's [[noise]] skips them."""
    packs = default_packs()
    pack = packs.packs["sglang"]
    parser = PrefixParser(packs)
    topic = [cr for cr in pack.rules if cr.rule.id.startswith("sglang.topic.")]
    for shape in pack.meta.noise:
        for example in shape.examples:
            rec = parser.parse("t", 1, example)
            assert rec.prefix_format and rec.prefix_format.startswith("sglang")
            assert any(cr.regex.search(rec.message) for cr in topic), "the noise entry would not matter"
            from logscan.match import Matcher
            # no topic rule reads it; the first one of an input says the scheduler ran a batch
            # (serving evidence, a sparse ready rule: docs/lifecycle.md) and names SGLang (batch 5,
            # sglang-172): the only events; the next ones are skipped as noise
            m = Matcher(packs)
            first = list(m.feed(rec))
            assert [e.rule for e in first] == ["sglang.run.batch-stats", "sglang.identity.scheduler-stats"]
            assert list(m.feed(parser.parse("t", 2, example))) == []


def test_nvfp4_moe_runner_inferred_when_args_prove_moe_layers():
    """ep_size > 1 means MoE layers: the NVFP4 MoE method's silent auto -> MARLIN on Hopper is inferred too."""
    text = SYNTH.read_text().replace("'ep_size': 1", "'ep_size': 2")
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "moe.log"
        p.write_text(text)
        (run,) = scan_inputs([str(p)]).runs
    moe = [s for s in run.selections if s.family == "MoE (NVFP4)"]
    assert [(s.kernel, s.cost_class.value, s.observed) for s in moe] == [("FP4 Marlin MoE (W4A16)", "weight_only", False)]
    assert moe[0].ladder is not None and moe[0].ladder.registry.startswith("ModelOptNvFp4FusedMoEMethod")
    (run1,) = scan_inputs([str(SYNTH)]).runs  # ep_size 1, no MoE line: a dense model, no MoE inferred
    assert not [s for s in run1.selections if s.family.startswith("MoE")]
