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
  when no copy is found it is counted in ``gaps``.
- **several rotations between two polls**: before the live file is opened afresh, every
  rotated file newer than the last one read is read, in rotation order (a copytruncate of a
  file that was never opened leaves its content only in such a copy).
- **first start** (``read_rotated_first``): the rotated pieces already there are read before
  the live file, so start-up lines rotated away before logscan came are not missed.
- **restart** (``resume``): from a saved ``Position`` (device, inode, fingerprint, offset, and
  the head of the last non-empty rotated piece read) the same file is found again under its
  live name, under a rotated name (same inode), or gzipped (same fingerprint once
  decompressed); it is read from the offset, then every rotated file newer than it, then
  the live file.

``tests/test_follow_tail_properties.py`` checks these rules against any order of writes,
renames, copytruncates, compressions, polls and restarts (hypothesis).

Memory per followed path: one read chunk (``CHUNK`` bytes) and the fingerprint.
"""
from __future__ import annotations

import gzip
import os
import select
import stat
import zlib
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Optional

import regex

from ..sources.reader import MAX_LINE

#: Bytes of a file's consumed head kept to recognise it after a rename, a gzip or a copy.
FP_LEN = 1024
#: Bytes read per ``pread``.
CHUNK = max(256 * 1024, MAX_LINE)
_GZ_MAGIC = b"\x1f\x8b"
_ROTATED = regex.compile(r"[.-][0-9][0-9._-]{0,40}(?:\.gz)?")
#: files read to their end whose head digests are kept (``Position.seen``)
SEEN = 64


def _digest(head: bytes) -> str:
    """A short digest of a file's head (its first ``FP_LEN`` bytes, or all of a shorter file)."""
    import hashlib

    return hashlib.blake2b(head, digest_size=12).hexdigest()


