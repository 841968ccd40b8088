"""A candidate list the engine logs is the running process's own ladder.

Some selection lines print the list the choice was made from, in try order: vLLM's MoE oracles
(``fused_moe/oracle/{nvfp4,fp8,int8,w4a8_int8,unquantized}.py`` 0.18.1 ->, "Using 'MARLIN' NvFp4
MoE backend out of potential backends: ['FLASHINFER_TRTLLM', 'FLASHINFER_CUTLASS', 'MARLIN']"):
the ``available_backend_strs`` of that process, after its own filtering (an environment switch
that drops the FlashInfer backends, vllm-project/vllm#43379) and its own ordering
(``_get_priority_backends``). A rule hands it over in its ``candidates`` group; any engine's
sentence that prints such a list needs only that capture.

That list, not the shipped one of a guessed release, is what the selection fell through:

- ``on_logged_list``: the rung, the rung count and the better rungs skipped are counted on the
  logged list (each item spelled as the shipped ladder spells it, for its gate and cost class);
  the inferred releases cannot disagree on it (no ``elsewhere``);
- ``fitting_releases``: the shipped releases whose list for that registry holds the logged items
  in the logged order (equal, or with more rungs between them) are an era hint.

Fail closed: a list cut short (``...``) or one that does not name the selected kernel leaves
the shipped placement as it was. A choice absent from the list it was made "out of"
(``off_list``: vllm-101 / vllm-009 "Using 'FLASHINFER_B12X' NvFp4 MoE backend out of potential
backends: ['FLASHINFER_TRTLLM', ..., 'EMULATION']") contradicts the line's own words: vLLM's
oracles print the same ``_make_log_backend`` line for an explicitly requested backend
(``_return_or_raise`` under "Handle explicit moe_backend from user", fused_moe/oracle/nvfp4.py
0.20.0 ->), and a build whose enum has a member its list lacks prints it too. The selection says
so (``reasoning``) and the run's "not understood" list gets an entry (kind ``off_list``): neither
a warning nor a rung, since the kernel itself may be native and fine.
"""
from __future__ import annotations

from typing import Optional

from .. import rxcache
from ..models import CostClass, Event, Unexplained
from .ladders import LadderIndex, Placement, norm, role_registries

#: one item of a logged list: quoted, or a bare name
_ITEM = rxcache.compile(r"""'([^']{1,120})'|"([^"]{1,120})"|([^\s,'"\[\]]{1,120})""")

#: the most items a list may hold (a line's list longer than any ladder is not one)
_MAX_ITEMS = 64


def candidate_list(text: Optional[str]) -> list[str]:
    """The items of a logged list (``['A', 'B']``, ``[A, B]`` or ``A, B``), in order; ``[]``
    for none, a list cut short (an item ``...``) or one naming an item twice."""
    if not text:
        return []
    items = [next(g for g in m.groups() if g is not None).strip() for m in _ITEM.finditer(text)]
    items = [i for i in items if i]
    if not items or len(items) > _MAX_ITEMS or any("..." in i or "…" in i for i in items):
        return []
    if len({norm(i) for i in items}) != len(items):
        return []
    return items


def logged_candidates(ev: Event) -> list[str]:
    """The candidate list an event's rule captured (group ``candidates``), else ``[]``."""
    return candidate_list(ev.groups.get("candidates"))


def _positions(rungs: list[str], reg, ladder, cands: list[str]) -> Optional[list[int]]:
    """Where each logged item sits on ``rungs``, when all do in the logged order; else None."""
    out: list[int] = []
    for c in cands:
        i = LadderIndex._find(rungs, reg, ladder, c)
        if i is None or (out and i <= out[-1]) or norm(rungs[i]) != norm(c) and not _exact_alias(reg, ladder, rungs[i], c):
            return None
        out.append(i)
    return out


def _exact_alias(reg, ladder, rung: str, name: str) -> bool:
    """``name`` is ``rung`` by a registry or kernel alias (not by ``_find``'s short-label guess)."""
    n = norm(name)
    k = ladder.kernel.get(rung)
    return (reg.aliases.get(name) == rung or any(norm(a) == n and m == rung for a, m in reg.aliases.items())
            or bool(k and any(norm(a) == n for a in k.aliases)))


def fitting_releases(idx: LadderIndex, cands: list[str], hint: Optional[str],
                     platform: Optional[str]) -> set[str]:
    """Shipped releases with a list (a registry whose role ``hint`` matches; ``platform``'s or an
    ``ANY`` list, every platform's when None) holding ``cands`` in their logged order. Memoised
    per index (a crash loop logs the same list in every run)."""
    memo = idx._fitting_memo
    key = (hint, tuple(cands), platform)
    if key not in memo:
        if len(memo) > 1024:
            memo.clear()
        memo[key] = frozenset(_fitting(idx, cands, hint, platform))
    return set(memo[key])


def _fitting(idx: LadderIndex, cands: list[str], hint: Optional[str], platform: Optional[str]) -> set[str]:
    plat = platform.upper() if platform else None
    out: set[str] = set()
    for rel in idx.releases:
        ladder = idx.pack.ladders[rel]
        for reg in role_registries(ladder, hint):
            if any(_positions(rungs, reg, ladder, cands) is not None for p, rungs in reg.platforms.items()
                   if plat is None or p in (plat, "ANY")):
                out.add(rel)
                break
    return out


