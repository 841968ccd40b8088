"""Decoding one physical line to clean text, and counting the invalid UTF-8 lines of a span.

Split from ``sources/reader.py`` (which re-exports these names).
"""
from __future__ import annotations

from ..models import InputStats
from .safe import ANSI, CARET_ANSI, SYSLOG_ANSI

_ANSI = ANSI


def clean(raw: bytes, stats: InputStats) -> str:
    """Decode one physical line (without its ``\\n``) to clean text.

    Invalid UTF-8 becomes U+FFFD (counted in ``stats.decode_errors``); ``\\r``, NUL and
    ANSI escape sequences are removed (also one whose ESC a syslog relay wrote as ``#033``
    or a paste shows in caret notation, ``^[``).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        stats.decode_errors += 1
        text = raw.decode("utf-8", "replace")
    if "\r" in text:
        text = text.rstrip("\r").replace("\r", " ")
    if "\x00" in text:
        stats.nul_bytes += text.count("\x00")
        text = text.replace("\x00", "")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "#033[" in text:
        text = SYSLOG_ANSI.sub("", text)
    if "^[[" in text:
        text = CARET_ANSI.sub("", text)
    return text


def invalid_lines(span: bytes) -> int:
    """How many of the ``\n``-separated lines of ``span`` are not valid UTF-8 (what decoding
    them would count in ``InputStats.decode_errors``), without decoding an ASCII span."""
    if span.isascii():
        return 0
    try:
        span.decode("utf-8")
        return 0
    except UnicodeDecodeError:
        pass
    n = 0
    for raw in span.split(b"\n"):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            n += 1
    return n
