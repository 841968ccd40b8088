"""The one pipeline: source -> records -> matcher -> events -> analysis -> report.

``scan_inputs`` reads whole inputs and returns a ``Report``; ``Pipeline`` is the same chain
fed line by line (for a tail that never ends). Every stage streams: memory depends on the
number of recognised lines kept for the report, not on the size of the input.

``scan_inputs`` reads in 1 MiB chunks through a byte prefilter (``sources.prefilter``): only
the lines that hold a pack keyword (or bytes that change a line's text, or the start of a
wrapped record) are decoded and fed, plus every line while the pipeline holds something open
(a multi-line event, a partial CRI record). The report is the same as feeding every line
(``prefilter="off"``); ``tests/test_prefilter.py`` checks it. Lines a terminal hard-wrapped
are rejoined before the unwrapper (``sources/rewrap.py``); while an input shows a wrap width the
reader yields every line, so a keyword cut in two still reaches the matcher.
"""
from __future__ import annotations

import os
from typing import Iterable, Iterator, Optional

from . import __version__
from .analysis.analyzer import Analyzer
from .fold import Collector
from .match import Matcher
from .models import Event, InputStats, Report, Run
from .packs.loader import PackSet, default_packs
from .sources.prefix import PrefixParser
from .sources import interrupt
from .sources.prefilter import make_prefilter
from .sources.reader import InputError, LineReader, open_input
from .sources.safe import safe_text
from .sources.sparse import read_since_start
from .sources.rewrap import Rewrapper, WrapWidth, joiner
from .sources.unwrap import Unwrapper

#: Events kept in a report's ``events`` list at most (the rest still feed the analysis).
MAX_REPORT_EVENTS = 100_000
#: What a line can raise that makes it a counted skip instead of a crash (a huge or odd number, deep nesting).
_SKIP = (ValueError, OverflowError, RecursionError, UnicodeError, IndexError, KeyError, TypeError)
#: Of those, what a programming error raises (a missing key, a wrong type, an index past the end):
#: still a counted skip for users, re-raised under ``LOGSCAN_STRICT=1`` (tests/conftest.py sets it)
#: so that a test sees the bug instead of a quietly skipped line (docs/hostile-input.md).
_BUG = (IndexError, KeyError, TypeError)


def strict() -> bool:
    """True when ``$LOGSCAN_STRICT`` is set to anything but empty or ``0`` (read at each skip)."""
    return os.environ.get("LOGSCAN_STRICT", "") not in ("", "0")


def _kept(ev: Event) -> dict:
    """The event's fields the report leaves out but a restore needs (``newstart``: pid, timestamp;
    the run's span: ``end_line``, the last continuation line; the logger's ``fileinfo``; the
    continuation lines' groups, ``item_groups``: a Triton CompilationError's ``def <kernel>(``)."""
    return {k: v for k, v in (("pid", ev.pid), ("timestamp", ev.timestamp), ("end_line", ev.end_line),
                              ("fileinfo", ev.fileinfo), ("item_groups", ev.item_groups or None)) if v is not None}


