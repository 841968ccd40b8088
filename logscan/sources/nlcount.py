"""Counting newlines in a read buffer, the cheaper of two ways for its line lengths (issue 18).

The reader numbers every line, so it counts the newlines of every buffer it reads, hit or not.
CPython's ``bytes.count`` of one byte is a plain compare loop whose speed falls with the newline
density (on this project's 2-core machines: ~0.37 ms/MB at 2,000-byte lines, ~0.41 at 400, ~0.78
at 40). ``len(s) - len(s.replace(b"\\n", b""))`` finds each newline with ``memchr`` and copies
the spans between them, so it is cheaper the longer the lines are (~0.10 ms/MB at 2,000 bytes,
~0.17 at 400, ~0.41 at 120) and dearer on short ones (~1.0 at 40). ``counter`` picks one per
buffer from the density of its first 16 KiB, measured with ``bytes.count`` (~6 µs).
``bench/newlines.py`` prints the figures of both ways on this machine.
"""
from __future__ import annotations

from typing import Callable

#: bytes sampled at the start of a buffer to estimate its line length
SAMPLE = 16384
#: mean line length (bytes) from which ``replace`` beats ``count``; below it ``count`` is kept
WIDE = 100
#: spans shorter than this are counted with ``count`` whatever the density (no copy for little)
MIN_SPAN = 65536


def count_by_replace(buf: bytes, a: int, b: int) -> int:
    """The newlines of ``buf[a:b]``, found by ``bytes.replace`` (a copy of the span, then one
    ``memchr`` per newline): equal to ``buf.count(b"\\n", a, b)``."""
    span = buf[a:b] if a or b < len(buf) else buf
    return len(span) - len(span.replace(b"\n", b""))


def counter(buf: bytes) -> Callable[[int, int], int]:
    """A function ``count(a, b)`` giving the number of ``\\n`` bytes in ``buf[a:b]`` (``0 <= a <= b
    <= len(buf)``), the same as ``buf.count(b"\\n", a, b)``, by the way that is cheaper for this
    buffer's line lengths (module docstring). Never raises for those arguments."""
    plain = buf.count
    sample = min(len(buf), SAMPLE)
    if plain(b"\n", 0, sample) * WIDE >= sample:  # short lines: the compare loop is cheaper

        def count(a: int, b: int) -> int:
            return plain(b"\n", a, b)

        return count

    def count_wide(a: int, b: int) -> int:
        if b - a < MIN_SPAN:
            return plain(b"\n", a, b)
        return count_by_replace(buf, a, b)

    return count_wide
