"""START_INCOMPLETE: a run that chose kernels (or whose start is seen under way) but whose log shows neither that the server came up
nor that it failed (the log was cut off). What a ready line is lives in the packs (rules of
``kind = "ready"``, ``patterns/<engine>/rules/99-uncaught.toml``); the gate reads only events.
``_incomplete_check`` is the gate check (judged by ``judge._judge``; ``gate/evaluate.py``
re-exports it)."""
from __future__ import annotations

from bisect import bisect_right
from datetime import date
from typing import Optional

from ..models import Report, Run
from .judge import _judge
from .policy import Policy, Subject
from .releases import Release
from .result import Check, Verdict

START_INCOMPLETE = "START_INCOMPLETE"  #: a run with kernels but neither a ready line nor a failure: cut off


def ready_engines_of(packs) -> frozenset[str]:
    """The engines (``Packs.packs`` keys) whose pack holds a rule of ``kind = "ready"``: a line
    saying the server or engine came up (``patterns/<engine>/rules/99-uncaught.toml``)."""
    return frozenset(e for e, pk in packs.packs.items() if any(c.rule.kind == "ready" for c in pk.rules))


def runs_up(report: Report) -> set[tuple[str, int]]:
    """``(source, first line)`` of every run of ``report`` that came up (``came_up``), from one
    pass over the report's events (each ready event belongs to the run of its source that started
    last at or before its line)."""
    starts: dict[str, list[int]] = {}
    for r in report.runs:
        starts.setdefault(r.source, []).append(r.first_line)
    for src, lines in starts.items():
        starts[src] = sorted(set(lines))
    up: set[tuple[str, int]] = set()
    for e in report.events:
        if e.kind != "ready":
            continue
        lines = starts.get(e.source)
        k = bisect_right(lines, e.line) - 1 if lines else -1
        if k >= 0:
            up.add((e.source, lines[k]))
    return up


def came_up(report: Report, run: Run, up: Optional[set[tuple[str, int]]] = None) -> bool:
    """A ``kind = "ready"`` event (a ready line, an HTTP 2xx access line, a line only a running
    engine logs) of ``run``'s source at or after its first line and before the next run of that
    source starts. ``up``: ``runs_up(report)``, computed once for a caller that asks for every run."""
    return (run.source, run.first_line) in (runs_up(report) if up is None else up)


#: event kinds that show an engine start under way before any kernel is chosen: the engine's own
#: version line (vLLM's logo 'version ...'), its start-up configuration (launch command,
#: 'non-default args', engine config)
START_KINDS = frozenset({"version"})


def _start_seen(report: Report, run: Run) -> bool:
    """Whether ``run``'s lines show its start under way (an event of ``START_KINDS``): a log cut
    after that but before any kernel selection is a start not seen to complete; an excerpt of a
    few lines that shows no start (an issue's quoted warning) is not judged so."""
    return any(e.kind in START_KINDS and e.source == run.source and run.first_line <= e.line <= run.last_line
               for e in report.events)


def cut_off(report: Report, run: Run, up: Optional[set[tuple[str, int]]] = None) -> bool:
    """A run that no line shows to have come up (``came_up``, or a stop after serving:
    ``Run.stopped``) or failed, at start or while serving: what the gate judges as START_INCOMPLETE
    and the text summary names. Whether it chose kernels or not: a log cut before its first kernel
    selection (trial 38: the first 1500 bytes of vllm-005, or a last run a SIGINT cut) is no
    more complete than one cut after it (fail closed, docs/lifecycle.md)."""
    return ((bool(run.selections) or _start_seen(report, run))
            and run.start_failure is None and run.serving_failure is None
            and not (run.stopped is not None and run.stopped.served) and not came_up(report, run, up))


def _incomplete_check(report: Report, run: Run, n: int, eng: str, rel: Release, policy: Policy, cmap: dict[str, str],
                      today: date, ready_engines: Optional[frozenset[str]]) -> Check:
    """The START_INCOMPLETE check of a run that chose kernels but whose log shows neither that the
    server came up nor that it failed: the log was cut off (a tail, an excerpt, a start still
    loading weights, as vllm-009 ends at 'Loading safetensors checkpoint shards: 67% Completed'),
    so the kernels it names are not known to have served, nor the start to have ended well.
    For an engine whose pack has no ready rule the check warns at most (nothing could have said so)."""
    ver = f"; engine release {run.engine.version}" if run.engine.version else "; engine release not printed"
    end = max((i.lines for i in report.inputs if i.source == run.source), default=0) or run.last_line
    tail = (f"its run ends at line {run.last_line}, the log at line {end}" if end > run.last_line
            else f"the log ends at line {end}")
    c = Check(kind="start", code=START_INCOMPLETE, name=f"{START_INCOMPLETE} run {n}",
              message=(f"run {n} (lines {run.first_line}-{run.last_line}): the start was not seen to complete: "
                       f"no line says the server came up ('Application startup complete', 'Uvicorn running on', "
                       f"'The server is fired up and ready to roll', ...) and none says it failed; {tail}{ver}. "
                       f"If this is an excerpt or a tail, pass --partial-log; in CI, capture the log until "
                       f"the server's health check succeeds"),
              verdict=Verdict.passed, decided_by="", source=run.source, line=run.last_line, run=n, engine=eng)
    c = _judge(c, Subject(eng, rel.exact, None, None, code=START_INCOMPLETE), policy, cmap, today, rel)
    known = eng not in ("unknown", "", None)
    if c.verdict is Verdict.fail and known and ready_engines is not None and eng not in ready_engines:
        c.verdict = Verdict.warn
        c.message += f"; warned, not failed: the {eng} pack has no ready rule, so no line could have said so"
    return c
