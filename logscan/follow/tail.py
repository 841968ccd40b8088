"""Follow one log path across rotations by polling: physical lines, each exactly once.

Why not a library: before writing this, the maintained Python tailers were weighed against
what ``logscan follow`` must guarantee (no line lost or read twice across rotations *and*
across its own restart, kubelet's rotation scheme, copytruncate, bounded memory):

- ``pygtail`` (0.14) keeps an inode+offset file, but writes it in place (a crash mid-write
  leaves it empty and the file is read again from the start: pygtail issue #56), opens the
  file after choosing the rotated name, so a rotation in between yields an impossible offset
  (issue #71), finds rotated files only by a list of name guesses (``.1``, ``-YYYYMMDD``...;
  kubelet's ``0.log.<YYYYMMDD-hhmmss>`` needs a custom pattern), follows one file (no glob),
  runs once per call instead of following, and cannot read a pipe.
- ``watchdog`` reports file-system events (inotify, or polling); it keeps no offset and
  reads nothing, so every guarantee above would still be ours.
- ``tailer`` / ``pytailer`` follow one open file: no rotation, no offsets to resume from.
- ``ponytail`` follows rename rotation and truncation of one file with an offset file, but
  treats a truncation as "start again", losing the lines that copytruncate moved into the copy.

So this module is a small polling tailer (works on every file system, including the
``emptyDir`` and ``hostPath`` volumes of Kubernetes, where inotify is not always delivered):

- **growth**: ``os.pread`` from the consumed offset; a line is consumed only once its
  ``\\n`` is there (a half-written line waits), so the offset is always a line boundary.
- **rename rotation** (kubelet ``0.log`` -> ``0.log.<timestamp>``, logrotate ``create``): the
  open descriptor keeps reading the renamed file; once the path names another inode *and* the
  old file stopped growing for one poll, its last bytes are read (an unterminated last line
  too) and the new file is read from 0. A later gzip of the renamed file does not matter.
- **copytruncate**: the file shrank below the offset, or its first bytes (a *fingerprint*,
  up to ``FP_LEN`` bytes of consumed content) changed: the copy is looked for among the
  siblings ``<name>.*`` (gzip or not) by that fingerprint, read from the old offset to its
  end, then the truncated file is read from 0. Lines written between the copy and the
  truncation are in neither file: that is copytruncate's own gap (logrotate(8) says so);
  when no copy is found it is counted in ``gaps``. Not detected: the truncated file refilled,
  between two polls, past the old offset with the same first bytes (same inode, no shorter,
  same fingerprint, and mtime / ctime move on appends too): docs/follow.md says why no signal
  in ``stat`` or in the kept bytes tells that from growth.
- **several rotations between two polls**: before the live file is opened afresh, every
  rotated file not read yet is read (a copytruncate of a file that was never opened leaves
  its content only in such a copy). Unread is told by content, not name: the head digests
  of the pieces read to their end are kept (``seen``), and a piece not among them is newer
  than all read, whatever its name (a live file renamed to ``.1`` beside a dated piece sorts
  older by name). Unread pieces among themselves go in rotation order; a numbered and a
  dated one, both unread, cannot be ordered and a note says so (docs/follow.md).
- **first start** (``read_rotated_first``): the rotated pieces already there are read before
  the live file, so start-up lines rotated away before logscan came are not missed.
- **restart** (``resume``): from a saved ``Position`` (device, inode, fingerprint, offset, and
  the head of the last non-empty rotated piece read) the same file is found again under its
  live name, under a rotated name (same inode), or gzipped (same fingerprint once
  decompressed); it is read from the offset, then every rotated file not read yet (by
  ``seen``; by name only for an older state file), then the live file.

``tests/test_follow_tail_properties.py`` checks these rules against any order of writes,
renames, copytruncates, compressions, polls and restarts (hypothesis).

Memory per followed path: one read chunk (``CHUNK`` bytes) and the fingerprint.
"""
from __future__ import annotations

