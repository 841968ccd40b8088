"""Turn recognised events into runs: selections on their ladders, findings, engine facts.

Fed event by event (``Analyzer.feed``), so the same analysis serves a whole file (``scan``)
and a stream that never ends (``follow``). What is engine knowledge stays in the packs:
a rule says which layer family and registry a line speaks of, which cost class or finding
the line states and which run facts it sets; the ladders give rung and cost class; the
pack's ``name_cost`` table classes names that no shipped ladder holds.

The work is split by purpose: ``runstate`` (the open run and the facts rules set on it),
``engine_facts`` (release, era and platform), ``close`` (a closed run's selections and
findings), ``run_checks`` (what the machine implies) and ``run_parts`` (start failure,
attention, KV cache, rank divergence). Their public names stay importable from here.
"""
from __future__ import annotations

import copy
from typing import Iterator, Optional

from ..models import Event, Run
from ..packs.loader import CompiledRule, Pack, PackSet
from .close import FindingSet, close_run
from .engine_facts import PLATFORMS, candidate_releases, kernel_of
from .imports import chatter_note, folds_into, imports, stays_in
from .libhosts import library_only
from . import boundary, machine_lines
from .ladders import LadderIndex
from .lifecycle import says_up
from .newstart import failure_line, named_model, note, note_start, once_per_start, same_model, shared_names
from .triton_def import jit_heads_before
from .runstate import RunState, SelectionGroup, continuation_facts, fill, kv_norm, kv_same, set_facts

__all__ = ["Analyzer", "PLATFORMS", "FindingSet", "RunState", "SelectionGroup", "candidate_releases", "fill",
           "kernel_of", "kv_norm", "kv_same"]


