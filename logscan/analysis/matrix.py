"""`logscan matrix SCHEME`: one row per engine, the most capable outcome first (one convention for all)."""
from __future__ import annotations

from typing import Optional

from dataclasses import field

from ..plain import PlainModel, plain

from ..packs.loader import PackSet
from ..packs.model import SchemeFile
from .gates import Machine, Verdict
from .predict import Walk, _ladders_for, _matrix_config, find_scheme, ladder_serves, load_schemes, walk_ladder

#: alternatives of one outcome spelled out in a matrix row's note (the walk keeps them all)
NOTE_ALTERNATIVES = 2
#: a note longer than this names the other outcomes without their conditions
NOTE_MAX_CHARS = 480


@plain
class MatrixRow(PlainModel):
    """One engine's answer in ``logscan matrix``: what would execute and how sure."""

    engine: str
    ladder_version: Optional[str] = None
    registry: Optional[str] = None
    executes: Optional[str] = None
    cost_class: Optional[str] = None
    basis: str = ""  #: certain / conditional / refused / undetermined / unknown / no ladder
    note: str = ""


@plain
class Matrix(PlainModel):
    """``logscan matrix --format json``: one row per engine, plus each engine's full walk."""

    scheme: str
    scheme_title: str
    machine: str
    rows: list[MatrixRow]
    walks: list[Walk] = field(default_factory=list)


def matrix(packs: PackSet, scheme_name: str, machine: Machine, schemes: Optional[SchemeFile] = None) -> Matrix:
    """One row per engine (``patterns/matrix/matrix.toml``): the newest ladder of the scheme's role,
    walked on ``machine``. Raises ``SchemeError`` for an unknown scheme."""
    schemes = schemes or load_schemes()
    sid, scheme = find_scheme(scheme_name, schemes)
    engines, extra = _matrix_config()
    out = Matrix(scheme=sid, scheme_title=scheme.title, machine=machine.describe(), rows=[])
    platform = (machine.platform or "CUDA").upper()
    for eng in engines:
        se = scheme.engines.get(eng)
        lf = None
        if se is not None and se.role:
            lf = next((x for x in _ladders_for(packs, eng, extra) if ladder_serves(x, se, platform)), None)
        recorded = se.verdict_for(platform) if se is not None and lf is None else None
        if recorded is not None:  # no ladder, but the engine's answer is recorded (refuses / unknown, why)
            basis, why = recorded
            out.rows.append(MatrixRow(engine=eng, basis=basis, executes="refuses to load" if basis == "refused" else None,
                                      note=why))
            continue
        if se is None or lf is None:
            out.rows.append(MatrixRow(engine=eng, basis="no ladder",
                                      note=f"no {eng} ladder for {sid} on {platform} is recorded"))
            continue
        w = walk_ladder(lf, sid, scheme, se, machine)
        out.walks.append(w)
        row = MatrixRow(engine=eng, ladder_version=w.ladder_version, registry=w.registry)
        _matrix_row(row, w)
        unread = [n for n in w.notes if n.startswith("--env ")]  # said in the row, never silently echoed
        if unread:
            row.note = "; ".join(([row.note] if row.note else []) + unread)
        out.rows.append(row)
    return out


def _matrix_row(row: MatrixRow, w: Walk) -> None:
    """One convention for every engine: lead with the most capable outcome and its condition;
    ``certain`` when it is the only one, ``conditional`` when others follow (named in the note),
    ``refused`` when every world refuses, ``undetermined`` when no outcome is known."""
    from .outcomes import summary

    outs = w.outcomes
    if w.scheme_verdict == Verdict.fails or (outs and all(o.refused for o in outs)):
        row.basis, row.executes, row.note = "refused", "refuses to load", w.outcome
        return
    first = next((o for o in outs if o.kernel), None)
    if first is None:
        row.basis, row.note = "undetermined", w.outcome
        return
    row.executes, row.cost_class = first.kernel, first.cost_class
    if len(outs) == 1:
        row.basis = "certain"
        return
    row.basis = "conditional"
    rest = [o for o in outs if o is not first]
    cond = first.condition_text(NOTE_ALTERNATIVES)
    where = f"logscan ladder {w.engine} {w.scheme} with the same options, or --format json"
    row.note = ((cond + "; else " if cond != "always" else "") + summary(rest, limit=NOTE_ALTERNATIVES)
                + (f" (every condition: {where})" if any(len(o.when) > NOTE_ALTERNATIVES for o in outs) else ""))
    if len(row.note) > NOTE_MAX_CHARS:
        # too many conditions for one table cell: the leading outcome's first condition, then
        # the other outcomes by name (what can run instead), the conditions left to the ladder walk
        names = ["the layer fails to load" if o.refused else "not determined" if o.undetermined
                 else f"{o.kernel} ({o.cost_class})" for o in rest]
        others = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        row.note = ((first.condition_text(1) + "; " if cond != "always" else "")
                    + f"else {others} (the conditions of each: {where})")
