"""Hyperscan block-mode databases for the prefilter: compiled once, cached on disk, one scratch per thread.

Split from ``sources/prefilter.py`` (which re-exports these names) to keep that module small.
"""
from __future__ import annotations

import os
import threading

try:  # pragma: no cover - depends on the platform's wheels
    import hyperscan as _hs
except Exception:  # ImportError, or a broken native library
    _hs = None


class _HsDb:
    """A Hyperscan database with a scratch space per thread (a loaded database has none).

    A Hyperscan scratch may serve one scan at a time, so each thread that scans (the main
    thread, the reader's search workers) gets its own, made on its first scan.
    """

    def __init__(self, db):
        self.db = db
        self._local = threading.local()
        self._local.scratch = _hs.Scratch(db)

    def scan(self, data: bytes, match_event_handler) -> None:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = _hs.Scratch(self.db)
        self.db.scan(data, match_event_handler=match_event_handler, scratch=scratch)


def _cache_path(exprs: list[bytes], flags: list[int]):
    """Where the compiled database of ``exprs`` is cached, or None when caching is off."""
    from .. import hashes as hashlib

    from ..cache import cache_dir

    root = cache_dir()
    if root is None:
        return None
    h = hashlib.sha256(repr((getattr(_hs, "__version__", "?"), exprs, flags)).encode("utf-8", "surrogateescape"))
    return root / f"hyperscan-{h.hexdigest()[:32]}.db"


def hs_db(exprs: list[bytes], flags: list[int]) -> _HsDb:
    """A compiled Hyperscan block-mode database, from the on-disk cache when it holds one.

    Compiling ~500 keywords costs ~0.05 s of CPU and ~13 MiB of peak RSS (the compiler's);
    a serialized database loads in a millisecond. The cache (``$LOGSCAN_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/logscan`` or ``~/.cache/logscan``; ``LOGSCAN_CACHE_DIR=`` empty turns
    it off) is keyed by the patterns, flags and Hyperscan version, written atomically, and
    any entry that does not load is compiled again. Raises ``hyperscan.error`` for a
    pattern Hyperscan cannot compile.
    """
    path = _cache_path(exprs, flags)
    if path is not None:
        try:
            return _HsDb(_hs.loadb(path.read_bytes(), _hs.HS_MODE_BLOCK))
        except Exception:  # missing, truncated, or built for another CPU: compile
            pass
    db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
    db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs), flags=flags)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(_hs.dumpb(db))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home: compile every time
    return _HsDb(db)


def matches_empty(src: bytes) -> bool:
    """True when the (bytes) regex ``src`` matches the empty string: as a Hyperscan sniff with
    ``HS_FLAG_ALLOWEMPTY`` it then fires at offset 0 of every buffer, so it tells nothing and
    only slows the scan (issue 18: two such TensorRT-LLM sniffs doubled the main database's
    cost). False when ``regex`` cannot compile it (then Hyperscan decides as before)."""
    import regex

    try:
        return regex.compile(src, regex.V0).fullmatch(b"") is not None
    except regex.error:
        return False
