"""Run-boundary predicates: whether an event ends the open run (``docs/run-splitting.md``).

Split out of ``analyzer.Analyzer`` (module size): each takes the open ``RunState``, the event's
rule and the ``Event`` and changes nothing. The facts they encode are logscan's run-splitting
rules, not an engine's; the per-engine data they read (``once_per_start``, start markers) lives in
the packs.
"""
from __future__ import annotations

import copy
from typing import Optional

from ..models import Event
from .newstart import _stranger, named_model, note, once_per_start, other_process, repeated_start, role, same_model
from .runstate import RunState, set_facts, version_token


#: kinds of the lines a start logs as it begins (``command_opens``; ``has_substance`` ignores them):
#: a device probe's lines (``gpu``: llama.cpp's 'ggml_vulkan: 0 = NVIDIA GeForce RTX 2060 ...') too,
#: so a pasted ``llama-cli --version`` (its device and version lines) is no run of its own before the
#: ``llama-server`` command pasted after it (llamacpp-215)
START_KINDS = ("version", "config", "platform", "gpu", "run_start", "progress")


def has_substance(run: RunState, since_start: bool = True) -> bool:
    """The run said something since its start marker (a banner, args and config lines of one
    start are one run; an import warning printed before the banner does not split it; other
    start markers are not "something": TGI's 'Sharding model', 'Starting download process.'
    and one 'Starting shard rank=N' per rank are one launch, tgi-108)."""
    since = run.start_line if run.start_line is not None and since_start else 0
    return any(e.kind not in START_KINDS and e.line >= since
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


def child_start(run: RunState, r, ev: Event, shared) -> bool:
    """Whether start marker ``ev`` is the run's own start going on in a child process, not a new start.

    vLLM V1's API server prints the banner, resolves the config (and may state choices:
    'FA4 not available, forcing TRITON_ATTN backend', config.py) and then forks the engine core,
    whose 'Initializing a V1 LLM engine (v0.25.1) with config: model=...' is a start marker of the
    same start (vllm-365, -367, -353, -356: ``(APIServer pid=40298)`` then ``(EngineCore pid=40474)``).
    It is when the run has not ended (no failure, ready or stop line), ``ev``'s process tag carries a
    pid in a role the run has not heard from, near one of the run's pids (``newstart._PID_NEAR``),
    and the version and model the line names agree with the run's. A line with no pid, a role the
    run heard (another process of that role is another start, rule 2) or another model or release
    still splits (docs/run-splitting.md rule 1)."""
    if (ev.pid is None or not run.procs or ev.pid in run.procs or _stranger(run, ev)
            or run.failed_line is not None or ended(run)):
        return False
    who = role(ev, shared)
    if who is None or who in run.pids:
        return False
    version = (ev.groups.get("version") or "").strip()
    if version and run.version and version_token(version).lstrip("vV") != run.version.lstrip("vV"):
        return False
    model = named_model(r.sets, ev)
    return not (model and run.config.model and not same_model(model, run.config.model))


def ended(run: RunState) -> bool:
    """The run, opened by no start marker, already holds a failure, a sign the server was up or a stop:
    a start marker now is a restart (its own start can fail again), not this run's banner."""
    return any(e.kind in ("uncaught", "start_failure", "ready", "stop") for e in run.events)


def opened_by(analyzer, ev: Event, hint: tuple) -> Optional[RunState]:
    """A scratch copy of the run that feeding ``ev`` (with its engine ``hint``) to ``analyzer`` would
    open when no run is open (None for an event that opens none); nothing of the analyzer changes
    (``Analyzer.splits`` asks about it for a held multi-line event)."""
    cr, pack = analyzer.rules[ev.rule]
    r = cr.rule
    if r.kind in ("identity", "unread", "progress", "machine") or (r.kind in ("uncaught", "ready", "stop") and not hint[0]):
        return None
    engine, sure = analyzer._engine_sure(ev, r, pack, hint[0], hint[1], None)
    run = RunState(index=-1, source=ev.source, first_line=ev.line, last_line=ev.end_line or ev.line,
                   engine=engine, engine_sure=sure, started=r.starts_run,
                   start_line=ev.line if r.starts_run else None, events=[ev])
    note(run, ev, analyzer._shared)
    set_facts(run, r.sets, ev.groups, ev, pack.meta.pack.cli, r.lists)
    return run


def command_opens(analyzer, run: RunState, command: Event, ev: Event, engine: str, splits) -> bool:
    """Whether a launch command held after ``run`` (``Analyzer.feed``) is the first line of the run
    ``ev`` (of ``engine``: its prefix's, else its rule's) goes on: after a run that failed or came
    up, when ``ev`` begins a new run (``splits()``); after a run that said something but neither,
    when ``ev`` is a line of the command's engine that begins a start: a start marker, a line a
    process prints once as it starts (``once_per_start``), a version, config, platform, device or
    progress line, or a line of a process (a pid): the second of two logs
    catted, its command, then its start's lines. Not when ``ev`` is another engine's: then the
    command was pasted after the run it ran (vllm-298, sglang-299) and another log follows; nor a
    kernel or finding line with no pid (sglang-299's command, then sglang-292's MoE config lines:
    an excerpt that may go on with the same run)."""
    if engine != analyzer.rules[command.rule][1].engine:
        return False
    if ended(run):
        return splits()
    r = analyzer.rules[ev.rule][0].rule
    return bool(r.starts_run or r.once_per_start or r.names_engine or r.kind in START_KINDS or ev.pid is not None)


def unname(run: RunState, named: Optional[tuple], line: int) -> None:
    """Undo the naming of ``run``'s engine by an identity event (``named``: ``Analyzer._named``)
    after the run's last event and up to line ``line``, whose launch command goes to the next run:
    the command's own line (``vllm serve`` is an identity event too) and its preamble (vllm-267's
    ``export VLLM_...`` lines before its command)."""
    last = max((e.end_line or e.line for e in run.events), default=run.first_line - 1)
    if named is not None and named[1] is run and last < named[0] <= line:
        run.engine, run.engine_sure, run.identified_by, run.library_identity = named[2]
        run.last_line = min(run.last_line, max(last, run.first_line))  # the preamble is not its span


def before_command(analyzer, run: Optional[RunState], held: tuple) -> None:
    """A launch command (``held``: the event and its two engine hints) that ends ``run`` itself when
    fed (another engine's command) is no line of ``run``: its span stops before the command, whose
    line's identity events unname it (``unname``)."""
    if run is not None and analyzer.splits(*held, closes_only=True):
        run.last_line = min(run.last_line, max(held[0].line - 1, run.first_line))
        unname(run, analyzer._named, held[0].line)


def engine_of(prefix_engine: Optional[str], context_engine: Optional[str], rule_engine: str,
              starts_run: bool, run: Optional[RunState], source: str) -> tuple[str, bool]:
    """Which engine an event belongs to, and whether the line itself says so.

    A line carrying an engine's prefix, or a start marker, names its engine. An
    unprefixed line (a traceback tail, a generic Triton/ptxas error) recognised by
    another pack's rule belongs to the open run, else to the engine of the last
    prefixed line, else (unsure) to the rule's engine.
    """
    if prefix_engine:
        return prefix_engine, True
    if starts_run:
        return rule_engine, True
    if run is not None and run.source == source:
        return run.engine, False
    return context_engine or rule_engine, context_engine is not None


#: what ``Analyzer.finish`` may change: ``peek_held`` runs it on copies of these
_PEEK_STATE = ("_run", "_count", "up_seen", "_pending", "_jit_heads", "_disowned", "_unread",
               "machine_held", "_command", "carried", "_named")


def peek_held(an):
    """The open run of ``an`` (an ``Analyzer``) as ``finish`` would close it now that a launch
    command is held (its run is the next event's to decide; at the input's end it is the open
    run's last line), without changing ``an``: ``finish`` runs on copies of its state, taken in
    one deepcopy so the run the state names stays one object. Returns a ``Run`` or None."""
    saved = {k: getattr(an, k) for k in _PEEK_STATE}
    try:
        for k, v in copy.deepcopy(saved).items():
            setattr(an, k, v)
        return next(iter(an.finish()), None)
    finally:
        for k, v in saved.items():
            setattr(an, k, v)
