"""One followed input's state in ``logscan follow``, and the JSON line it prints.

A ``Stream`` is a followed file (or stdin): its tailer, its own ``Pipeline``, its counters,
the checkpoint a restart resumes from, and the keys of what the latest runs reported.
``new_records`` says what of a run was not reported before: one record per selection
(family, kernel, cost class), per finding (code, family) and per failed start.
"""
from __future__ import annotations

import time
from bisect import bisect_right
from collections import OrderedDict
from typing import Literal, Optional, Union

from ..models import Finding, Folded, InputStats, Run, Selection, StartFailure
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

    type: Literal["selection", "finding", "start_failure", "repeated"]
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
    #: ``type == "repeated"``: the later runs of the stream that repeated the run at ``run_line``
    #: so far, folded (nothing of them printed: ``follow/repeats.py``)
    folded: Optional[Folded] = None


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
        #: the prefilter's sparse search (None: no sparse rules, or no prefilter), looked up once
        self._first_sparse = getattr(self.prefilter, "first_sparse", None)
        inner = getattr(self.prefilter, "inner", None) if self._first_sparse is not None else None
        self._hits_and_starts = getattr(inner, "hits_and_starts", None)
        #: the batch of lines planned last (``plan``): the joined bytes, each line's start offset,
        #: the lines holding a hit and those that may fire a start marker, and the sparse search's
        #: last answer (``(from_line, first sparse line at or after it or None)``)
        self._buf = b""
        self._starts: list[int] = []
        self._hit_lines: set[int] = set()
        self._start_lines: set[int] = set()
        self._sparse_at: tuple[int, Optional[int]] = (-1, None)
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
        #: repeated runs folded (``follow/repeats.Repeats``; None: folding off, ``$LOGSCAN_FOLD=0``)
        self.repeats = None

    def plan(self, raws: list[bytes]) -> None:
        """Ask the prefilter once about ``raws`` (consecutive lines of one poll, bytes without
        their newline), joined by newlines into one buffer as ``scan``'s reader hands it one:
        the hits and possible start markers are mapped back to line indices for ``wanted_at``.
        One Hyperscan scan per batch instead of two calls per line (~4.3 us a line: most of
        ``bench/follow_cost.py``'s CPU at 1k lines/s). A hit lies inside its line (no literal
        holds a newline; a gate is checked on the hit's decoded line), so each line's hits are
        the ones it has as a buffer of its own; a gate's sniff is tried on the whole batch, a
        superset of the lines it opens alone."""
        self._sparse_at = (-1, None)
        if self.prefilter is None:
            return
        buf = self._buf = b"\n".join(raws)
        starts = self._starts = [0]
        at = 0
        for raw in raws[:-1]:
            at += len(raw) + 1
            starts.append(at)
        if self._first_sparse is None:
            hits = self.prefilter.hits(buf)
            marks = hits
        elif self._hits_and_starts is not None:
            hits, marks = self._hits_and_starts(buf)
        else:
            hits = marks = self.prefilter.inner.hits(buf)
        self._hit_lines = self._lines_of(hits)
        self._start_lines = self._hit_lines if marks is hits else self._lines_of(marks)

    def _lines_of(self, offsets: list[int]) -> set[int]:
        """Indices (in the batch planned) of the lines holding ``offsets`` (sorted)."""
        starts = self._starts
        out: set[int] = set()
        line, nxt, last = 0, (starts[1] if len(starts) > 1 else None), len(starts) - 1
        for off in offsets:
            if nxt is not None and off >= nxt:
                line = bisect_right(starts, off, line) - 1
                nxt = starts[line + 1] if line < last else None
            out.add(line)
        return out

    def wanted_at(self, i: int) -> bool:
        """Whether line ``i`` of the batch planned last must go through the pipeline: a prefilter
        hit, or the first line of a sparse rule since the poll's start or the last line that
        may fire a start marker. That is ``scan``'s prefilter with the lines of one poll as its
        buffer (``SparsePrefilter``): the matcher gives a sparse rule only that first line, so
        the later ones (a quarter of a serving log, one per request) are counted, not decoded
        (before, each line was a buffer of its own and every access line was decoded: 60% of
        ``bench/follow_cost.py``'s lines). The caller sets ``sparse_armed`` at each poll and
        for a line it feeds without asking (a superset of what ``scan`` keeps). Ask in line
        order: the sparse search's answer is reused for the lines up to the one it found."""
        if self._first_sparse is None:
            return i in self._hit_lines
        if i in self._start_lines:
            self.sparse_armed = True
        if i in self._hit_lines:
            return True
        if not self.sparse_armed:
            return False
        frm, found = self._sparse_at
        if frm < 0 or i < frm or (found is not None and i > found):
            at = self._first_sparse(self._buf, self._starts[i])
            found = None if at is None else bisect_right(self._starts, at) - 1
            self._sparse_at = (i, found)
        if found == i:
            self.sparse_armed = False
            return True
        return False

    def wanted(self, raw: bytes) -> bool:
        """``wanted_at`` for one line ``raw`` (bytes, no newline) planned as a batch of its own."""
        self.plan([raw])
        return self.wanted_at(0)

    def state(self) -> Optional[dict]:
        """The JSON state of this stream (None for stdin, which cannot be resumed): position, line
        count, pipeline checkpoint, the keys reported per run, ``held_failure`` when true, and the
        crash loop's representatives (``repeats``) when there are any."""
        pos, line, ck = self.ck
        if isinstance(self.tail, StreamTail):
            return None
        st = {"position": pos.to_json() if pos else None, "line": line, "pipeline": ck.to_json(),
              "reported": {str(k): sorted(v) for k, v in self.reported.items()}}
        if self.held_failure:
            # a restart before the quiet poll must still report it there (not only at the close)
            st["held_failure"] = True
        if self.repeats is not None and self.repeats.reps:
            st["repeats"] = self.repeats.to_json()  # a repeat after a restart folds into the same count
        return st


