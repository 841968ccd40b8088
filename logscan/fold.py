"""Repeated runs folded into the first one like them, so that a crash loop's report stays small.

An engine that restarts over and over (Kubernetes ``CrashLoopBackOff`` under a supervisor that
keeps one log) logs the same failing start thousands of times; each is a run, and a report listing
them all grows with the log (a 381 MB loop gave a 3.4 GB JSON report). ``Collector`` takes the
items ``Pipeline.feed`` yields and keeps, per input, one run for each distinct report: a later run
whose report is the same but for numbers is counted into the first one's ``Run.folded`` (how many,
first and last lines, how many differ in numbers of their text) and its events leave ``events[]``
(counted in ``Summary.events_left_out``). Nothing the gate judges differs between folded runs
(kernels, cost classes, rungs and their ladders, finding codes, failures, versions, models are
compared exactly), so a gate's verdict is the same with folding on or off. docs/run-splitting.md
"Repeated runs".
"""
from __future__ import annotations

import json
import os
import re
from typing import Optional

from . import hashes as hashlib
from .models import Event, Folded, Report, Run

#: Keys of a run's JSON whose integer value is a line number of the input (compared relative to
#: the run's first line: a repeated start sits at other lines).
LINE_KEYS = frozenset(("line", "first_line", "last_line", "cause_line", "traceback_line",
                       "failing_kernel_line", "raised_in_line", "requested_line", "in_effect_line"))
#: Keys whose strings are the log's own words (a line's text, reasons, a headline): their numbers
#: (a memory figure, a time, a line number) are not compared. Every other string is exact.
TEXT_KEYS = frozenset(("evidence", "reasons", "message", "headline", "cause", "why", "failing_kernel_why",
                       "version_evidence", "platform_evidence", "identified_by", "reasoning"))
#: Of those, the keys that hold only the log's own text (a line, an exception line): a log never
#: numbers its own lines, so in the exact key their numbers are compared as they are. The others
#: are logscan's words ('line 37 carries the vLLM line prefix') that may quote the log.
LOG_TEXT_KEYS = frozenset(("evidence", "cause", "message"))
_NUM = re.compile(r"\d+(?:\.\d+)?")
#: a line number logscan's words name ('line 37', 'lines 12-'), made relative in the exact key; not
#: a source line of a quoted traceback frame (CPython's and C++'s ``File "x.py", line 92, in f``)
#: nor a parser's position (``Expecting value: line 1 column 1``): the log's own numbers, which
#: made a repeat whose span held 92 differ from the first copy (vllm-020 catted 300 times)
_LINE_NO = re.compile(r'(?<!", )\blines? (\d+)\b(?!,? col)')


def enabled() -> bool:
    """Folding is on unless ``$LOGSCAN_FOLD`` is ``0`` / ``off`` (read at each scan; the benchmark's
    unbounded baseline)."""
    return os.environ.get("LOGSCAN_FOLD", "").lower() not in ("0", "off", "no", "false")


def _norm(v, key: str, span: tuple[int, int], exact: bool):
    """``v`` with line numbers made relative to the run's first line and, in ``TEXT_KEYS``, every
    number of the text replaced by ``#`` (``exact``: only a 'line N' within the run's ``span`` of
    lines, made relative: a text naming its log line, 'its last frame, line 37')."""
    if isinstance(v, dict):
        return {k: _norm(x, k, span, exact) for k, x in v.items() if k != "index"}
    if isinstance(v, list):
        return [_norm(x, key, span, exact) for x in v]
    if key in LINE_KEYS and isinstance(v, int) and not isinstance(v, bool):
        return v - span[0]
    if key in TEXT_KEYS and isinstance(v, str):
        if exact and key in LOG_TEXT_KEYS:
            return v
        if exact:
            def rel(m: re.Match) -> str:
                n = int(m.group(1))
                return f"line @{n - span[0]}" if span[0] <= n <= span[1] else m.group()
            return _LINE_NO.sub(rel, v)
        return _NUM.sub("#", v)
    return v


def keys(run: Run) -> tuple[bytes, bytes]:
    """(fold key, exact key) of ``run``: two runs fold when their fold keys are equal; they differ
    only in line numbers when their exact keys are equal too. Digests (blake2b, 16 bytes) of the
    run's JSON dump without ``index`` and ``source``, normalised by ``_norm``."""
    doc = run.model_dump(mode="json")
    doc.pop("source", None)
    doc.pop("folded", None)
    span = (run.first_line, run.last_line)
    out = []
    for exact in (False, True):
        text = json.dumps(_norm(doc, "", span, exact), sort_keys=True, ensure_ascii=False)
        out.append(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
    return out[0], out[1]


class Collector:
    """Puts what a pipeline yields into a ``Report``: runs (folded, see the module docstring) and
    events (at most ``max_events``, the rest counted in ``Summary.events_left_out``).

    ``add(items)`` takes ``(event, None)`` / ``(None, run)`` pairs of one input, in order;
    ``next_input()`` between inputs (runs of two inputs never fold); ``finish()`` at the end.
    An event waits until the run that holds its line closes: kept with a run that is listed,
    counted in ``Folded.events`` of the run a folded one joined.
    """

    def __init__(self, report: Report, fold: Optional[bool] = None, max_events: int = 100_000):
        self.report = report
        self.fold = enabled() if fold is None else fold
        self.max_events = max_events
        self._pending: list[Event] = []
        self._seen: dict[bytes, tuple[Run, bytes]] = {}
        self.left_out = 0

    def add(self, items) -> None:
        """Take ``(event, run)`` pairs from ``Pipeline.feed`` / ``close``."""
        for ev, run in items:
            # a ``progress`` line is evidence for the analysis only (a traceback was survived), not a report event
            if ev is not None and ev.kind != "progress":
                self._pending.append(ev)
                if len(self._pending) > self.max_events:  # no run closes: keep the oldest as they are
                    self._keep(self._pending[: len(self._pending) // 2])
                    del self._pending[: len(self._pending) // 2]
            if run is not None:
                self._close(run)

    def _keep(self, events: list[Event]) -> None:
        room = max(0, self.max_events - len(self.report.events))
        self.report.events.extend(events[:room])
        self.left_out += max(0, len(events) - room)

    def _close(self, run: Run) -> None:
        before = [e for e in self._pending if e.line < run.first_line]
        mine = [e for e in self._pending if run.first_line <= e.line <= run.last_line]
        self._pending = [e for e in self._pending if e.line > run.last_line]
        self._keep(before)
        if not self.fold:
            self.report.runs.append(run)
            self._keep(mine)
            return
        key, exact = keys(run)
        seen = self._seen.get(key)
        if seen is None:
            self._seen[key] = (run, exact)
            self.report.runs.append(run)
            self._keep(mine)
            return
        rep, rep_exact = seen
        f = rep.folded
        if f is None:
            f = rep.folded = Folded(runs=0, first_line=run.first_line, last_first_line=run.first_line,
                                    last_line=run.last_line)
        f.runs += 1
        f.last_first_line, f.last_line = run.first_line, run.last_line
        f.numbers_differ += exact != rep_exact
        f.events += len(mine)
        self.left_out += len(mine)

    def next_input(self) -> None:
        """The input ended: its waiting events are kept, and its runs fold no later run."""
        self._keep(self._pending)
        self._pending = []
        self._seen = {}

    def finish(self) -> None:
        """Keep the last waiting events and record what was left out (``Summary.events_left_out``)."""
        self.next_input()
        self.report.summary.events_left_out = self.left_out or None
