"""Which prefilter engine runs (Hyperscan or pure Python), and the matcher's per-line keyword index.

Split from ``sources/prefilter.py`` (which re-exports these names) to keep that module small.
"""
from __future__ import annotations

import os
from typing import Optional

from .hsdb import _hs, hs_db
from .literals import _hex

#: Environment variable that forces the engine: ``auto`` (default), ``hyperscan``, ``python``, ``off``.
ENV = "LOGSCAN_PREFILTER"


class PrefilterError(ValueError):
    """``$LOGSCAN_PREFILTER`` (or a ``prefilter=`` argument) names an engine not available here."""


def available_backends() -> list[str]:
    """Engines usable here, best first (``["hyperscan", "python"]`` or ``["python"]``)."""
    return (["hyperscan"] if _hs is not None else []) + ["python"]


def _choose(backend: Optional[str]) -> str:
    choice = (backend or os.environ.get(ENV, "auto")).strip().lower() or "auto"
    if choice in ("auto", "off"):
        choice = available_backends()[0]
    if choice not in available_backends():
        raise PrefilterError(f"{ENV}={choice!r}: prefilter engine not available here "
                         f"(available: {', '.join(available_backends())})")
    return choice


class KeywordIndex:
    """Which of a set of keywords one text (a line's message) holds.

    ``keys``: ``(keyword, case_sensitive)`` pairs; case-insensitive means ASCII case folding
    (``bytes.lower``), as the buffer prefilter does. ``present(data)`` returns the indices
    into ``keys`` found in ``data`` (UTF-8 bytes). Hyperscan (~1 us a line) or ``in`` per key
    (the pure-Python engine, ~0.5 us a key). ``backend`` as for ``Prefilter`` (``off`` means
    the best available: the matcher always needs its keywords).
    """

    def __init__(self, keys: list[tuple[str, bool]], backend: Optional[str] = None):
        self.keys = list(keys)
        self._enc = [(k.encode("utf-8") if cs else k.encode("utf-8").lower(), cs) for k, cs in self.keys]
        self.backend = _choose(backend)
        self._db = None
        if self.backend == "hyperscan" and self._enc:
            flags = [_hs.HS_FLAG_SINGLEMATCH | (0 if cs else _hs.HS_FLAG_CASELESS) for _, cs in self._enc]
            self._db = hs_db([_hex(k) for k, _ in self._enc], flags)

    def present(self, data: bytes) -> list[int]:
        """Indices of the keys found in ``data``, ascending."""
        if self._db is not None:
            found: list[int] = []
            self._db.scan(data, match_event_handler=lambda i, _a, _b, _f, _c: found.append(i))
            return sorted(found)
        low = data.lower()
        return [i for i, (k, cs) in enumerate(self._enc) if k in (data if cs else low)]
