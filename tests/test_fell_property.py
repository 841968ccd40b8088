"""Property: every rung a selection "fell" below is better by cost class and possible on the machine.

Ladder order is the engine's try order, not quality (issue 15 case 6). For any shipped ladder,
registry, platform, selected rung and machine, each rung ``place`` names in ``above`` must have
a strictly better cost class than the selected one, and its gate must not fail on the machine
(checked with the scenario evaluator, an evaluation path independent of ``gates.evaluate``).
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from logscan.analysis.gates import Machine, Verdict
from logscan.analysis.gpus import gpu_file
from logscan.analysis.ladders import LadderIndex
from logscan.analysis.outcomes import capability_rank
from logscan.analysis.overlay import load_overlay, moe_gates, rewrite
from logscan.analysis.scenarios import World, eval_terms, initial_domains
from logscan.packs.loader import default_packs

PACKS = default_packs()
CASES = [(eng, rel, reg.name, plat, i)
         for eng, pack in sorted(PACKS.packs.items()) for rel, lf in sorted(pack.ladders.items())
         for reg in lf.registry if reg.kind != "attention"
         for plat, rungs in sorted(reg.platforms.items()) for i in range(len(rungs))]
GPUS = sorted({(e.cc, e.platform) for e in gpu_file().gpu.values() if e.cc is not None})
PKGS = ["flashinfer", "flashinfer.cute_dsl", "b12x", "deep_gemm", "humming", "quark"]


def _cost(lf, reg, name):
    k = lf.kernel.get(name)
    return reg.cost.get(name) or (k.cost_class if k else "unknown")


@settings(max_examples=int(__import__("os").environ.get("FELL_EXAMPLES", "400")), deadline=None)
@given(st.sampled_from(CASES), st.sampled_from(GPUS), st.sets(st.sampled_from(PKGS)), st.booleans())
def test_every_fell_rung_is_better_and_possible(case, gpu, pkgs, know_gpu):
    eng, rel, regname, plat, i = case
    pack = PACKS.packs[eng]
    lf = pack.ladders[rel]
    reg = next(r for r in lf.registry if r.name == regname)
    rungs = reg.platforms[plat]
    cc, gplat = gpu
    machine = Machine(platform=gplat if plat == "ANY" else plat, cc=cc if know_gpu else None,
                      packages=frozenset(pkgs))
    hint = "^" + regname.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.").replace("[", r"\[") + "$"
    pos = LadderIndex(pack)._find(rungs, reg, lf, rungs[i])
    if pos != i:  # a name that places on an earlier rung (an alias) is not this case
        return
    chosen = _cost(lf, reg, rungs[i])
    from logscan.analysis.fell import better_skipped

    skipped = better_skipped(lf, reg, rungs, i, chosen, machine)
    assert len(skipped) <= i
    ov = load_overlay(eng)
    mg = moe_gates(ov, reg.name, rel) if reg.kind in ("moe", "if_chain") else None
    for name in skipped:
        assert rungs.index(name) < i
        assert capability_rank(_cost(lf, reg, name)) < capability_rank(chosen), (name, rungs[i])
        k = lf.kernel.get(name)
        base = mg.gates[name] if mg is not None and name in mg.gates and name not in reg.own_gates else (reg.gates.get(name) or (k.gates if k else []))
        terms, _ = rewrite(ov, name, list(base))
        ccs = list(range(30, 131))  # any compute capability: the GPU table need not hold every family
        verdict, _ = eval_terms(terms, World(machine, {}, initial_domains([terms], machine, {}, ccs)))
        assert verdict != Verdict.fails, (name, machine)
    assert hint  # the registry name is usable as a placement hint


def test_place_names_only_better_possible_rungs_on_a_real_fixture():
    """vLLM 0.26 FP8: PerTensorTorch (native) did not fall below the weight-only Marlin rung."""
    pack = PACKS.packs["vllm"]
    pl = LadderIndex(pack).place("0.26.0", "PerTensorTorchFP8ScaledMMLinearKernel", "^fp8 linear$", "CUDA")
    assert pl is not None and pl.position.rung > 1
    assert "MarlinFP8ScaledMMLinearKernel" not in pl.position.above
    assert pl.position.fell == len(pl.position.above) == len(pl.position.stopped_by)
    em = LadderIndex(pack).place("0.26.0", "EmulationMxfp8LinearKernel", "^mxfp8 linear$", "CUDA",
                                 machine=Machine(platform="CUDA", cc=70))
    assert em is not None and em.position.above == []  # on a V100 no better MXFP8 rung could pass
    em = LadderIndex(pack).place("0.26.0", "EmulationMxfp8LinearKernel", "^mxfp8 linear$", "CUDA",
                                 machine=Machine(platform="CUDA", cc=80))
    assert em.position.above == ["MarlinMxfp8LinearKernel"] and "sm75" in em.position.stopped_by["MarlinMxfp8LinearKernel"]
