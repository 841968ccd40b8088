"""Find, in a large byte buffer, the offsets of every line that may matter to the pipeline.

A long-running server's log is millions of request and metrics lines around a few start-ups.
Before any per-line work (decode, prefix, regex), the reader hands each buffer of complete
lines (1 MiB) to a ``Prefilter``, which returns the offsets of

- every pack keyword, ASCII case-insensitive (the matcher's own keyword test,
  ``logscan.match``, is the same: ASCII case folding on the message);
- the bytes that change a line's text before matching, so a keyword hidden by them is not
  missed: NUL, ESC (ANSI colour codes), a ``\\r`` not followed by ``\\n``;
- the starts of wrapped or joined records: a Kubernetes CRI partial line (`` stdout P`` /
  `` stderr P``) and a line starting with ``{`` (Docker json-file or a JSON formatter: JSON
  escapes can hide a keyword and Docker splits long lines into partial entries).

Lines without such an offset are skipped, counted, never decoded. The set may over-select
(a keyword in a prompt): the per-line stages decide. It must never under-select;
``tests/test_prefilter.py`` checks that reports are equal with and without it.

Two engines, chosen automatically: Intel Hyperscan (the ``hyperscan`` package, x86-64 wheels)
and a pure-Python one (``bytes.lower`` and ``bytes.find`` per literal: ~80 MB/s here).
``LOGSCAN_PREFILTER=python|hyperscan|off`` forces one (``off``: every line goes through).
"""
from __future__ import annotations

import os
import re
from typing import Iterable, Optional

#: Environment variable that forces the engine: ``auto`` (default), ``hyperscan``, ``python``, ``off``.
ENV = "LOGSCAN_PREFILTER"

#: Case-sensitive literal triggers (bytes that alter a line's text, or start a joined record).
_CRI_PARTIAL = (b" stdout P", b" stderr P")
_DIRTY = (b"\x00", b"\x1b")

try:  # pragma: no cover - depends on the platform's wheels
    import hyperscan as _hs
except Exception:  # ImportError, or a broken native library
    _hs = None


def available_backends() -> list[str]:
    """Engines usable here, best first (``["hyperscan", "python"]`` or ``["python"]``)."""
    return (["hyperscan"] if _hs is not None else []) + ["python"]


def make_prefilter(keywords: Iterable[str], backend: Optional[str] = None) -> Optional["Prefilter"]:
    """A ``Prefilter`` for ``keywords``, or None when ``backend`` (or ``$LOGSCAN_PREFILTER``) is ``off``.

    Raises ``ValueError`` for an unknown or unavailable engine name.
    """
    choice = (backend or os.environ.get(ENV, "auto")).strip().lower()
    if choice == "off":
        return None
    return Prefilter(keywords, choice)


def minimal_literals(keywords: Iterable[str]) -> list[bytes]:
    """Lower-cased UTF-8 keywords, without those that contain another one (same lines hit)."""
    low = sorted({k.encode("utf-8").lower() for k in keywords if k})
    return [k for k in low if not any(o != k and o in k for o in low)]


class Prefilter:
    """Offsets of interesting bytes in a buffer of complete lines.

    ``keywords``: the pack keywords (str). ``backend``: ``hyperscan``, ``python``, or None for
    ``$LOGSCAN_PREFILTER`` / the best available. Raises ``ValueError`` for an unknown or
    unavailable backend name.
    """

    def __init__(self, keywords: Iterable[str], backend: Optional[str] = None):
        self.literals = minimal_literals(keywords)
        choice = (backend or os.environ.get(ENV, "auto")).strip().lower() or "auto"
        if choice == "auto":
            choice = available_backends()[0]
        if choice not in available_backends():
            raise ValueError(f"{ENV}={choice!r}: prefilter engine not available here "
                             f"(available: {', '.join(available_backends())})")
        self.backend = choice
        if choice == "hyperscan":
            self._db = self._compile_hyperscan()

    def _compile_hyperscan(self):
        exprs: list[bytes] = []
        flags: list[int] = []
        for lit in self.literals:
            exprs.append(b"".join(b"\\x%02x" % c for c in lit))
            flags.append(_hs.HS_FLAG_CASELESS)
        for lit in _CRI_PARTIAL + _DIRTY:
            exprs.append(b"".join(b"\\x%02x" % c for c in lit))
            flags.append(0)
        exprs += [rb"\r[^\n]", rb"^\{"]
        flags += [0, _hs.HS_FLAG_MULTILINE]
        db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
        db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs), flags=flags)
        return db

    def hits(self, buf: bytes) -> list[int]:
        """Sorted offsets in ``buf``, each inside (or at the first byte of) a line to keep."""
        if self.backend == "hyperscan":
            out: list[int] = []
            add = out.append

            def on_match(_id, _start, end, _flags, _ctx):
                add(end - 1)

            self._db.scan(buf, match_event_handler=on_match)
            out.sort()
            return out
        return self._python_hits(buf)

    def _python_hits(self, buf: bytes) -> list[int]:
        out: list[int] = []
        low = buf.lower()
        for lit in self.literals:
            i = low.find(lit)
            while i >= 0:
                out.append(i)
                i = low.find(lit, i + len(lit))
        for lit in _CRI_PARTIAL + _DIRTY:
            i = buf.find(lit)
            while i >= 0:
                out.append(i)
                i = buf.find(lit, i + 1)
        i = buf.find(b"\r")
        while i >= 0:
            if buf[i + 1:i + 2] not in (b"\n", b""):
                out.append(i)
            i = buf.find(b"\r", i + 1)
        if buf[:1] == b"{":
            out.append(0)
        i = buf.find(b"\n{")
        while i >= 0:
            out.append(i + 1)
            i = buf.find(b"\n{", i + 2)
        out.sort()
        return out


def ere_alternation(keywords: Iterable[str]) -> str:
    """The keywords as one POSIX ERE alternation (for ``grep -E -i``; used by the benchmark)."""
    return "|".join(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", k) for k in sorted(set(keywords)))
