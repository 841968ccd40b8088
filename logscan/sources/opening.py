"""Opening a log input: a path, ``-`` for stdin, gzip by its magic bytes; what kind of stream it is.

``open_input`` gives the binary stream ``sources.reader.LineReader`` reads; ``_is_live`` (a pipe,
a socket, a terminal: hand on what has arrived) and ``_is_plain_file`` (a regular file read
through its own buffer, where seeking back re-reads the same bytes) tell how to read it.
"""
from __future__ import annotations

import io
import os
import stat as stat_mod
import sys
from pathlib import Path
from typing import BinaryIO


class InputError(Exception):
    """An input cannot be opened or read at all (missing file, permission, a directory)."""


def open_input(path: str) -> tuple[BinaryIO, str]:
    """Open ``path`` (``-`` for stdin) for binary reading, unwrapping gzip by magic bytes.

    Returns ``(stream, display_name)``. Raises ``InputError`` when it cannot be opened.
    """
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None:  # file descriptor 0 closed (``<&-``): Python sets sys.stdin to None
            raise InputError("<stdin>: standard input is closed")
        raw: BinaryIO = stdin
        name = "<stdin>"
    elif path == "":  # Path("") is the current directory: say what it was instead
        raise InputError("'': an empty path (an unset variable in the command line?)")
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
    try:
        magic = buffered.peek(2)[:2]
    except (OSError, ValueError) as exc:  # a closed or unreadable descriptor
        raise InputError(f"{name}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if magic == b"\x1f\x8b":
        import gzip  # only for a gzip input (start-up: gzip, zlib and struct cost ~1 ms)

        return gzip.GzipFile(fileobj=buffered), name  # type: ignore[return-value]
    return buffered, name


def _is_live(fh) -> bool:
    """True for a pipe, a socket or a terminal (reads return what has arrived so far)."""
    try:
        return not stat_mod.S_ISREG(os.fstat(fh.fileno()).st_mode)
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return False


def _is_plain_file(fh) -> bool:
    """True for a buffered reader straight over a regular file (not gzip): seeking it back
    re-reads the same bytes."""
    if not isinstance(fh, io.BufferedReader):
        return False
    try:
        return stat_mod.S_ISREG(os.fstat(fh.fileno()).st_mode) and fh.seekable()
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return False


def stdin_isatty() -> bool:
    """True when standard input is a terminal; False when it is a pipe, a file, or closed (``<&-``)."""
    try:
        return bool(sys.stdin is not None and sys.stdin.isatty())
    except (OSError, ValueError):
        return False
