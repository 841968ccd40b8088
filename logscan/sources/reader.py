"""Read log inputs as numbered text lines: files, stdin, gzip, any bytes, bounded memory.

``read_lines`` yields ``(line_number, text, truncated)`` for one input. Bytes are decoded as
UTF-8 with replacement, ``\\r`` line ends and ANSI escape codes are removed, NUL bytes are
dropped, and a physical line longer than ``max_line`` bytes is cut (the rest is skipped
without being held in memory) and flagged. gzip is detected by its magic bytes, not the
file name; a truncated gzip stream ends the input with an error in the stats, keeping every
line read so far.
"""
from __future__ import annotations

import io
import os
import queue
import sys
import threading
from typing import BinaryIO, Iterator, Optional

from ..models import InputStats
from . import interrupt
from .opening import InputError, _is_live, _is_plain_file, open_input, stdin_isatty  # noqa: F401 (re-exported)
from .lineclean import _ANSI, clean, invalid_lines  # noqa: F401 (re-exported)
from .nlcount import counter as newline_counter

#: Longest physical line kept, in bytes. Kernel lines are < 1 KiB; config dumps reach ~10 KiB.
MAX_LINE = 256 * 1024
#: Bytes read and searched at once by ``LineReader``.
CHUNK = 1 << 20
#: Chunks read ahead of the consumer (memory: about (READ_AHEAD + 2) x CHUNK); 0 turns read-ahead off.
READ_AHEAD = 2
#: Threads searching chunks with the prefilter in parallel (Hyperscan releases the GIL).
SEARCH_WORKERS = 2



def read_lines(fh: BinaryIO, stats: InputStats, max_line: int = MAX_LINE) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(line_number, text, truncated)`` for every physical line of ``fh``.

    Never raises on content: a corrupt or truncated gzip stream stops the input and sets
    ``stats.error``; every line decoded before it is kept.
    """
    return iter(LineReader(fh, stats, None, max_line))



def _compressed_errors() -> tuple:
    """``(zlib.error,)`` when ``zlib`` is loaded (a gzip input: ``sources/opening.py`` imports
    ``gzip`` only for one), else ``()``: a plain input never imports either (start-up)."""
    z = sys.modules.get("zlib")
    return (z.error,) if z is not None else ()


def _bad_gzip(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``gzip.BadGzipFile`` (only a ``GzipFile`` raises one, so only once
    ``gzip`` is imported)."""
    g = sys.modules.get("gzip")
    return g is not None and isinstance(exc, g.BadGzipFile)