@dataclass(frozen=True)
class Position:
    """Where reading stopped in one file: a line boundary.

    ``dev``/``ino`` identify the file while it keeps its inode (rename); ``fp`` is its first
    ``min(FP_LEN, offset)`` bytes (decompressed), which still identify it once gzipped or
    copied; ``offset`` counts bytes of (decompressed) content consumed.
    """

    dev: int
    ino: int
    fp: bytes
    offset: int
    #: head of the last non-empty rotated piece read before this file: pieces newer than it
    #: are unread (an empty piece cannot be recognised, but reading it again costs nothing)
    last: bytes = b""
    #: digests (``_digest``) of the heads of the last ``SEEN`` files read to their end: a
    #: rotated piece holding one of them is never read again, whatever its name says of its age
    seen: tuple[str, ...] = ()

    def to_json(self) -> dict:
        """JSON-able form (the fingerprints as hex)."""
        return {"dev": self.dev, "ino": self.ino, "fp": self.fp.hex(), "offset": self.offset,
                "last": self.last.hex(), "seen": list(self.seen)}

    @classmethod
    def from_json(cls, d: dict) -> "Position":
        """Inverse of ``to_json``; raises ``ValueError`` on a malformed dict."""
        try:
            seen = d.get("seen", [])
            if not isinstance(seen, list) or not all(isinstance(x, str) and len(x) <= 64 for x in seen):
                raise ValueError("'seen' is not a list of digests")
            return cls(int(d["dev"]), int(d["ino"]), bytes.fromhex(d["fp"]), int(d["offset"]),
                       bytes.fromhex(d.get("last", "")), tuple(seen[-SEEN:]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad position {d!r}: {exc}") from None


def _open_any(path: str) -> BinaryIO:
    """Open a finished (rotated) file for reading, gunzipping it when it starts with the gzip magic."""
    fh = open(path, "rb")
    if fh.read(2) == _GZ_MAGIC:
        fh.seek(0)
        return gzip.GzipFile(fileobj=fh)  # type: ignore[return-value]
    fh.seek(0)
    return fh


def _head(path: str, n: int) -> Optional[bytes]:
    """First ``n`` bytes of a file's (decompressed) content, None when unreadable."""
    try:
        with _open_any(path) as fh:
            return fh.read(n)
    except (OSError, EOFError, zlib.error):
        return None


def rotation_order(base: str, name: str) -> tuple:
    """Sort key of a rotated sibling ``<base>[.-]<suffix>[.gz]``, oldest first.

    kubelet's ``<YYYYMMDD-hhmmss>`` and logrotate's ``dateext`` suffixes sort as text;
    logrotate's numbered ones (``.1`` newest) sort by falling number.
    """
    suffix = name[len(base) + 1:]
    if suffix.endswith(".gz"):
        suffix = suffix[:-3]
    if suffix.isdigit():
        return (0, -int(suffix), name)
    return (1, suffix, name)


class _LineCut:
    """What a tail does with one complete line: drop the end of an over-long one, cut the rest."""

    max_line: int
    dropped: int
    _skipping: bool

    def _complete(self, raw: bytes) -> Optional[tuple[bytes, bool]]:
        """``(line, cut)`` for a complete line; None for the tail of an over-long line already cut."""
        if self._skipping:
            self._skipping = False
            return None
        if len(raw) > self.max_line:
            self.dropped += 1
            return raw[: self.max_line], True
        return raw, False


class FileTail(_LineCut):
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
                                tuple(self._seen))
        if self.fd is None and self.dev == 0:
            return None
        return Position(self.dev, self.ino, self.fp, self.offset, self._last_head, tuple(self._seen))

    def siblings(self) -> list[str]:
        """Rotated siblings of the live path, oldest first.

        A rotated name is the live name, ``.`` or ``-``, then digits with ``.``/``-``/``_``
        (kubelet ``0.log.20261129-101500``, logrotate ``x.log.1`` and ``x.log-20261129``,
        Python's ``x.log.2026-11-29_10-15-00``), optionally ``.gz``. Other files next to the
        log (a state file, ``x.log.offset``) are never taken for rotated pieces.

        A symlink (kubelet's ``/var/log/containers/*.log``) is resolved first: the rotated
        files lie next to its target under ``/var/log/pods``.
        """
        p = Path(os.path.realpath(self.path))
        base = p.name
        try:
            names = [e.name for e in os.scandir(p.parent)
                     if e.name.startswith(base) and _ROTATED.fullmatch(e.name, len(base))
                     and e.is_file(follow_symlinks=False)]
        except OSError:
            return []
        present = set(names)
        # ``x`` and ``x.gz`` both there: gzip is still writing ``x.gz``; ``x`` is the whole file
        names = [n for n in names if not (n.endswith(".gz") and n[:-3] in present)]
        return [str(p.parent / n) for n in sorted(names, key=lambda n: rotation_order(base, n))]

    def resume(self, pos: Optional[Position]) -> None:
        """Set where to start after a restart; call before the first ``poll``.

        Finds the file of ``pos`` (live, renamed, or gzipped/copied) and queues it from
        ``pos.offset`` followed by every newer rotated file; the live file is then read
        from 0. With no ``pos`` the live file is read from its start.
        """
        if pos is None:
            return
        self._seen.extend(pos.seen)
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

    def _read_finished(self, path: str, offset: int) -> Iterator[tuple[bytes, bool]]:
        """Read a rotated (finished) file from ``offset`` to its end, unterminated last line included.

        While it runs, ``position()`` points into that file; afterwards back to the live one.
        """
        try:
            try:
                fh = _open_any(path)
                reading = path
            except FileNotFoundError:  # compressed meanwhile: gzip removes the original when done
                reading = path + ".gz"
                fh = _open_any(reading)
            st = os.fstat(fh.fileno())
        except OSError as exc:
            self.gaps += 1
            self.notes.append(f"{path}: cannot read rotated file: {exc.strerror or exc}")
            return
        saved = (self.dev, self.ino, self.fp, self.offset, self._skipping, self._fp_reader)
        self._in_finished = True
        self.dev, self.ino, self.offset, self._skipping = st.st_dev, st.st_ino, offset, False
        self._fp_reader = lambda n: _head(reading, n) or b""
        done = False
        try:
            self.fp = fh.read(min(FP_LEN, offset)) if offset else b""
            fh.seek(offset)
            buf = b""
            while True:
                data = fh.read(CHUNK)
                if not data:
                    break
                buf += data
                before = self.offset
                yield from self._split(buf, final=False)
                buf = buf[self.offset - before:]
                if len(buf) >= CHUNK:  # no newline in a whole chunk: an over-long line
                    self.dropped += 1
                    self._skipping = True
                    self.offset += len(buf)
                    head, buf = buf[: self.max_line], b""
                    yield head, True
            if buf:
                yield from self._split(buf, final=True)
            done = True
        except (OSError, EOFError, zlib.error) as exc:
            self.gaps += 1
            self.notes.append(f"{path}: rotated file ends early or is corrupt: {exc}")
            done = True
        finally:
            fh.close()
            self._in_finished = False
            if not done and self._queue and self._queue[0][0] == path:
                self._queue[0] = (path, self.offset, self._queue[0][2])  # stopped half-way: resume there
            if not done or self.fd is not None:
                self.dev, self.ino, self.fp, self.offset, self._skipping, self._fp_reader = saved
            # else: no live file open, so the end of this piece is where reading stands

    def _queue_after(self, sibs: list[str], index: int, offset: int, end: Optional[int] = None) -> None:
        """Queue ``sibs[index]`` from ``offset`` and the newer rotated files (up to ``end``) from 0.

        A newer file whose head is one of a file already read to its end (``_seen``) is skipped:
        names do not always tell age (``x.1`` renamed, then a copytruncate copy named ``x.2``;
        the live file renamed to ``x.2`` while ``x.1`` is there), contents do."""
        for i, sib in enumerate(sibs):
            if i < index or (end is not None and i >= end):
                continue
            head = _head(sib, FP_LEN) or b""
            if (i > index or not offset) and head and _digest(head) in self._seen:
                continue
            if any(q[0] == sib for q in self._queue):
                continue
            self._queue.append((sib, offset if i == index else 0, head))

    def _mark_read(self, head: bytes) -> None:
        """Remember a file read to its end by its head."""
        if head:
            d = _digest(head[:FP_LEN])
            if d not in self._seen:
                self._seen.append(d)

    def _index_of(self, sibs: list[str], fp: bytes, same_inode: bool) -> Optional[int]:
        """Index of the sibling holding the content that starts with ``fp`` (newest first);
        ``same_inode``: the file of the open descriptor, found by its inode first."""
        if same_inode:
            for i, sib in enumerate(sibs):
                try:
                    st = os.stat(sib)
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) == (self.dev, self.ino):
                    return i
        if not fp:
            return None
        for i in range(len(sibs) - 1, -1, -1):
            if not same_inode:
                try:
                    st = os.stat(sibs[i])
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) == (self.dev, self.ino):
                    continue  # the truncated file itself
            if _head(sibs[i], len(fp)) == fp:
                return i
        return None

    def _own_index(self, sibs: list[str]) -> Optional[int]:
        """Index of the open live file among the rotated pieces (renamed since), else None:
        by inode, or by its current content once renamed and gzipped (a new inode)."""
        own = self._index_of(sibs, b"", same_inode=True)
        if own is None and self.fd is not None:
            head = os.pread(self.fd, FP_LEN, 0)
            if head:
                own = next((i for i in range(len(sibs) - 1, -1, -1) if _head(sibs[i], len(head)) == head), None)
        return own

    def _drain_queue(self) -> Iterator[tuple[bytes, bool]]:
        while self._queue:
            path, offset, head = self._queue[0]
            if head and _head(path, len(head)) != head:  # gzipped or renamed since it was queued
                path = next((s for s in self.siblings() if _head(s, len(head)) == head), path)
                self._queue[0] = (path, offset, head)
            yield from self._read_finished(path, offset)
            self._queue.popleft()
            if head:  # an empty rotated file cannot be found again; the last non-empty one can
                self._last_head = head
                self._mark_read(head)

    def _last_index(self, sibs: list[str]) -> Optional[int]:
        """Index of the last rotated piece read (-1: none with content yet; None: not found)."""
        if not self._last_head:
            return -1  # only empty pieces were read, if any: reading them again is harmless
        return next((i for i in range(len(sibs) - 1, -1, -1)
                     if _head(sibs[i], len(self._last_head)) == self._last_head), None)

    def _rotated_since(self, end: Optional[int] = None, sibs: Optional[list[str]] = None) -> bool:
        """Queue the rotated pieces newer than the last one read (up to ``end``): they appeared
        meanwhile, e.g. a copytruncate of a file not read yet; True when any."""
        sibs = self.siblings() if sibs is None else sibs
        stop = len(sibs) if end is None else end
        if self._seen and len(sibs) <= SEEN:
            # what was read is known by content: every other non-empty piece is unread, whatever
            # its name says of its age (a copy named x.2 made after x.1 was read)
            queued = {q[0] for q in self._queue}
            fresh = [i for i in range(stop) if sibs[i] not in queued
                     and (h := _head(sibs[i], FP_LEN)) and _digest(h) not in self._seen]
            for i in fresh:
                self._queue_after(sibs, i, 0, i + 1)
            return bool(fresh)
        index = self._last_index(sibs)
        if index is None or index + 1 >= stop:
            return False
        self._queue_after(sibs, index + 1, 0, stop)
        return True

    def _open_after_rotated(self) -> Iterator[tuple[bytes, bool]]:
        """Read what was rotated since the last rotated file read, then open the live file at 0."""
        for _ in range(64):  # each round reads files; rotations faster than that are not followed
            if not self._rotated_since():
                break
            yield from self._drain_queue()
        self._open_live(0)

    def read_rotated_first(self) -> None:
        """Start with the rotated files already there (oldest first), then the live file:
        a log whose start-up lines were rotated away before logscan came is still read whole."""
        sibs = self.siblings()
        if sibs:
            self._queue_after(sibs, 0, 0)

    def poll(self) -> Iterator[tuple[bytes, bool]]:
        """Yield every complete line written since the last poll, across rotations.

        Rotated files that appeared after the one being read (several rotations between two
        polls, or a copytruncate of a file not opened yet) are read in rotation order
        before the live file.
        """
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
            return  # the old file still grows (writer not reopened yet): one more poll
        if st is None:
            sibs = self.siblings()
            own = self._index_of(sibs, self.fp, same_inode=True)
            if own is None or own + 1 >= len(sibs):
                return  # renamed, the new file not there yet: keep reading the old one
            # rotated again since, and the live name is gone for now: read on up to the newest piece
        yield from self._read_fd()
        if self.fd is not None:
            size = os.fstat(self.fd).st_size
            if size > self.offset:  # an unterminated last line of the rotated file
                yield from self._split(os.pread(self.fd, size - self.offset, self.offset), final=True)
        sibs = self.siblings()
        index = self._index_of(sibs, self.fp, same_inode=True)
        if index is not None and index + 1 < len(sibs):
            self._queue_after(sibs, index + 1, 0)  # rotated after ours, before the live file
        if self.fp:
            self._last_head = self.fp
            self._mark_read(self.fp)
        self.close()
        self.rotations["rename"] += 1
        yield from self._drain_queue()
        yield from self._open_after_rotated()
        if self.fd is not None:
            yield from self._read_fd()


