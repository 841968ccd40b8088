"""Frames as a general mechanism: the rule schema's ``frame`` field, the lexicon's ``[[kernel]]``
entries (op aliases, name patterns, own wording, own package), corroboration, ``explain`` aliases.

Rules and lexicon entries are data: these tests check the data against itself (every example,
counter-example and alias) and against real frames of the bundled corpus.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.analysis.frames import (corroborate, frame_kernel, is_frame_rule, kernel_alias, kernel_named,
                                     kernel_of_path, kernels_said)
from logscan.cli import cli
from logscan.models import CostClass, Event, Selection
from logscan.packs.loader import default_packs
from logscan.packs.model import Rule

PACKS = default_packs()
LEX = PACKS.lexicon
RULES = {cr.rule.id: (cr, p) for p in PACKS.packs.values() for cr in p.rules}
FRAME_RULES = [cr.rule for cr, _ in RULES.values() if cr.rule.frame]


def _rule(**kw):
    base = dict(id="x.frame.test", kind="linear_kernel", pattern="in f", keywords=["in f"],
                examples=['  File "/a/b.py", line 1, in f'])
    base.update(kw)
    return Rule.model_validate(base)


def test_frame_rules_of_three_engines_are_marked_by_the_field():
    engines = {rid.split(".")[0] for rid, (cr, _) in RULES.items() if cr.rule.frame}
    assert {"vllm", "tgi", "sglang"} <= engines
    for r in FRAME_RULES:
        assert r.kind in ("linear_kernel", "moe_kernel", "fallback_warning"), r.id
    # the deprecated id convention: every shipped rule carrying it also sets the field
    assert all(cr.rule.frame for rid, (cr, _) in RULES.items() if ".frame." in rid)


@pytest.mark.parametrize("bad,why", [
    (dict(kind="config"), "kernel kind"),
    (dict(examples=["Using MarlinLinearKernel"]), "no traceback frame"),
    (dict(family="linear (FP8)"), "must name its kernel"),
])
def test_the_frame_field_is_validated(bad, why):
    with pytest.raises(ValueError, match=why):
        _rule(frame=True, **bad)
    _rule(**bad)  # the same rule without frame = true is valid (the checks are the field's)


def test_the_id_segment_is_only_a_deprecated_fallback():
    assert is_frame_rule(_rule(id="x.frame.old"))  # a third-party pack's rule, not yet migrated
    assert not is_frame_rule(_rule(id="x.linear.new"))
    assert is_frame_rule(_rule(id="x.linear.new", frame=True))


def test_every_lexicon_kernel_entry_classes_its_own_examples():
    names = [k.name for k in LEX.kernel]
    assert len(names) == len(set(names)) and {"Marlin", "CUTLASS", "FlashInfer", "DeepGEMM", "Machete", "AITER"} <= set(names)
    owner = {}
    for k in LEX.kernel:
        for ex in k.examples:
            assert kernel_named(LEX, ex) == k.name, (k.name, ex)
        for ex in k.counter_examples:
            assert kernel_named(LEX, ex) != k.name, (k.name, ex)
        for ex in k.says_examples:
            assert (k.name, ) == tuple(n for n, _ in kernels_said(LEX, ex) if n == k.name), (k.name, ex)
        for a in k.aliases:
            assert owner.setdefault(a.lower(), k.name) == k.name, f"alias {a} of two kernels"
            assert kernel_alias(LEX, a) == k.name and kernel_named(LEX, a) == k.name
    assert kernel_of_path(LEX, "/usr/lib/python3/site-packages/flashinfer/jit/fused_moe.py") == "FlashInfer"
    assert kernel_of_path(LEX, "/opt/vllm/vllm/model_executor/layers/fused_moe/fused_moe.py") is None


def test_failing_exception_classes_are_data_with_examples():
    import regex

    rx = regex.compile(LEX.failing.exceptions)
    assert all(rx.search(e) for e in LEX.failing.examples)
    assert not any(rx.search(e) for e in LEX.failing.counter_examples)


def test_frame_kernel_reads_the_rule_the_function_and_the_file():
    r = RULES["tgi.frame.marlin-apply"][0].rule
    line = '  File "/opt/conda/lib/python3.11/site-packages/text_generation_server/layers/marlin/gptq.py", line 409, in forward'
    assert frame_kernel(LEX, r, line) == "Marlin"  # TGI names the kernel by file: the rule says which
    r = RULES["vllm.frame.kernel-apply"][0].rule
    assert frame_kernel(LEX, r, '  File "/opt/vllm-source/vllm/_custom_ops.py", line 667, in cutlass_scaled_mm') == "CUTLASS"
    assert frame_kernel(LEX, r, '  File "/x/vllm/.../fp8_utils.py", line 1, in apply_w8a8_block_fp8_linear') is None
    r = RULES["vllm.frame.kernel-class-apply"][0].rule
    assert frame_kernel(LEX, r, '  File "/v/vllm/model_executor/layers/quantization/kernels/scaled_mm/cutlass.py", '
                                'line 130, in apply_weights') == "CUTLASS"
    r = RULES["sglang.frame.gemm-apply"][0].rule
    assert frame_kernel(LEX, r, '  File "/s/sglang/srt/layers/quantization/fp8_utils.py", line 672, in '
                                'deepgemm_w8a8_block_fp8_linear_with_fallback') == "DeepGEMM"


def _sel(family, kernel):
    return Selection(family=family, kernel=kernel, cost_class=CostClass.native, line=1, evidence="x", rule="vllm.x")


def test_a_frame_corroborates_a_selection_of_the_same_kernel_and_kind_only():
    line = '  File "/usr/lib/vllm/model_executor/layers/fused_moe/fused_marlin_moe.py", line 160, in fused_marlin_moe'
    ev = Event(line=7, rule="vllm.frame.moe-apply", kind="moe_kernel", source="t", message=line)
    linear, moe, other = _sel("linear (GPTQ)", "MarlinLinearKernel"), _sel("MoE (GPTQ)", "MarlinExperts"), _sel("MoE", "TritonExperts")
    used: set = set()
    corroborate([ev], RULES, [linear, moe, other], used, LEX)
    assert used == {(7, "vllm.frame.moe-apply")}
    assert moe.reasoning.startswith("traceback:") and "line 7, in fused_marlin_moe, an op of Marlin" in moe.reasoning
    assert linear.reasoning is None and other.reasoning is None  # a MoE frame says nothing of the dense layers


def test_explain_finds_the_kernel_of_an_op_alias():
    r = CliRunner().invoke(cli, ["explain", "gptq_marlin_gemm"])
    assert r.exit_code == 0 and r.stdout.startswith("gptq_marlin_gemm: an op of Marlin")
    assert "Marlin: on " in r.stdout
    doc = json.loads(CliRunner().invoke(cli, ["explain", "--format", "json", "cutlass_scaled_mm_azp"]).stdout)
    assert doc["alias_of"] == "CUTLASS" and doc["ladders"]
    assert CliRunner().invoke(cli, ["explain", "no_such_op_anywhere"]).exit_code == 2