class Checkpoint:
    """A pipeline state taken by ``Pipeline.checkpoint``; ``to_json`` gives the restorable dict."""

    __slots__ = ("_events", "_n", "formats", "context", "named", "wrap", "wrap_changes", "quoted", "up_seen", "jit_head")

    def __init__(self, events: list[tuple[Event, tuple]], n: int, formats: dict[str, int], context: Optional[str],
                 named: Optional[list[str]] = None, wrap=None, quoted: Optional[list] = None,
                 up_seen: Optional[int] = None, jit_head: Optional[Event] = None):
        self._events, self._n, self.formats, self.context = events, n, formats, context
        #: a Triton CompilationError header that joined no run (``Analyzer._jit_heads``), or the one
        #: the open run took when it opened (``RunState.jit_heads``): not among the run's events, yet
        #: its ``def <kernel>(`` names the kernel of the run's error (analysis/triton_def.py)
        self.jit_head = jit_head
        #: the line of the source's last ready / HTTP 2xx line with no start since (``Analyzer.up_seen``):
        #: a line that joined no run, so not among the open run's events, yet a failure of the open
        #: run after it is one while serving (vllm-161 behind another log: a restored follower said
        #: START_FAILED where scan said failed while serving)
        self.up_seen = up_seen
        #: frame headers still waiting for their quoted code line (``sources/quoted.py``)
        self.quoted = list(quoted or [])
        #: the hard-wrap detector's state (``rewrap.WrapWidth.to_json``) and its change count, in follow
        self.wrap = wrap.to_json() if wrap is not None else None
        self.wrap_changes = wrap.changes if wrap is not None else 0
        #: engines whose line prefix already named them in this input (``Matcher``: their identity
        #: rules no longer read prefixed lines); without it a restore would name them again
        self.named = list(named or [])

    def to_json(self) -> dict:
        """``{"events": [...], "formats": {...}, "context": ..., "prefix_named": [...]}`` (and
        ``"wrap"`` in follow), what ``Pipeline.restore`` takes."""
        out = {"events": [{"event": {**ev.model_dump(mode="json"), **_kept(ev)},
                           "hint": list(hint)}
                          for ev, hint in self._events[: self._n]],
               "formats": dict(self.formats), "context": self.context, "prefix_named": list(self.named)}
        if self.wrap is not None:
            out["wrap"] = self.wrap
        if self.quoted:
            out["quoted"] = self.quoted
        if self.up_seen is not None:
            out["up_seen"] = self.up_seen
        if self.jit_head is not None:
            out["jit_head"] = {**self.jit_head.model_dump(mode="json"), **_kept(self.jit_head)}
        return out


