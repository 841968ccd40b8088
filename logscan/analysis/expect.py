"""Expected versus observed rung: did the log land lower than the described GPU should reach?

For a selection placed on a ladder, every rung above the observed one is evaluated for the
machine (``gates.evaluate_terms``). A rung whose hardware terms pass (the silicon can take it,
software assumed present) and whose cost class is better than the observed one means the
engine skipped a reachable rung: ``UNEXPECTED_FALLBACK``. The candidates for why are that
rung's software terms that do not pass for the description (CUDA runtime floor, optional
package, build flag, environment): an inference from the ladder's gates, never an observation.
"""
from __future__ import annotations

from typing import Optional

from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..models import COST_ORDER, CostClass
from ..packs.model import GateTerm, LadderFile
from .gates import HARDWARE_KINDS, Machine, Verdict, describe, evaluate, evaluate_terms


@dataclass(frozen=True)
class Skipped:
    """A better rung above the observed one that the machine's hardware could take."""

    kernel: str
    rung: int
    cost_class: str
    candidates: list[str]  #: the software gate terms that may have refused it, with their status


def _rank(cost: str) -> int:
    """Higher is better: COST_ORDER runs worst (dequant_at_load) to best (native)."""
    order = {c.value: i for i, c in enumerate(COST_ORDER)}
    return order.get(cost, order[CostClass.unknown.value])


_PHRASE = {
    "cuda_min": "CUDA runtime below {version}",
    "torch_min": "torch below {version}",
    "package": "{name} not installed",
    "build": "a build without {flag}",
    "env": "{name} set against it",
    "option": "{name} not set to {values}",
}


def _phrase(t: GateTerm) -> str:
    tmpl = _PHRASE.get(t.kind)
    if tmpl is None:
        return "unstructured gate: " + (t.text or describe(t)) if t.kind == "opaque" else f"{describe(t)} not met"
    return tmpl.format(version=t.version, name=t.name, flag=t.flag, values="|".join(t.values))


def _candidates(terms: list[GateTerm], machine: Machine, facts: dict[str, list[str]]) -> list[str]:
    """Software reasons a hardware-reachable rung may have refused: its non-passing soft terms,
    phrased as causes, each with its status for the description (inside alternatives, the one
    alternative the hardware allows)."""
    out: list[str] = []
    for t in terms:
        if t.kind in HARDWARE_KINDS:
            continue
        if t.kind == "any_of":
            for opt in t.options:
                if evaluate_terms(opt, machine, facts, optimistic=True)[0] == Verdict.passes:
                    out += _candidates(opt, machine, facts)
                    break
            continue
        r = evaluate(t, machine, facts)
        if r.verdict == Verdict.passes:
            continue
        status = "possible: not described" if r.verdict == Verdict.unknown else f"so described: {r.why}"
        out.append(f"{_phrase(t)} ({status})")
    return out


def skipped_rungs(ladder: LadderFile, registry: str, platform: str, rung: int, observed_cost: str,
                  machine: Machine, facts: Optional[dict[str, list[str]]] = None) -> list[Skipped]:
    """Rungs above ``rung`` (1-based) of ``registry`` on ``platform`` that the hardware can take and
    whose cost class is better than ``observed_cost`` (COST_ORDER: native best). Empty when the GPU is unknown."""
    if machine.cc is None:
        return []
    reg = next((r for r in ladder.registry if r.name == registry), None)
    if reg is None or platform not in reg.platforms:
        return []
    facts = facts or {}
    out = []
    for i, name in enumerate(reg.platforms[platform][: max(rung - 1, 0)]):
        k = ladder.kernel.get(name)
        gates = reg.gates.get(name) or (k.gates if k else [])
        if not gates:
            continue
        cost = reg.cost.get(name) or (k.cost_class if k else "unknown")
        if cost == "unknown" or _rank(cost) <= _rank(observed_cost):
            continue
        hw, _ = evaluate_terms(gates, machine, facts, optimistic=True)
        if hw != Verdict.passes:
            continue
        v, _ = evaluate_terms(gates, machine, facts)
        if v == Verdict.passes:
            cands = ["every gate term passes for the described machine: a rung the engine should have taken"]
        else:
            cands = _candidates(gates, machine, facts)
        out.append(Skipped(kernel=name, rung=i + 1, cost_class=cost, candidates=cands))
    return out