class LineReader:
    """Numbered clean lines of one input, read in large chunks; with a prefilter, only those that may matter.

    Iterating yields ``(line_number, text, truncated)``. Without a ``prefilter`` every physical
    line is yielded. With one, a chunk (``chunk_size`` bytes, 1 MiB) is searched once and only
    the lines holding a prefilter offset are decoded and yielded; the others are counted
    (``bytes.count``), their bytes and invalid UTF-8 tallied in ``stats`` exactly as if they
    had been read one by one, so line numbers and stats do not depend on the prefilter.
    A line longer than ``max_line`` is always yielded (cut, flagged). The consumer sets
    ``hold = True`` to receive the following line whatever it holds (a multi-line event or a
    partial CRI record is open), ``False`` to let the reader skip again.

    Memory: one chunk plus ``max_line`` bytes, whatever the size of the input or its lines.
    Never raises on content; a corrupt or truncated gzip stream ends the input with
    ``stats.error`` set, every line before the damage kept.
    """

    def __init__(self, fh: BinaryIO, stats: InputStats, prefilter=None, max_line: int = MAX_LINE,
                 chunk_size: Optional[int] = None, wrap=None):
        self.fh = fh
        #: a ``rewrap.WrapWidth`` to measure each chunk with before its lines are yielded; while
        #: it holds a width every line is yielded (a keyword a terminal cut in two is on no line)
        self.wrap = wrap
        self.stats = stats
        self.prefilter = prefilter
        self.max_line = max(1, max_line)
        self.chunk_size = max(1, chunk_size or CHUNK)
        self.hold = False
        self.n = 0
        self._exc: Optional[BaseException] = None
        self._live = _is_live(fh)
        #: a regular file read through its own buffer (not gzip): after a chunk, the reader seeks
        #: back to the start of the unfinished last line instead of keeping it and joining it to
        #: the next read (that copy cost ~0.1 s CPU per 300 MB)
        self._rewind = not self._live and _is_plain_file(fh)
        self._exc_quiet = False  #: ``_exc`` only stops the reading (trailing garbage after a gzip stream)
        self._trailing = False

    # -- reading ------------------------------------------------------------------------------
    def _read(self) -> bytes:
        """Up to ``chunk_size`` bytes; b"" at the end or after a read error (kept in ``_exc``)."""
        if self._exc is not None:
            return b""
        read = getattr(self.fh, "read1", None) or self.fh.read
        parts: list[bytes] = []
        got = 0
        try:
            while got < self.chunk_size:
                with interrupt.blocking():  # main thread only: SIGINT/SIGTERM break the wait
                    b = read(self.chunk_size - got)
                if not b:
                    break
                parts.append(b)
                got += len(b)
                if self._live:  # a pipe: hand on what arrived, do not wait for a full chunk
                    break
        except (EOFError, OSError) + _compressed_errors() as exc:
            if _bad_gzip(exc) and str(exc).startswith("Not a gzipped file"):
                # a complete gzip member followed by bytes that start no other member: gzip(1) says
                # "decompression OK, trailing garbage ignored"; so does the reader (a warning, no error)
                self._trailing = True
                self._exc = EOFError()
                self._exc_quiet = True
            else:
                self._exc = exc
        return b"".join(parts)

    def _items(self, search=None) -> Iterator[tuple]:
        """The reading half: chunks of whole lines with their prefilter hits, in input order.

        Yields ``("chunk", buf, cut, hits, ascii)`` (``hits`` None without a prefilter),
        ``("long", head)`` for the kept head of an over-long line, ``("bytes", n)`` for bytes of
        drained over-long lines. Touches only the input and the prefilter, never ``stats`` or
        the line count, so it can run in a read-ahead thread (``read`` and Hyperscan's ``scan``
        release the GIL: reading and searching chunk k+1 overlaps with the lines of chunk k).
        ``search(buf, cut)`` returns ``_search``'s triple, or a future of it (search workers).
        """
        search = search or self._search
        pending = b""  # the start of an unfinished line (at most max_line bytes)
        long_head: Optional[bytes] = None  # the kept head of an over-long line being drained
        while True:
            data = self._read()
            if not data:
                break
            if long_head is not None:
                nl = data.find(b"\n")
                if nl < 0:
                    yield ("bytes", len(data))
                    continue
                yield ("bytes", nl + 1)
                yield ("long", long_head)
                long_head = None
                data = data[nl + 1:]
            buf = pending + data if pending else data
            cut = buf.rfind(b"\n") + 1
            tail = buf[cut:]
            if len(tail) > self.max_line:
                long_head = tail[: self.max_line]
                yield ("bytes", len(tail))
                pending = b""
            elif cut and tail and self._rewind and self._seek_back(len(tail)):
                pending = b""  # the next read starts at the unfinished line
            else:
                pending = tail
            if cut:
                yield ("chunk", buf, cut, search(buf, cut))
        if long_head is not None:
            yield ("long", long_head)
        elif pending:  # last line without a newline: counted without one
            yield ("bytes", -1)
            buf = pending + b"\n"
            yield ("chunk", buf, len(buf), search(buf, len(buf)))

    def _seek_back(self, n: int) -> bool:
        """Move the file position ``n`` bytes back (the unfinished last line is read again);
        False, and no more seeking, when the file does not allow it."""
        try:
            self.fh.seek(-n, io.SEEK_CUR)
            return True
        except (OSError, ValueError):
            self._rewind = False
            return False

    def _search(self, buf: bytes, cut: int) -> tuple[Optional[list[int]], bool, Optional[list[int]]]:
        """Prefilter hits in ``buf`` (with the starts of over-long lines), whether it is ASCII,
        and the newlines before each hit and in ``buf[:cut]`` (``counts[i]`` for ``hits[i]``,
        the last entry for ``cut``; a hit at or after ``cut`` counts up to ``cut``).

        Counted here, in a search worker, right after the scan read the buffer (it is still in
        the cache) and off the consumer's thread; the consumer numbers lines from the counts and
        counts nothing (``sources/nlcount.py``: 0.1-0.8 ms/MB by line length, the largest cost after the scan)."""
        if self.prefilter is None:
            return None, False, None
        both = getattr(self.prefilter, "hits_ascii", None)  # Hyperscan: the scan also tells ASCII
        if both is not None:
            hits, ascii = both(buf)
        else:
            ascii = buf.isascii()  # once per chunk: the prefilter's gates need it too
            hits = self.prefilter.hits(buf, ascii)
        if cut > self.max_line:
            longs = self._long_lines(buf, cut)
            if longs:
                hits = sorted(hits + longs)
        counts: list[int] = []
        count, c, prev = newline_counter(buf), 0, 0
        for h in hits:
            h = h if h < cut else cut
            c += count(prev, h)
            prev = h
            counts.append(c)
        counts.append(c + count(prev, cut))
        return hits, ascii, counts

    def _prefetched(self) -> Iterator[tuple]:
        """``_items`` run in a read-ahead thread, at most ``READ_AHEAD`` chunks ahead (bounded memory).

        Closing the consumer stops the thread at its next chunk; an unexpected exception in the
        thread is raised again here.
        """
        import concurrent.futures  # only a file larger than a chunk reads ahead (start-up cost)

        q: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
        stop = threading.Event()
        end = object()
        workers = concurrent.futures.ThreadPoolExecutor(max_workers=SEARCH_WORKERS,
                                                        thread_name_prefix="logscan-search")

        def put(item) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        def produce() -> None:
            try:
                for item in self._items(lambda buf, cut: workers.submit(self._search, buf, cut)):
                    if not put(item):
                        return
            except BaseException as exc:  # handed to the consumer, raised there
                put(("raise", exc))
            put(end)

        t = threading.Thread(target=produce, name="logscan-read-ahead", daemon=True)
        t.start()
        try:
            while True:
                with interrupt.blocking():
                    item = q.get()
                if item is end:
                    return
                if item[0] == "raise":
                    raise item[1]
                yield item
        finally:
            stop.set()
            t.join(timeout=0 if interrupt.requested() else 5)  # interrupted: it may be blocked in read
            workers.shutdown(wait=True, cancel_futures=True)

    def __iter__(self) -> Iterator[tuple[int, str, bool]]:
        st = self.stats
        ahead = self.prefilter is not None and READ_AHEAD > 0 and not self._one_chunk()
        items = self._prefetched() if ahead else self._items()
        for item in items:
            interrupt.check()
            kind = item[0]
            if kind == "chunk":
                found = item[3]
                hits, ascii, counts = found if isinstance(found, tuple) else found.result()  # a search worker's future
                yield from self._chunk(item[1], item[2], hits, ascii, counts)
            elif kind == "long":
                if self.wrap is not None:
                    self.wrap.see_long()
                yield self._line(item[1], 0, True)
            else:
                st.bytes += item[1]
        exc = self._exc
        if self._trailing:
            st.warning = "trailing garbage after the compressed stream ignored (as gzip -d does)"
        if exc is not None and not self._exc_quiet:
            if isinstance(exc, (EOFError,) + _compressed_errors()) or _bad_gzip(exc):
                st.error = f"compressed stream ends early or is corrupt after line {self.n}: {exc}"
            else:
                st.error = f"read error after line {self.n}: {getattr(exc, 'strerror', None) or exc}"

    def _one_chunk(self) -> bool:
        """True for a regular file that one read takes whole: a read-ahead thread and search
        workers would only cost their start (most CI logs are that small)."""
        if not self._rewind:
            return False
        try:
            return os.fstat(self.fh.fileno()).st_size - self.fh.tell() <= self.chunk_size
        except (OSError, AttributeError, ValueError):
            return False

    # -- per line and per span ----------------------------------------------------------------
    def _line(self, raw: bytes, consumed: int, truncated: bool = False) -> tuple[int, str, bool]:
        st = self.stats
        self.n += 1
        st.lines = self.n
        st.bytes += consumed
        if len(raw) > self.max_line:
            raw = raw[: self.max_line]
            truncated = True
        if truncated:
            st.truncated_lines += 1
        return self.n, clean(raw, st), truncated

    def _skip(self, buf: bytes, a: int, b: int, ascii: bool = False, lines: int = -1) -> None:
        """Count the complete lines ``buf[a:b]`` without decoding them (same stats as reading them).

        ``ascii``: the caller knows ``buf`` is ASCII (no UTF-8 check needed); ``lines``: the
        number of lines of ``buf[a:b]`` when the caller has it (-1: count them).
        """
        if a >= b:
            return
        st = self.stats
        self.n += lines if lines >= 0 else buf.count(b"\n", a, b)
        st.lines = self.n
        st.bytes += b - a
        if not getattr(self.prefilter, "marks_nul", False):
            st.nul_bytes += buf.count(b"\x00", a, b)
        if ascii:
            return
        bad = invalid_lines(buf[a:b])
        if bad:  # InputStats is a pydantic model: no attribute write on the common (clean) path
            st.decode_errors += bad

    def _long_lines(self, buf: bytes, end: int) -> list[int]:
        """Start offsets of the lines of ``buf[:end]`` longer than ``max_line`` (always yielded)."""
        out: list[int] = []
        block = max(1, self.max_line // 2)  # any run > max_line holds a whole aligned block
        s = 0
        while s + block <= end:
            if buf.find(b"\n", s, s + block) >= 0:
                s += block
                continue
            ls = buf.rfind(b"\n", 0, s) + 1
            le = buf.find(b"\n", s + block)
            if le < 0:
                le = end
            if le - ls > self.max_line:
                out.append(ls)
            s = -(-(le + 1) // block) * block
        return out

    def _chunk(self, buf: bytes, cut: int, hits: Optional[list[int]], ascii: bool,
               counts: Optional[list[int]] = None) -> Iterator[tuple[int, str, bool]]:
        """Lines of ``buf[:cut]`` (complete lines, ends with ``\\n``): all, or the prefiltered and held ones.

        ``hits`` are the prefilter's offsets in ``buf`` (None: no prefilter, every line);
        ``ascii`` whether ``buf`` is ASCII; ``counts`` ``_search``'s newline counts (None:
        counted here). Bytes after ``cut`` (the start of the next line) were searched too but
        are left alone.
        """
        find = buf.find
        wrap = self.wrap
        if wrap is not None and wrap.wants():
            wrap.measure(buf, cut)
            if wrap.width is not None:
                hits = None  # the pieces of a wrapped line must reach the joiner (sources/rewrap.py)
        if hits is None:
            pos = 0
            while pos < cut:
                nl = find(b"\n", pos)
                yield self._line(buf[pos:nl], nl - pos + 1)
                pos = nl + 1
            return
        hits = list(hits)
        hits.append(cut)
        if counts is None or len(counts) != len(hits):
            counts = [buf.count(b"\n", 0, h if h < cut else cut) for h in hits]
        base = self.n  # the line number before buf: a line starting at ls is base + (newlines before ls) + 1
        pos = 0
        for k, h in enumerate(hits):
            while self.hold and pos < cut:
                nl = find(b"\n", pos)
                yield self._line(buf[pos:nl], nl - pos + 1)
                pos = nl + 1
            if h < pos:
                continue
            if h >= cut:
                self._skip(buf, pos, cut, ascii, base + counts[-1] - self.n)
                return
            r = buf.rfind(b"\n", pos, h)
            ls = r + 1 if r >= 0 else pos
            # no newline lies between ls and h: the newlines before ls are those before h
            self._skip(buf, pos, ls, ascii, base + counts[k] - self.n)
            nl = find(b"\n", h)
            yield self._line(buf[ls:nl], nl - ls + 1)
            pos = nl + 1