class Pipeline:
    """Stateful chain for one input stream; ``feed`` yields events and closed runs.

    For a stream that never ends (``logscan follow``) it also offers ``open_run`` (the open
    run as it stands, to report selections and findings before the run closes),
    ``flush_pending`` (give up waiting for the rest of a multi-line message after a quiet
    spell) and ``checkpoint``/``restore`` (resume after a restart without re-reading the
    whole stream: the events of the open run are kept, which are few per engine start).
    """

    def __init__(self, packs: Optional[PackSet] = None, source: str = "<stdin>",
                 gpu: Optional[str] = None, cuda: Optional[str] = None,
                 engine_version: Optional[dict[str, str]] = None):
        self.packs = packs or default_packs()
        self.source = source
        self.parser = PrefixParser(self.packs)
        self.matcher = Matcher(self.packs)
        #: line formats seen on lines the matcher's keyword prefilter took (the era hint). Only
        #: those count, so that skipping keyword-free lines never changes the analysis.
        self.formats: dict[str, int] = {}
        self.analyzer = Analyzer(self.packs, self.formats, gpu=gpu, cuda=cuda, engine_version=engine_version)
        #: events of the open run with their engine hints, for checkpoint(); only appended to
        self._open: list[tuple[Event, tuple]] = []
        #: lines given up because parsing or analysing them raised (see ``feed``), and the first reason
        self.skipped_lines = 0
        self.skip_reason: Optional[str] = None
        #: the input's hard-wrap detector (``rewrap.WrapWidth``) when its state is checkpointed (follow)
        self.wrap = None

    def _analyse(self, ev: Event, hint: tuple) -> Iterator[Run]:
        closed = False
        for run in self.analyzer.feed(ev, *hint):
            closed = True
            yield run
        if closed:  # a held launch command the new run took is one of its events (``Analyzer.feed``)
            keep, self.analyzer.carried = self.analyzer.carried, None
            self._open = [x for x in self._open if x[0] is keep] if keep is not None else []
        if len(self._open) < self.analyzer.max_events_per_run:
            self._open.append((ev, hint))

    def _held_first(self, ev: Event, hint: tuple) -> bool:
        """Whether the matcher's multi-line event still gathering lines (begun before ``ev``) must be
        emitted before ``ev``: ``ev`` closes the open run, and the held event belongs to the run it
        began in, not to the one ``ev`` opens (docs/run-splitting.md, "Held lines at a run boundary")."""
        held = self.matcher.held
        if held is None or held.line >= ev.line:
            return False
        try:
            return self.analyzer.splits(ev, *hint, held=(held, self.matcher.engine_hint(held, keep=True)))
        except _SKIP:  # the event itself will be a counted skip (``_events``)
            return False

    def _line_ends_run(self, events: list[Event], i: int) -> bool:
        """Whether a later event of the line of ``events[i]`` (its first) ends the open run while
        it does not: one line's events are one run's, so the run is closed before the first of them
        (a copy's first traceback frame is an identity and an uncaught event: the identity went to
        the run before, vllm-116 catted twice). The later events are asked first: most lines have
        none that ends the run, and then the first event is never asked (one ``splits`` call for a
        line of two events, where asking the first one first made two)."""
        ev = events[i]
        if i and events[i - 1].line == ev.line:
            return False
        rest = [e for e in events[i + 1:] if e.line == ev.line and e.source == ev.source]
        if not rest:
            return False
        try:
            if not any(self.analyzer.splits(e, *self.matcher.engine_hint(e, keep=True), closes_only=True)
                       for e in rest):
                return False
            return not self.analyzer.splits(ev, *self.matcher.engine_hint(ev, keep=True), closes_only=True)
        except _SKIP:  # the event itself will be a counted skip (``_events``)
            return False

    def _cut(self) -> Iterator[tuple[Optional[Event], Optional[Run]]]:
        runs = list(self.analyzer.cut())
        keep, self.analyzer.carried = self.analyzer.carried, None
        self._open = [x for x in self._open if x[0] is keep] if keep is not None else []
        for run in runs:
            yield None, run

    def _events(self, events: Iterable[Event]) -> Iterator[tuple[Optional[Event], Optional[Run]]]:
        events = list(events)
        for i, ev in enumerate(events):
            cut = self._line_ends_run(events, i)
            hint = self.matcher.engine_hint(ev)
            held = self.matcher.held
            if (cut and held is not None and held.line < ev.line) or self._held_first(ev, hint):
                yield from self._events(self.matcher.flush())
            if cut:
                yield from self._cut()
            if ev.kind != "unread":  # a kernel sentence no rule read: its run's "not understood" entry only
                yield ev, None
            try:
                runs = list(self._analyse(ev, hint))
            except _SKIP as exc:  # a value past a bound the analysis did not expect: a counted skip
                self._skip(ev.line, exc)
                continue
            for run in runs:
                yield None, run

    def _skip(self, line: int, exc: BaseException) -> None:
        """Count line ``line`` as skipped because of ``exc``; re-raises ``exc`` when it is a
        programming error (``_BUG``) and ``strict()`` is on."""
        if isinstance(exc, _BUG) and strict():
            raise exc
        self.skipped_lines += 1
        if self.skip_reason is None:
            self.skip_reason = f"line {line}: {type(exc).__name__}: {str(exc)[:200]}"

    def feed(self, line: int, text: str, truncated: bool = False,
             end_line: Optional[int] = None) -> Iterator[tuple[Optional[Event], Optional[Run]]]:
        """Feed one unwrapped line; yields ``(event, None)`` and ``(None, closed_run)`` items.
        ``end_line``: the last physical line of a record joined from hard-wrapped pieces.

        A line that cannot be parsed or matched (a value past an internal bound) is a counted
        skip (``skipped_lines``, the first one's reason in ``skip_reason``), never an exception.
        """
        text = safe_text(text)
        try:
            rec = self.parser.parse(self.source, line, text, truncated, end_line)
            hits = self.matcher.stats.prefilter_hits
            events = list(self.matcher.feed(rec))
        except _SKIP as exc:
            self._skip(line, exc)
            return
        if self.matcher.stats.prefilter_hits != hits:
            for fid in self.parser.last_formats:
                self.formats[fid] = self.formats.get(fid, 0) + 1
        yield from self._events(events)

    def close(self) -> Iterator[tuple[Optional[Event], Optional[Run]]]:
        """End of input: flush a pending multi-line event and close the open run."""
        yield from self._events(self.matcher.flush())
        for run in self.analyzer.finish():
            yield None, run
        self._open = []

    def flush_pending(self) -> Iterator[tuple[Optional[Event], Optional[Run]]]:
        """Emit a multi-line event still gathering lines, keeping the run open."""
        yield from self._events(self.matcher.flush())

    def open_run(self) -> Optional[Run]:
        """The open run as it would be reported if the input ended now (None if none is open)."""
        return self.analyzer.peek()

    @property
    def quiescent(self) -> bool:
        """True when no multi-line event is half gathered: a safe point for ``checkpoint``."""
        return not self.matcher.pending

    def checkpoint(self) -> Checkpoint:
        """The state that ``restore`` rebuilds; cheap enough to take after every line.

        Holds the events of the open run (at most ``analyzer.max_events_per_run``; a
        reference to a list that is only appended to, not a copy) with their engine hints,
        the line formats seen and the matcher's engine context. Raises ``ValueError`` unless
        ``quiescent``.
        """
        if not self.quiescent:
            raise ValueError("pipeline is gathering a multi-line event: no checkpoint here")
        named = sorted(e for e, src in self.matcher._prefix_named if src == self.source)
        return Checkpoint(self._open, len(self._open), dict(self.formats), self.matcher.context, named, self.wrap,
                          self.matcher._quoted.to_json(), self.analyzer.up_seen.get(self.source),
                          self._jit_head())

    def _jit_head(self) -> Optional[Event]:
        """The CompilationError header the open run took, else the one waiting for a run (or None)."""
        run = self.analyzer._run
        if run is not None and run.source == self.source and run.jit_heads:
            return run.jit_heads[0]
        return self.analyzer._jit_heads.get(self.source)

    def restore(self, state: dict) -> None:
        """Rebuild the open run from ``Checkpoint.to_json()``, on a fresh pipeline.

        Raises ``ValueError`` when the dict is not a checkpoint (wrong shape or event fields).
        """
        try:
            items = []
            for item in state.get("events", []):
                hint = tuple(item.get("hint") or (None, None))
                if len(hint) != 2 or not all(h is None or isinstance(h, str) for h in hint):
                    raise ValueError(f"bad engine hint {hint!r}")
                items.append((Event.model_validate(item["event"]), hint))
            formats = {str(k): int(v) for k, v in dict(state.get("formats", {})).items()}
            context = state.get("context")
            if context is not None and not isinstance(context, str):
                raise ValueError(f"bad context {context!r}")
            named = state.get("prefix_named", [])  # absent in a state file written before it
            if not isinstance(named, list) or not all(isinstance(e, str) for e in named):
                raise ValueError(f"bad prefix_named {named!r}")
            quoted = state.get("quoted", [])  # absent before batch 11v, and when no header waits
            if not isinstance(quoted, list):
                raise ValueError(f"bad quoted {quoted!r:.200}")
            up = state.get("up_seen")  # absent before it was kept, and when no such line was seen
            if up is not None and (isinstance(up, bool) or not isinstance(up, int)):
                raise ValueError(f"bad up_seen {up!r:.200}")
            jit = state.get("jit_head")  # absent before trial 37's fix, and when no header waits
            jit_head = Event.model_validate(jit) if jit is not None else None
            self.matcher._quoted.restore(quoted)
            wrap = state.get("wrap")  # absent before the hard-wrap joiner, and in scan
            if wrap is not None and self.wrap is not None:
                if not isinstance(wrap, dict):
                    raise ValueError(f"bad wrap {wrap!r:.200}")
                self.wrap.restore(wrap)
        except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:  # pydantic's ValidationError is a ValueError
            raise ValueError(f"not a pipeline checkpoint: {type(exc).__name__}: {str(exc)[:200]}") from None
        self.formats.update(formats)
        self.matcher.context = context
        self.matcher._prefix_named.update((e, self.source) for e in named)
        if up is not None and (not items or up < items[0][0].line):
            self.analyzer.up_seen[self.source] = up  # a later one the replayed events set again
        if jit_head is not None:
            self.analyzer._jit_heads[self.source] = jit_head  # the replayed run's first event takes it again
        for ev, hint in items:
            if ev.rule not in self.analyzer.rules:
                continue  # a rule removed from the packs since the checkpoint
            for _ in self._analyse(ev, hint):
                pass
        if read_since_start((ev for ev, _ in items), self.analyzer.rules):
            self.matcher._sparse_done.add(self.source)  # as the uninterrupted pass left it


