"""The report classes of everything logscan reports: records, events, selections, findings, runs.

Plain slotted classes (``logscan.plain``): a scan never imports pydantic (start-up, issue 18).
The JSON report (``logscan scan --format json``) is ``Report.model_dump_json()`` (the ``json``
module); its JSON schema is ``Report.model_json_schema()`` (``logscan schema``), from the pydantic
model ``logscan.validate`` generates from these classes, which also validates a ``--baseline``
report (``Report.model_validate``). Field names are part of the
public interface: ``kernel`` and ``cost_class`` on every selection, ``code`` on every finding,
``line`` and ``rule`` on every event.

This module holds the report, the records and events read and the input stats; the classes of
what a run chose (``CostClass``, ``Selection``, ``Finding``, ...) are in ``models_kernel.py`` and
those of a run (``Run``, ``EngineInfo``, ...) in ``models_run.py``; every name is importable from
here, as before the split.
"""

from typing import Optional

from dataclasses import field

from .plain import PlainModel, plain
from .models_kernel import (COST_ORDER, INFERRED_FROM, CostClass, Finding, LadderPosition,  # noqa: F401
                            Refusal, RungElsewhere, Selection, Severity, UndecidedRung)
from .models_run import (AttentionChoice, EngineInfo, Folded, KvCache, Run, RunConfig, ServerArgs,  # noqa: F401
                         StartFailure, Stop, Unexplained)


@plain
class Record(PlainModel):
    """One logical log line after unwrapping (CRI, Docker JSON) and prefix parsing.

    ``line`` is the 1-based line number in the input file where the record starts
    (a CRI record joined from ``P`` partial lines keeps the number of its first part).
    """

    source: str
    line: int
    message: str
    level: Optional[str] = None
    timestamp: Optional[str] = None
    fileinfo: Optional[str] = None  #: ``file.py:123`` as the engine printed it
    process: Optional[str] = None  #: e.g. ``EngineCore_DP0``, ``Worker_TP1``, ``VllmWorkerProcess``
    rank: Optional[str] = None  #: ``TP1``, ``1``, ``DP0``: what tells ranks apart
    pid: Optional[int] = None
    prefix_format: Optional[str] = None  #: id of the line-prefix format that parsed the line
    truncated: bool = False  #: the physical line was longer than the reader's limit and was cut
    #: the last physical line of a line a terminal hard-wrapped, joined from its pieces
    #: (``sources/rewrap.py``); None for a record of one line
    end_line: Optional[int] = None
    #: blanks directly before the message that an outer wrapper took off when no engine prefix
    #: followed (the ``indent`` wrapper of an unprefixed traceback line): the message's own depth
    #: starts after them (``sources/quoted.py`` compares a frame header's depth with its code line's)
    indent: int = 0


@plain(eq=False)
class Event(PlainModel):
    """A line recognised by a pack rule: the rule id, the line, the named groups it captured."""

    line: int
    rule: str
    kind: str
    source: str
    message: str
    groups: dict[str, str] = field(default_factory=dict)
    items: list[str] = field(default_factory=list)  #: continuation lines gathered (e.g. per-kernel reasons)
    #: the named groups of each item's match, one dict per entry of ``items`` (the ``item`` group
    #: left out): what a continuation line states besides its text (vLLM's 'current compute
    #: capability is 75' in a KERNEL_NOT_FOUND reason); kept out of the report, so a report read
    #: back from JSON has none and the analysis then matches the item texts again
    item_groups: list[dict[str, str]] = field(default_factory=list, metadata={"exclude": True})
    process: Optional[str] = None
    rank: Optional[str] = None
    level: Optional[str] = None
    #: the process id of the line's process tag (``(APIServer pid=N)``): tells two starts apart
    #: (``analysis.newstart``); kept out of the report, carried by follow's checkpoint
    pid: Optional[int] = field(default=None, metadata={"exclude": True})
    #: the line prefix's timestamp as printed (``03-17 15:05:45``): a clock going back is another start
    timestamp: Optional[str] = field(default=None, metadata={"exclude": True})
    #: line of the last continuation line gathered into ``items`` (None when none): the run the
    #: event is in spans it too (a KERNEL_NOT_FOUND's reason lines, vllm PR #30602)
    end_line: Optional[int] = field(default=None, metadata={"exclude": True})
    #: the line prefix's ``file:line`` (``cuda.py:378``): the logger's module, platform evidence
    #: through the pack's ``platform_files`` (vLLM's platform modules log under their own name)
    fileinfo: Optional[str] = field(default=None, metadata={"exclude": True})

    def __eq__(self, other: object) -> bool:
        """Equal when the report shows the same event (``pid`` and ``timestamp`` are read from the
        same line, and a report read back from JSON has neither)."""
        if not isinstance(other, Event):
            return NotImplemented
        return self.model_dump() == other.model_dump()


