"""Read log inputs as numbered text lines: files, stdin, gzip, any bytes, bounded memory.

``read_lines`` yields ``(line_number, text, truncated)`` for one input. Bytes are decoded as
UTF-8 with replacement, ``\\r`` line ends and ANSI escape codes are removed, NUL bytes are
dropped, and a physical line longer than ``max_line`` bytes is cut (the rest is skipped
without being held in memory) and flagged. gzip is detected by its magic bytes, not the
file name; a truncated gzip stream ends the input with an error in the stats, keeping every
line read so far.
"""
from __future__ import annotations

import gzip
import io
import sys
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

import regex

from ..models import InputStats

#: Longest physical line kept, in bytes. Kernel lines are < 1 KiB; config dumps reach ~10 KiB.
MAX_LINE = 256 * 1024

_ANSI = regex.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


class InputError(Exception):
    """An input cannot be opened or read at all (missing file, permission, a directory)."""


def clean(raw: bytes, stats: InputStats) -> str:
    """Decode one physical line (without its ``\\n``) to clean text.

    Invalid UTF-8 becomes U+FFFD (counted in ``stats.decode_errors``); ``\\r``, NUL and
    ANSI escape sequences are removed.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        stats.decode_errors += 1
        text = raw.decode("utf-8", "replace")
    if "\r" in text:
        text = text.rstrip("\r").replace("\r", " ")
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return text


def _physical_lines(fh: BinaryIO, max_line: int) -> Iterator[tuple[bytes, bool]]:
    """Yield ``(bytes_without_newline, truncated)``; memory is bounded by ``max_line``."""
    while True:
        chunk = fh.readline(max_line)
        if not chunk:
            return
        if chunk.endswith(b"\n"):
            yield chunk[:-1], False
            continue
        if len(chunk) < max_line:  # last line of the input, no newline
            yield chunk, False
            return
        truncated = False
        while True:  # drain the rest of an over-long line without keeping it
            rest = fh.readline(max_line)
            if not rest:
                break
            truncated = True
            if rest.endswith(b"\n"):
                break
        yield chunk, truncated


def open_input(path: str) -> tuple[BinaryIO, str]:
    """Open ``path`` (``-`` for stdin) for binary reading, unwrapping gzip by magic bytes.

    Returns ``(stream, display_name)``. Raises ``InputError`` when it cannot be opened.
    """
    if path == "-":
        raw: BinaryIO = sys.stdin.buffer
        name = "<stdin>"
    else:
        p = Path(path)
        if p.is_dir():
            raise InputError(f"{path}: is a directory")
        try:
            raw = p.open("rb")
        except OSError as exc:
            raise InputError(f"{path}: {exc.strerror or exc}") from None
        name = path
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[arg-type]
    if buffered.peek(2)[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffered), name  # type: ignore[return-value]
    return buffered, name


def read_lines(fh: BinaryIO, stats: InputStats, max_line: int = MAX_LINE) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(line_number, text, truncated)`` for every physical line of ``fh``.

    Never raises on content: a corrupt or truncated gzip stream stops the input and sets
    ``stats.error``; every line decoded before it is kept.
    """
    n = 0
    try:
        for raw, truncated in _physical_lines(fh, max_line):
            n += 1
            stats.lines = n
            stats.bytes += len(raw) + 1
            if truncated:
                stats.truncated_lines += 1
            yield n, clean(raw, stats), truncated
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        stats.error = f"compressed stream ends early or is corrupt after line {n}: {exc}"
    except OSError as exc:
        stats.error = f"read error after line {n}: {exc.strerror or exc}"
