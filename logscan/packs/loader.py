"""Load, validate and compile the pattern packs shipped under ``patterns/``.

Packs are TOML (read with ``tomllib``), validated with the pydantic models of
``logscan.packs.model`` and compiled with ``regex``. Any problem raises ``PackError``
naming the file and, where there is one, the rule id: logscan refuses to run on a broken
pack rather than silently recognising less.
"""
from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import regex
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import ValidationError

from .history import HistoryFile, LadderHistory, Ladders
from .model import (FindingsFile, InferFile, LadderFile, LexiconFile, PackFile, PrefixFormat, ProcessTag,
                    Rule, RuleFile)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class PackError(Exception):
    """A pack file is unreadable, invalid TOML, fails validation, or holds a broken regex."""

    def __init__(self, path: Path | str, message: str, rule: Optional[str] = None):
        self.path = str(path)
        self.rule = rule
        where = f"{self.path}" + (f" (rule {rule})" if rule else "")
        super().__init__(f"{where}: {message}")


def patterns_root() -> Path:
    """The ``patterns/`` folder: inside the installed wheel (``logscan/_patterns``) or the source tree.

    Raises ``PackError`` when neither exists (a broken install).
    """
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "_patterns", here.parent / "patterns"):
        if (cand / "findings.toml").is_file():
            return cand
    raise PackError(here / "_patterns", "pattern packs not found (is logscan installed with its patterns?)")