@plain
class InputStats(PlainModel):
    """What was read: per input, lines, bytes, and what the reader had to repair."""

    source: str
    lines: int = 0
    bytes: int = 0
    truncated_lines: int = 0
    decode_errors: int = 0  #: physical lines that were not valid UTF-8 (bad bytes replaced)
    nul_bytes: int = 0  #: NUL bytes removed (a file pre-allocated and never fully written, binary junk)
    #: lines that could not be parsed or analysed (a value past an internal bound): counted, not read
    skipped_lines: int = 0
    #: lines whose rule matching ran out of the per-line budget (``match.LINE_BUDGET``): not every rule was tried
    over_budget_lines: int = 0
    #: the first line numbers of those (at most ``match.MAX_NAMED``)
    over_budget_at: list[int] = field(default_factory=list)
    #: something the reader read past without losing a line (trailing garbage after a gzip stream, as gzip(1) warns)
    warning: Optional[str] = None
    error: Optional[str] = None
    #: every note the text report's ``!`` line gives this input, one string each: repairs (invalid
    #: UTF-8 replaced, over-long lines cut, NUL bytes removed), skipped and over-budget lines, the
    #: reader's ``warning``, an early end (``error``), "empty input: 0 lines read"; None (left out
    #: of the JSON, as ``Run.serving_failure``) when clean and for an input that could not be opened
    #: (``error`` says why). ``formats.inputs.input_warnings``
    warnings: Optional[list[str]] = None
    #: physical lines appended to the line before them because a terminal hard-wrapped it at
    #: ``wrap_width`` columns (``sources/rewrap.py``); None (left out of the JSON) when none was
    rejoined_lines: Optional[int] = None
    wrap_width: Optional[int] = None

    _omit_none = ("warnings", "rejoined_lines", "wrap_width")


@plain
class Summary(PlainModel):
    """Counts over every run of a report (``Report.summary``)."""

    runs: int = 0
    selections: int = 0
    findings: int = 0
    unexplained: int = 0  #: kernel-relevant lines noticed but not understood (``Run.unexplained``)
    #: runs folded into an earlier run of their input (``Run.folded``), not counted in ``runs``:
    #: the engine starts read are ``runs + folded_runs``; left out of the JSON when none was
    folded_runs: Optional[int] = None
    #: recognised lines not listed in ``events[]``: those of folded runs and those past
    #: ``pipeline.MAX_REPORT_EVENTS``; left out of the JSON when every one is listed
    events_left_out: Optional[int] = None
    #: engine starts that failed (``Run.start_failure``, START_FAILED), each folded repeat counted
    #: (a run with ``folded.runs`` K that failed is K + 1); left out of the JSON when none failed
    failed_starts: Optional[int] = None
    #: starts that came up, then failed (``Run.serving_failure``), counted the same way; left out when none
    serving_failures: Optional[int] = None

    _omit_none = ("folded_runs", "events_left_out", "failed_starts", "serving_failures")


@plain
class Report(PlainModel):
    """The whole answer for a set of inputs: runs, the recognised events, reader stats."""

    logscan_version: str
    runs: list[Run] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    inputs: list[InputStats] = field(default_factory=list)
    summary: Summary = field(default_factory=Summary)

    def summarise(self) -> "Report":
        """Fill ``summary`` from the runs (call once the runs are final); returns self."""
        folded = sum(r.folded.runs for r in self.runs if r.folded is not None)
        starts = [1 + (r.folded.runs if r.folded is not None else 0) for r in self.runs]
        failed = sum(n for r, n in zip(self.runs, starts) if r.start_failure is not None)
        serving = sum(n for r, n in zip(self.runs, starts) if r.serving_failure is not None)
        self.summary = Summary(runs=len(self.runs), selections=sum(len(r.selections) for r in self.runs),
                               findings=sum(len(r.findings) for r in self.runs),
                               unexplained=sum(len(r.unexplained) for r in self.runs),
                               folded_runs=folded or None, events_left_out=self.summary.events_left_out,
                               failed_starts=failed or None, serving_failures=serving or None)
        return self