import os
import stat
from collections import deque
from typing import Callable, Iterator, Optional

from ..sources.reader import MAX_LINE
from .pieces import _GZ_MAGIC, _ROTATED, _digest, _open_any  # noqa: F401  (old private names, re-exported)
from .pieces import _RotatedPieces, _head, rotation_order
from .position import FP_LEN, SEEN, Position
from .pipe import CHUNK, StreamTail, _LineCut

__all__ = ["CHUNK", "FP_LEN", "SEEN", "FileTail", "Position", "StreamTail", "rotation_order"]


class FileTail(_RotatedPieces, _LineCut):
    """Follows one path (the live name of a log) through rotations; see the module docstring.

    ``poll()`` yields ``(raw_line_without_newline, truncated)`` for every new complete line;
    after each item ``position()`` is where a restart must resume to read the next line.
    Counters: ``rotations`` (by kind), ``gaps`` (copytruncate copies not found),
    ``dropped`` (over-long lines cut, their rest skipped).
    """

    def __init__(self, path: str, max_line: int = MAX_LINE):
        self.path = path
        self.max_line = max_line
        self.fd: Optional[int] = None
        self.dev = self.ino = 0
        self.offset = 0
        self.fp = b""
        self._skipping = False
        self._grew = False
        self._fp_reader: Optional[Callable[[int], bytes]] = None
        #: finished files to read first: (path, offset, head); the head (first FP_LEN bytes)
        #: finds the file again if it is gzipped or renamed before its turn
        self._queue: deque[tuple[str, int, bytes]] = deque()
        self._last_head = b""  # head of the last rotated file read: newer ones are read next
        self._seen: deque[str] = deque(maxlen=SEEN)  # digests of heads of files read to their end
        self._in_finished = False
        self._ahead: list[bytes] = []  # heads of the newer files, in the order a poll saw them
        self._started = False  # read_rotated_first or resume called, or the first poll made
        self.rotations = {"rename": 0, "copytruncate": 0}
        self.gaps = 0
        self.dropped = 0
        self.notes: list[str] = []  # human-readable events (rotation gaps), drained by the caller

    @property
    def pending(self) -> bool:
        """True while rotated pieces wait to be read."""
        return bool(self._queue)

    # -- positions -------------------------------------------------------------------------
    def position(self) -> Optional[Position]:
        """Where the next line starts (None before any file is open)."""
        if self._queue and not self._in_finished:  # next up: a queued rotated piece
            path, offset, head = self._queue[0]
            for p in (path, path + ".gz"):
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                return Position(st.st_dev, st.st_ino, head[:min(FP_LEN, offset)], offset, self._last_head,
                                tuple(self._seen), tuple(self._ahead))
        if self.fd is None and self.dev == 0:
            return None
        return Position(self.dev, self.ino, self.fp, self.offset, self._last_head, tuple(self._seen),
                        tuple(self._ahead))

    def resume(self, pos: Optional[Position]) -> None:
        """Set where to start after a restart; call before the first ``poll``.

        Finds the file of ``pos`` (live, renamed, or gzipped/copied) and queues it from
        ``pos.offset`` followed by every newer rotated file; the live file is then read
        from 0. With no ``pos`` the live file is read from its start.
        """
        self._started = True
        if pos is None:
            return
        self._seen.extend(pos.seen)
        self._ahead = [h for h in pos.ahead if h]
        try:
            st = os.stat(self.path)
        except OSError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) == (pos.dev, pos.ino) and st.st_size >= pos.offset:
            if _head(self.path, len(pos.fp)) == pos.fp:
                self._open_live(pos.offset, pos.fp)
                self._last_head = pos.last
                return
        sibs = self.siblings()
        match = None
        for i, s in enumerate(sibs):
            try:
                sst = os.stat(s)
            except OSError:
                continue
            if (sst.st_dev, sst.st_ino) == (pos.dev, pos.ino) and sst.st_size >= pos.offset \
                    and _head(s, len(pos.fp)) == pos.fp:
                match = i  # renamed; an inode whose head changed was truncated (its copy is found below)
                break
        if match is None and pos.fp:
            for i in range(len(sibs) - 1, -1, -1):
                if _head(sibs[i], len(pos.fp)) == pos.fp:
                    match = i
                    break
        self._last_head = pos.last
        # until something else is read, reading stands where it stood (a restart now keeps it)
        self.dev, self.ino, self.fp, self.offset = pos.dev, pos.ino, pos.fp, pos.offset
        if not pos.offset:
            # nothing was read from that file: every piece after the last one read is unread,
            # that file's (found or not) and copies taken from it before it was read
            self._rotated_since(sibs=sibs)
        elif match is not None:
            if self._knows_read(sibs):
                # the file read before the restart, then every piece not read yet: those are
                # newer, whatever their names say (the live file renamed to x.1 meanwhile sorts
                # before the dated piece being read)
                self._queue_after(sibs, match, pos.offset, match + 1)
                for i in self._unread(sibs, skip=(match,)):
                    self._queue_after(sibs, i, 0, i + 1)
            else:
                self._queue_after(sibs, match, pos.offset)
            self.rotations["rename" if st is None or (st.st_dev, st.st_ino) != (pos.dev, pos.ino)
                           else "copytruncate"] += 1
        elif pos.offset:
            self.gaps += 1
            self.notes.append(f"{self.path}: the file read before the restart is gone "
                              f"(rotated away and deleted?); reading the live file from its start")

    # -- reading ---------------------------------------------------------------------------
    def _open_live(self, offset: int = 0, fp: bytes = b"") -> bool:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):  # a directory where a log was (or is named): nothing to read
            os.close(fd)
            return False
        self.fd, self.dev, self.ino = fd, st.st_dev, st.st_ino
        self.offset, self.fp, self._skipping = offset, fp, False
        self._fp_reader = lambda n: os.pread(fd, n, 0)
        return True

    def close(self) -> None:
        """Close the descriptor of the live file."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _split(self, data: bytes, final: bool) -> Iterator[tuple[bytes, bool]]:
        """Consume the complete lines of ``data`` (read at ``self.offset``); ``final``: the tail too.

        ``offset`` moves past each line *before* it is yielded, so ``position()`` read after
        an item is where the next line starts.
        """
        start = 0
        n = len(data)
        while start < n:
            nl = data.find(b"\n", start)
            if nl < 0:
                if self._skipping:  # the rest of an over-long line: dropped
                    self.offset += n - start
                    return
                if not final:
                    return
                nl = n
            raw = data[start:nl]
            end = min(nl + 1, n)
            self.offset += end - start
            start = end
            if len(self.fp) < FP_LEN and self.offset > len(self.fp) and self._fp_reader is not None:
                self.fp = self._fp_reader(min(FP_LEN, self.offset))
            item = self._complete(raw)
            if item is not None:
                yield item

    def _read_fd(self) -> Iterator[tuple[bytes, bool]]:
        """Read the live descriptor from ``offset`` to its end; sets ``_grew``."""
        assert self.fd is not None
        self._grew = False
        while True:
            data = os.pread(self.fd, CHUNK, self.offset)
            if not data:
                return
            before = self.offset
            yield from self._split(data, final=False)
            if self.offset > before:
                self._grew = True
                continue
            if len(data) < CHUNK:
                return  # an unterminated line at the end: wait for its newline
            # a whole chunk without a newline: an over-long line; keep its head, skip the rest
            self.dropped += 1
            self._skipping = True
            self.offset += len(data)
            self._grew = True
            if len(self.fp) < FP_LEN:
                self.fp = os.pread(self.fd, min(FP_LEN, self.offset), 0)
            yield data[: self.max_line], True

    def _open_after_rotated(self) -> Iterator[tuple[bytes, bool]]:
        """Read what was rotated since the last rotated file read, then open the live file at 0."""
        for _ in range(64):  # each round reads files; rotations faster than that are not followed
            if not self._rotated_since():
                break
            yield from self._drain_queue()
        self._open_live(0)

    def poll(self) -> Iterator[tuple[bytes, bool]]:
        """Yield every complete line written since the last poll, across rotations.

        Rotated files that appeared after the one being read (several rotations between two
        polls, or a copytruncate of a file not opened yet) are read in rotation order
        before the live file.
        """
        if not self._started:
            # neither read_rotated_first nor resume: the pieces already there are skipped on
            # purpose; remembered as read, so a later rotation does not take them for new ones
            self._started = True
            for sib in self.siblings()[-SEEN:]:
                self._mark_read(_head(sib, FP_LEN) or b"")
        yield from self._drain_queue()
        if self.fd is None:
            yield from self._open_after_rotated()
            if self.fd is None:
                return
        if self.offset == 0:
            # nothing read from the live file yet: a piece that appeared since the last one read
            # holds lines written before (a copytruncate between two polls); the live file's own
            # inode, if renamed meanwhile, is read through the descriptor instead
            sibs = self.siblings()
            if sibs:
                if self._rotated_since(self._own_index(sibs), sibs):
                    yield from self._drain_queue()
        # copytruncate: checked before reading, so new content is never read at the old offset
        fst = os.fstat(self.fd)
        if self.offset and (fst.st_size < self.offset or
                            (self.fp and os.pread(self.fd, len(self.fp), 0) != self.fp)):
            self.rotations["copytruncate"] += 1
            sibs = self.siblings()
            index = self._index_of(sibs, self.fp, same_inode=False)
            if index is not None:
                # the truncated file itself may have been renamed since: its new content is
                # read through the open descriptor, and what follows it by the rename below
                own = self._own_index(sibs)
                self._queue_after(sibs, index, self.offset, own if own is not None and own > index else None)
            else:
                self.gaps += 1
                self.notes.append(f"{self.path}: truncated (copytruncate?) and no rotated copy "
                                  f"starts like it: lines after byte {self.offset} of the old content are lost")
            self.offset, self.fp, self._skipping = 0, b"", False
            yield from self._drain_queue()
        yield from self._read_fd()
        try:
            st: Optional[os.stat_result] = os.stat(self.path)
        except OSError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) == (self.dev, self.ino):
            return
        if self._grew:
            # the old file still grows (writer not reopened yet): one more poll; what is newer
            # than it is remembered in the order seen now, before names can stop telling it
            self._note_ahead(self._index_of(self.siblings(), self.fp, same_inode=True))
            return
        if st is None:
            sibs = self.siblings()
            own = self._index_of(sibs, self.fp, same_inode=True)
            if own is None or own + 1 >= len(sibs):
                self._note_ahead(own)
                return  # renamed, the new file not there yet: keep reading the old one
            # rotated again since, and the live name is gone for now: read on up to the newest piece
        yield from self._read_fd()
        if self.fd is not None:
            size = os.fstat(self.fd).st_size
            if size > self.offset:  # an unterminated last line of the rotated file
                yield from self._split(os.pread(self.fd, size - self.offset, self.offset), final=True)
        sibs = self.siblings()
        index = self._index_of(sibs, self.fp, same_inode=True)
        if index is not None and index + 1 < len(sibs) and not self._knows_read(sibs):
            self._queue_after(sibs, index + 1, 0)  # rotated after ours, before the live file
        # (when what was read is known by content, ``_open_after_rotated`` below queues every
        # piece not read yet, whatever its name: a newer x.1 sorts before a dated piece)
        if self.fp:
            self._last_head = self.fp
            self._mark_read(self.fp)
        self.close()
        self.rotations["rename"] += 1
        yield from self._drain_queue()
        yield from self._open_after_rotated()
        if self.fd is not None:
            yield from self._read_fd()
