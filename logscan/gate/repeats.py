"""A check of a run that folded repeats says so: the failure (or the kernel) it judges repeated.

``logscan scan`` and ``gate`` fold a run into the first run of its input with the same report but
for numbers (``logscan/fold.py``, ``Run.folded``: a crash loop). The gate judges the listed run
once, and its verdict is the same with folding on or off; but "run 2: the engine did not start"
alone reads as one failure where the log holds 300. So every check of such a run carries the
repeats (``Check.folded``, the run's ``Folded``) and its message names them:
``run 2 (and 299 folded repeat(s), lines 12-3,300): the engine did not start: ...``, or, for a
check whose message does not begin with its run, ``...; in run 2 (and 299 folded repeat(s), lines
12-3,300)``. docs/ci-gate.md "Folded runs".
"""
from __future__ import annotations

import re

from ..models import Report
from .result import Check

#: a message that begins with its run: ``run 2: ...`` or ``run 2 (lines 1-11) names ...``
_RUN_HEAD = r"run {n}(?: \(lines (?P<lines>[\d,]+-[\d,]+)\))?(?=[:\s;,]|$)"


def repeats_words(runs: int, first: int, last: int) -> str:
    """'and 299 folded repeat(s), lines 12-3,300': ``runs`` repeats folded, from line ``first``
    (where the first of them begins) to line ``last`` (where the last ends)."""
    return f"and {runs:,} folded repeat(s), lines {first:,}-{last:,}"


def note_folded(checks: list[Check], report: Report) -> None:
    """Give every check of a run with folded repeats (``Check.run``, 1-based, of ``report``) the
    run's ``Folded`` and say the repeats in its message, in place. Checks of no run, of a run
    without repeats, or with a run number the report does not hold are left as they are."""
    by_number = {r.index + 1: r for r in report.runs}
    for c in checks:
        run = by_number.get(c.run) if c.run is not None else None
        if run is None or run.folded is None or c.source != run.source:
            continue
        f = run.folded
        words = repeats_words(f.runs, f.first_line, f.last_line)
        c.folded = f
        m = re.match(_RUN_HEAD.format(n=c.run), c.message)
        if m:
            lines = f"lines {m.group('lines')}; " if m.group("lines") else ""
            c.message = f"run {c.run} ({lines}{words})" + c.message[m.end():]
        else:
            c.message += f"; in run {c.run} ({words})"
