"""``logscan follow``: tail logs, feed the one pipeline, emit JSON lines and metrics as they happen.

Each followed file (or stdin) is a *stream* with its own ``Pipeline`` (the same chain as
``logscan scan``: reader clean-up, CRI/Docker unwrapping, prefix parsing, matcher,
analyser). Line numbers of a stream run on across rotations, as if the rotated pieces were
one file. After every batch of lines the open run is looked at (``Pipeline.open_run``) and
each selection or finding not reported before is printed as one JSON line and counted.

Exactly once, across rotations and restarts: the tailer (``tail.py``) hands each line once;
``--state-file`` keeps, per stream, the position after the last line at which the pipeline
was *quiescent* (no multi-line message half gathered, no CRI partial record pending), the
pipeline checkpoint at that point (the open run's events), and the keys of what was already
reported for the latest runs. A restart resumes there: the few lines after it are read again
and rebuild the same state, and what they produce was reported already, so it is not
printed twice. The file is written atomically (temporary file, fsync, rename), and it is
written *before* new records are printed (write-ahead), so even a kill -9 between two saves
prints nothing twice; a kill in the instant between that write and the print loses those
records instead (at most once: docs/fail-closed.md).

``stream.py``: a stream's state; ``statefile.py``: the state file (their names importable here).
"""
from __future__ import annotations

import fnmatch
import json
import os
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Optional, Union

from ..models import Run
from ..packs.loader import PackSet
from .podinfo import PodLabels, labels_from_path
from .pieces import is_gzip
from .statefile import STATE_VERSION, load_state, write_state
from ..fold import enabled as fold_enabled
from .repeats import Repeats
from .stream import KEEP_RUNS, FollowRecord, Stream, cut_before_exception, new_records, record_base
from .feeding import count_record, feed_line, feed_records, flush_at_stop, flush_gathering, matches
from .tail import FileTail, Position, StreamTail

if TYPE_CHECKING:  # importing .metrics imports prometheus-client (start-up: deferred.py)
    from .deferred import DeferredMetrics
    from .metrics import FollowMetrics

__all__ = ["Follower", "FollowRecord", "Stream", "STATE_VERSION", "KEEP_RUNS"]
_GLOB_CHARS = set("*?[")
#: a poll's lines go to the prefilter in batches of at most this many bytes or lines (one scan each;
#: a line's checkpoint ``Position`` holds ~0.7 KiB of ``seen`` digests: 2,048 lines ~1.4 MiB)
BATCH_BYTES = 256 * 1024
BATCH_LINES = 2048


