"""Baseline comparison across lists of different length: by kernel identity and order, not rung numbers.

The same real log placed on two releases' lists (``--engine-version``): vllm-005's Marlin NVFP4 linear
kernel is rung 3/7 on vLLM 0.22.1's ``_POSSIBLE_NVFP4_KERNELS`` and 6/14 on 0.33.0's. Raw numbers read
that as "moved down"; it is one kernel. A real move across the two lengths (vllm-011's FlashInfer
CUTLASS 2/14 -> Marlin 3/7) still fails, and a kernel change no list ranks (an unknown rung '-', or
two lists that order the kernels differently) fails closed as KERNEL_CHANGED_UNRANKED.
"""
from __future__ import annotations

import datetime as dt

import pytest

from logscan.api import gate
from logscan.gate.baseline import FamilyState, _pair, compare
from logscan.models import CostClass
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES, ROOT

V = FIXTURES / "vllm"
DAY = dt.date(2026, 6, 1)


def _rep(name, version=None):
    path = ROOT / "tests" / "data" / "vllm-011-loaded.log" if name == "vllm-011" else V / f"{name}.log"
    return scan_inputs([str(path)], engine_version={"vllm": version} if version else None)


def _linear(changes):
    return next(c for c in changes if c.family.startswith("linear"))


def _baseline_codes(res):
    return {(c.code, c.verdict.value) for c in res.checks if c.kind == "baseline" and c.code}


@pytest.mark.parametrize("old,new", [("0.22.1", None), (None, "0.22.1")])
def test_a_renumbered_rung_of_the_same_kernel_is_no_move(old, new):
    a, b = _rep("vllm-005", old), _rep("vllm-005", new)
    ch = _linear(compare(a, b, default_packs()))
    assert {ch.old.rung_text(), ch.new.rung_text()} == {"3/7", "6/14"}
    assert (ch.status, ch.cost) == ("same", "same") and "only renumbers it" in ch.reasoning
    assert not {code for code, _ in _baseline_codes(gate(b, baseline=a, today=DAY))} & {
        "KERNEL_MOVED_DOWN", "KERNEL_CHANGED_UNRANKED"}


def test_a_real_move_across_lists_of_different_length_still_fails():
    a, b = _rep("vllm-011"), _rep("vllm-005", "0.22.1")  # flashinfer-cutlass 2/14 -> Marlin 3/7
    ch = _linear(compare(a, b, default_packs()))
    assert (ch.old.rung_text(), ch.new.rung_text(), ch.status) == ("2/14", "3/7", "down")
    assert ("KERNEL_MOVED_DOWN", "fail") in _baseline_codes(gate(b, baseline=a, today=DAY))
    back = _linear(compare(b, a, default_packs()))
    assert back.status == "up"


def test_raw_numbers_would_call_a_move_down_up():
    # vllm-134 CUTLASS FP8 2/7 (0.33.0) -> vllm-018 FP8 Marlin 1/5 (0.22.1, where Marlin leads the list
    # below sm89): 2 -> 1 reads "up"; the lists order the two differently, so no rank: fail closed
    a, b = _rep("vllm-134"), _rep("vllm-018", "0.22.1")
    ch = _linear(compare(a, b, default_packs()))
    assert (ch.old.rung_text(), ch.new.rung_text()) == ("2/7", "1/5")
    assert ch.status == "moved" and "order them differently" in ch.reasoning and ch.regressed
    assert ("KERNEL_CHANGED_UNRANKED", "fail") in _baseline_codes(gate(b, baseline=a, today=DAY))


def test_another_kernel_with_an_unknown_rung_is_not_passed_as_unchanged():
    a, b = _rep("vllm-101"), _rep("vllm-352")  # FLASHINFER_B12X (RUNG -) -> B12X (RUNG -)
    (ch,) = [c for c in compare(a, b, default_packs()) if c.family == "MoE (NvFp4)"]
    assert ch.status == "moved" and ch.regressed and "cannot be compared" in ch.reasoning
    res = gate(b, baseline=a, today=DAY, partial_log=True)
    assert ("KERNEL_CHANGED_UNRANKED", "fail") in _baseline_codes(res)


def test_the_same_kernel_with_an_unknown_rung_says_its_rung_was_not_compared():
    (ch,) = [c for c in compare(_rep("vllm-101"), _rep("vllm-009")) if c.family == "MoE (NvFp4)"]
    assert ch.status == "same" and "its rung not compared" in ch.reasoning


def _st(kernel, rung, names, version="0.1"):
    return FamilyState(family="MoE (X)", kernel=kernel, cost_class=CostClass.native, registry="r", platform="ANY",
                       ladder_version=version, rung=rung, rungs=len(names), fell=0, source="s", line=1,
                       evidence="e", kernel_class=kernel, names=names)


def test_ranking_uses_order_not_numbers():
    # a list that lost rungs above: Y is rung 2/2 now, X was 3/5; raw numbers say "up", Y is below X
    old, new = _st("X", 3, ["A", "B", "X", "C", "Y"]), _st("Y", 2, ["X", "Y"], "0.2")
    assert _pair("MoE (X)", old, new).status == "down"
    assert _pair("MoE (X)", new, old).status == "up"
    # no list holds both, lengths differ: no rank, never a raw-number verdict
    lone = _st("Z", 1, ["Z"], "0.3")
    assert _pair("MoE (X)", old, lone).status == "moved"


def test_without_lists_numbers_rank_only_on_one_release_and_length():
    a, b = _st("X", 2, ["?"] * 5), _st("Y", 4, ["?"] * 5)
    a.names = b.names = None  # a release no pack holds: only its own numbers are known
    assert _pair("MoE (X)", a, b).status == "down"
    c = b.model_copy(update={"ladder_version": "0.2"})
    c.names = None
    assert _pair("MoE (X)", a, c).status == "moved"  # another release's list: numbers do not compare
