"""Run-boundary predicates: whether an event ends the open run (``docs/run-splitting.md``).

Split out of ``analyzer.Analyzer`` (module size): each takes the open ``RunState``, the event's
rule and the ``Event`` and changes nothing. The facts they encode are logscan's run-splitting
rules, not an engine's; the per-engine data they read (``once_per_start``, start markers) lives in
the packs.
"""
from __future__ import annotations

from typing import Optional

from ..models import Event
from .newstart import note, once_per_start, other_process, repeated_start
from .runstate import RunState, set_facts


def has_substance(run: RunState, since_start: bool = True) -> bool:
    """The run said something since its start marker (a banner, args and config lines of one
    start are one run; an import warning printed before the banner does not split it; other
    start markers are not "something": TGI's 'Sharding model', 'Starting download process.'
    and one 'Starting shard rank=N' per rank are one launch, tgi-108)."""
    since = run.start_line if run.start_line is not None and since_start else 0
    return any(e.kind not in ("version", "config", "platform", "run_start", "progress") and e.line >= since
               for e in run.events)


def other_process_speaks(run: RunState, r, ev: Event, shared) -> bool:
    """A process other than the open run's logs ``ev`` (``newstart.other_process``: another pid
    in a role the run heard from, another model) after the run said more than its start lines."""
    if run.source != ev.source or ev.line < run.first_line or not has_substance(run, since_start=False):
        return False  # a multi-line event emitted late (its continuation held it) splits nothing
    return other_process(run, r.sets, ev, shared) is not None


def restarted(run: RunState, r, ev: Event) -> bool:
    """The run's process failed and ``ev`` prints a line of its start again, in the same process
    stream (``newstart.repeated_start``): the same command started again, even with the same pids
    and clocks (a crash loop's log, a file catted in a loop)."""
    if run.source != ev.source or ev.line < run.first_line:
        return False  # a multi-line event emitted late (its continuation held it) splits nothing
    return repeated_start(run, ev, once_per_start(r)) is not None


def ended(run: RunState) -> bool:
    """The run, opened by no start marker, already holds a failure or a sign the server was up:
    a start marker now is a restart (its own start can fail again), not this run's banner."""
    return any(e.kind in ("uncaught", "start_failure", "ready") for e in run.events)


def opened_by(analyzer, ev: Event, hint: tuple) -> Optional[RunState]:
    """A scratch copy of the run that feeding ``ev`` (with its engine ``hint``) to ``analyzer`` would
    open when no run is open (None for an event that opens none); nothing of the analyzer changes
    (``Analyzer.splits`` asks about it for a held multi-line event)."""
    cr, pack = analyzer.rules[ev.rule]
    r = cr.rule
    if r.kind in ("identity", "unread", "progress") or (r.kind in ("uncaught", "ready") and not hint[0]):
        return None
    engine, sure = analyzer._engine_sure(ev, r, pack, hint[0], hint[1], None)
    run = RunState(index=-1, source=ev.source, first_line=ev.line, last_line=ev.end_line or ev.line,
                   engine=engine, engine_sure=sure, started=r.starts_run,
                   start_line=ev.line if r.starts_run else None, events=[ev])
    note(run, ev, analyzer._shared)
    set_facts(run, r.sets, ev.groups, ev, pack.meta.pack.cli)
    return run