class Follower:
    """Follows paths, globs and/or stdin; see the module docstring.

    ``inputs``: paths, glob patterns (re-scanned every ``rescan`` seconds) or ``-``.
    ``out``: where JSON lines go. ``metrics``: a ``FollowMetrics``, a
    ``DeferredMetrics`` (built after the first round's lines are out) or None.
    ``labels``: pod labels for JSON lines when the path does not tell (sidecar mode).
    """

    def __init__(self, inputs: list[str], packs: PackSet, out: IO[str], metrics: Optional[Union[FollowMetrics, DeferredMetrics]] = None,
                 state_file: Optional[str] = None, labels: PodLabels = PodLabels(), poll: float = 0.25,
                 rescan: float = 1.0, idle_flush: float = 2.0, state_every: float = 2.0,
                 err: IO[str] = sys.stderr):
        self.inputs = inputs
        self.packs = packs
        self.out = out
        self.err = err
        self.metrics = metrics
        self.state_file = state_file
        self.default_labels = labels
        self.poll_interval, self.rescan, self.idle_flush, self.state_every = poll, rescan, idle_flush, state_every
        self.streams: dict[str, Stream] = {}
        self._compressed: set[str] = set()  #: inputs refused as gzip files (said once each)
        self.stop = False
        self.ready = False
        self.wake = threading.Event()
        self._last_rescan = 0.0
        self._last_save = 0.0
        self._last_state = ""
        self._state_error = ""
        #: why the last write of ``state_file`` failed ("" once a write succeeds): the stop message
        #: says "state NOT saved" and the exit status is 1 while it is set (``follow.command``)
        self.state_unsaved = ""
        self._state = self._load_state()
        #: literal (non-glob) paths that are not there: said on stderr, kept out of
        #: ``logscan_followed_files``, counted in ``logscan_missing_files``, and /readyz is 503
        self.missing: set[str] = set()

    # -- state ---------------------------------------------------------------------------
    def _load_state(self) -> dict:
        return load_state(self.state_file, self._note)

    def save_state(self) -> None:
        """Write the state file atomically (no-op without ``state_file``). A write that fails
        (``OSError``) is said once on stderr and kept in ``state_unsaved``; the next that
        succeeds clears it and says so."""
        if not self.state_file:
            return
        streams = dict(self._state)  # streams of the state file not followed (yet) are kept
        for key, s in self.streams.items():
            st = s.state()
            if st is not None:
                streams[key] = st
        data = json.dumps({"version": STATE_VERSION, "streams": streams}, sort_keys=True)
        self._last_save = time.monotonic()
        if data == self._last_state:
            return  # nothing moved: no write, no fsync
        try:
            write_state(self.state_file, data)
        except OSError as exc:
            msg = f"cannot write state file {self.state_file}: {exc.strerror or exc}"
            if msg != self._state_error:
                self._note(msg + " (positions are not saved)")
                self._state_error = msg
            self.state_unsaved = msg
            return
        self._last_state = data
        if self.state_unsaved:
            self._note(f"state file {self.state_file} written again")
        self.state_unsaved = self._state_error = ""

    # -- streams -------------------------------------------------------------------------
    def _note(self, msg: str) -> None:
        print(f"logscan follow: {msg}", file=self.err, flush=True)

    def _labels(self, path: str) -> PodLabels:
        lab = labels_from_path(path)
        return lab if lab.pod else self.default_labels

    def _add(self, key: str) -> None:
        if key == "-":
            s = Stream("<stdin>", StreamTail(sys.stdin.fileno()), self.packs, self.default_labels)
            s.repeats = Repeats() if fold_enabled() else None
            self.streams["-"] = s
            return
        if is_gzip(key):
            if key not in self._compressed:  # a growing log is text; its rotated .gz pieces are read as pieces
                self._compressed.add(key)
                self._note(f"{key} is gzip-compressed, not a growing log: not followed (read it with 'logscan scan {key}')")
            return
        tail = FileTail(key)
        s = Stream(key, tail, self.packs, self._labels(key))
        saved = self._state.pop(key, None)
        if not saved:
            tail.read_rotated_first()
        if saved:
            try:
                pos = Position.from_json(saved["position"]) if saved.get("position") else None
                s.pipe.restore(saved.get("pipeline") or {})
                s.line = int(saved.get("line", 0))
                for k, v in dict(saved.get("reported", {})).items():
                    s.reported[int(k)] = set(v)
                s.held_failure = saved.get("held_failure") is True  # reported at the first quiet poll
                if fold_enabled():
                    s.repeats = Repeats()
                    try:
                        s.repeats.restore(saved.get("repeats") or [])  # the counts go on (exactly once)
                    except ValueError as exc:
                        self._note(f"crash-loop counts of {key} ignored ({str(exc)[:200]}); its next repeat is printed in full")
                tail.resume(pos)
                s.ck = (pos, s.line, s.pipe.checkpoint())
                if self.metrics:
                    # the gauges of the run restored (its selections, degraded, start failed):
                    # without this a restarted follower exported nothing until the run's next
                    # event, and an alert on a degraded kernel resolved while it still ran
                    run = s.pipe.open_run()
                    if run is not None:
                        self.metrics.set_run(s.key, s.labels, run)
            except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
                self._note(f"state of {key} ignored ({type(exc).__name__}: {str(exc)[:200]}); reading it from the start")
                tail = FileTail(key)
                tail.read_rotated_first()
                s = Stream(key, tail, self.packs, self._labels(key))
        if fold_enabled() and s.repeats is None:
            s.repeats = Repeats()
        self.streams[key] = s

    def _rescan(self) -> None:
        found = matches(self.inputs)
        if "-" in self.inputs and "-" not in self.streams and not self.ready:
            self._add("-")
        for key in list(self._state):  # state of files not there right now (mid-rotation)
            if any(fnmatch.fnmatchcase(key, i) for i in self.inputs if i != "-"):
                found.add(key)
        for key in sorted(found - set(self.streams)):
            self._add(key)
        for key, s in list(self.streams.items()):
            if key == "-" or key in found or os.path.exists(key):
                s.missing = 0
                continue
            s.missing += 1
            if s.missing >= 3 and not s.tail.pending:
                self._drop(key)
        missing = {k for k, s in self.streams.items()
                   if k != "-" and not (_GLOB_CHARS & set(k)) and k in self.inputs
                   and s.tail.fd is None and not os.path.exists(k)}
        for k in sorted(missing - self.missing):
            self._note(f"{k}: not there yet: waiting for it to appear (/readyz says 503 until it does)")
        for k in sorted(self.missing - missing):
            self._note(f"{k}: appeared: following it")
        self.missing = missing
        if self.metrics:
            self.metrics.files(sum(1 for k, s in self.streams.items() if not s.done and k not in missing), len(missing))

    def _drop(self, key: str) -> None:
        s = self.streams.pop(key)
        self._finish(s)
        s.tail.close()
        self._state.pop(key, None)
        if self.metrics:
            self.metrics.forget(s.key, s.labels)

    # -- feeding -------------------------------------------------------------------------
    def _feed_line(self, s: Stream, i: int, raw: bytes, truncated: bool, pos: Optional[Position]) -> None:
        """Feed line ``i`` of the batch ``s.plan`` was given (``feeding.feed_line``)."""
        feed_line(s, i, raw, truncated, pos, self._report)

    def _feed_records(self, s: Stream, records) -> None:
        """Feed records of joined hard-wrapped lines (``feeding.feed_records``)."""
        feed_records(s, records, self._report)

    def _finish(self, s: Stream) -> None:
        """End of a stream: flush partial records and close the open run."""
        if s.done:
            return
        self._feed_records(s, s.rewrap.flush())
        for n, body, trunc in s.unwrap.flush():
            if self.metrics:
                self.metrics.lines_dropped(s.labels, 1)
            for _, run in s.pipe.feed(n, body, trunc):
                if run is not None:
                    self._report(s, run)
        for _, run in s.pipe.close():
            if run is not None:
                self._report(s, run)
        if s.repeats is not None:
            for rec in s.repeats.flush():  # the stream ended: every count not said yet
                self._emit(rec)
        s.done = True

    def _emit(self, rec: FollowRecord) -> None:
        self.out.write(rec.model_dump_json(exclude_none=True) + "\n")
        self.out.flush()

    def _report(self, s: Stream, run: Run, final: bool = True, closed: Optional[bool] = None) -> None:
        """Print and count what ``run`` holds that was not reported before; export its selections.
        ``final``: the run closed, or its held failure is complete (False: the open run as it reads
        so far); ``closed`` (default ``final``): it closed. A run that repeats an earlier one of the
        stream prints nothing but a ``repeated`` line now and then (``follow/repeats.py``)."""
        seen, new = new_records(s, run, final)
        lab = s.labels
        if s.repeats is not None:
            new = s.repeats.filter(run, seen, new, final if closed is None else closed,
                                   record_base(s, run), self._emit, lambda rec: count_record(self.metrics, lab, rec))
        for key, rec in new:
            seen.add(key)
            if self.state_file:
                # write-ahead: the state saying this record was reported is on disk before it is
                # printed, so a kill -9 at any point never prints it twice after the restart
                self.save_state()
            self._emit(rec)
            count_record(self.metrics, lab, rec)
        if self.metrics:
            self.metrics.set_run(s.key, lab, run)


    def _poll_stream(self, s: Stream) -> None:
        before_lines, before_bytes = s.stats.lines, s.stats.bytes
        s.sparse_armed = True  # what one poll reads is one of ``scan``'s buffers (Stream.wanted)
        gen = s.tail.poll()
        tail = s.tail
        try:
            stopped = False
            while not stopped:
                # the lines of a poll in batches (one prefilter call each, ``Stream.plan``), each
                # with the tail's position after it: the checkpoint of a line is where it ended
                batch: list[tuple[bytes, bool, Optional[Position]]] = []
                size = 0
                for raw, trunc in gen:
                    batch.append((raw, trunc, tail.position()))
                    size += len(raw)
                    if size >= BATCH_BYTES or len(batch) >= BATCH_LINES:
                        break
                if not batch:
                    break
                if s.prefilter is not None:
                    s.plan([raw for raw, _, _ in batch])
                for i, (raw, trunc, pos) in enumerate(batch):
                    self._feed_line(s, i, raw, trunc, pos)
                    if self.stop and s.stats.lines % 4096 == 0:
                        stopped = True  # the lines of the batch not fed are not in the checkpoint
                        break
        finally:
            gen.close()
        for note in s.tail.notes:
            self._note(note)
        s.tail.notes.clear()
        now = time.monotonic()
        if s.stats.lines != before_lines:
            s.last_data = now
        elif s.rewrap.pending and now - s.last_data >= self.idle_flush:
            # a line of the wrap width waited for its rest: a quiet spell ends the wait (one line at most)
            self._feed_records(s, s.rewrap.flush())
            if not s.unwrap.pending and s.pipe.quiescent:
                s.ck = (s.tail.position(), s.line, s.pipe.checkpoint())
        elif not s.pipe.quiescent and now - s.last_data >= self.idle_flush:
            flush_gathering(s, self._report)  # a multi-line message that got no more lines
            if not s.unwrap.pending:
                s.ck = (s.tail.position(), s.line, s.pipe.checkpoint())
        if s.dirty:
            s.dirty = False
            run = s.pipe.open_run()
            if run is not None:
                self._report(s, run, final=False)
        elif (s.held_failure and s.stats.lines == before_lines and s.pipe.quiescent
              and (now - s.last_data >= self.idle_flush or not cut_before_exception(s.pipe.open_run()))):
            # no new line: a held traceback with its exception line is complete; one cut before it
            # waits --idle-flush for the rest (a TypeError 1 s later was lost: new-user trial)
            s.held_failure = False
            run = s.pipe.open_run()
            if run is not None:
                self._report(s, run, closed=False)
        if s.repeats is not None:  # 'repeated' lines due; a run held long that reads as no repeat now
            s.repeats.due(s.pipe.open_run, self._emit, lambda run: self._report(s, run, final=False))
        m = self.metrics
        if m is not None:
            if s.stats.lines != before_lines:
                m.read(s.labels, s.stats.lines - before_lines, s.stats.bytes - before_bytes, time.time())
            for kind, n in s.tail.rotations.items():
                if n != s.rotations_seen.get(kind, 0):
                    m.rotated(s.labels, kind, n - s.rotations_seen.get(kind, 0))
            dropped = s.tail.dropped + s.tail.gaps
            if dropped != s.dropped_seen:
                m.lines_dropped(s.labels, dropped - s.dropped_seen)
        s.rotations_seen = dict(s.tail.rotations)
        s.dropped_seen = s.tail.dropped + s.tail.gaps
        if isinstance(s.tail, StreamTail) and s.tail.eof:
            self._finish(s)

    def poll_once(self) -> None:
        """One round: re-scan globs when due, read every stream, save the state when due."""
        now = time.monotonic()
        if not self.streams or now - self._last_rescan >= self.rescan:
            self._rescan()
            self._last_rescan = now
        for s in list(self.streams.values()):
            if not s.done:
                self._poll_stream(s)
            if self.stop:
                break
        if not self.stop:
            self.ready = not self.missing  # a followed path that is not there is not "caught up"
        if self.state_file and time.monotonic() - self._last_save >= self.state_every:
            self.save_state()

    @property
    def finished(self) -> bool:
        """True when only stdin was followed and it has ended."""
        return bool(self.streams) and all(s.done for s in self.streams.values()) and self.inputs == ["-"]

    def run(self) -> None:
        """Poll until ``stop`` is set (by a signal) or stdin ends; then print what the streams hold
        back (``feeding.flush_at_stop``) and save the state."""
        try:
            while not self.stop and not self.finished:
                self.poll_once()
                if hasattr(self.metrics, "realise"):  # the first round's lines are out: build the metrics
                    self.metrics = self.metrics.realise()
                if not self.finished:
                    self.wake.wait(self.poll_interval)
            if self.stop:
                for s in list(self.streams.values()):
                    flush_at_stop(s, self._report, self._emit)
        finally:
            self.save_state()

    def end_all(self) -> None:
        """End every stream as if its input had ended (partial records flushed, open runs
        closed and reported), as ``scan`` does at the end of a file."""
        for s in self.streams.values():
            self._finish(s)

    def request_stop(self, *_: object) -> None:
        """Signal handler: stop after the line being processed, then save the state.

        The poll sleep is woken from another thread: ``Event.set`` takes the event's plain lock,
        and a signal handler runs in the main thread, which may hold that very lock inside
        ``Event.wait`` at that instant; calling ``set`` here would then wait for itself forever
        (a SIGTERM that never stopped follow, seen once in CI under load)."""
        self.stop = True
        threading.Thread(target=self.wake.set, name="logscan-follow-stop", daemon=True).start()

