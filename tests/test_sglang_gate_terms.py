"""SGLang gate terms per release: tools/sglang_gate_terms.py and logscan/packs/history.py.

``patterns/sglang/ladder-history.toml`` stores each derived rung's gate as its branch's Python
test and, once per distinct text, the terms ``tools/sglang_gate_terms.py`` reads from it with
``ast``. A composed release whose rung gate differs from the snapshot's (or the planning
overlay's, read from 0.5.23) evaluates its own terms, or an opaque term naming the release.
All data here is bundled (no engine source is read).
"""
from __future__ import annotations

import itertools

import pytest
from click.testing import CliRunner

from logscan.analysis.gates import Machine, Verdict, evaluate_terms
from logscan.analysis.overlay import load_overlay, moe_gates
from logscan.cli import cli
from logscan.packs.history import LadderHistory, compose
from logscan.packs.loader import default_packs
from logscan.packs.model import GateTerm
from tests.conftest import load_tool

sg = load_tool("sglang_gate_terms")
SGL = default_packs().packs["sglang"]
HIST = SGL.ladders.history
SNAPSHOTS = sorted(SGL.ladders.snapshots)


def _kinds(terms):
    return [(t["kind"], t.get("negate", False)) for t in terms]


def test_common_atoms_become_structured_terms():
    t = sg.translate("initialize_fp4_gemm_config", "backend == 'auto' and is_sm100_supported()")
    assert _kinds(t) == [("option", False), ("platform", False), ("cc_family", False), ("cuda_min", False)]
    assert t[0]["name"] == "--fp4-gemm-backend" and t[0]["values"] == ["auto"] and t[2]["major"] == 10
    assert t[3]["version"] == "12.8"
    # 0.5.19+ spells the same probe get_platform().is_sm100: the same terms
    assert _strip(sg.translate("initialize_fp4_gemm_config", "backend == 'auto' and get_platform().is_sm100")) == _strip(t)
    cap = sg.translate("x", "is_cuda() and (10, 0) > get_device_capability() >= (8, 0)")
    assert [(x["kind"], x.get("lo"), x.get("hi")) for x in cap] == [("platform", None, None), ("cc_range", 80, 100)]
    aiter = sg.translate("dispatch_w8a8_block_fp8_linear", "_use_aiter")
    assert [(x["kind"], x.get("platforms") or x.get("name")) for x in aiter] == [("platform", ["ROCM"]), ("env", "SGLANG_USE_AITER")]
    env = sg.translate("x", 'get_bool_env_var("SGLANG_FORCE_FP8_MARLIN")')
    assert _strip(env) == [{"kind": "env", "name": "SGLANG_FORCE_FP8_MARLIN", "default": "false"}]
    on = sg.translate("x", 'get_bool_env_var("SGLANG_ENABLE_JIT_DEEPGEMM", default="true")')
    assert on[0]["default"] == "true"
    moe = sg.translate("ModelOptNvFp4FusedMoEMethod.create_moe_runner", "moe_runner_backend.is_flashinfer_cutedsl()")
    assert (moe[0]["kind"], moe[0]["name"], moe[0]["values"]) == ("option", "--moe-runner-backend", ["flashinfer_cutedsl"])
    assert sg.translate("x", "always") == []


def test_not_and_or_keep_three_valued_logic():
    neg = sg.translate("x", "not (_is_hip and _use_aiter)")
    assert len(neg) == 1 and neg[0]["kind"] == "any_of" and all(o[0]["negate"] for o in neg[0]["options"])
    either = sg.translate("x", "_is_cuda or _is_hip")
    assert either[0]["kind"] == "any_of" and [o[0]["platforms"] for o in either[0]["options"]] == [["CUDA"], ["ROCM"]]
    # evaluated: on CUDA "not (ROCm and AITER)" holds; on ROCm it depends on the unset env (default false)
    terms = [GateTerm(**x) for x in neg]
    assert evaluate_terms(terms, Machine(platform="CUDA"), {})[0] == Verdict.passes
    assert evaluate_terms(terms, Machine(platform="ROCM"), {})[0] == Verdict.passes
    assert evaluate_terms(terms, Machine(platform="ROCM", env={"SGLANG_USE_AITER": "1"}), {})[0] == Verdict.fails


