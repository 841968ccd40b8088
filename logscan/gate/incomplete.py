"""START_INCOMPLETE: a run that chose kernels but whose log shows neither that the server came up
nor that it failed (the log was cut off). What a ready line is lives in the packs (rules of
``kind = "ready"``, ``patterns/<engine>/rules/99-uncaught.toml``); the gate reads only events."""
from __future__ import annotations

from ..models import Report, Run

START_INCOMPLETE = "START_INCOMPLETE"  #: a run with kernels but neither a ready line nor a failure: cut off


def ready_engines_of(packs) -> frozenset[str]:
    """The engines (``Packs.packs`` keys) whose pack holds a rule of ``kind = "ready"``: a line
    saying the server or engine came up (``patterns/<engine>/rules/99-uncaught.toml``)."""
    return frozenset(e for e, pk in packs.packs.items() if any(c.rule.kind == "ready" for c in pk.rules))


def came_up(report: Report, run: Run) -> bool:
    """A ``kind = "ready"`` event (a ready line, an HTTP 2xx access line, a line only a running
    engine logs) of ``run``'s source at or after its first line and before the next run of that
    source starts."""
    nxt = min((r.first_line for r in report.runs if r.source == run.source and r.first_line > run.first_line),
              default=None)
    return any(e.kind == "ready" and e.source == run.source and e.line >= run.first_line
               and (nxt is None or e.line < nxt) for e in report.events)
