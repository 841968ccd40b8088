"""A short Markdown summary for ``$GITHUB_STEP_SUMMARY`` (or a merge-request note).

The verdict, the kernel selections per run, the checks that failed or warned, and the
baseline comparison rung by rung. Log text is untrusted: table cells escape ``|``, HTML
(``<``, ``>``, ``&``), backticks and link/image syntax (``formats.escape.markdown_text``),
show control characters visibly, and are cut to one line.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..models import Report
from ._ci import one_line, reasons_text
from .escape import markdown_text, visible_controls

if TYPE_CHECKING:
    from ..packs.loader import PackSet
    from ..gate.evaluate import GateResult

_ICON = {"pass": "✅", "warn": "⚠️", "fail": "❌"}


def cell(text: object, limit: int = 160) -> str:
    """One table cell: a single line, ``|``, HTML and link/image syntax escaped, backticks neutralised."""
    s = markdown_text(visible_controls(one_line(str(text), limit)))
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("`", "&#96;")):
        s = s.replace(a, b)
    return s


def render(report: Report, gate: "Optional[GateResult]" = None, packs: "Optional[PackSet]" = None) -> str:
    """The summary; deterministic (no clock).
    ``packs`` is unused (every format's ``render`` takes the same arguments)."""
    from ..gate.evaluate import VERDICT_ORDER, Verdict

    out = []
    if gate is not None:
        out.append(f"### {_ICON[gate.verdict.value]} logscan gate: {gate.verdict.value.upper()}")
        out.append("")
        out.append(f"{gate.counts.get('fail', 0)} failed, {gate.counts.get('warn', 0)} warned, "
                   f"{gate.counts.get('pass', 0)} passed; policy `{cell(gate.policy)}`"
                   + (f", baseline `{cell(gate.baseline)}`" if gate.baseline else ""))
    else:
        out.append("### logscan report")
    from .inputs import input_warnings, unopened

    for st in report.inputs:
        if unopened(st):
            out += ["", f"**unreadable input**: {cell(st.error, 300)}"]
        notes = input_warnings(st)  # the text report's "!" line: evidence may be missing, say so
        if notes:
            out += ["", f"**input** {cell(st.source, 60)}: {cell('; '.join(notes), 600)}"]
    from .text import selection_mark

    sel_rows = [(run, s) for run in report.runs for s in run.selections]
    if sel_rows:
        out += ["", "| run | layer family | kernel | rung | cost class | line |", "|---|---|---|---|---|---|"]
        for run, s in sel_rows:
            rung = f"{s.ladder.rung}/{s.ladder.rungs}" if s.ladder else "-"
            out.append(f"| {run.index + 1} | {cell(s.family)} | {cell(s.kernel + selection_mark(s))} | {rung} | {s.cost_class.value} "
                       f"| {cell(run.source, 60)}:{s.line} |")
        for run, s in sel_rows:  # the text report's "fallback UNEXPLAINED" line (ladder.undecided)
            if s.ladder and s.ladder.undecided:
                und = s.ladder.undecided
                out += ["", f"**run {run.index + 1}: {cell(s.kernel)} fallback UNEXPLAINED** below "
                        + ", ".join(f"rung {u.rung} {cell(u.kernel)}" for u in und[:6])
                        + f": {cell(und[0].kernel)} undecided: {cell('; '.join(und[0].needs), 300)}"
                        + (" (every rung's needs: JSON ladder.undecided)" if len(und) > 1 else "")]
    from .failure import at_words, head, kernel_words, where_words

    for run in report.runs:  # why a start failed, in the engine's words (the exception first)
        for f, what in ((run.start_failure, "start FAILED"), (run.serving_failure, "failed WHILE SERVING")):
            if f is not None:
                _, words = head(f)
                extra = "".join(f" — {cell(x, 300)}" for x in (kernel_words(f), where_words(f)) if x)
                out += ["", f"**run {run.index + 1}: {what}** at {cell(run.source, 60)} {at_words(f)}: "
                        f"{cell(words, 300)}{extra}"]
        if run.stopped is not None:  # told to stop by a signal: no failure (docs/lifecycle.md "Stopped")
            from .failure import stop_words

            out += ["", f"**run {run.index + 1}:** " + " — ".join(cell(x, 300) for x in stop_words(run.stopped))]
    if gate is not None:
        bad = sorted((c for c in gate.checks if c.verdict != Verdict.passed or c.allowance is not None),
                     key=lambda c: VERDICT_ORDER[c.verdict])
        if bad:
            out += ["", "| verdict | code | where | what |", "|---|---|---|---|"]
            for c in bad:
                where = f"{cell(c.source, 60)}:{c.line}" if c.line else cell(c.source, 60)
                what = (cell(c.message, 300) + (f" — evidence: {cell(c.evidence, 200)}" if c.evidence else "")
                        + (f" — {cell(reasons_text(c.reasons), 2000)}" if c.reasons else ""))
                out.append(f"| {_ICON[c.verdict.value]} {c.verdict.value} | {cell(c.code or '-')} | {where} "
                           f"| {what} |")
        if gate.changes:
            out += ["", "| layer family | baseline | now | move |", "|---|---|---|---|"]
            for ch in gate.changes:
                o, n = ch.old, ch.new
                before = f"{o.kernel} {o.rung_text()} {o.cost_class.value}" if o else "-"
                after = f"{n.kernel} {n.rung_text()} {n.cost_class.value}" if n else "-"
                move = ch.move_text()
                out.append(f"| {cell(ch.family)} | {cell(before)} | {cell(after)} | {move} |")
    return "\n".join(out) + "\n"