@pytest.mark.parametrize("text", ["self.use_marlin", "deep_gemm_wrapper.ENABLE_JIT_DEEPGEMM",
                                  "isinstance(x, tuple)", "is_npu_arch35()", "backend == 'auto'", "1 +"])
def test_anything_else_is_opaque_never_guessed(text):
    terms = sg.translate("Fp8LinearMethod", text)  # no server argument is known for this registry
    assert sg.is_opaque(terms)
    assert evaluate_terms([GateTerm(**x) for x in terms], Machine(platform="CUDA", cc=90), {})[0] == Verdict.unknown


def test_the_shipped_terms_are_the_translators_reading_of_every_stored_gate():
    checked = 0
    for reg in HIST.file.registry:
        texts = {g for o in reg.orderings for g in o.gates}
        assert {t.gate for t in reg.terms} == texts, reg.name
        for t in reg.terms:
            want = [GateTerm(**{k: v for k, v in x.items() if k != "source"}) for x in _strip(sg.translate(reg.name, t.gate))]
            assert t.terms == want, (reg.name, t.gate)
            checked += 1
    assert checked > 30


def _strip(terms):
    return [{k: ([_strip(o) for o in v] if k == "options" else v) for k, v in x.items() if k != "source"} for x in terms]


MACHINES = [Machine(platform="CUDA", cc=cc, cuda=cuda, packages=frozenset(pk))
            for cc, cuda, pk in itertools.product([75, 80, 86, 89, 90, 100, 103, 110, 120, 121],
                                                  ["12.4", "12.8", "13.0"], [(), ("flashinfer", "deep_gemm")])]


def _first(rung_terms, m, facts):
    """The rung an if/elif chain takes on ``m``: the first whose terms pass after every earlier
    one failed; None when an unknown comes first (undetermined)."""
    for name, terms in rung_terms:
        v = Verdict.unknown if terms is None else evaluate_terms(terms, m, facts)[0]
        if v == Verdict.passes:
            return name
        if v == Verdict.unknown:
            return None
    return "exhausted"


def test_translated_terms_agree_with_each_snapshots_hand_encoded_terms():
    """For each snapshot release, the chain walked with the translated terms of its own gate
    texts picks the same rung as the chain walked with the hand-encoded terms (snapshot
    registry / kernel gates; at 0.5.23 also the planning overlay's), wherever both decide."""
    ov = load_overlay("sglang")
    compared, narrower, registries = 0, 0, set()
    facts = {"group_size": ["16"], "input_dtype": ["bfloat16"]}
    for rel in SNAPSHOTS:
        lf = SGL.ladders[rel]
        for reg in lf.registry:
            if reg.name not in HIST.derived:
                continue
            mg = moe_gates(ov, reg.name, rel) if rel == max(SNAPSHOTS, key=lambda v: tuple(map(int, v.split(".")))) else None
            for p, rungs in reg.platforms.items():
                texts = HIST.gates(rel, reg.name, p)
                if len(texts) != len(rungs):
                    continue
                mine = [(k, [GateTerm(**x) for x in sg.translate(reg.name, g)]) for k, g in zip(rungs, texts)]
                hand = []
                for k in rungs:
                    kern = lf.kernel.get(k)
                    terms = (mg.gates[k] if mg and k in mg.gates else reg.gates.get(k) or (kern.gates if kern else []))
                    hand.append((k, list(terms) or None))
                if all(t is None for _, t in hand):
                    continue
                hand_of = dict(hand)
                for m in MACHINES:
                    a, b = _first(mine, m, facts), _first(hand, m, facts)
                    if a is None or b is None:
                        continue
                    if a != b:
                        # the chain's test dispatches to ``a``; the hand terms record why it is not
                        # taken or cannot run here (is_blackwell, flashinfer installed, the
                        # server-args model overrides of SM110/SM120): they must rule ``a`` out
                        assert a != "exhausted" and evaluate_terms(hand_of[a] or [], m, facts)[0] == Verdict.fails, (
                            rel, reg.name, m.describe(), a, b)
                        narrower += 1
                    else:
                        compared += 1
                        registries.add(reg.name)
    assert compared > 50 and narrower < compared  # measured: 96 agree, 84 where the hand terms narrow
    # dispatch_w8a8_block_fp8_linear never decides: its first rung (deep_gemm_wrapper.ENABLE_JIT_DEEPGEMM) is opaque
    assert {"initialize_fp4_gemm_config", "ModelOptNvFp4FusedMoEMethod.create_moe_runner"} <= registries


