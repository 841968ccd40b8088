"""Feeding one followed line (or the joined records of hard-wrapped lines) through a stream's
pipeline: the prefilter's answer for the line, the wrap detector, the unwrapper, the checkpoint
(``Follower._feed_line`` / ``_feed_records`` call these; split from ``runner.py`` to keep it small),
what a stream holds back printed when follow stops (``flush_at_stop``), which files the inputs name
now (``matches``) and a reported record's metrics (``count_record``).
"""
from __future__ import annotations

import glob as globmod
import os
from typing import Callable, Optional

from ..models import Run
from ..sources.reader import clean, invalid_lines
from .pieces import _ROTATED
from .stream import FollowRecord, Stream
from .tail import Position

#: ``Follower._report``: print what of a run is new
Report = Callable[[Stream, Run], None]


def feed_line(s: Stream, i: int, raw: bytes, truncated: bool, pos: Optional[Position], report: Report) -> None:
    """Feed line ``i`` of the batch ``s.plan`` was given; ``pos``: the tail's position after it."""
    s.line += 1
    s.stats.lines += 1
    s.stats.bytes += len(raw) + 1
    if truncated:
        s.wrap.see_long()
    else:
        s.wrap.see_raw(raw)
    if (s.prefilter is None or truncated or s.unwrap.pending or not s.pipe.quiescent
            or s.rewrap.pending or s.wrap.width is not None
            or (s.wrap.probable and len(raw) >= s.wrap.max)):  # a wrap's piece may hold half a keyword
        s.sparse_armed = True  # fed unseen: it may fire a start marker
    elif not s.wanted_at(i):
        # as ``scan``'s reader does: a line with no keyword (nor a byte that alters text, nor
        # the start of a wrapped record) while nothing is gathering is counted, not decoded
        bad = invalid_lines(raw)
        if bad:
            s.stats.decode_errors += bad
        held = s.ck[2]
        if s.ck[1] != s.line - 1 or held.wrap_changes != s.wrap.changes:
            held = s.pipe.checkpoint()  # the pipeline (or the wrap detector) moved
        s.ck = (pos, s.line, held)
        return
    text = clean(raw, s.stats)
    feed_records(s, s.rewrap.feed(s.line, text, truncated), report)
    if not s.unwrap.pending and not s.rewrap.pending and s.pipe.quiescent:
        s.ck = (pos, s.line, s.pipe.checkpoint())


def feed_records(s: Stream, records, report: Report) -> None:
    """Feed records of joined hard-wrapped lines (``Rewrapper``) through the unwrapper and the pipeline."""
    for line, text, truncated in records:
        for n, body, trunc in s.unwrap.feed(line, text, truncated):
            for ev, run in s.pipe.feed(n, body, trunc, s.rewrap.end_of(n)):
                if ev is not None:
                    s.dirty = True
                if run is not None:
                    report(s, run)


def flush_gathering(s: Stream, report: Callable[..., None]) -> None:
    """End the multi-line message stream ``s``'s pipeline still gathers (a quiet spell of
    ``--idle-flush``, or follow stopping): the open run is then dirty, and a run its end closed
    is reported (``report``: ``Follower._report``)."""
    for ev, run in s.pipe.flush_pending():
        if ev is not None:
            s.dirty = True
        if run is not None:
            report(s, run)


def flush_at_stop(s: Stream, report: Callable[..., None], emit: Callable[[FollowRecord], None]) -> None:
    """``logscan follow`` stops (SIGTERM/SIGINT): print what stream ``s`` holds back, as a quiet spell
    would (``report``: ``Follower._report``; ``emit`` prints a JSON line): a multi-line message
    still gathering lines, a failed start read from an uncaught traceback and the findings of a run
    no line named yet (``held_failure``), and the crash loop's counts not printed yet. The checkpoint
    stays where it was: a restart reads those lines again and rebuilds the same run, whose records
    the state file then says were reported (exactly once). Before, such a failure was printed only
    by the restarted follower, and not at all if it never came back. Records a crash loop's open
    run holds as a likely repeat stay held (``follow/repeats.py``: the restart holds them again)."""
    if s.done:
        return
    flush_gathering(s, report)
    run = s.pipe.open_run()
    if run is not None and (s.dirty or s.held_failure):
        s.dirty = s.held_failure = False
        report(s, run, closed=False)
    if s.repeats is not None:
        for rec in s.repeats.flush():
            emit(rec)


#: characters that make an input a glob
GLOB_CHARS = set("*?[")


def matches(inputs: list[str]) -> set[str]:
    """The files ``inputs`` name now: each path as given, each glob's matching files but the
    rotated siblings (``<name>.<timestamp>``) of another match, which are read through it; ``-``
    left out."""
    found: set[str] = set()
    for inp in inputs:
        if inp == "-":
            continue
        if GLOB_CHARS & set(inp):
            hits = sorted(p for p in globmod.glob(inp) if os.path.isfile(p))
            names = {(os.path.dirname(p), os.path.basename(p)) for p in hits}
            for p in hits:
                d, n = os.path.dirname(p), os.path.basename(p)
                if any(n.startswith(m) and n != m and _ROTATED.fullmatch(n, len(m)) for dd, m in names if dd == d):
                    continue
                found.add(p)
        else:
            found.add(inp)
    return found


def count_record(metrics, lab, rec: FollowRecord) -> None:
    """Count a record in ``metrics`` (None: no metrics): a finding by code and severity, a failed start."""
    if metrics and rec.finding is not None:
        metrics.finding(lab, rec.finding.code, rec.finding.severity.value)
    if metrics and rec.start_failure is not None:
        metrics.start_failure(lab)
