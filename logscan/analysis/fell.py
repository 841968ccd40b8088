"""Which skipped rungs a selection "fell" below: only those better by cost class that could have passed.

Ladder order is the engine's try order, not quality: vLLM's ``_POSSIBLE_FP8_KERNELS`` lists
the weight-only ``MarlinFP8ScaledMMLinearKernel`` (forced only by an environment variable in
0.26) above the native torch rungs. A rung counts as fallen below when

1. its cost class is strictly better than the selected one's (``outcomes.CAPABILITY``), and
2. its gate does not fail on what is known of the machine (platform, and the GPU when the log
   or ``--gpu`` names it); the gate read with the planning overlay and the hardware floors
   (``overlay.rung_terms``).

Each such rung comes with the words of the gate that stopped it (or could have), or, when the
log's own environment disabled it (run fact ``disabled_kernels``, set by a rule of the engine's
pack, e.g. vLLM's ``VLLM_DISABLED_KERNELS`` in kernels/linear/__init__.py, which skips a listed
kernel before any gate), with that switch: the reason it was skipped is the log's, not the GPU's.
"""
from __future__ import annotations

from typing import Optional

from ..packs.model import LadderFile, Registry
from .gates import Machine, Verdict, evaluate_terms
from .outcomes import capability_rank
from .words import gate_words, term_words

#: gate terms about the GPU's architecture: a rung one of which fails is refused by the GPU itself
_ARCH_KINDS = frozenset({"cc_min", "cc_eq", "cc_family", "cc_range", "gfx", "any_of"})


def better_skipped(ladder: LadderFile, reg: Registry, rungs: list[str], index: int, cost: str,
                   machine: Optional[Machine], disabled: Optional[dict[str, str]] = None,
                   refused: Optional[dict[str, str]] = None) -> dict[str, str]:
    """Rungs above ``index`` better by cost class than ``cost`` and possible on ``machine``:
    rung name -> its gate in words (``always available`` when it records none).

    ``disabled``: kernel class -> the switch that disabled it in the log (``{"CutlassFp8BlockScaledMMKernel":
    "VLLM_DISABLED_KERNELS"}``); such a rung, when its gate does not fail anyway, is said disabled
    by that switch instead of giving its gate.

    ``refused``: when given, filled with the rungs above, better by cost class, whose gate fails on
    what is known of the GPU (its compute capability or ROCm arch): rung name -> the failing needs
    in words with what the machine has (``an sm10x GPU (sm100-sm109) (sm90)``). They are not
    fallen below (the GPU cannot run them), but the report still says why each was refused."""
    from .floors import shown
    from .overlay import load_overlay, moe_gates, rung_terms

    ov = load_overlay(ladder.engine)
    mg = moe_gates(ov, reg.name, ladder.version) if reg.kind in ("moe", "if_chain") else None
    m = machine or Machine()
    mine = capability_rank(cost)
    out: dict[str, str] = {}
    # the platform of the list placed on: a floor term for another platform is not shown
    plat = next((p for p, names in reg.platforms.items() if names == rungs and p != "ANY"), m.platform)
    for name in rungs[:index]:
        k = ladder.kernel.get(name)
        rc = reg.cost.get(name) or (k.cost_class if k else "unknown")
        if capability_rank(rc) >= mine:
            continue
        terms, _, _ = rung_terms(ladder, reg, name, ov, mg)  # the gate ladder walks (floors too)
        verdict, results = evaluate_terms(terms, m, {})
        if verdict == Verdict.fails:
            failing = [r for r in results if r.verdict == Verdict.fails]
            if refused is not None and any(r.term.kind in _ARCH_KINDS for r in failing):
                # on ROCm the GPU is its gfx arch, never an sm number (a gate reads its (major, minor))
                refused[name] = "; ".join(f"{term_words(r.term)} ({m.gfx if m.gfx and r.term.kind in _ARCH_KINDS else r.why})"
                                          for r in failing)
            continue
        if disabled and name in disabled:
            out[name] = f"{disabled[name]} not to list it (the log's own switch disabled it, before its gate)"
            continue
        out[name] = gate_words(shown(terms, plat)) if terms else (k.gate if k and k.gate else "gate not recorded")
    return out
