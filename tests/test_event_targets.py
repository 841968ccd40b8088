"""An event line that names a kernel as its choice is placed or said not understood, never silent
(analysis/targets.py, patterns/lexicon.toml [target]; the vLLM AWQ Marlin layer refusal). Real
fixture lines, reworded as a new-user trial found them, and real counter-examples."""
from __future__ import annotations

from pathlib import Path

import pytest

import logscan
from logscan.analysis.targets import compiled
from logscan.packs.loader import default_packs

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
TARGET = default_packs().lexicon.target


def _lines(rel: str) -> list[str]:
    return (FIX / rel).read_text(encoding="utf-8", errors="surrogateescape").splitlines()


def _swap(rel: str, n: int, old: str, new: str) -> list[str]:
    """The fixture's lines with ``old`` -> ``new`` in line ``n`` (1-based): a rewording in place."""
    lines = _lines(rel)
    assert old in lines[n - 1], lines[n - 1]
    lines[n - 1] = lines[n - 1].replace(old, new)
    return lines


def _scan(lines: list[str]):
    return logscan.scan([x + "\n" for x in lines])


def _at(report, line: int):
    """(selections, findings, unread entries) of the report at ``line``."""
    runs = report.runs
    return ([s for r in runs for s in r.selections if s.line == line],
            [f for r in runs for f in r.findings if f.line == line],
            [u for r in runs for u in r.unexplained if u.line == line and u.kind == "unread"])


@pytest.mark.parametrize("msg", TARGET.examples)
def test_target_examples_name_a_chosen_kernel(msg):
    _, chosen, excludes = compiled(TARGET)
    assert chosen.search(msg) and not (excludes and excludes.search(msg)), msg


@pytest.mark.parametrize("msg", TARGET.counter_examples)
def test_target_counter_examples_name_none(msg):
    _, chosen, excludes = compiled(TARGET)
    assert not chosen.search(msg) or (excludes and excludes.search(msg)), msg


@pytest.mark.parametrize("to", TARGET.to_examples)
def test_to_examples_hold_a_kernel_of_the_vocabulary(to):
    assert compiled(TARGET)[0].search(to), to


@pytest.mark.parametrize("to", TARGET.to_counter_examples)
def test_to_counter_examples_hold_none(to):
    assert not compiled(TARGET)[0].search(to), to


# vllm-304 line 2 'Using FlashInferCutlassMxfp8LinearKernel for MXFP8 GEMM:' reworded: its object
# dropped (vllm.moe.prepare-finalize read it) or as a fallback (vllm.family.fallback read it)
@pytest.mark.parametrize("new", ["Using FlashInferCutlassMxfp8LinearKernel",
                                 "Falling back to FlashInferCutlassMxfp8LinearKernel"])
def test_a_ladder_kernel_named_by_an_event_is_placed(new):
    lines = _swap("vllm/vllm-304.log", 2, "Using FlashInferCutlassMxfp8LinearKernel for MXFP8 GEMM:", new)
    sels, _, unread = _at(_scan(lines), 2)
    [s] = sels
    assert s.kernel == "FlashInferCutlassMxfp8LinearKernel" and s.ladder is not None
    assert s.ladder.registry == "_POSSIBLE_MXFP8_KERNELS" and s.family == "linear (MXFP8 W8A8)"
    assert s.cost_class.value == "native" and not unread


def test_an_emulation_fallback_named_by_an_event_raises_its_cost_finding():
    """'Falling back to EmulationMxfp8LinearKernel' (the trial's line) on vLLM 0.33: rung 5/8 of the
    MXFP8 registry, dequantized at load (tools/ladder_costs.toml), no more a silent pass."""
    lines = ["INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.33.0",
             "INFO 01-01 00:00:00 [__init__.py:1] Automatically detected platform cuda.",
             "WARNING 01-01 00:00:01 [mxfp8.py:1] Falling back to EmulationMxfp8LinearKernel"]
    rep = _scan(lines)
    sels, findings, _ = _at(rep, 3)
    [s] = sels
    assert s.kernel == "EmulationMxfp8LinearKernel" and s.ladder.rung == 5
    assert {f.code for f in findings} == {"DEQUANT_AT_LOAD"}
    g = logscan.gate(rep)
    [c] = [c for c in g.checks if c.code == "DEQUANT_AT_LOAD"]
    assert c.verdict.value == "fail" and c.line == 3


def test_a_target_no_ladder_places_is_not_understood_and_the_gate_says_so():
    """vllm-022 (ROCm, no logged release): TritonScaledMMLinearKernel is a rung of more than one
    registry, so a fallback to it is not placed; it is listed, and NO_KERNEL_SEEN names it."""
    lines = _swap("vllm/vllm-022.log", 2, "Using TritonScaledMMLinearKernel for CompressedTensorsW8A8Int8",
                  "Falling back to TritonScaledMMLinearKernel")
    rep = _scan(lines)
    sels, _, unread = _at(rep, 2)
    assert not sels
    [u] = unread
    assert u.rule == "vllm.family.fallback" and "TritonScaledMMLinearKernel" in u.why
    [c] = [c for c in logscan.gate(rep).checks if c.code == "NO_KERNEL_SEEN"]
    assert "line 2 names kernel TritonScaledMMLinearKernel" in c.message


