"""``compile``: a ``regex`` pattern compiled once per installation, not once per start (issue 18).

``regex`` parses and compiles a pattern in Python (``regex._main._compile``: 0.1-6 ms a pattern;
the lexicon's ``[target]`` vocabulary alone ~3 ms), and a scan of a 20-line vLLM log compiled
~50 distinct patterns outside the pack cache (module-level ones, the lexicon's, the ladders'
role hints, the floors', ``assumes`` searches): ~14 ms of a ~0.18 s start. A compiled
``regex.Pattern`` pickles as ``(_regex.compile, pattern._pickled_data)``: the compiled program
itself (``regex/_main.py``, ``_pickle``), so unpickling one skips the Python parser (48 patterns:
0.4 ms). This module keeps such pickles in one table in the cache folder
(``logscan.cache.cache_dir()``), keyed by the pattern text and flags, in a file named by the
``regex`` version, its default syntax version and the Python version; a pattern not yet in it
is compiled by ``regex.compile`` and the table is written back once, at exit, merged with what
another process wrote meanwhile.

Fail-safe: a missing, unreadable or foreign table (not this user's, writable by others), an
entry that does not unpickle to the same pattern and flags, a ``LOCALE`` pattern (its program
depends on the locale) or a named-list (``kwargs``) compile all take ``regex.compile``. With
caching off (``LOGSCAN_CACHE_DIR=""``) this is ``regex.compile`` with a per-process memo. The
returned object is the ``regex.Pattern`` that ``regex.compile`` returns (``isinstance`` holds).
"""
from __future__ import annotations

import sys
import threading
from typing import Optional

import regex

#: entries kept at most: a table above it starts afresh (patterns of packs edited away)
MAX_ENTRIES = 4096

_LIVE: dict[tuple, "regex.Pattern"] = {}
_TABLE: Optional[dict] = None
#: whether the cache folder is on (``_table`` sets it when it first reads the table)
_ENABLED = False
_NEW: dict[tuple, bytes] = {}
_LOCK = threading.Lock()
_SAVE_REGISTERED = False


def _file_name() -> str:
    v = sys.version_info
    return f"regex-{regex.__version__}-v{int(regex.DEFAULT_VERSION)}-py{v[0]}{v[1]}.pickle"


def _read_table() -> dict:
    """The table in the cache folder, ``{}`` when there is none or it is not to be trusted."""
    from .cache import cache_dir
    from .packs.packcache import _load_pickle

    if cache_dir() is None:
        return {}
    got = _load_pickle(_file_name())
    return got if isinstance(got, dict) else {}


def _table() -> dict:
    global _TABLE, _ENABLED
    if _TABLE is None:
        from .cache import cache_dir

        _ENABLED = cache_dir() is not None
        _TABLE = _read_table()
    return _TABLE


def _save() -> None:
    """Write the patterns compiled in this process into the table (merged with the file's)."""
    import pickle

    from .cache import cache_dir, write_atomic

    with _LOCK:
        new = dict(_NEW)
        _NEW.clear()
    root = cache_dir()
    if not new or root is None:
        return
    table = _read_table()
    if len(table) + len(new) > MAX_ENTRIES:
        table = {}
    table.update(new)
    try:
        write_atomic(root / _file_name(), pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # never an error: the next start compiles again
        pass


def _remember(key: tuple, rx) -> None:
    global _SAVE_REGISTERED
    import pickle

    try:
        blob = pickle.dumps(rx, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return
    with _LOCK:
        _NEW[key] = blob
        if not _SAVE_REGISTERED:
            import atexit

            atexit.register(_save)
            _SAVE_REGISTERED = True


def compile(pattern, flags: int = 0):  # noqa: A001 - regex.compile's name, on purpose
    """``regex.compile(pattern, flags)``, from the table of compiled patterns when it is there.

    Raises ``regex.error`` as ``regex.compile`` does (an invalid pattern is never stored)."""
    key = (type(pattern).__name__, pattern, flags)
    got = _LIVE.get(key)
    if got is not None:
        return got
    if not isinstance(pattern, (str, bytes)) or flags & regex.LOCALE:
        return regex.compile(pattern, flags)
    rx = None
    blob = _table().get(key)
    if blob is not None:
        import pickle

        try:
            rx = pickle.loads(blob)
        except Exception:
            rx = None
        if not isinstance(rx, regex.Pattern) or rx.pattern != pattern:
            rx = None  # not what was stored under this key: compile it
    if rx is None:
        rx = regex.compile(pattern, flags)
        if _ENABLED:
            _remember(key, rx)
    _LIVE[key] = rx
    return rx


def search(pattern, string, flags: int = 0, **kwargs):
    """``regex.search`` through ``compile``: ``compile(pattern, flags).search(string, **kwargs)``."""
    return compile(pattern, flags).search(string, **kwargs)


def fullmatch(pattern, string, flags: int = 0, **kwargs):
    """``regex.fullmatch`` through ``compile``."""
    return compile(pattern, flags).fullmatch(string, **kwargs)