def _parse_toml(path: Path) -> dict:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise PackError(path, f"cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PackError(path, f"invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise PackError(path, f"not UTF-8 text (byte {exc.start}): a pack file must be UTF-8 TOML") from None


def _read_toml(path: Path) -> dict:
    """Parse a pack TOML file, through the on-disk cache of parsed files when it holds it.

    ``tomllib`` is pure Python: parsing the shipped packs takes ~0.25 s, most of logscan's
    start-up. The parsed table is cached as JSON (read by the C ``json`` parser) under
    ``logscan.cache.cache_dir()``, keyed by the file's absolute path, size and mtime (ns) and
    by logscan's version; a changed file misses the cache. Pydantic validation and regex
    compilation still run on every load, so a cached file is checked exactly like a fresh one.
    Raises ``PackError`` as ``_parse_toml`` does.
    """
    import hashlib
    import json

    from .. import __version__
    from ..cache import cache_dir, write_atomic

    root = cache_dir()
    try:
        st = path.stat()
    except OSError as exc:
        raise PackError(path, f"cannot read: {exc.strerror or exc}") from None
    if root is None:
        return _parse_toml(path)
    key = hashlib.sha256(repr((__version__, str(path.resolve()), st.st_size, st.st_mtime_ns)).encode(
        "utf-8", "surrogateescape")).hexdigest()[:32]
    cached = root / f"toml-{key}.json"
    try:
        data = json.loads(cached.read_bytes())
        if isinstance(data, dict):
            return data
    except (OSError, ValueError):
        pass
    data = _parse_toml(path)
    try:
        blob = json.dumps(data, ensure_ascii=False).encode("utf-8", "surrogateescape")
    except (TypeError, ValueError):  # a TOML date/time has no JSON form: no cache for that file
        return data
    write_atomic(cached, blob)
    return data


def _validate(model, data: dict, path: Path):
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        rule = None
        if err["loc"] and err["loc"][0] == "rule" and len(err["loc"]) > 1:
            try:
                rule = data["rule"][err["loc"][1]].get("id")
            except (KeyError, IndexError, TypeError, AttributeError):
                rule = None
        raise PackError(path, f"{loc}: {err['msg']}", rule=rule) from None


def _compile(pattern: str, path: Path, rule: Optional[str], flags: int = 0) -> regex.Pattern:
    try:
        return regex.compile(pattern, flags | regex.V0)
    except regex.error as exc:
        raise PackError(path, f"broken regex: {exc}", rule=rule) from None


class LazyPattern:
    """A rule regex compiled on first use: ``regex`` compiles in Python, ~1 ms a pattern.

    Behaves as the compiled ``regex.Pattern`` (``search``, ``match``, ``pattern``, ...).
    ``load_packs`` compiles every pattern eagerly the first time a set of pack files is seen
    (so a broken regex is always reported, naming its file and rule), and records that in the
    cache; later starts compile only the rules a log actually reaches.
    """

    __slots__ = ("_source", "_flags", "_path", "_rule", "_compiled")

    def __init__(self, source: str, path: Path, rule: Optional[str], flags: int = 0):
        self._source, self._flags, self._path, self._rule = source, flags, path, rule
        self._compiled: Optional[regex.Pattern] = None

    def compiled(self) -> regex.Pattern:
        """The compiled pattern. Raises ``PackError`` (file and rule named) on a broken regex."""
        if self._compiled is None:
            self._compiled = _compile(self._source, self._path, self._rule, self._flags)
        return self._compiled

    def __getattr__(self, name: str):
        return getattr(self.compiled(), name)

    def __reduce__(self):
        return (LazyPattern, (self._source, self._path, self._rule, self._flags))


def _spec(text: str, path: Path, rule: Optional[str]) -> Optional[SpecifierSet]:
    if not text:
        return None
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise PackError(path, f"invalid version specifier {text!r}", rule=rule) from None


@dataclass(frozen=True)
class CompiledRule:
    """A validated rule with its compiled regexes."""

    rule: Rule
    regex: regex.Pattern
    item_regex: Optional[regex.Pattern]
    versions: Optional[SpecifierSet]
    path: str


@dataclass(frozen=True)
class CompiledPrefix:
    spec: PrefixFormat | ProcessTag
    regex: regex.Pattern
    versions: Optional[SpecifierSet]


@dataclass
class Pack:
    """One engine's pack, compiled: prefixes, rules (in file order), ladders by release."""

    engine: str
    path: Path
    meta: PackFile
    wrappers: list[CompiledPrefix]
    processes: list[CompiledPrefix]
    prefixes: list[CompiledPrefix]
    rules: list[CompiledRule]
    rank_regex: regex.Pattern
    #: release -> ladder: the detailed snapshots plus every ``ladder-history.toml`` release
    ladders: Mapping[str, LadderFile] = field(default_factory=dict)
    infer: Optional[InferFile] = None  #: ``infer.toml``: predicates and auto ladders, when the pack has one
    #: one alternation of the pack's ``[[opaque]]`` patterns (user-content lines), or None
    opaque: Optional[regex.Pattern] = None
    #: one alternation of the pack's ``[[noise]]`` patterns (per-step statistics), or None
    noise: Optional[regex.Pattern] = None


@dataclass
class PackSet:
    """All packs plus the finding codes."""

    root: Path
    packs: dict[str, Pack]
    findings: FindingsFile
    #: objects derived from the packs once per process (e.g. the compiled byte prefilter)
    derived: dict = field(default_factory=dict, repr=False, compare=False)
    #: ``patterns/lexicon.toml``: kernel-name morphology shared by every engine (empty when absent)
    lexicon: LexiconFile = field(default_factory=LexiconFile)

    def rule(self, rule_id: str) -> CompiledRule:
        for pack in self.packs.values():
            for r in pack.rules:
                if r.rule.id == rule_id:
                    return r
        raise KeyError(rule_id)


def _load_history(path: Path) -> LadderHistory:
    """``ladder-history.toml``, validated. Raises ``PackError`` (called lazily, see ``Ladders``)."""
    return LadderHistory(_validate(HistoryFile, _read_toml(path), path))


def _load_pack(folder: Path) -> Pack:
    meta_path = folder / "pack.toml"
    meta = _validate(PackFile, _read_toml(meta_path), meta_path)

    def comp(items):
        return [CompiledPrefix(p, _compile(p.pattern, meta_path, p.id), _spec(p.versions, meta_path, p.id))
                for p in items]

    rules: list[CompiledRule] = []
    seen: dict[str, Path] = {}
    for path in sorted((folder / "rules").glob("*.toml")):
        rf = _validate(RuleFile, _read_toml(path), path)
        for r in rf.rule:
            if r.id in seen:
                raise PackError(path, f"duplicate rule id (also in {seen[r.id].name})", rule=r.id)
            seen[r.id] = path
            flags = regex.IGNORECASE if r.ignore_case else 0
            item = LazyPattern(r.continuation.item, path, r.id, flags) if r.continuation else None
            rules.append(CompiledRule(r, LazyPattern(r.pattern, path, r.id, flags), item,  # type: ignore[arg-type]
                                      _spec(r.versions, path, r.id), str(path)))
    snapshots = {}
    for path in sorted((folder / "ladders").glob("*.toml")):
        lf = _validate(LadderFile, _read_toml(path), path)
        snapshots[lf.version] = lf
    history_path = folder / "ladder-history.toml"
    # every history release, composed on first use; the history itself read on first need
    ladders = Ladders(snapshots, functools.partial(_load_history, history_path) if history_path.is_file() else None)
    infer_path = folder / "infer.toml"
    infer = _validate(InferFile, _read_toml(infer_path), infer_path) if infer_path.is_file() else None
    if infer is not None:
        for spec in [p.versions for p in infer.predicate] + [c.versions for c in infer.chain] + \
                [i.versions for i in infer.infer]:
            _spec(spec, infer_path, None)
    return Pack(
        engine=meta.pack.engine, path=folder, meta=meta,
        wrappers=comp(meta.wrapper), processes=comp(meta.process), prefixes=comp(meta.prefix),
        rules=rules, rank_regex=_compile(meta.pack.rank_from_process, meta_path, None),
        ladders=ladders, infer=infer,
        opaque=(_compile("|".join(f"(?:{o.pattern})" for o in meta.opaque), meta_path, None)
                if meta.opaque else None),
        noise=(_compile("|".join(f"(?:{o.pattern})" for o in meta.noise), meta_path, None)
               if meta.noise else None),
    )


def load_packs(root: Optional[Path] = None, engines: Optional[list[str]] = None) -> PackSet:
    """Load every pack below ``root`` (default: the shipped ``patterns/``).

    Raises ``PackError`` on the first invalid file, naming it (and the rule id).
    """
    root = Path(root) if root else patterns_root()
    key = _packset_key(root, engines)
    hit = _cached_packset(key)
    if hit is not None:
        return hit
    packset = _load_packset(root, engines)
    _store_packset(key, packset)
    return packset


def _load_packset(root: Path, engines: Optional[list[str]]) -> PackSet:
    findings_path = root / "findings.toml"
    findings = _validate(FindingsFile, _read_toml(findings_path), findings_path)
    packs = {}
    for folder in sorted(p for p in root.iterdir() if (p / "pack.toml").is_file()):
        if engines and folder.name not in engines:
            continue
        pack = _load_pack(folder)
        for cr in pack.rules:
            if cr.rule.finding and cr.rule.finding not in findings.code:
                raise PackError(cr.path, f"unknown finding code {cr.rule.finding!r}", rule=cr.rule.id)
        packs[pack.engine] = pack
    if not packs:
        raise PackError(root, "no pack found (expected <engine>/pack.toml)")
    lex_path = root / "lexicon.toml"
    lexicon = _validate(LexiconFile, _read_toml(lex_path), lex_path) if lex_path.is_file() else LexiconFile()
    _check_patterns(root, packs, lexicon)
    return PackSet(root=root, packs=packs, findings=findings, lexicon=lexicon)


#: Source files whose code shapes a loaded ``PackSet``: a change to any of them misses the cache.
_CODE = ("model.py", "model_base.py", "model_rules.py", "model_pack.py", "model_ladders.py", "model_infer.py",
         "loader.py")


def _packset_key(root: Path, engines: Optional[list[str]]) -> Optional[str]:
    """Cache key of the ``PackSet`` of ``root``: every TOML file's path, size and mtime (ns),
    the bytes of the pack-model code, and the logscan, pydantic, ``regex`` and Python versions.
    None when caching is off or a file cannot be listed."""
    import hashlib

    import pydantic

    from .. import __version__
    from ..cache import cache_dir

    if cache_dir() is None:
        return None
    try:
        files = sorted((str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*.toml"))
        code = [(Path(__file__).parent / name).read_bytes() for name in _CODE]
    except OSError:
        return None
    blob = repr((__version__, pydantic.VERSION, regex.__version__, sys.version, files, sorted(engines or []), code))
    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _cached_packset(key: Optional[str]) -> Optional[PackSet]:
    """The pickled ``PackSet`` stored under ``key``, or None (missing, unreadable, foreign, stale).

    Only a file owned by this user and writable by nobody else is unpickled: the cache folder is
    the user's own (``$LOGSCAN_CACHE_DIR`` or ``~/.cache/logscan``), like pip's.
    """
    import os
    import pickle
    import stat

    from ..cache import cache_dir

    if key is None:
        return None
    path = cache_dir() / f"packset-{key}.pickle"
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            if (hasattr(os, "geteuid") and st.st_uid != os.geteuid()) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None
            obj = pickle.load(fh)
    except Exception:  # missing, truncated, or written by another build: load from the TOML files
        return None
    return obj if isinstance(obj, PackSet) else None


def _store_packset(key: Optional[str], packset: PackSet) -> None:
    """Pickle ``packset`` (without its per-process ``derived`` objects) under ``key``; best effort."""
    import pickle

    from ..cache import cache_dir, write_atomic

    if key is None:
        return
    try:
        import dataclasses

        blob = pickle.dumps(dataclasses.replace(packset, derived={}), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an unpicklable object in a pack: no cache, never an error
        return
    write_atomic(cache_dir() / f"packset-{key}.pickle", blob)


def _check_patterns(root: Path, packs: dict, lexicon: Optional[LexiconFile] = None) -> None:
    """Compile every lazy rule pattern once per distinct set of pack files (raises ``PackError``).

    The set is keyed by every TOML file's path, size and mtime plus the logscan and ``regex``
    versions; a marker in the cache folder records that it compiled cleanly. Without a cache
    folder, every load compiles everything.
    """
    import hashlib

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
            if cr.item_regex is not None:
                cr.item_regex.compiled()
    lex_path = root / "lexicon.toml"
    for entry in (lexicon.name if lexicon is not None else []):
        _compile(entry.pattern, lex_path, entry.id)
        if entry.scheme:
            _compile(entry.scheme, lex_path, entry.id)
    if lexicon is not None and lexicon.packages is not None:
        _compile(lexicon.packages.pattern, lex_path, "packages")
    if marker is not None:
        write_atomic(marker, b"")


@functools.lru_cache(maxsize=4)
def default_packs() -> PackSet:
    """The shipped packs, loaded once per process."""
    return load_packs()