def record_base(s: Stream, run: Run) -> dict:
    """The fields every JSON line of ``run`` in stream ``s`` carries (source, pod labels, run line,
    engine, release, model)."""
    lab = s.labels
    return dict(source=s.key, namespace=lab.namespace, pod=lab.pod, container=lab.container,
                run_line=run.first_line, engine=run.engine.name, engine_version=run.engine.version,
                model=run.config.model)


def new_records(s: Stream, run: Run, final: bool = True) -> tuple[set[str], list[tuple[str, FollowRecord]]]:
    """``(seen, new)``: the keys already reported for ``run`` (a set the caller adds to as it
    reports) and ``(key, record)`` for each selection, finding or failed start of ``run`` not
    reported before (``final`` False: an open run, whose uncaught-traceback failure, and whose
    findings while no line names its engine, wait for a poll with no new line, or its close). Keeps the keys of the latest ``KEEP_RUNS`` runs of ``s`` only."""
    seen = s.reported.get(run.first_line)
    if seen is None:
        seen = s.reported[run.first_line] = set()
        while len(s.reported) > KEEP_RUNS:
            s.reported.popitem(last=False)
    base = record_base(s, run)
    new: list[tuple[str, FollowRecord]] = []
    for sel in run.selections:
        key = f"s\x1f{sel.family}\x1f{sel.kernel}\x1f{sel.cost_class.value}"
        if key not in seen:
            new.append((key, FollowRecord(type="selection", selection=sel, **base)))
    # a finding of an open run no line has named yet holds like an uncaught failure: scan judges
    # a rule's finding by the run's engine (analysis/trust.py), and a later line naming it can
    # withdraw one another engine's rule stated (sglang-299: a vLLM-worded arch line read before
    # the 'sglang serve' command that names the run); reported at a quiet poll or the close
    unnamed = not final and run.engine.name == "unknown"
    for f in run.findings:
        key = f"f\x1f{f.code}" + (f"\x1f{f.family}" if f.family else "")  # one per (run, family, code)
        if key not in seen:
            if unnamed:
                s.held_failure = True
                continue
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


def cut_before_exception(run) -> bool:
    """Whether ``run``'s failed start is a traceback with no exception line yet (``cause`` None):
    ``Follower`` waits ``--idle-flush`` for its rest before printing it."""
    sf = getattr(run, "start_failure", None) if run is not None else None
    return sf is not None and sf.cause is None
