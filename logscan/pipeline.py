"""The one pipeline: source -> records -> matcher -> events -> analysis -> report.

``scan_inputs`` reads whole inputs and returns a ``Report``; ``Pipeline`` is the same chain
fed line by line (for a tail that never ends). Every stage streams: memory depends on the
number of recognised lines kept for the report, not on the size of the input.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Optional

from . import __version__
from .analysis.analyzer import Analyzer
from .match import Matcher
from .models import Event, InputStats, Report, Run
from .packs.loader import PackSet, default_packs
from .sources.prefix import PrefixParser
from .sources.reader import InputError, open_input, read_lines
from .sources.unwrap import unwrap

#: Events kept in a report's ``events`` list at most (the rest still feed the analysis).
MAX_REPORT_EVENTS = 100_000


class Pipeline:
    """Stateful chain for one input stream; ``feed_line`` returns events and closed runs."""

    def __init__(self, packs: Optional[PackSet] = None, source: str = "<stdin>",
                 gpu: Optional[str] = None, cuda: Optional[str] = None):
        self.packs = packs or default_packs()
        self.source = source
        self.parser = PrefixParser(self.packs)
        self.matcher = Matcher(self.packs)
        self.analyzer = Analyzer(self.packs, self.parser.seen_formats, gpu=gpu, cuda=cuda)

    def _events(self, events: Iterable[Event]) -> Iterator[tuple[Optional[Event], Optional[Run]]]:
        for ev in events:
            yield ev, None
            for run in self.analyzer.feed(ev, *self.matcher.engine_hint(ev)):
                yield None, run

    def feed(self, line: int, text: str, truncated: bool = False) -> Iterator[tuple[Optional[Event], Optional[Run]]]:
        """Feed one unwrapped line; yields ``(event, None)`` and ``(None, closed_run)`` items."""
        rec = self.parser.parse(self.source, line, text, truncated)
        yield from self._events(self.matcher.feed(rec))

    def close(self) -> Iterator[tuple[Optional[Event], Optional[Run]]]:
        """End of input: flush a pending multi-line event and close the open run."""
        yield from self._events(self.matcher.flush())
        for run in self.analyzer.finish():
            yield None, run


def scan_inputs(paths: list[str], packs: Optional[PackSet] = None, gpu: Optional[str] = None,
                cuda: Optional[str] = None) -> Report:
    """Scan each input (a path or ``-``) and return one report.

    ``gpu`` (``sm90``, ``H100``) and ``cuda`` (``12.8``) describe the machine when the log
    does not; they only feed inferences, which stay marked ``observed=False``.

    An input that cannot be opened does not stop the others: its ``InputStats.error`` says why
    (the CLI turns that into exit status 2). Runs never span two inputs.
    """
    packs = packs or default_packs()
    report = Report(logscan_version=__version__)
    index = 0
    for path in paths:
        stats = InputStats(source="<stdin>" if path == "-" else path)
        report.inputs.append(stats)
        try:
            fh, name = open_input(path)
        except InputError as exc:
            stats.error = str(exc)
            continue
        pipe = Pipeline(packs, source=name, gpu=gpu, cuda=cuda)
        try:
            items: list = []
            for n, text, trunc in unwrap(read_lines(fh, stats)):
                items.extend(pipe.feed(n, text, trunc))
                if items:
                    _collect(items, report, index)
                    index = len(report.runs)
                    items.clear()
            _collect(list(pipe.close()), report, index)
            index = len(report.runs)
        finally:
            if fh is not None and path != "-":
                fh.close()
    for i, run in enumerate(report.runs):
        run.index = i
    return report


def _collect(items: list, report: Report, index: int) -> None:
    for ev, run in items:
        if ev is not None and len(report.events) < MAX_REPORT_EVENTS:
            report.events.append(ev)
        if run is not None:
            report.runs.append(run)
