"""Cutting complete lines (an over-long one kept to ``max_line`` bytes), and the tail of a pipe.

``StreamTail`` reads a pipe or stdin without blocking; ``FileTail`` (``logscan.follow.tail``)
shares the line cutting of ``_LineCut``.
"""
from __future__ import annotations

import os
import select
from typing import Iterator, Optional

from ..sources.reader import MAX_LINE

#: Bytes read per ``pread``.
CHUNK = max(256 * 1024, MAX_LINE)


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



class StreamTail(_LineCut):
    """Lines of a pipe or stdin, read without blocking (``poll``, else ``select``); ``eof`` once it ends."""

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
        self._first = True  #: no byte read yet (the gzip test looks at the first ones)
        self.compressed = False  #: the stream began with the gzip magic: refused (follow exits 2)
        # poll(2), not select(2): select takes no descriptor >= FD_SETSIZE (1024), and a follower
        # that holds many files, or a process that opened many before (the test suite), gets one
        # ('ValueError: filedescriptor out of range in select()'); poll has no such bound
        self._poller = None
        if hasattr(select, "poll"):
            self._poller = select.poll()
            self._poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)

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
            if self._poller is not None:
                ready = self._poller.poll(0)
            else:  # no poll(2) on this platform: select, bounded by FD_SETSIZE
                ready, _, _ = select.select([self.fd], [], [], 0)
            if not ready:
                return
            data = os.read(self.fd, CHUNK)
            if not data:
                self.eof = True
                yield from self._lines(final=True)
                return
            if self._first:
                self._first = False
                if data[:2] == b"\x1f\x8b":  # a gzip file piped in: its bytes are no log lines
                    self.notes.append("standard input is gzip-compressed, not a log stream: nothing read "
                                      "(pipe it through 'zcat', or read it with 'logscan scan -')")
                    self.eof = self.compressed = True
                    return
            self._buf += data
            yield from self._lines(final=False)

    def close(self) -> None:
        """Nothing to close: the descriptor belongs to the caller."""