def _holding(ladder, placement: Placement, cands: list[str], hint: Optional[str]):
    """``(registry, platform)`` of the release's list that holds ``cands`` in order and the
    placed class (a registry the role ``hint`` matches, on the placed platform or ``ANY``): vLLM
    0.15.0 has both the if-chain and the ``AVAILABLE_BACKENDS`` list for FP8 MoE, and the logged
    list is the second. The placement's own list when none does."""
    pos = placement.position
    for reg in role_registries(ladder, hint):
        for p, rungs in reg.platforms.items():
            if (p in (pos.platform, "ANY") and pos.kernel_class in rungs
                    and _positions(rungs, reg, ladder, cands) is not None):
                return reg, p
    return placement.registry, pos.platform


def on_logged_list(idx: LadderIndex, placement: Placement, kernel: str, cands: list[str], line: int,
                   hint: Optional[str] = None, machine=None,
                   disabled: Optional[dict[str, str]] = None) -> Optional[Placement]:
    """``placement`` (from the shipped ladder) moved onto the run's logged list ``cands``: rung
    ``k/len(cands)``, the better rungs skipped only those the list names above it. None when
    the list does not name ``kernel`` (or the placed class), or is no list (see ``candidate_list``)."""
    from .fell import better_skipped
    from .gates import Machine

    pos = placement.position
    if not cands:
        return None
    ladder = idx.pack.ladders[pos.ladder_version]
    reg, plat = _holding(ladder, placement, cands, hint)
    shipped = reg.platforms.get(plat, [])
    named = []  # each logged item as the shipped list spells it, else as logged
    for c in cands:
        i = LadderIndex._find(shipped, reg, ladder, c)
        named.append(shipped[i] if i is not None and (norm(shipped[i]) == norm(c)
                                                       or _exact_alias(reg, ladder, shipped[i], c)) else c)
    want = {norm(kernel), norm(pos.kernel_class)}
    at = next((i for i, (c, n) in enumerate(zip(cands, named)) if norm(c) in want or norm(n) in want), None)
    if at is None:
        return None
    k = ladder.kernel.get(named[at])
    cost = reg.cost.get(named[at]) or (k.cost_class if k else placement.cost_class.value)
    m = machine or Machine(platform=plat if plat != "ANY" else "CUDA")
    refused: dict[str, str] = {}
    stopped = better_skipped(ladder, reg, named, at, cost, m, disabled, refused)
    new = pos.model_copy(update={
        "registry": reg.name, "role": reg.role, "platform": plat, "kernel_class": named[at],
        "min_capability": k.min_capability if k else None, "gate": (k.gate or None) if k else None,
        "rung": at + 1, "rungs": len(named), "fell": len(stopped), "above": list(stopped),
        "stopped_by": dict(stopped), "elsewhere": [], "logged_list": named, "logged_line": line,
        "holds_in": f"this run ({logged_list_words(line)})", "refused_on_gpu": refused or None,
    })
    return Placement(new, CostClass(cost), reg)


def logged_list_words(line: int) -> str:
    """How reports name a run's logged candidate list (``LadderPosition.logged_line``): 'the
    candidate list line N logs' (the rung line, the inferred cost's reasoning, ``holds_in``)."""
    return f"the candidate list line {line} logs"


def rung_names(reg, pos) -> list[str]:
    """The rungs ``pos`` counts on: the run's logged list when it has one, else the shipped list."""
    return list(pos.logged_list) if pos.logged_list else reg.platforms.get(pos.platform, [])


#: the kind of the "not understood" entry ``off_list`` gives
OFF_LIST = "off_list"
#: how the ``reasoning`` of such a selection starts
OFF_LIST_NOTE = "not on its logged list:"


def off_list(kernel: str, cands: list[str], placement: Optional[Placement]) -> bool:
    """Whether a logged candidate list ``cands`` (``candidate_list``: a whole list) names neither
    the selected ``kernel`` nor, when the shipped ladder placed it, the placed class (or one of its
    registry or kernel aliases). False for no list."""
    if not cands:
        return False
    want = {norm(kernel)}
    if placement is not None:
        want.add(norm(placement.position.kernel_class))
        reg = placement.registry
        want |= {norm(a) for a, m in reg.aliases.items() if m == placement.position.kernel_class}
    return not any(norm(c) in want for c in cands)


def off_list_note(kernel: str, cands: list[str], line: int, placed: bool) -> str:
    """Why a choice absent from its own candidate list is not placed on it (``reasoning``,
    starting with ``OFF_LIST_NOTE``)."""
    shown = ", ".join(cands[:8]) + (", ..." if len(cands) > 8 else "")
    return (f"{OFF_LIST_NOTE} line {line} chose {kernel} 'out of' {len(cands)} candidate(s) that do not include it: "
            "the choice was forced (an explicitly requested backend, --moe-backend: vLLM's MoE oracles print "
            "the full list for it too, fused_moe/oracle/*.py _return_or_raise) or this build's list differs "
            "from the one it printed; "
            + ("its rung is the shipped ladder's, not the logged list's" if placed
               else "its place on the ladder is unknown")
            + f" (logged list: {shown})")


def off_list_entry(ev: Event, note: str) -> Unexplained:
    """The run's "not understood" entry for a choice absent from the list its line logs."""
    return Unexplained(line=ev.line, rule=ev.rule, kind=OFF_LIST, message=ev.message[:2000], why=note)