def test_sglang_228_triton_backend_default_is_listed():
    """sglang-228 line 12 'MOE_RUNNER_BACKEND is not initialized, using triton backend': the MoE
    runner's choice, read by sglang.grammar.not-initialized as an event, now said."""
    [u] = _at(logscan.scan(str(FIX / "sglang" / "sglang-228.log")), 12)[2]
    assert "triton" in u.why


@pytest.mark.parametrize("rel, line", [
    ("vllm/vllm-325.log", 7),   # 'fell back to weight-only Marlin': a selection of the run names Marlin
    ("vllm/vllm-130.log", 2),   # 'Using legacy triton_kernels on ROCm': which package is imported
    ("vllm/vllm-149.log", 9),
    ("other/other-125.log", 1),  # 'flashinfer.jit: Prebuilt kernels not found, using JIT backend'
    ("vllm/vllm-199.log", 2),   # '[aiter] [fused_moe] using 1stage default for (...)'
    ("vllm/vllm-138.log", 7),   # 'DeepGEMM E8M0 enabled on current platform.'
    ("vllm/vllm-016.log", 2),   # 'Using gptq_marlin kernel.': a rule read the method (sets quantization)
    ("tgi/tgi-108.log", 14),    # 'Disabling exllama v2 and using v1 instead': a config fact
    ("vllm/vllm-118.log", 2),   # 'falling back to native rotary implementation'
])
def test_event_lines_that_choose_no_unplaced_kernel_stay_quiet(rel, line):
    rep = logscan.scan(str(FIX / rel))
    sels, _, unread = _at(rep, line)
    assert not unread
    if rel != "vllm/vllm-325.log":
        assert not sels


def test_a_bare_marlin_is_not_placed_on_one_registry_of_several():
    """vllm-325: line 7's 'Marlin' is a rung of the FP8, NVFP4, MXFP4 ... registries; the line does
    not say which, so it gives no second selection (the run's own NVFP4 Marlin selection stays alone)."""
    rep = logscan.scan(str(FIX / "vllm" / "vllm-325.log"))
    assert [(s.line, s.family) for r in rep.runs for s in r.selections] == [(3, "linear (NVFP4)")]


@pytest.mark.parametrize("refused", ["AWQMarlin", "AutoAWQMarlin"])
def test_awq_marlin_refusing_a_layer_is_a_selection_of_the_awq_gemm_for_it(refused):
    """vLLM awq_marlin.py / auto_awq.py get_quant_method: a layer check_marlin_supports_layer refuses
    gets AWQConfig's AWQLinearMethod (ops.awq_gemm): a partial degradation, said as a selection for
    those layers and UNTUNED_SHAPE; the run's Marlin selection for the others stays."""
    lines = ["INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.23.0",
             f"WARNING 01-01 00:00:01 [awq_marlin.py:1] Layer 'model.layers.0.mlp.gate' is not supported by {refused}. "
             "Falling back to unoptimized AWQ kernels.",
             "INFO 01-01 00:00:01 [awq_marlin.py:2] Using MarlinLinearKernel for AWQMarlinLinearMethod"]
    rep = _scan(lines)
    sels, findings, _ = _at(rep, 2)
    [s] = sels
    assert s.kernel == "awq_gemm (AWQLinearMethod)" and s.cost_class.value == "native"
    assert {f.code for f in findings} == {"UNTUNED_SHAPE"}
    assert [x.kernel for r in rep.runs for x in r.selections if x.line == 3] == ["MarlinLinearKernel"]
    assert not [f for r in rep.runs for f in r.findings if f.code == "RANK_DIVERGENCE"]
    [c] = [c for c in logscan.gate(rep).checks if c.code == "UNTUNED_SHAPE"]
    assert c.verdict.value == "warn" and c.line == 2


def test_auto_awq_moe_marlin_refusal_is_read_as_its_moe_twin():
    """auto_awq.py (0.26 ->) spells the MoE refusal 'AutoAWQMoEMarlin'."""
    lines = ["INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.33.0",
             "WARNING 01-01 00:00:01 [auto_awq.py:1] Layer 'model.layers.0.mlp.experts' is not supported by "
             "AutoAWQMoEMarlin. Falling back to Moe WNA16 kernels."]
    sels, findings, _ = _at(_scan(lines), 2)
    assert [s.family for s in sels] == ["MoE (WNA16)"] and {f.code for f in findings} == {"UNTUNED_SHAPE"}


@pytest.mark.parametrize("msg, named", [
    # the verb's object, not the `to` the override replaced (vllm.grammar.override captures it)
    ("VLLM_BATCH_INVARIANT overrides --linear-backend=MarlinLinearKernel; using the CUTLASS for deterministic execution.",
     "CUTLASS"),
    # a bare vendor word is a rung or alias of many registries (here the INT8 linear rung 'CUTLASS')
    ("Flashinfer TRTLLM MOE backend is only supported on SM100 and later, using CUTLASS backend instead", "CUTLASS"),
])
def test_a_vendor_word_or_an_overridden_name_is_listed_not_placed(msg, named):
    lines = ["INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.33.0",
             f"WARNING 01-01 00:00:01 [x.py:1] {msg}"]
    sels, findings, unread = _at(_scan(lines), 2)
    assert not sels and not findings
    [u] = unread
    assert f"names kernel {named} " in u.why
