"""Property tests of the three-valued gate evaluation over every shipped gate.

Knowing more never contradicts a definite answer: if a rung passes or fails while a fact
(compute capability, CUDA runtime, packages) is unknown, it keeps that verdict once the fact
is given, whatever its value. And the notation parser of tools/gate_terms.py reads the
reference's rendering into the terms the seeds describe (table-driven).
"""
from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logscan.analysis.gates import Machine, Verdict, evaluate_terms
from logscan.packs.loader import default_packs
from tests.conftest import ROOT

_PACKS = default_packs()
_GATES = sorted({(eng, rel, name): tuple(k.gates)
                 for eng, p in _PACKS.packs.items() for rel, lf in p.ladders.items()
                 for name, k in lf.kernel.items() if k.gates}.items())
_PKGS = ["flashinfer", "flashinfer.cute_dsl", "b12x", "humming", "deep_gemm", "fbgemm_gpu", "quark", "conch"]
_CCS = [60, 61, 70, 75, 80, 86, 89, 90, 100, 103, 110, 120, 121]


@settings(max_examples=300, deadline=None)
@given(idx=st.integers(0, len(_GATES) - 1), cc=st.sampled_from(_CCS),
       cuda=st.sampled_from(["11.8", "12.0", "12.4", "12.6", "12.8", "13.0"]),
       pkgs=st.frozensets(st.sampled_from(_PKGS)), platform=st.sampled_from(["CUDA", "ROCM", "CPU", "XPU"]))
def test_more_facts_never_flip_a_definite_verdict(idx, cc, cuda, pkgs, platform):
    _, terms = _GATES[idx]
    full = Machine(platform=platform, cc=cc, cuda=cuda, packages=pkgs)
    known, _ = evaluate_terms(terms, full, {})
    for partial in (Machine(platform=platform, cc=None, cuda=cuda, packages=pkgs),
                    Machine(platform=platform, cc=cc, cuda=None, packages=pkgs),
                    Machine(platform=platform, cc=cc, cuda=cuda, packages=None),
                    Machine(platform=None, cc=None, cuda=None, packages=None)):
        v, _ = evaluate_terms(terms, partial, {})
        if v != Verdict.unknown:
            assert v == known, f"{_GATES[idx][0]}: {v} with less known, {known} with more"


@settings(max_examples=200, deadline=None)
@given(idx=st.integers(0, len(_GATES) - 1), cc=st.sampled_from(_CCS))
def test_hardware_verdict_is_at_least_as_permissive(idx, cc):
    """The optimistic (software assumed) verdict never fails a rung the full description passes."""
    _, terms = _GATES[idx]
    m = Machine(cc=cc, cuda="13.0", packages=frozenset(_PKGS))
    v, _ = evaluate_terms(terms, m, {})
    hv, _ = evaluate_terms(terms, m, {}, optimistic=True)
    assert not (v == Verdict.passes and hv == Verdict.fails)


sys.path.insert(0, str(ROOT / "tools"))
from gate_terms import GateParser  # noqa: E402

_PRED = [{"match": r"has_flashinfer\(\)", "terms": [{"kind": "package", "name": "flashinfer"}]}]


@pytest.mark.parametrize("gate,want", [
    ("is_supported: requires CUDA; requires cc>=75", [("platform", ["CUDA"]), ("cc_min", 75)]),
    ("can_implement: requires cc==90", [("cc_eq", 90)]),
    ("is_supported: requires cc-major==12", [("cc_family", 12)]),
    ("is_supported: requires NOT env:VLLM_BATCH_INVARIANT", [("env", "VLLM_BATCH_INVARIANT", True)]),
    ("is_supported: requires has_flashinfer()", [("package", "flashinfer")]),
    ("can_implement: requires cfg.group_size == 128", [("group_size", ["128"])]),
    ("can_implement: requires NOT in_features % 128", [("shape", "in_features", 128)]),
    ("can_implement: requires cfg.act_type == torch.float8_e4m3fn", [("dtype", "act_type", ["float8_e4m3fn"])]),
    ("is_supported: requires package 'humming' importable", [("package", "humming")]),
    ("is_supported: requires frobnicate(x)", [("opaque",)]),
])
def test_gate_notation_parser(gate, want):
    terms = GateParser(_PRED).parse(gate, None)
    got = []
    for t in terms:
        k = t["kind"]
        if k == "platform":
            got.append((k, t["platforms"]))
        elif k in ("cc_min", "cc_eq"):
            got.append((k, t["cc"]))
        elif k == "cc_family":
            got.append((k, t["major"]))
        elif k == "env":
            got.append((k, t["name"], t.get("negate", False)))
        elif k == "package":
            got.append((k, t["name"]))
        elif k == "group_size":
            got.append((k, t["values"]))
        elif k == "shape":
            got.append((k, t["field"], t["multiple_of"]))
        elif k == "dtype":
            got.append((k, t["field"], t["values"]))
        else:
            got.append((k,))
    assert got == want


def test_not_of_a_conjunction_is_de_morgan():
    terms = GateParser([]).condition("NOT(cc>=100 and env:X)")
    assert terms[0]["kind"] == "any_of"
    assert [o[0].get("negate") for o in terms[0]["options"]] == [True, True]