class StreamTail(_LineCut):
    """Lines of a pipe or stdin, read without blocking (``select``); ``eof`` once it ends."""

    def __init__(self, fd: int, max_line: int = MAX_LINE):
        self.fd = fd
        self.max_line = max_line
        self.eof = False
        self.dropped = 0
        self.rotations = {"rename": 0, "copytruncate": 0}
        self.gaps = 0
        self.notes: list[str] = []
        self._buf = bytearray()
        self._skipping = False

    pending = False  #: nothing waits: a pipe has no rotated pieces

    def position(self) -> None:
        """A pipe has no position to resume from."""
        return None

    def _lines(self, final: bool) -> Iterator[tuple[bytes, bool]]:
        buf = self._buf
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            raw = bytes(buf[start:nl])
            start = nl + 1
            item = self._complete(raw)
            if item is not None:
                yield item
        del buf[:start]
        if len(buf) > self.max_line and not self._skipping:
            self.dropped += 1
            self._skipping = True
            yield bytes(buf[: self.max_line]), True
            buf.clear()
        elif self._skipping:
            buf.clear()
        if final and buf:
            yield bytes(buf), False
            buf.clear()

    def poll(self, budget: int = 64) -> Iterator[tuple[bytes, bool]]:
        """Yield the complete lines available now (reads at most ``budget`` chunks)."""
        for _ in range(budget):
            if self.eof:
                return
            ready, _, _ = select.select([self.fd], [], [], 0)
            if not ready:
                return
            data = os.read(self.fd, CHUNK)
            if not data:
                self.eof = True
                yield from self._lines(final=True)
                return
            self._buf += data
            yield from self._lines(final=False)

    def close(self) -> None:
        """Nothing to close: the descriptor belongs to the caller."""
