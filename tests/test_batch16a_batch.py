"""Corpus batch 16a (docs/corpus.md, "Batch 16a"): a first-sight batch of vLLM and SGLang logs chosen for
kernel-stating lines (fixtures/vllm/vllm-365..375, fixtures/sglang/sglang-309..313). First sight 0.900 (kernels
4/5, precision 1.000, no false finding); the one scored miss was vllm-372, a PR's Testing paragraph quoting vLLM's
linear selection line without its 'for <method>' tail ('Logs confirm Using XPUwNa16LinearKernel.'), which made no
run at all.

Mechanism: a vLLM linear kernel class (<Name>LinearKernel, the MPLinearKernel / ScaledMMLinearKernel class names
that choose_mp_linear_kernel / choose_scaled_mm_linear_kernel log as 'Using %s for %s', vllm/model_executor/
kernels/linear, 0.6.6 -> 0.33.0) named after 'Using' and not followed by 'for <target>' is that selection, cut or
quoted (rule vllm.linear.kernel-class-quoted). vLLM prints no bare 'Using <LinearKernel>' line: its 'Using %s'
templates are the MoE oracles' prepare/finalize classes (shared/reference/vllm/templates.jsonl,
make_*_moe_kernel), which stay vllm.moe.prepare-finalize's.

The batch's precision traps must stay quiet: the SM120 Triton 'Unsupported lhs dtype fp8e4nv' (vllm-368),
CPUWNA16LinearKernel named in prose as a traceback frame (vllm-369), the NVFP4 global-scale accuracy warning
(vllm-365), the EMULATION fallback stated in PR prose (vllm-373), and SGLang's quoted fp8e4nv refusal stays the one
finding (sglang-310).
"""
from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, finding_codes, one_run, runs_of, write_log


def _selections(path):
    return [(s["kernel"], s["cost_class"]) for r in runs_of(path) for s in r["selections"]]


def test_quoted_linear_kernel_class_is_the_selection():
    run = one_run("vllm-372")  # 'Logs confirm Using XPUwNa16LinearKernel. MoE path unchanged / out of scope.'
    assert run["engine"]["name"] == "vllm"
    assert [(s["kernel"], s["cost_class"]) for s in run["selections"]] == [("XPUwNa16LinearKernel", "native")]
    assert not finding_codes(run)


@pytest.mark.parametrize("line, kernel", [
    ("Logs confirm Using XPUwNa16LinearKernel. MoE path unchanged / out of scope.\n", "XPUwNa16LinearKernel"),
    ("the server log says `Using MarlinLinearKernel`, so Machete is not used\n", "MarlinLinearKernel"),
    ("(EngineCore pid=7) INFO 08-02 10:27:21 [__init__.py:631] Using CutlassFP8ScaledMMLinearKernel\n",
     "CutlassFP8ScaledMMLinearKernel"),
])
def test_cut_or_quoted_selection_names_the_kernel(tmp_path, line, kernel):
    assert [k for k, _ in _selections(write_log(tmp_path, line))] == [kernel]


@pytest.mark.parametrize("line", [
    "Using MarlinLinearKernel instead of Machete would be slower\n",
    "Using MarlinLinearKernel is the default on Ampere\n",
    "using_marlin_linear_kernel = True\n",
    "Using MarlinLinearKernelConfig\n",
    "Use MarlinLinearKernel for Ampere\n",
])
def test_prose_about_a_kernel_class_is_no_selection(tmp_path, line):
    assert _selections(write_log(tmp_path, line)) == []


def test_full_selection_line_keeps_its_scheme_rule(tmp_path):
    log = write_log(tmp_path, "(EngineCore pid=555044) INFO 08-21 10:25:12 [compressed_tensors_wNa16.py:137] "
                              "Using MarlinLinearKernel for CompressedTensorsWNA16\n")
    [run] = runs_of(log)
    [sel] = run["selections"]
    assert (sel["kernel"], sel["family"]) == ("MarlinLinearKernel", "linear (WNA16)")


def test_moe_prepare_finalize_line_is_no_linear_selection(tmp_path):
    log = write_log(tmp_path, "(EngineCore pid=40474) INFO 08-02 10:29:03 [nvfp4.py:543] "
                              "Using MoEPrepareAndFinalizeNoDPEPModular\n")
    assert _selections(log) == []


# -- the real logs of the batch: selections read, traps quiet -------------------------------------------

def test_gemma4_nvfp4_two_native_selections_and_no_finding():
    sels = _selections(FIXTURES / "vllm" / "vllm-365.log")
    assert ("FlashInferCutlassNvFp4LinearKernel", "native") in sels and ("FLASHINFER_CUTLASS", "native") in sels
    assert not any(finding_codes(r) for r in runs_of(FIXTURES / "vllm" / "vllm-365.log"))


def test_laguna_int4_marlin_moe_and_kv_cache_start_failure():
    runs = runs_of(FIXTURES / "vllm" / "vllm-367.log")
    assert ("MARLIN", "native") in [(s["kernel"], s["cost_class"]) for r in runs for s in r["selections"]]
    assert any(r["start_failure"] and "KV cache" in (r["start_failure"].get("cause") or "") for r in runs)
    assert not any(finding_codes(r) for r in runs)


@pytest.mark.parametrize("name", ["vllm-368", "vllm-369", "vllm-370", "vllm-371", "vllm-373", "vllm-374", "vllm-375",
                                  "sglang-309", "sglang-311", "sglang-312", "sglang-313"])
def test_precision_windows_raise_nothing(name):
    engine = name.rsplit("-", 1)[0]
    runs = runs_of(FIXTURES / engine / f"{name}.log")
    assert not any(finding_codes(r) for r in runs)
    if name == "vllm-369":  # CPUWNA16LinearKernel only as a traceback frame in prose
        assert not [s for r in runs for s in r["selections"]]


def test_quoted_fp8e4nv_refusal_is_the_one_finding():
    runs = runs_of(FIXTURES / "sglang" / "sglang-310.log")
    assert [c for r in runs for c in finding_codes(r)] == ["UNSUPPORTED_ON_ARCH"]
