"""The set of outcomes of a walked ladder: each kernel the engine can pick here, with its condition.

Built on ``scenarios.explore`` (split on each unknown fact). Outcomes are ordered most capable
first (cost class: native, activation_upcast, portable, weight_only, emulated, dequant_at_load;
then ladder order) and the refusal, if any world reaches it, last. One outcome is a certain
answer; several are a conditional one and none of them is a guess.
"""

from typing import Optional

from dataclasses import field

from ..plain import PlainModel, plain

from ..packs.model import GateTerm
from .gates import Machine
from .scenarios import World, condition, explore, initial_domains, merge, restricted

#: best first; a refusal ranks after every kernel
CAPABILITY = ["native", "activation_upcast", "portable", "weight_only", "emulated", "dequant_at_load", "unknown"]


def capability_rank(cost_class: Optional[str]) -> int:
    """0 for native ... len(CAPABILITY) for a refusal or an unknown class name."""
    return CAPABILITY.index(cost_class) if cost_class in CAPABILITY else len(CAPABILITY)


@plain
class Outcome(PlainModel):
    """One possible answer: the rung that wins (None: the load fails) and when."""

    kernel: Optional[str] = None
    cost_class: Optional[str] = None
    rung: Optional[int] = None  #: 1-based
    when: list[list[str]] = field(default_factory=list)  #: alternatives, each a conjunction of facts in words
    refused: bool = False  #: every rung refuses (or the scheme gate does): the layer does not load
    undetermined: bool = False  #: splitting stopped before a verdict

    def condition_text(self, limit: Optional[int] = None) -> str:
        """``if A and B, or if C`` / ``always``; with ``limit``, at most that many alternatives
        are spelled out and the rest counted (``or in 5 other cases``): the matrix's one-row note
        stays readable while ``when`` (JSON, ``logscan explain``) keeps every alternative."""
        alts = [" and ".join(c) for c in self.when if c]
        if len(alts) < len(self.when) or not alts:
            return "always" if not alts else "if " + ", or if ".join(alts) + " (or always)"
        if limit is not None and len(alts) > limit:
            rest = len(alts) - limit
            return "if " + "; or if ".join(alts[:limit]) + f"; or in {rest} other case" + ("s" if rest > 1 else "")
        return "if " + "; or if ".join(alts)


def outcomes(rungs: list[tuple[str, str, list[GateTerm]]], scheme_gate: list[GateTerm], machine: Machine,
             facts: dict[str, list[str]], holds: list[str], ccs: list[int]) -> list[Outcome]:
    """Outcomes of a ladder (``rungs``: name, cost class, gate terms) on ``machine`` for ``facts``."""
    init = initial_domains([g for _, _, g in rungs] + [scheme_gate], machine, facts, ccs)
    for key in holds:
        init[("prop", key)] = frozenset({True})
    leaves = explore([g for _, _, g in rungs], scheme_gate, World(machine, facts, init))
    by: dict[tuple, Outcome] = {}
    raw: dict[tuple, list[dict]] = {}
    for leaf in leaves:
        if leaf.rung is None:
            key = ("undetermined",) if leaf.undetermined else ("refused",)
            o = by.setdefault(key, Outcome(refused=not leaf.undetermined, undetermined=leaf.undetermined))
        else:
            name, cost, _ = rungs[leaf.rung]
            o = by.setdefault(("rung", leaf.rung), Outcome(kernel=name, cost_class=cost, rung=leaf.rung + 1,
                                                          undetermined=leaf.undetermined))
        raw.setdefault(next(k for k, v in by.items() if v is o), []).append(restricted(leaf.world))
    world = World(machine, facts, init)
    for key, o in by.items():
        o.when = [condition(world, a) for a in merge(raw[key], init)]
    out = list(by.values())
    for o in out:
        if len(out) == 1:
            o.when = [[]]
        elif [] in o.when:
            o.when = [[]]
    out.sort(key=lambda o: (o.refused or o.undetermined, capability_rank(o.cost_class), o.rung or 0))
    return out


def summary(outs: list[Outcome], exhausted: str = "", limit: Optional[int] = None) -> str:
    """One sentence: ``A (native) if X; B (native) if Y; else the layer fails to load (...)``;
    ``limit``: alternatives spelled out per outcome (see ``Outcome.condition_text``)."""
    parts = []
    for i, o in enumerate(outs):
        if o.refused:
            head = "the layer fails to load" + (f" ({exhausted})" if exhausted else "")
        elif o.undetermined:
            head = "not determined: no recorded rung passes here (what runs is not recorded)"
        else:
            head = f"{o.kernel} ({o.cost_class})"
        cond = o.condition_text(limit)
        parts.append(head if cond == "always" else f"{head} {cond}")
    return "; ".join(parts)
