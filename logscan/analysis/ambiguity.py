"""Several kernels named for one MoE layer family: which one runs is not in the log.

An engine chooses one MoE method (and one kernel) for all the MoE layers of a model, yet a log
can name several. vLLM 0.10-0.14's ``Fp8MoEMethod`` prints "Using DeepGemm kernels for
Fp8MoEMethod." and "Using CutlassBlockScaledGroupedGemm kernels for Fp8MoEMethod." when both
are allowed, and the dispatch later runs one of them (vllm-project/vllm#25709); a paste can join
two runs' lines ("Using VLLM_CUTLASS ..." from one pid, "Using TRITON ..." from the next). Both
names stay selections (the log does name them, and a gate must see the worse one), but the
report says the choice is ambiguous instead of asserting both: each such selection's
``reasoning`` starts with ``ambiguous:`` and the run's ``unexplained`` gets one entry per family.

Not ambiguous: names printed by disjoint ranks (that is ``RANK_DIVERGENCE``), and a family in
which a line states a change (a fallback or an override names the kernel that replaced another).
"""
from __future__ import annotations

from collections import defaultdict

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..models import Unexplained
from .runstate import SelectionGroup

#: layer families of MoE layers, as the rules name them ("MoE", "MoE (FP8)", "MoE (NvFp4)")
_MOE_FAMILY = rxcache.compile(r"(?i)^(?:fused[ _])?moe\b")
#: rule kinds / shapes whose line states that one kernel replaced another
_CHANGE_KINDS = ("fallback_warning", "backend_override")
_CHANGE_SHAPES = ("fallback", "override")
#: ... or whose words do ("AITER CK fused_moe failed, falling back to Triton MoE runner")
_CHANGE_WORDS = lazyre.compile(r"(?i)\bfall(?:ing|s)?[ -]?back\b|\bfallback\b|\boverrid(?:e|es|ing|den)\b|\binstead\b")


def ambiguous_moe(sels: dict[tuple[str, str], SelectionGroup], rules: dict) -> list[Unexplained]:
    """Mark MoE families that a run names more than one kernel for; return their ``Unexplained``.

    ``sels``: the run's observed selection groups (``close.close_run``); ``rules``: rule id ->
    (compiled rule, pack). Each selection of such a family gets ``reasoning`` starting
    ``ambiguous:``; one ``Unexplained`` per family, at the line of its last-named kernel.
    """
    by_family: dict[str, list[SelectionGroup]] = defaultdict(list)
    for g in sels.values():
        if g.selection.observed and _MOE_FAMILY.search(g.selection.family or ""):
            by_family[g.selection.family].append(g)
    out: list[Unexplained] = []
    for family, groups in by_family.items():
        if len(groups) < 2 or _states_change(groups, rules) or _disjoint_ranks(groups):
            continue
        groups = sorted(groups, key=lambda g: g.selection.line)
        names = ", ".join(f"{g.selection.kernel} (line {g.selection.line})" for g in groups)
        note = (f"ambiguous: this run names {len(groups)} kernels for {family} ({names}); one of them "
                "runs the MoE layers and the log does not say which")
        for g in groups:
            g.selection.reasoning = note + (f"; {g.selection.reasoning}" if g.selection.reasoning else "")
        last = groups[-1].selection
        out.append(Unexplained(line=last.line, rule=last.rule, kind="moe_kernel", message=last.evidence[:2000],
                               why=note))
    return out


def _states_change(groups: list[SelectionGroup], rules: dict) -> bool:
    for g in groups:
        for ev in g.events:
            r = rules[ev.rule][0].rule
            if r.kind in _CHANGE_KINDS or r.shape in _CHANGE_SHAPES or _CHANGE_WORDS.search(ev.message):
                return True
    return False


def _disjoint_ranks(groups: list[SelectionGroup]) -> bool:
    """Every name printed by explicit ranks that no other name's printers share."""
    printers = [g.printers for g in groups]
    if any("main" in p or not p for p in printers):
        return False
    return all(p.isdisjoint(q) for i, p in enumerate(printers) for q in printers[i + 1:])
