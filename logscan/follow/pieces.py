"""The rotated pieces of a followed log: naming them, recognising them, reading them.

A rotated name is the live name, ``.`` or ``-``, then digits (kubelet, logrotate, Python's
``TimedRotatingFileHandler``), optionally ``.gz``; a piece is recognised by its inode while
it keeps it and by its head (first ``FP_LEN`` bytes, decompressed) once gzipped or copied.
``_RotatedPieces`` is the part of ``FileTail`` (``logscan.follow.tail``) that finds the pieces
to read, queues them in rotation order and reads a finished one to its end.
"""
from __future__ import annotations

import gzip
import os
import zlib
from collections import deque
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Optional

from .. import rxcache
from .position import AHEAD, FP_LEN, SEEN
from .pipe import CHUNK

_GZ_MAGIC = b"\x1f\x8b"


def is_gzip(path: str) -> bool:
    """Whether the file at ``path`` begins with the gzip magic (False when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == _GZ_MAGIC
    except OSError:
        return False
#: an all-digit rotation suffix this long is a date (YYYYMMDD) or a Unix time, not a count
DATE_DIGITS = 8
_ROTATED = rxcache.compile(r"[.-][0-9][0-9._-]{0,40}(?:\.gz)?")


def _digest(head: bytes) -> str:
    """A short digest of a file's head (its first ``FP_LEN`` bytes, or all of a shorter file)."""
    from .. import hashes as hashlib

    return hashlib.blake2b(head, digest_size=12).hexdigest()


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
    logrotate's numbered ones (``.1`` newest) sort by falling number. An all-digit suffix of
    ``DATE_DIGITS`` or more digits is a date or a Unix time (``.20261201``, ``.1764547200``,
    rising with age), never a rotation count: numbered logrotate keeps ``rotate N`` files, and
    reading a date-named series backwards put its lines out of order.
    """
    suffix = name[len(base) + 1:]
    if suffix.endswith(".gz"):
        suffix = suffix[:-3]
    if suffix.isdigit() and len(suffix) < DATE_DIGITS:
        return (0, -int(suffix), name)
    return (1, suffix, name)


class _RotatedPieces:
    """The rotated-piece half of ``FileTail``: its state is ``FileTail``'s (see ``FileTail.__init__``).

    ``_queue`` holds the finished files to read first, ``(path, offset, head)``;
    ``_last_head`` the head of the last rotated piece read; ``_seen`` the digests of the
    heads of the files read to their end.
    """

    path: str
    max_line: int
    fd: Optional[int]
    dev: int
    ino: int
    offset: int
    fp: bytes
    dropped: int
    gaps: int
    notes: list[str]
    _skipping: bool
    _in_finished: bool
    _fp_reader: Optional[Callable[[int], bytes]]
    _queue: deque[tuple[str, int, bytes]]
    _last_head: bytes
    _seen: deque[str]
    _started: bool
    _ahead: list[bytes]

    # and FileTail's ``_split`` (the line cutting of a chunk read at ``offset``)

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

    def _note_ahead(self, own: Optional[int]) -> None:
        """Remember, in the order this poll sees them, the heads of the files newer than the
        one being read: the unread rotated pieces (all but ``own``), then the live file."""
        sibs = self.siblings()
        if not self._knows_read(sibs):
            return
        heads = [_head(sibs[i], FP_LEN) or b"" for i in self._unread(sibs, skip=() if own is None else (own,), quiet=True)]
        live = _head(self.path, FP_LEN) or b""
        self._ahead = [h for h in heads + [live] if h][-AHEAD:]

    def _knows_read(self, sibs: list[str]) -> bool:
        """True when ``_seen`` names every non-empty rotated piece already read among ``sibs``.

        Pieces are read in order from the first one (``read_rotated_first``, or pieces there
        before an unstarted tailer's first poll taken as read), so a non-empty piece whose head
        is not in ``_seen`` is newer than everything read, whatever its name says: names do
        not tell age across naming schemes (the live file renamed to ``x.1`` after a dated
        ``x.20261129-000001`` sorts older than it). Not known: more pieces than ``SEEN``
        (digests forgotten), or a ``Position`` from before ``seen`` was kept (its ``last``
        head is then not among the digests); callers fall back to name order.
        """
        if len(sibs) > SEEN:
            return False
        return not self._last_head or _digest(self._last_head[:FP_LEN]) in self._seen

    def _unread(self, sibs: list[str], stop: Optional[int] = None, skip: tuple[int, ...] = (),
                quiet: bool = False) -> list[int]:
        """Indexes (below ``stop``, not in ``skip``) of the non-empty pieces neither read to
        their end (``_seen``) nor queued, oldest first: in the order a poll saw them
        (``_ahead``), then in name order. ``quiet``: no note on an order that is a guess."""
        queued = {q[0] for q in self._queue}
        stop = len(sibs) if stop is None else stop
        heads = {i: h for i in range(stop) if i not in skip and sibs[i] not in queued
                 and (h := _head(sibs[i], FP_LEN)) and _digest(h) not in self._seen}

        def seen_at(i: int) -> int:  # order in which a poll saw it, when it did (``_ahead``)
            return next((k for k, a in enumerate(self._ahead) if heads[i].startswith(a)), len(self._ahead))

        fresh = sorted(heads, key=lambda i: (seen_at(i), i))
        base = os.path.basename(os.path.realpath(self.path))
        groups: dict[int, set] = {}
        for i in fresh:
            groups.setdefault(seen_at(i), set()).add(rotation_order(base, os.path.basename(sibs[i]))[0])
        if not quiet and any(len(g) > 1 for g in groups.values()):
            # a numbered and a dated piece, both unread and not seen apart by a poll: neither
            # names nor contents tell which is older (docs/follow.md, "Undecidable"); read
            # numbered first, and say so
            names = ", ".join(os.path.basename(sibs[i]) for i in fresh)
            self.notes.append(f"{self.path}: rotated pieces {names} are all unread and named by two schemes "
                              f"(numbered and dated): their order cannot be told; read in that order")
        return fresh

    def _rotated_since(self, end: Optional[int] = None, sibs: Optional[list[str]] = None) -> bool:
        """Queue the rotated pieces newer than the last one read (up to ``end``): they appeared
        meanwhile, e.g. a copytruncate of a file not read yet; True when any."""
        sibs = self.siblings() if sibs is None else sibs
        stop = len(sibs) if end is None else end
        if self._knows_read(sibs):
            # what was read is known by content: every other non-empty piece is unread, whatever
            # its name says of its age (a copy named x.2 made after x.1 was read)
            fresh = self._unread(sibs, stop)
            for i in fresh:
                self._queue_after(sibs, i, 0, i + 1)
            return bool(fresh)
        index = self._last_index(sibs)
        if index is None or index + 1 >= stop:
            return False
        self._queue_after(sibs, index + 1, 0, stop)
        return True

    def read_rotated_first(self) -> None:
        """Start with the rotated files already there (oldest first), then the live file:
        a log whose start-up lines were rotated away before logscan came is still read whole."""
        self._started = True
        sibs = self.siblings()
        if sibs:
            self._queue_after(sibs, 0, 0)
