"""Ranking two kernels of one layer family across lists of different length (``baseline.compare``).

A rung number is a position on one list: vLLM 0.20.0's NVFP4 MoE oracle list has 7 backends, 0.25.0's
8 (HUMMING added above EMULATION), and a run's logged candidate list (``LadderPosition.logged_list``)
holds only what that process kept. "Rung 4 of 9" and "rung 5 of 11" say nothing about a move, so two
sides are compared by kernel identity (the ladder class, else the logged name) and by which of the
two kernels a list holding both tries first. No list ranking them is said, never read as "same".
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ..packs.loader import PackSet
    from .baseline import FamilyState


def names_of(lad, packs: Optional["PackSet"], engine: Optional[str]) -> Optional[list[str]]:
    """The rungs a placement counts on: its logged list, else the shipped list (from ``packs``)."""
    if lad is None:
        return None
    if lad.logged_list:
        return list(lad.logged_list)
    pack = packs.packs.get(engine or "") if packs is not None else None
    if pack is None:
        return None
    try:
        ladder = pack.ladders[lad.ladder_version]
    except KeyError:
        return None
    reg = next((r for r in ladder.registry if r.name == lad.registry), None)
    rungs = reg.platforms.get(lad.platform) if reg is not None else None
    return list(rungs) if rungs and len(rungs) == lad.rungs else None


def _key(name: Optional[str]) -> str:
    from ..analysis.ladders import norm

    return norm(name or "")


def same_kernel(o: "FamilyState", n: "FamilyState") -> bool:
    """One kernel on both sides: the same ladder class, or the same logged name."""
    return _key(o.kernel) == _key(n.kernel) or bool(o.kernel_class and _key(o.kernel_class) == _key(n.kernel_class))


def _at(names: Optional[list[str]], st: "FamilyState") -> Optional[int]:
    """Where ``st``'s kernel sits on ``names`` (by class, else by logged name), or None."""
    keys = {_key(st.kernel_class), _key(st.kernel)} - {""}
    return next((i for i, x in enumerate(names or []) if _key(x) in keys), None)


def rank(o: "FamilyState", n: "FamilyState") -> tuple[Optional[str], str]:
    """Two different kernels on lists of one registry and platform, ranked by kernel identity:
    on each side's list that holds both, which one the engine tries first. Never by raw rung
    numbers, which a list that gained or lost rungs renumbers (rung 4 of 9 vs rung 5 of 11).
    ``(None, why)`` when no list holds both, or the two lists order them differently."""
    votes = {}
    sides = (("new", n.names), ("baseline", o.names)) if n.names != o.names else (("one", n.names),)
    for side, names in sides:
        i, j = _at(names, o), _at(names, n)
        if i is not None and j is not None:
            on = "on the list both sides count on" if side == "one" else f"on the {side}'s list"
            votes[side] = ("down" if j > i else "up", f"{on} {n.kernel} is rung {j + 1}/{len(names)}, "
                                                       f"{o.kernel} rung {i + 1}/{len(names)}")
    if not votes:
        if (o.names is None and n.names is None and o.rungs == n.rungs and o.ladder_version == n.ladder_version
                and o.rung != n.rung):
            # one shipped list (same release, same length), its rungs unknown here: numbers compare
            return ("down" if n.rung > o.rung else "up"), f"rung {o.rung_text()} -> {n.rung_text()} on one list"
        return None, (f"no list of {n.registry} ({n.platform}) known here holds both {o.kernel} and {n.kernel}: "
                      "their order is unknown")
    if len({v for v, _ in votes.values()}) > 1:
        return None, "the two lists order them differently (" + "; ".join(w for _, w in votes.values()) + ")"
    status, _ = next(iter(votes.values()))
    return status, "; ".join(w for _, w in votes.values())
