"""One followed input's state in ``logscan follow``, and the JSON line it prints.

A ``Stream`` is a followed file (or stdin): its tailer, its own ``Pipeline``, its counters,
the checkpoint a restart resumes from, and the keys of what the latest runs reported.
``new_records`` says what of a run was not reported before: one record per selection
(family, kernel, cost class), per finding (code, family) and per failed start.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from typing import Literal, Optional, Union

from ..models import Finding, InputStats, Run, Selection, StartFailure
from ..analysis.uncaught import is_uncaught
from ..packs.loader import PackSet
from ..pipeline import Checkpoint, Pipeline
from ..plain import PlainModel, plain
from ..sources.prefilter import make_prefilter
from ..sources.rewrap import Rewrapper, WrapWidth, joiner
from ..sources.unwrap import Unwrapper
from .podinfo import PodLabels
from .tail import FileTail, Position, StreamTail

#: Runs per stream whose reported keys are kept (older runs never come back).
KEEP_RUNS = 16


@plain
class FollowRecord(PlainModel):
    """One JSON line on stdout: a selection, a finding or a failed start, as soon as logscan sees it.

    A plain class (``logscan.plain``): its JSON line is what the pydantic model wrote, and follow's
    start imports no pydantic (issue 18)."""

    type: Literal["selection", "finding", "start_failure"]
    source: str  #: the followed path (its live name) or ``<stdin>``
    namespace: Optional[str] = None
    pod: Optional[str] = None
    container: Optional[str] = None
    run_line: int  #: line (counted across rotations) where the engine run starts
    engine: str
    engine_version: Optional[str] = None
    model: Optional[str] = None
    selection: Optional[Selection] = None
    finding: Optional[Finding] = None
    #: ``type == "start_failure"``: the engine's own line saying this run's start failed
    start_failure: Optional[StartFailure] = None


class Stream:
    """One followed file or stdin: its tailer, pipeline, counters and what was reported."""

    def __init__(self, key: str, tail: Union[FileTail, StreamTail], packs: PackSet, labels: PodLabels):
        self.key = key
        self.tail = tail
        self.labels = labels
        self.pipe = Pipeline(packs, source=key)
        #: the byte prefilter of ``scan`` (None when ``$LOGSCAN_PREFILTER=off``): lines without a
        #: hit skip decoding, prefix parsing and matching, exactly as in ``scan``
        self.prefilter = make_prefilter(packs)
        #: a sparse rule's line (an HTTP 2xx access line, ``sources/sparse.py``) is wanted only
        #: while this is set: at each poll's first line and after a line that may fire a start marker
        self.sparse_armed = True
        #: the prefilter's methods ``wanted`` calls on every line, looked up once
        self._first_sparse = getattr(self.prefilter, "first_sparse", None)
        inner = getattr(self.prefilter, "inner", None) if self._first_sparse is not None else None
        self._hits_and_starts = getattr(inner, "hits_and_starts", None)
        self.unwrap = Unwrapper()
        #: a terminal's hard wrap (sources/rewrap.py): the width learnt from the lines seen so
        #: far; while one holds every line is fed (a keyword cut in two is on neither piece)
        self.wrap = WrapWidth(joiner(self.pipe.parser))
        self.rewrap = Rewrapper(self.wrap)
        self.pipe.wrap = self.wrap  # its state goes into the checkpoints (a restart reads on the same)
        self.stats = InputStats(source=key)
        self.line = 0
        self.ck: tuple[Optional[Position], int, Checkpoint] = (tail.position(), 0, self.pipe.checkpoint())
        self.reported: OrderedDict[int, set[str]] = OrderedDict()
        self.dirty = False
        self.last_data = time.monotonic()
        self.missing = 0
        self.rotations_seen = dict(tail.rotations)
        self.dropped_seen = 0
        self.done = False
        #: the open run's failed start read from an uncaught traceback was held back (new_records)
        self.held_failure = False

    def wanted(self, raw: bytes) -> bool:
        """Whether line ``raw`` (bytes, no newline) must go through the pipeline: a prefilter hit,
        or the first line of a sparse rule since the poll's start or the last line that may
        fire a start marker. That is ``scan``'s prefilter with the lines of one poll as its
        buffer (``SparsePrefilter``): the matcher gives a sparse rule only that first line, so
        the later ones (a quarter of a serving log, one per request) are counted, not decoded
        (before, each line was a buffer of its own and every access line was decoded: 60% of
        ``bench/follow_cost.py``'s lines). The caller sets ``sparse_armed`` at each poll and
        for a line it feeds without asking (a superset of what ``scan`` keeps)."""
        first = self._first_sparse
        if first is None:
            return bool(self.prefilter.hits(raw))
        both = self._hits_and_starts
        hits, starts = both(raw) if both is not None else (self.prefilter.inner.hits(raw),) * 2
        if starts:
            self.sparse_armed = True
        if hits:
            return True
        if self.sparse_armed and first(raw) is not None:
            self.sparse_armed = False
            return True
        return False

    def state(self) -> Optional[dict]:
        """The JSON state of this stream (None for stdin, which cannot be resumed): position, line
        count, pipeline checkpoint, the keys reported per run, and ``held_failure`` when true."""
        pos, line, ck = self.ck
        if isinstance(self.tail, StreamTail):
            return None
        st = {"position": pos.to_json() if pos else None, "line": line, "pipeline": ck.to_json(),
              "reported": {str(k): sorted(v) for k, v in self.reported.items()}}
        if self.held_failure:
            # a restart before the quiet poll must still report it there (not only at the close)
            st["held_failure"] = True
        return st


def new_records(s: Stream, run: Run, final: bool = True) -> tuple[set[str], list[tuple[str, FollowRecord]]]:
    """``(seen, new)``: the keys already reported for ``run`` (a set the caller adds to as it
    reports) and ``(key, record)`` for each selection, finding or failed start of ``run`` not
    reported before (``final`` False: an open run, whose uncaught-traceback failure waits for a
    poll with no new line, or its close). Keeps the keys of the latest ``KEEP_RUNS`` runs of ``s`` only."""
    seen = s.reported.get(run.first_line)
    if seen is None:
        seen = s.reported[run.first_line] = set()
        while len(s.reported) > KEEP_RUNS:
            s.reported.popitem(last=False)
    lab = s.labels
    base = dict(source=s.key, namespace=lab.namespace, pod=lab.pod, container=lab.container,
                run_line=run.first_line, engine=run.engine.name, engine_version=run.engine.version,
                model=run.config.model)
    new: list[tuple[str, FollowRecord]] = []
    for sel in run.selections:
        key = f"s\x1f{sel.family}\x1f{sel.kernel}\x1f{sel.cost_class.value}"
        if key not in seen:
            new.append((key, FollowRecord(type="selection", selection=sel, **base)))
    for f in run.findings:
        key = f"f\x1f{f.code}" + (f"\x1f{f.family}" if f.family else "")  # one per (run, family, code)
        if key not in seen:
            new.append((key, FollowRecord(type="finding", finding=f, **base)))
    sf = run.start_failure
    # a failed start read from an uncaught traceback is "no later line shows the run went on"
    # (analysis/uncaught.py): it holds only once the stream went quiet (a poll with no new line)
    # or the run closed; a poll that merely ended while lines still arrive cannot know that a
    # later line will not say the server came up, show start-up progress (a survived traceback),
    # or name the engine's own failure line, which scan would report instead
    if sf is not None and "x" not in seen:
        if final or not is_uncaught(sf):
            new.append(("x", FollowRecord(type="start_failure", start_failure=sf, **base)))
        else:
            s.held_failure = True  # reported at the next poll with no new line, or at the close
    return seen, new
