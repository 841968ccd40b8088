"""The gate's view of two selection facts: an UNEXPLAINED fallback and a refused selection.

``FALLBACK_UNEXPLAINED``: a selection whose ``ladder.undecided`` lists better rungs the run's
known facts do not decide (``analysis/fallback.py``) is one check of that code, a kind of
``UNEXPECTED_FALLBACK`` (``findings.toml`` ``parent``): a policy rule naming the parent takes it,
the default policy warns. Not a scan finding (the log states no fallback), so never a false error.

The check is folded into its selection's check (``fold_unexplained``): one selection, one check.

A refused selection (``Selection.refused``: a reason of the run's own KERNEL_NOT_FOUND names its
kernel) is folded into that failing finding's check: one problem, one check, no quiet
``[pass]`` beside the failure that refuses the very kernel it shows.
"""
from __future__ import annotations

from typing import Optional

from ..models import Run, Selection
from ..packs.model import FindingsFile
from .policy import Subject
from .result import Check, Verdict

FALLBACK_UNEXPLAINED = "FALLBACK_UNEXPLAINED"


def unexplained_check(run: Run, sel: Selection, n: int, version: Optional[str],
                      findings: FindingsFile) -> Optional[tuple[Check, Subject]]:
    """The FALLBACK_UNEXPLAINED check of a selection and the subject it is judged as, or None
    (no undecided rung, or the run's UNEXPECTED_FALLBACK finding already speaks of the family:
    a rung every need of which is met says more than an undecided one)."""
    pos = sel.ladder
    if pos is None or not pos.undecided:
        return None
    if any(f.code == "UNEXPECTED_FALLBACK" and f.family in (sel.family, None) and (f.kernel or sel.kernel) == sel.kernel
           for f in run.findings):
        return None
    und = pos.undecided
    c = Check(kind="selection", code=FALLBACK_UNEXPLAINED, name=f"{sel.family}: {sel.kernel} {FALLBACK_UNEXPLAINED}",
              message=(f"{sel.family} {'chose' if run.start_failure is not None else 'runs'} {sel.kernel} "
                       f"(rung {pos.rung}/{pos.rungs}{'?' if pos.elsewhere else ''} on {pos.registry}, "
                       f"{pos.ladder_version}) below " + ", ".join(f"rung {u.rung} {u.kernel} ({u.cost_class})" for u in und)
                       + ": the fallback is UNEXPLAINED, what the log states does not decide why"),
              verdict=Verdict.passed, decided_by="", source=run.source, line=sel.line, run=n,
              engine=run.engine.name, family=sel.family, kernel=sel.kernel, cost_class=sel.cost_class.value,
              scheme=sel.scheme, evidence=sel.evidence,
              reasons=[f"{u.kernel} undecided: " + "; ".join(u.needs) for u in und])
    # the selection's cost class too: a rule or allow-list entry that judges the selection judges
    # its fallback alike (an accepted weight-only canary pool is accepted with its fallback)
    subj = Subject(run.engine.name, version, sel.scheme, sel.family, cost_class=sel.cost_class.value,
                   code=FALLBACK_UNEXPLAINED,
                   kernels=tuple(k for k in (sel.kernel, pos.kernel_class) if k),
                   parents=findings.lineage(FALLBACK_UNEXPLAINED)[1:])
    return c, subj


def fold_refused(checks: list[Check], refused: list[tuple[Check, Selection]], merge, facts: dict) -> None:
    """Fold each refused selection's check into the check of the finding that refuses it (same
    run and source, the refusal's code and line), in place: ``merge`` (``evaluate._merge``) keeps
    the more severe of the two and names the other's facts. A refusal whose finding has no check
    leaves the selection's check as it is (it still carries the refusal as a reason)."""
    for sc, sel in refused:
        r = sel.refused
        fi = next((i for i, c in enumerate(checks) if c.kind == "finding" and c.run == sc.run
                   and c.source == sc.source and c.code == r.code and c.line == r.line), None)
        si = next((i for i, c in enumerate(checks) if c is sc), None)
        if fi is None or si is None:
            continue
        merged = merge(checks[fi], checks[si], facts)
        lo, hi = sorted((fi, si))
        checks[lo] = merged
        del checks[hi]


def fold_unexplained(checks: list[Check], unexplained: list[tuple[Check, tuple]], keys: dict, merge,
                     facts: dict) -> None:
    """Fold each FALLBACK_UNEXPLAINED check into its selection's check (after ``evaluate._fold``:
    the selection and the finding its cost class implies are one check by then), in place: the
    more severe is kept, its message naming the other's facts. One selection, one check: a
    Marlin that stands in for W4A4 and fell below undecided FP4 rungs is one problem."""
    for ux, key in unexplained:
        host = next((i for i, c in enumerate(checks) if keys.get(id(c)) == key), None)
        if host is None:
            checks.append(ux)
            continue
        merged = merge(checks[host], ux, facts)
        keys[id(merged)] = key
        checks[host] = merged