class Analyzer:
    """Builds ``Run`` objects from a stream of events of one or more inputs.

    ``feed(event)`` returns the runs that closed because a new engine start began;
    ``finish()`` returns the rest. Per-run memory is bounded by the number of recognised
    lines of that run, which is small (kernel lines are printed once per layer family).

    The modules that close a run read its ``packs``, ``rules`` (rule id -> compiled rule and
    its pack), ``ladders`` (engine -> ``LadderIndex``), ``prefix_formats``, ``gpu``, ``cuda``
    and ``engine_version``.
    """

    def __init__(self, packs: PackSet, prefix_formats: Optional[dict[str, int]] = None,
                 gpu: Optional[str] = None, cuda: Optional[str] = None,
                 engine_version: Optional[dict[str, str]] = None):
        self.packs = packs
        #: ``--gpu`` / ``--cuda``: used only to infer what a log does not say (never shown as observed)
        self.gpu, self.cuda = gpu, cuda
        #: ``--engine-version``: engine -> shipped release, for runs that log no release number
        self.engine_version = dict(engine_version or {})
        self.rules: dict[str, tuple[CompiledRule, Pack]] = {}
        for pack in packs.packs.values():
            for cr in pack.rules:
                self.rules[cr.rule.id] = (cr, pack)
        self.ladders = {name: LadderIndex(p) for name, p in packs.packs.items()}
        self.prefix_formats = prefix_formats if prefix_formats is not None else {}
        self._run: Optional[RunState] = None
        self._count = 0
        #: source -> line of the last sign its server was up (ready / HTTP 2xx line) with no start
        #: marker since: a later failure is a crash while serving (``lifecycle``, one int per source)
        self.up_seen: dict[str, int] = {}
        #: source -> a progress line with run facts ('Starting to load model X') heard while no run of
        #: that source was open: its facts go to the next run the source opens (one per source)
        self._pending: dict[str, tuple] = {}
        #: source -> a Triton CompilationError header that joined no run (the run its error opens reads it)
        self._jit_heads: dict[str, Event] = {}
        self.max_events_per_run = 10_000
        self._shared = shared_names(packs)  #: process names several processes of one start share
        #: source -> engines whose library another program of that source is built on (a ``disowns``
        #: identity line was read): their ``library`` identity rules name no engine there
        self._disowned: dict[str, set[str]] = {}
        #: source -> ``unread`` events heard while no run of that source was open (at most 64): the
        #: next run the source opens lists them (a reworded first kernel line, vllm-001)
        self._unread: dict[str, list[Event]] = {}
        #: source -> ``machine`` lines heard while no run of it was open (``machine_lines``)
        self.machine_held: dict[str, list[Event]] = {}
        #: a launch command (event, its two engine hints) read after the open run ended: the next
        #: event says whose it is (``feed``)
        self._command: Optional[tuple[Event, Optional[str], Optional[str]]] = None
        #: that command when it went to the run the next event opened (``Pipeline`` keeps it with
        #: the new run's events for a checkpoint; it resets it)
        self.carried: Optional[Event] = None
        #: the last identity line that named a run: (line, run, its naming before), undone when a
        #: launch command of that line goes to the next run (``boundary.unname``)
        self._named: Optional[tuple] = None

    # -- feeding -------------------------------------------------------------------------
    def feed(self, ev: Event, prefix_engine: Optional[str] = None,
             context_engine: Optional[str] = None) -> Iterator[Run]:
        """Add one event; yields a finished run when this event starts a new one.

        ``prefix_engine`` / ``context_engine``: ``Matcher.engine_hint`` of the event (which
        engine's line prefix it carried, or followed); None when unknown.

        A launch command (a rule that ``sets`` ``cli``: ``vllm serve X ...``) after the open run
        failed, came up or said something is held until the next event: when that one begins a new
        run (``boundary.command_opens``), the command is the new run's first line, else the old
        run's (docs/run-splitting.md, "A launch command after a failure").
        """
        r, pack = self.rules[ev.rule][0].rule, self.rules[ev.rule][1]
        held, run = self._command, self._run
        if held is not None and r.kind not in ("identity", "unread", "machine"):
            self._command = None
            if run is not None and boundary.command_opens(self, run, held[0], ev, prefix_engine or pack.engine,
                                                          lambda: self.splits(ev, prefix_engine, context_engine)):
                # the ended run's span stops before the command (its line's identity events too)
                run.last_line = min(run.last_line, max(held[0].line - 1, run.first_line))
                boundary.unname(run, self._named, held[0].line)
                yield self._close(run)
                self._run, self.carried = None, held[0]  # the command opens the new run
            else:
                boundary.before_command(self, run, held)
            for out in self._feed(*held):  # it ends the run itself (another model): it opens the next
                self.carried = held[0]
                yield out
        run = self._run
        if ("cli" in r.sets and r.kind == "config" and run is not None and run.source == ev.source
                and (boundary.ended(run) or boundary.has_substance(run, since_start=False))
                and all(ev.line > (e.end_line or e.line) for e in run.events)):
            self._command = (ev, prefix_engine, context_engine)
            return
        if "cli" in r.sets and r.kind == "config":
            boundary.before_command(self, run, (ev, prefix_engine, context_engine))  # not held
        for out in self._feed(ev, prefix_engine, context_engine):
            self.carried = None  # the run the command opened ended too: the next is this event's alone
            yield out

    def _feed(self, ev: Event, prefix_engine: Optional[str] = None,
              context_engine: Optional[str] = None) -> Iterator[Run]:
        """``feed`` without the hold of a launch command."""
        cr, pack = self.rules[ev.rule]
        r = cr.rule
        run = self._run
        if r.kind == "identity":
            yield from self._identify(ev, pack, run)
            return
        engine, sure = self._engine_sure(ev, r, pack, prefix_engine, context_engine, run)
        if r.kind == "unread":
            # a kernel sentence no rule read: a question about the open run of its source (or, before
            # any, the next run it opens), never evidence that opens, names or splits one
            if run is not None and run.source == ev.source:
                if len(run.unread) < 256:
                    run.unread.append(ev)
            elif len(self._unread.setdefault(ev.source, [])) < 64:
                self._unread[ev.source].append(ev)
            return
        if r.kind == "machine":  # a tool's or wrapper's GPU line: facts only, never run structure
            machine_lines.take(self, run, r, ev, pack)
            return
        if r.kind == "progress":
            # evidence only (a traceback before it was survived): it joins an open run of its
            # source, never opens or names one; it splits one only when another process logs it
            if run is not None and run.source == ev.source and self._other_process(run, r, ev):
                yield self._close(run)  # the line itself opens nothing (follow's restore replays it so)
                self._run = None
                run = None
            if run is not None and run.source == ev.source:
                if len(run.events) < self.max_events_per_run:
                    run.events.append(ev)
                    note(run, ev, self._shared)
                    note_start(run, ev, False)  # its process went on (a survived exception)
                    set_facts(run, r.sets, ev.groups, ev, pack.meta.pack.cli, r.lists)  # a joined run's facts ('Starting to load model X')
            elif r.sets:
                self._pending[ev.source] = (r, ev)  # for the run this source opens next
            return
        if says_up(ev):
            self.up_seen[ev.source] = ev.line  # remembered even when the line joins no run
        elif r.starts_run:
            self.up_seen.pop(ev.source, None)  # a (re)start: its own start can fail
        if (r.kind in ("uncaught", "ready", "stop") or r.open_run_only) and not prefix_engine and (run is None or run.source != ev.source):
            if ev.rule.endswith(".uncaught.triton-compile-error"):  # its kernel, for the error below it
                self._jit_heads[ev.source] = ev  # (analysis/triton_def.py)
            return  # a bare traceback, ready or stop line names no engine: it belongs to an open run or to none
        engine, sure, chatter_of, takes, closes = self._placement(ev, r, engine, sure, run)
        if chatter_of:  # an imported library's lines began the run
            run.engine, run.engine_sure = engine, False  # type: ignore[union-attr]
        elif takes:
            run.engine = engine  # type: ignore[union-attr]  # the run began on lines that named no engine
        if closes:
            yield self._close(run)  # type: ignore[arg-type]
            run = None
        if run is None:
            run = self._run = RunState(index=self._count, source=ev.source, first_line=ev.line,
                                        last_line=ev.line, engine=engine, up_line=self.up_seen.get(ev.source))
            self._count += 1
            run.unread.extend(self._unread.pop(ev.source, ()))
            machine_lines.opened(self, run)
            run.jit_heads = jit_heads_before(self._jit_heads.pop(ev.source, None), ev.line)
            pend = self._pending.pop(ev.source, None)
            named = named_model(r.sets, ev) if pend is not None else ""
            if pend is not None and (not named or same_model(named, named_model(pend[0].sets, pend[1]))):
                # a progress line before the run's first read line named its facts (the same model)
                set_facts(run, pend[0].sets, pend[1].groups, pend[1], lists=pend[0].lists)
        if sure and not run.engine_sure:
            run.engine_sure = True
            run.identified_by = self._why_engine(ev, prefix_engine, context_engine, r)
            # only a line after an identity line named it: as weak as that line (a ``disowns``
            # line of another program built on the engine's library takes it back)
            run.library_identity = not prefix_engine and not (r.starts_run or r.names_engine)
            if chatter_of:
                run.identified_by += "; " + chatter_note(self, run, engine, chatter_of, ev.line)
        run.last_line = max(run.last_line, ev.end_line or ev.line)  # its continuation lines too
        if r.starts_run:
            if not run.started:
                run.start_line = ev.line
            run.started = True
            if len(run.start_lines) < 256:
                run.start_lines.append(ev.line)
        if r.id not in run.rules_seen:
            run.rules_seen.append(r.id)
        if len(run.events) < self.max_events_per_run:
            run.events.append(ev)
        note(run, ev, self._shared)
        note_start(run, ev, once_per_start(r))
        set_facts(run, r.sets, ev.groups, ev, pack.meta.pack.cli, r.lists)
        continuation_facts(run, cr, ev, pack.meta.pack.cli)

    def _engine_sure(self, ev: Event, r, pack: Pack, prefix_engine: Optional[str], context_engine: Optional[str],
                     run: Optional[RunState]) -> tuple[str, bool]:
        """``boundary.engine_of`` for a non-identity event, unsure when the hint came from a disowned library."""
        if context_engine and not r.generic and imports(self, pack.engine, context_engine):
            # the last prefixed line was a library's that this pack's engine imports (FlashInfer's
            # '[TensorRT-LLM][ERROR] ...' in vLLM's process): no hint against the rule's own engine
            context_engine = None
        engine, sure = boundary.engine_of(prefix_engine, context_engine, pack.engine, r.starts_run or r.names_engine,
                                          run, ev.source)
        if (sure and not prefix_engine and not (r.starts_run or r.names_engine)
                and engine in self._disowned.get(ev.source, ())):
            sure = False  # the hint came from the library's lines of another program built on it
        return engine, sure

    def _placement(self, ev: Event, r, engine: str, sure: bool,
                   run: Optional[RunState]) -> tuple[str, bool, Optional[str], bool, bool]:
        """Where a (non-identity, non-unread, non-progress) event goes, without changing anything:
        ``(engine, sure, chatter_of, takes, closes)``. ``chatter_of``: the engine of the open run
        that was only library chatter of ``engine`` (the run becomes ``engine``'s); ``takes``: the
        open run named no engine and now takes ``engine``; ``closes``: the event ends the open run
        (another source or engine, a restart, another process: ``docs/run-splitting.md``)."""
        chatter_of, takes = None, False
        if run is None:
            return engine, sure, None, False, False
        here = run.source == ev.source
        run_engine = run.engine
        if here and run.engine != engine and sure:
            if folds_into(self, run, engine):
                chatter_of, run_engine = run.engine, engine
            elif run.engine_sure and stays_in(self, run, engine, ev):
                engine, sure = run.engine, False  # the library prints inside the importer's run
        if here and run_engine != engine and sure and not run.engine_sure and not chatter_of:
            takes, run_engine = True, engine
        closes = (not here or run_engine != engine
                  or (r.starts_run and (run.started or boundary.ended(run)) and boundary.has_substance(run)
                      and not boundary.child_start(run, r, ev, self._shared))
                  or self._other_process(run, r, ev) or boundary.restarted(run, r, ev))
        return engine, sure, chatter_of, takes, bool(closes)

    def splits(self, ev: Event, prefix_engine: Optional[str] = None, context_engine: Optional[str] = None,
               held: Optional[tuple[Event, tuple]] = None, closes_only: bool = False) -> bool:
        """Whether feeding ``ev`` (with its ``Matcher.engine_hint``) would close the open run (or give
        a run no line named the engine of ``ev``), without feeding it. The pipeline asks before it feeds an event while the matcher still holds a
        multi-line event open (``held``: that event and its hint): that one began before ``ev`` and
        goes to the run it began in, so it is emitted first when ``ev`` ends that run. With no run
        open, the run ``held`` would open is the one asked about (docs/run-splitting.md, "Held
        lines at a run boundary"). ``closes_only``: whether it ends the open run, not whether it
        renames it."""
        cr, pack = self.rules[ev.rule]
        r = cr.rule
        run = self._run
        if run is None and held is not None:
            run = boundary.opened_by(self, *held)
        elif run is not None and held is not None and run.failed_line is None and failure_line(held[0]):
            run = copy.copy(run)  # the held exception goes to the run first: it has failed by then
            run.failed_line = held[0].line
        if run is None or r.kind in ("unread", "machine"):
            return False
        if r.kind == "identity":  # ``_identify``: only another source's identity line closes the run
            return (run.source != ev.source and not r.disowns
                    and not (library_only(cr, ev.message) and pack.engine in self._disowned.get(ev.source, ())))
        if r.kind == "progress":
            return run.source == ev.source and self._other_process(run, r, ev)
        if (r.kind in ("uncaught", "ready", "stop") or r.open_run_only) and not prefix_engine and run.source != ev.source:
            return False
        engine, sure = self._engine_sure(ev, r, pack, prefix_engine, context_engine, run)
        _, _, chatter_of, takes, closes = self._placement(ev, r, engine, sure, run)
        if closes_only:
            return closes
        return closes or takes or chatter_of is not None  # ends the run, or gives it another engine

    def cut(self) -> Iterator[Run]:
        """Close the open run before the next event, which a later event of its own line ends
        (``Pipeline``: one line's events are one run's). A launch command held (``feed``) goes to
        the run that comes next, as when the ending event is fed (``carried``)."""
        held, self._command, run, self._run = self._command, None, self._run, None
        if run is not None:
            run.last_line = min(run.last_line, max(held[0].line - 1, run.first_line)) if held else run.last_line
            yield self._close(run)
        if held is not None:
            self.carried = held[0]
            yield from self._feed(*held)

    def _identify(self, ev: Event, pack: Pack, run: Optional[RunState]) -> Iterator[Run]:
        """An ``identity`` rule's event: evidence that the lines are ``pack``'s engine.

        It names the engine of an open run that no line named yet (a paste of traceback
        lines), or opens a run of that engine; a run whose engine is already named keeps it
        (SGLang imports vLLM modules, so a vLLM path in an SGLang traceback is no new run).
        """
        r = self.rules[ev.rule][0].rule
        why = f"line {ev.line}: {r.description or ev.rule}"
        if r.disowns:
            # another program built on the engine's library (whisper.cpp on ggml): the library's
            # lines of this source name the engine no more, and a run only they named is unknown
            self._disowned.setdefault(ev.source, set()).add(pack.engine)
            if (run is not None and run.source == ev.source and run.engine == pack.engine
                    and run.library_identity):
                run.engine_sure, run.library_identity, run.identified_by = False, False, None
            return
        library = library_only(self.rules[ev.rule][0], ev.message)
        if library and pack.engine in self._disowned.get(ev.source, ()):
            return  # ggml's own line in another ggml program's log: no evidence of the engine
        if run is not None and run.source != ev.source:
            yield self._close(run)
            run = self._run = None
        if run is None:
            run = self._run = RunState(index=self._count, source=ev.source, first_line=ev.line,
                                        last_line=ev.line, engine=pack.engine, up_line=self.up_seen.get(ev.source))
            self._count += 1
            run.unread.extend(self._unread.pop(ev.source, ()))
            machine_lines.opened(self, run)
        if not run.engine_sure:
            self._named = (ev.line, run, (run.engine, run.engine_sure, run.identified_by, run.library_identity))
            run.engine, run.engine_sure, run.identified_by = pack.engine, True, why
            run.library_identity = library
        elif run.library_identity and run.engine == pack.engine and not library:
            run.library_identity = False  # the engine's own text (llama_model_loader) names it too
        run.last_line = max(run.last_line, ev.line)

    def disowned(self, source: str, engine: str) -> bool:
        """A ``disowns`` line of ``engine``'s pack was read in ``source``: another program built on the
        engine's library runs there (whisper.cpp on ggml), so that library's lines name nothing."""
        return engine in self._disowned.get(source, ())

    def _why_engine(self, ev: Event, prefix_engine: Optional[str], context_engine: Optional[str], r) -> str:
        """In prose, why an event names its run's engine (``EngineInfo.identified_by``)."""
        if prefix_engine:
            title = self.packs.packs[prefix_engine].meta.pack.title or prefix_engine
            return f"line {ev.line} carries the {title} line prefix"
        if r.starts_run or r.names_engine or not context_engine:
            # a start marker or an engine's launch command names it by itself
            return f"line {ev.line}: {r.description or r.id}"
        return f"line {ev.line} follows a line with the {context_engine} line prefix"

    def _other_process(self, run: RunState, r, ev: Event) -> bool:
        """``boundary.other_process_speaks`` with the run-set names this analyzer shares."""
        return boundary.other_process_speaks(run, r, ev, self._shared)

    def finish(self) -> Iterator[Run]:
        """Close the open run at the end of the input(s) (a launch command held is its last line)."""
        if self._command is not None:
            held, self._command = self._command, None
            boundary.before_command(self, self._run, held)
            yield from self._feed(*held)
        if self._run is not None:
            yield self._close(self._run)
            self._run = None

    def peek(self) -> Optional[Run]:
        """The open run as it would close now, without closing it (None when no run is open).

        Lets a stream that never ends (``logscan follow``) report selections and findings as
        they appear; the run goes on receiving events afterwards. ``_close`` may settle facts
        on the run state (e.g. an inferred platform), so it works on a deep copy: looking must
        not change what the run becomes.
        """
        if self._run is None:
            return None
        if self._command is None:
            return self._close(copy.deepcopy(self._run))
        return boundary.peek_held(self)  # a held launch command would be its last line

    def _close(self, run: RunState) -> Run:
        """The ``Run`` that ``run`` makes (``close.close_run``, with this analyzer as its context)."""
        return close_run(self, run)