def scan_inputs(paths: list[str], packs: Optional[PackSet] = None, gpu: Optional[str] = None,
                cuda: Optional[str] = None, prefilter: Optional[str] = None,
                engine_version: Optional[dict[str, str]] = None, fold: Optional[bool] = None) -> Report:
    """Scan each input (a path or ``-``) and return one report.

    ``gpu`` (``sm90``, ``H100``) and ``cuda`` (``12.8``) describe the machine when the log
    does not; they only feed inferences, which stay marked ``observed=False``. ``engine_version``
    (engine -> shipped release, ``--engine-version``) is the release of runs that log none.

    An input that cannot be opened does not stop the others: its ``InputStats.error`` says why
    (the CLI turns that into exit status 2). After SIGINT/SIGTERM (``sources/interrupt.py``,
    once installed) the input being read ends there, marked in its ``error``, and no further
    input is read. Runs never span two inputs. ``prefilter``:
    ``hyperscan``, ``python``, ``off`` (every line fed) or None (``$LOGSCAN_PREFILTER``, else
    the best available); raises ``ValueError`` for an engine that is not available.

    ``fold`` (None: on unless ``$LOGSCAN_FOLD=0``): a run whose report repeats an earlier run of
    its input but for numbers is folded into it (``Run.folded``, ``logscan/fold.py``), its events
    left out of ``events[]``; at most ``MAX_REPORT_EVENTS`` events are listed. What was left out is
    counted in ``Summary.folded_runs`` / ``events_left_out``.
    """
    packs = packs or default_packs()
    pf = make_prefilter(packs, prefilter)
    report = Report(logscan_version=__version__)
    collect = Collector(report, fold, MAX_REPORT_EVENTS)
    for path in paths:
        stats = InputStats(source="<stdin>" if path == "-" else "''" if path == "" else safe_text(path))  # any bytes
        report.inputs.append(stats)
        try:
            fh, name = open_input(path)
        except InputError as exc:
            stats.error = safe_text(str(exc))
            continue
        pipe = Pipeline(packs, source=safe_text(name), gpu=gpu, cuda=cuda, engine_version=engine_version)
        try:
            items: list = []
            width = WrapWidth(joiner(pipe.parser))  # a terminal's hard wrap (sources/rewrap.py)
            reader = LineReader(fh, stats, pf, wrap=width)
            rewrapper = Rewrapper(width)
            unwrapper = Unwrapper()

            def unwrapped(lines) -> None:
                for n, text, trunc in lines:
                    for rec in unwrapper.feed(n, text, trunc):
                        if rec[2] and not trunc:  # a joined CRI/Docker record cut at the unwrapper's cap
                            stats.truncated_lines += 1
                        items.extend(pipe.feed(*rec, end_line=rewrapper.end_of(rec[0])))

            try:
                for n, text, trunc in reader:
                    unwrapped(rewrapper.feed(n, text, trunc))
                    # a partial record, a multi-line event or a line of the wrap width (its rest
                    # may follow) is open: the reader must not skip
                    reader.hold = unwrapper.pending or not pipe.quiescent or rewrapper.pending
                    if items:
                        collect.add(items)
                        items.clear()
            except interrupt.Interrupted:  # SIGINT/SIGTERM: what was read is reported, marked
                stats.error = interrupt.note(reader.n)
            unwrapped(rewrapper.flush())
            if rewrapper.joined:  # said in the input's notes (formats/inputs.py)
                stats.rejoined_lines, stats.wrap_width = rewrapper.joined, width.width or width.max
            for rec in unwrapper.flush():
                if rec[2]:  # a partial record the input never finished
                    stats.truncated_lines += 1
                items.extend(pipe.feed(*rec))
            items.extend(pipe.close())
            collect.add(items)
        finally:
            collect.next_input()
            _count(pipe, stats)
            if fh is not None and path != "-":
                fh.close()
        if interrupt.requested():
            break
    collect.finish()
    for i, run in enumerate(report.runs):
        run.index = i
    from .formats.inputs import input_warnings

    for st in report.inputs:  # the text report's notes, for the JSON, Markdown and HTML alike
        st.warnings = input_warnings(st) or None
    return report.summarise()


def _count(pipe: Pipeline, stats: InputStats) -> None:
    """Copy what the pipeline gave up on (skipped and over-budget lines) into the input's stats."""
    stats.skipped_lines = pipe.skipped_lines
    ms = pipe.matcher.stats
    stats.over_budget_lines = ms.over_budget
    stats.over_budget_at = list(ms.over_budget_at)