def test_a_release_whose_gate_differs_from_the_snapshot_evaluates_its_own_terms():
    # 0.5.11 (base snapshot 0.5.10, which records no FP4 terms; the cudnn rung is gone by 0.5.23)
    lf = SGL.ladders["0.5.11"]
    reg = next(r for r in lf.registry if r.name == "initialize_fp4_gemm_config")
    assert reg.platforms["CUDA"] == ["flashinfer_cudnn", "flashinfer_cutlass"]
    assert set(reg.own_gates) == {"flashinfer_cudnn", "flashinfer_cutlass"}
    cudnn = reg.gates["flashinfer_cudnn"]
    assert [t.kind for t in cudnn] == ["option", "platform", "cc_family", "cuda_min"] and cudnn[2].major == 12
    assert evaluate_terms(cudnn, Machine(platform="CUDA", cc=120, cuda="12.8"), {})[0] == Verdict.passes
    assert evaluate_terms(cudnn, Machine(platform="CUDA", cc=100, cuda="12.8"), {})[0] == Verdict.fails
    # 0.5.19 spells 0.5.16's test get_platform().is_sm100: same terms, the snapshot's hand terms stay
    reg = next(r for r in SGL.ladders["0.5.19"].registry if r.name == "initialize_fp4_gemm_config")
    assert HIST.gate_of("0.5.19", reg.name, "CUDA", "flashinfer_cutedsl") != HIST.gate_of("0.5.16", reg.name, "CUDA", "flashinfer_cutedsl")
    assert "flashinfer_cutedsl" not in reg.own_gates and "flashinfer_cutedsl" not in reg.gates
    assert SGL.ladders["0.5.19"].kernel["flashinfer_cutedsl"].gates == SGL.ladders["0.5.16"].kernel["flashinfer_cutedsl"].gates


def test_a_gate_with_no_recorded_terms_is_opaque_and_named_for_its_release():
    bare = HIST.file.model_copy(update={"registry": [r.model_copy(update={"terms": []}) for r in HIST.file.registry]})
    lf = compose(LadderHistory(bare), "0.5.13", SGL.ladders.snapshots)
    reg = next(r for r in lf.registry if r.name == "dispatch_w8a8_block_fp8_linear")
    (t,) = reg.gates["cutlass-block-fp8"]
    assert t.kind == "opaque" and "cutlass-block-fp8 gate not known for 0.5.13" in t.text
    assert "_check_cutlass_block_fp8_hardware_support()" in t.text and "0.5.23" in t.text
    # the planning overlay's 0.5.23 terms (sm120 only) are not used for 0.5.13's code
    assert evaluate_terms(reg.gates["cutlass-block-fp8"], Machine(platform="CUDA", cc=90), {})[0] == Verdict.unknown


def test_ladder_says_the_gate_is_the_releases_own_and_not_structured():
    r = CliRunner().invoke(cli, ["ladder", "sglang", "FP8-BLOCK", "--gpu", "H100", "--engine-version", "0.5.13"])
    assert r.exit_code == 0, r.output
    row = next(line for line in r.output.splitlines() if "cutlass-block-fp8" in line)
    assert "unknown" in row and "0.5.13's own gate" in r.output
    r = CliRunner().invoke(cli, ["ladder", "sglang", "FP8-BLOCK", "--gpu", "H100", "--engine-version", "0.5.23"])
    row = next(line for line in r.output.splitlines() if "cutlass-block-fp8" in line)
    assert "fails" in row  # 0.5.23's own code: CUTLASS block FP8 only on sm120
