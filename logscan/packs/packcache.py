"""The compiled-pack cache: rule regexes compiled on first use, and a loaded ``PackSet`` pickled
under the user's cache folder, keyed by the pack files and the code that shapes it.

Split from ``packs/loader.py`` (which re-exports these names). Every reader of the cache falls
back to loading the TOML files when the cache is missing, foreign or stale.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import regex

if TYPE_CHECKING:
    from .loader import PackSet
    from .model import LexiconFile


class LazyPattern:
    """A rule regex compiled on first use: ``regex`` compiles in Python, ~1 ms a pattern.

    Behaves as the compiled ``regex.Pattern`` (``search``, ``match``, ``pattern``, ...).
    ``load_packs`` compiles every pattern eagerly the first time a set of pack files is seen
    (so a broken regex is always reported, naming its file and rule), and records that in the
    cache; later starts compile only the rules a log actually reaches. A pattern compiled
    before the ``PackSet`` is pickled carries ``regex``'s own pickled form of the compiled
    program (``_blob``, a few hundred bytes): its first use in a later process loads that
    (~20 us) instead of parsing the source again (issue 18: ~0.1 s per 300 MB log).
    """

    __slots__ = ("_source", "_flags", "_path", "_rule", "_compiled", "_blob")

    def __init__(self, source: str, path: Path, rule: Optional[str], flags: int = 0,
                 blob: Optional[bytes] = None):
        self._source, self._flags, self._path, self._rule = source, flags, path, rule
        self._compiled: Optional[regex.Pattern] = None
        self._blob = blob

    def compiled(self) -> regex.Pattern:
        """The compiled pattern. Raises ``PackError`` (file and rule named) on a broken regex."""
        if self._compiled is None:
            if self._blob is not None:
                import pickle

                try:
                    rx = pickle.loads(self._blob)
                    if isinstance(rx, regex.Pattern) and rx.pattern == self._source:
                        self._compiled = rx
                except Exception:  # a blob of another build: compile from the source
                    pass
                self._blob = None
            if self._compiled is None:
                from .loader import _compile

                self._compiled = _compile(self._source, self._path, self._rule, self._flags)
        return self._compiled

    def __getattr__(self, name: str):
        return getattr(self.compiled(), name)

    def __reduce__(self):
        blob = self._blob
        if blob is None and self._compiled is not None:
            import pickle

            try:
                blob = pickle.dumps(self._compiled, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # pragma: no cover - regex patterns pickle
                blob = None
        return (LazyPattern, (self._source, self._path, self._rule, self._flags, blob))


#: Source files whose code shapes a loaded ``PackSet``: a change to any of them misses the cache
#: (paths relative to ``logscan/packs/``; the plain classes and their generated validators too).
_CODE = ("model.py", "model_base.py", "model_rules.py", "model_lexicon.py", "model_pack.py", "model_ladders.py", "model_infer.py",
         "model_history.py", "history.py", "dispatch.py", "loader.py", "packcache.py", "../plain.py", "../plaininit.py", "../validate.py",
         "../analysis/template_era.py")  # template_era: the template histories kept in ``PackSet.memo``


_CODE_DIGESTS: dict[str, bytes] = {}


def _code_digest(path: Optional[str] = None) -> bytes:
    """sha256 of the bytes of the pack-model code (``_CODE``), or of the source file ``path``,
    read once per process: ``_packset_key`` and each ``cached_valid`` call (gpus, overlays,
    ladder history, dispatch) hashed the same 16 files again, ~1 ms a call. Raises ``OSError``."""
    key = path or ""
    got = _CODE_DIGESTS.get(key)
    if got is None:
        from .. import hashes as hashlib

        h = hashlib.sha256()
        if path is None:
            for name in _CODE:
                h.update((Path(__file__).parent / name).read_bytes())
        else:
            h.update(Path(path).read_bytes())
        got = _CODE_DIGESTS[key] = h.digest()
    return got


def _packset_key(root: Path, engines: Optional[list[str]]) -> Optional[str]:
    """Cache key of the ``PackSet`` of ``root``: every TOML file's path, size and mtime (ns),
    the bytes of the pack-model code, and the logscan, ``regex`` and Python versions (the cached
    objects are plain classes: no pydantic object is pickled). None when caching is off or a file
    cannot be listed."""
    from .. import hashes as hashlib

    from .. import __version__
    from ..cache import cache_dir

    if cache_dir() is None:
        return None
    try:
        files = _toml_files(root)
        code = _code_digest().hex()
    except OSError:
        return None
    blob = repr((__version__, regex.__version__, sys.version, files, sorted(engines or []),
                 code))
    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def cached_valid(model: type, data: dict, validate):
    """``validate()`` (the plain ``model`` object of ``data``), read from the cache folder when a
    start already validated the same contents with the same model code, else computed and stored
    (best effort, pickled like the ``PackSet``; ``_cached_packset``'s ownership checks apply). The
    key holds ``data``, the source of ``model``'s module and of every pack-model module (``_CODE``):
    gpus, overlays, schemes, the matrix ladders, a gate policy."""
    from .. import hashes as hashlib
    import json

    from .. import __version__
    from ..cache import cache_dir, write_atomic

    if cache_dir() is None:
        return validate()
    try:
        h = hashlib.sha256()
        h.update(_code_digest(sys.modules[model.__module__].__file__))
        h.update(_code_digest())  # the pack-model classes a file's model nests, plain.py, validate.py
        h.update(repr((__version__, sys.version, model.__module__, model.__qualname__)).encode())
        h.update(json.dumps(data, sort_keys=True, default=repr, ensure_ascii=False).encode("utf-8", "surrogateescape"))
    except (OSError, TypeError, ValueError, AttributeError):
        return validate()
    key = h.hexdigest()[:32]
    got = _load_pickle(f"valid-{key}.pickle")
    if isinstance(got, model):
        return got
    obj = validate()
    try:
        import pickle

        write_atomic(cache_dir() / f"valid-{key}.pickle", pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # an unpicklable object: no cache, never an error
        pass
    return obj


def _load_pickle(name: str):
    """The object pickled in the cache folder as ``name``, or None (missing, unreadable, foreign).
    Only a file owned by this user and writable by nobody else is unpickled."""
    import os
    import pickle
    import stat

    from ..cache import cache_dir

    path = cache_dir() / name
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            if (hasattr(os, "geteuid") and st.st_uid != os.geteuid()) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None
            return pickle.load(fh)
    except Exception:  # missing, truncated, or written by another build
        return None


def _toml_files(root: Path) -> list[tuple[str, int, int]]:
    """``(path, size, mtime ns)`` of every ``*.toml`` below ``root`` (the folder resolved once,
    each file stat'ed once: ``Path.rglob`` + ``resolve`` per file cost ~5 ms a start). Raises
    ``OSError`` when ``root`` cannot be listed."""
    import os

    out = []
    top = os.path.realpath(root)
    if not os.path.isdir(top):
        raise NotADirectoryError(top)
    for folder, dirs, names in os.walk(top, onerror=_raise, followlinks=True):
        dirs.sort()
        for name in names:
            if name.endswith(".toml"):
                path = os.path.join(folder, name)
                st = os.stat(path)
                out.append((path, st.st_size, st.st_mtime_ns))
    out.sort()
    return out


def _raise(exc: OSError) -> None:
    raise exc


def _cached_packset(key: Optional[str]) -> Optional[PackSet]:
    """The pickled ``PackSet`` stored under ``key``, or None (missing, unreadable, foreign, stale).

    Only a file owned by this user and writable by nobody else is unpickled: the cache folder is
    the user's own (``$LOGSCAN_CACHE_DIR`` or ``~/.cache/logscan``), like pip's.
    """
    if key is None:
        return None
    obj = _load_pickle(f"packset-{key}.pickle")
    from .loader import PackSet

    return obj if isinstance(obj, PackSet) else None


def _store_packset(key: Optional[str], packset: PackSet) -> None:
    """Pickle ``packset`` (without its per-process ``derived`` objects) under ``key``; best effort."""
    import pickle

    from ..cache import cache_dir, write_atomic

    if key is None:
        return
    try:
        import dataclasses

        for pack in packset.packs.values():  # every program into the cache: no parse in later starts
            for cr in pack.rules:
                cr.regex.compiled()
                for rx in (cr.item_regex, cr.joined_regex):
                    if rx is not None:
                        rx.compiled()
        from ..sources.prefilter import Prefilter, literal_plan, matches_empty, pack_keywords

        everywhere, gates, sensitive = pack_keywords(packset)  # the prefilter's plan, computed once
        literal_plan(everywhere, sensitive, [g.keywords for g in gates], packset.memo)
        for g in gates:
            for src in Prefilter._sniff_sources(g):
                packset.memo[("matches-empty", src)] = matches_empty(src)
        from ..analysis.template_era import memo_templates

        memo_templates(packset)  # each pack's template history, built once (~7 ms for vLLM's)
        blob = _dumps_shared(dataclasses.replace(packset, derived={}))
    except Exception:  # an unpicklable object in a pack: no cache, never an error
        return
    write_atomic(cache_dir() / f"packset-{key}.pickle", blob)


def _same(obj):
    """Unpickling a gate term equal to one already read: the same (frozen) object."""
    return obj


def _dumps_shared(obj) -> bytes:
    """``pickle.dumps(obj)`` with equal ``GateTerm``s written once: the 12 vLLM ladder snapshots
    repeat most of their gates (~3,500 terms, ~560 distinct), and each unpickled object costs a
    ``_rebuild`` call at every start. A term equal to one already written (same class, same
    pickled bytes) is written as a reference to it, so a warm start reads ~2,900 fewer objects.
    The terms are frozen, and the code that derives new ones copies them (``model_copy``)."""
    import io
    import pickle

    from .model_ladders import GateTerm

    seen: dict[bytes, object] = {}

    class _Sharing(pickle.Pickler):
        def reducer_override(self, o):
            if type(o) is not GateTerm:
                return NotImplemented
            key = pickle.dumps(o, protocol=pickle.HIGHEST_PROTOCOL)
            first = seen.setdefault(key, o)
            return NotImplemented if first is o else (_same, (first,))

    buf = io.BytesIO()
    _Sharing(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def _check_patterns(root: Path, packs: dict, lexicon: Optional[LexiconFile] = None) -> None:
    """Compile every lazy rule pattern once per distinct set of pack files (raises ``PackError``).

    The set is keyed by every TOML file's path, size and mtime plus the logscan and ``regex``
    versions; a marker in the cache folder records that it compiled cleanly. Without a cache
    folder, every load compiles everything.
    """
    from .. import hashes as hashlib

    from .. import __version__
    from ..cache import cache_dir, write_atomic

    marker = None
    cdir = cache_dir()
    if cdir is not None:
        try:
            files = sorted((str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*.toml"))
        except OSError:
            files = None
        if files is not None:
            key = hashlib.sha256(repr((__version__, regex.__version__, files)).encode(
                "utf-8", "surrogateescape")).hexdigest()[:32]
            marker = cdir / f"patterns-ok-{key}"
            if marker.exists():
                return
    for pack in packs.values():
        for cr in pack.rules:
            cr.regex.compiled()
            for rx in (cr.item_regex, cr.joined_regex):
                if rx is not None:
                    rx.compiled()
    lex_path = root / "lexicon.toml"
    from .loader import _compile

    for entry in (lexicon.name if lexicon is not None else []):
        _compile(entry.pattern, lex_path, entry.id)
        if entry.scheme:
            _compile(entry.scheme, lex_path, entry.id)
    if lexicon is not None and lexicon.packages is not None:
        _compile(lexicon.packages.pattern, lex_path, "packages")
    for k in (lexicon.kernel if lexicon is not None else []):
        for pat in (k.pattern, k.says):
            if pat:
                _compile(pat, lex_path, f"kernel {k.name}")
    if lexicon is not None and lexicon.failing is not None:
        _compile(lexicon.failing.exceptions, lex_path, "failing")
        if lexicon.failing.traced:
            _compile(lexicon.failing.traced, lex_path, "failing traced")
    if marker is not None:
        write_atomic(marker, b"")


