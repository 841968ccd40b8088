"""The notes under a selection's row in the text report, shared with the HTML page (one source).

Split out of ``formats/text.py`` (module size). Each note says what the selection's ladder position
rests on: the better rungs it fell below and the gate of each, an assumed scheme, the rungs the
log's own line refuses, the better rungs the known GPU refuses (each with the need it fails), the rungs no stated fact decides (``fallback UNEXPLAINED``), a refusal by
the run's own failure, and releases whose ladders put the kernel on another rung (``k/n?``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..analysis.assumed import is_assumed
from .clip import clip

if TYPE_CHECKING:
    from ..models import Run, Selection
    from ..packs.loader import PackSet

#: how a selection's reasoning begins when it was chosen 'out of' a logged list that lacks it
_OFF_LIST_NOTE = "not on its logged list:"


def unexplained_lines(s) -> list[str]:
    """A selection's UNEXPLAINED fallback (``ladder.undecided``): the rungs above it whose needs
    the run's known facts leave undecided, each with those needs (text report and HTML page alike)."""
    und = s.ladder.undecided
    out = [f"  {s.kernel}: fallback UNEXPLAINED: what the log states does not decide "
           + ", ".join(f"rung {u.rung} {u.kernel}" for u in und[:6]) + (" ..." if len(und) > 6 else "")]
    for u in und[:6]:
        out.append(f"      {u.kernel}: undecided: {clip('; '.join(u.needs), 300)}")
    return out


def selection_notes(run: "Run", s: "Selection", packs: "Optional[PackSet]" = None) -> list[str]:
    """The text report's lines (two-space indent) about selection ``s`` of ``run``; ``[]`` when its
    ladder position needs no note. ``packs``: those the report was read with (engine titles)."""
    from .text import _title  # text imports this module: a late import

    e = run.engine
    name = e.read_with or e.name  # the pack the run was read with (text.py's ladders line)
    out: list[str] = []
    if s.ladder and s.ladder.fell:
        from ..analysis.logged_ladder import logged_list_words

        on = (f"{logged_list_words(s.ladder.logged_line)} ({s.ladder.registry}"
              if s.ladder.logged_list else f"{s.ladder.registry} ({s.ladder.platform}")
        out.append(f"  {s.kernel}: fell {s.ladder.fell} better rung(s) on {on}, "
                   f"{_title(name, packs)} {s.ladder.ladder_version}) below "
                   + ", ".join(s.ladder.above[:6]) + (" ..." if len(s.ladder.above) > 6 else ""))
        shown = s.ladder.above[:6]
        for rung_name in shown:
            gate = s.ladder.stopped_by.get(rung_name, "")
            if gate:
                out.append(f"      {rung_name}: needs {clip(gate, 200)}")
        if len(s.ladder.above) > len(shown):
            out.append(f"      ... and {len(s.ladder.above) - len(shown)} more (JSON ladder.stopped_by)")
    if s.ladder and s.ladder.refused_on_gpu:  # better rungs the known GPU refuses: say why each
        ref = s.ladder.refused_on_gpu
        out.append(f"  {s.kernel}: {len(ref)} better rung(s) above it refused by the GPU: "
                   + ", ".join(list(ref)[:6]) + (" ..." if len(ref) > 6 else ""))
        for rung_name in list(ref)[:6]:
            out.append(f"      {rung_name}: refused: needs {clip(ref[rung_name], 200)}")
    if is_assumed(s.scheme):  # the ladder's scheme is an assumption of the line's rule
        out.append(f"  {s.kernel}: {clip(s.reasoning or s.scheme, 600)}")
    if (s.reasoning or "").startswith(_OFF_LIST_NOTE):  # chosen 'out of' a list that lacks it
        out.append(f"  {s.kernel}: {clip(s.reasoning, 400)}")
    if s.ladder and s.ladder.stated_refused:  # the log's own line refuses these rungs
        out.append(f"  {s.kernel}: fallback explained by the log: {s.ladder.stated_by}, which "
                   + clip(", ".join(s.ladder.stated_refused), 300) + " need")
    if s.ladder and s.ladder.undecided:  # the run's known facts do not decide these rungs
        out += unexplained_lines(s)
    if s.refused is not None:  # the run's own failure refuses the kernel it selected
        out.append(f"  {s.kernel}: refused by the run's own failure at line {s.refused.line} "
                   f"({s.refused.code}): {clip(s.refused.reason, 240)}")
    if s.ladder and s.ladder.elsewhere:  # the inferred releases disagree on the rung
        out.append(f"  {s.kernel}: rung {s.ladder.rung}/{s.ladder.rungs} in {s.ladder.holds_in}, "
                   + ", ".join(f"{x.rung}/{x.rungs} in {x.releases}"
                             + (f" (on {x.registry})" if x.registry != s.ladder.registry else "")
                             for x in s.ladder.elsewhere)
                   + (" (the inferred releases disagree)" if e.version_source == "inferred"
                      else " (the shipped releases disagree; the log names none)"))
        if s.ladder.unplaced_in:  # releases the range fits whose ladders hold no such rung
            out.append(f"      no {s.family} ladder shipped for {s.ladder.unplaced_in} holds {s.kernel}")
    return out
