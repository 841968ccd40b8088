"""Compare two reports layer family by layer family: which kernel moved on its ladder, rung by rung.

``compare(old, new)`` pairs the selections of two ``Report``s by layer family (then, for a
family renamed between releases, by the ladder registry) and says for each pair whether the
kernel moved down its ladder, up, or changed cost class. ``load_side`` reads either a saved
JSON report (``logscan scan --format json``, or a gate JSON report) or a log, through the one
pipeline. Used by ``logscan diff`` and ``logscan gate --baseline``.
"""
from __future__ import annotations

import json
from typing import Literal, Optional

from pydantic import BaseModel, ValidationError

from ..models import COST_ORDER, CostClass, Report, Selection
from ..packs.loader import PackSet

Status = Literal["same", "down", "up", "moved", "missing", "new"]
CostMove = Literal["same", "worse", "better"]


class FamilyState(BaseModel):
    """The kernel of one layer family in one report (the worst one when runs disagree)."""

    family: str
    kernel: str
    cost_class: CostClass
    registry: Optional[str] = None
    platform: Optional[str] = None
    ladder_version: Optional[str] = None
    rung: Optional[int] = None
    rungs: Optional[int] = None
    fell: Optional[int] = None
    source: str
    line: int
    evidence: str

    def rung_text(self) -> str:
        """``6/8`` or ``-`` when the kernel is on no shipped ladder."""
        return f"{self.rung}/{self.rungs}" if self.rung is not None else "-"


class FamilyChange(BaseModel):
    """One layer family compared between the baseline (``old``) and now (``new``).

    ``status``: ``down`` (higher rung number on the same ladder, or more rungs fallen on
    another one), ``up``, ``moved`` (another kernel with no ladder to rank the two), ``same``,
    ``missing`` (in the baseline only), ``new`` (now only). ``cost``: the cost-class move,
    ranked by ``models.COST_ORDER``. ``reasoning`` says how the two were compared.
    """

    family: str
    old: Optional[FamilyState] = None
    new: Optional[FamilyState] = None
    status: Status
    cost: CostMove = "same"
    reasoning: str = ""

    @property
    def regressed(self) -> bool:
        """Moved down, changed cost class, or went missing."""
        return self.status in ("down", "missing") or self.cost != "same"


def _state(run_source: str, s: Selection) -> FamilyState:
    lad = s.ladder
    return FamilyState(
        family=s.family, kernel=s.kernel, cost_class=s.cost_class,
        registry=lad.registry if lad else None, platform=lad.platform if lad else None,
        ladder_version=lad.ladder_version if lad else None, rung=lad.rung if lad else None,
        rungs=lad.rungs if lad else None, fell=lad.fell if lad else None,
        source=run_source, line=s.line, evidence=s.evidence)


def _badness(st: FamilyState) -> tuple[int, int]:
    return (len(COST_ORDER) - COST_ORDER.index(st.cost_class), st.fell or 0)


def family_states(report: Report) -> dict[str, FamilyState]:
    """Layer family -> its kernel; when several runs or ranks disagree, the worst one is kept
    (worst cost class first, then most rungs fallen) so a baseline never hides a bad start."""
    out: dict[str, FamilyState] = {}
    for run in report.runs:
        for s in run.selections:
            st = _state(run.source, s)
            if s.family not in out or _badness(st) > _badness(out[s.family]):
                out[s.family] = st
    return out


def _cost_move(old: CostClass, new: CostClass) -> CostMove:
    if old == new:
        return "same"
    return "worse" if COST_ORDER.index(new) < COST_ORDER.index(old) else "better"


def _pair(family: str, o: FamilyState, n: FamilyState) -> FamilyChange:
    cost = _cost_move(o.cost_class, n.cost_class)
    same_kernel = o.kernel.lower() == n.kernel.lower()
    if o.rung is not None and n.rung is not None and o.registry == n.registry and o.platform == n.platform:
        status: Status = "same" if n.rung == o.rung else ("down" if n.rung > o.rung else "up")
        why = f"rung {o.rung_text()} -> {n.rung_text()} on {n.registry} ({n.platform})"
    elif o.fell is not None and n.fell is not None:
        status = "same" if (n.fell == o.fell and same_kernel) else (
            "down" if n.fell > o.fell else "up" if n.fell < o.fell else "moved")
        why = (f"inferred: different ladders ({o.registry} -> {n.registry}), compared by rungs fallen "
               f"{o.fell} -> {n.fell}")
    else:
        status = "same" if same_kernel else "moved"
        why = "no shipped ladder holds " + ("both kernels" if o.rung is None and n.rung is None else
                                            "one of the kernels") + ": compared by name and cost class only"
    if cost != "same":
        why += f"; cost class {o.cost_class.value} -> {n.cost_class.value} ({cost})"
    return FamilyChange(family=family, old=o, new=n, status=status, cost=cost, reasoning=why)


def compare(old: Report, new: Report) -> list[FamilyChange]:
    """Every layer family of either report, compared; sorted by family name (deterministic).

    Families are paired by exact name first, then (a family renamed between releases, e.g.
    ``linear (NVFP4 GEMM)`` and ``linear (NVFP4)``) by the ladder registry and platform.
    """
    a, b = family_states(old), family_states(new)
    pairs: list[tuple[str, FamilyState, FamilyState]] = []
    for fam in sorted(set(a) & set(b)):
        pairs.append((fam, a.pop(fam), b.pop(fam)))
    for fam in sorted(a):
        o = a[fam]
        if o.registry is None:
            continue
        match = next((f for f in sorted(b) if b[f].registry == o.registry and b[f].platform == o.platform), None)
        if match is not None:
            pairs.append((f"{fam} / {match}" if match != fam else fam, a.pop(fam), b.pop(match)))
    changes = [_pair(f, o, n) for f, o, n in pairs]
    changes += [FamilyChange(family=f, old=s, status="missing", cost="same",
                             reasoning="the baseline shows this family; the new report shows no kernel for it")
                for f, s in a.items()]
    changes += [FamilyChange(family=f, new=s, status="new", reasoning="not in the baseline")
                for f, s in b.items()]
    return sorted(changes, key=lambda c: c.family)


class SideError(Exception):
    """A side of a comparison cannot be read (unreadable file, broken JSON report)."""


def load_side(path: str, packs: PackSet, stdin_name: Optional[str] = None) -> Report:
    """A saved JSON report (detected by its ``logscan_version`` key in the first 4 KiB) or a log.

    A log goes through ``pipeline.scan_inputs`` (the one pipeline). Raises ``SideError`` when
    the file cannot be read or a JSON report does not validate.
    """
    from ..pipeline import scan_inputs

    if path != "-":
        try:
            with open(path, "rb") as fh:
                head = fh.read(4096)
        except OSError as exc:
            raise SideError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if head.lstrip().startswith(b"{") and b'"logscan_version"' in head:
            try:
                with open(path, "rb") as fh:
                    return Report.model_validate(json.load(fh))
            except (ValueError, ValidationError) as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise SideError(f"{path}: not a valid logscan JSON report: {first}") from None
    report = scan_inputs([path], packs)
    errors = [s.error for s in report.inputs if s.error]
    if errors:
        raise SideError(errors[0])
    return report
