"""Load, validate and compile the pattern packs shipped under ``patterns/``.

Packs are TOML (read with ``tomllib``), validated with the pydantic models generated from the
plain classes of ``logscan.packs.model`` and compiled with ``regex``. Any problem raises ``PackError``
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

from .history import HistoryFile, LadderHistory, Ladders
from .packcache import _CODE, LazyPattern, _cached_packset, _check_patterns, _packset_key, _store_packset  # noqa: F401
from .model import (CommonWrapper, DispatchFile, FindingsFile, InferFile, LadderFile, LexiconFile, PackFile, PrefixFormat,
                    ProcessTag, Rule, RuleFile, WrapperFile)

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
    if sys.version_info >= (3, 11):  # imported here: a start whose files are all cached parses none
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
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
    from .. import hashes as hashlib
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


def _validate(model, data: dict, path: Path, cache: bool = False):
    """``data`` (a parsed TOML file at ``path``) validated as ``model`` (a ``@plain`` pattern-file
    class, checked by the pydantic model generated from it); raises ``PackError`` naming the file,
    the key and, for a rule, its id. ``cache``: a file read on every start outside the pack cache
    (gpus, overlays) is kept, validated, in the cache folder, keyed by its contents and the model
    code (``packcache.cached_valid``), so such a start imports no pydantic."""
    if cache:
        from .packcache import cached_valid

        return cached_valid(model, data, lambda: _validate(model, data, path))
    from pydantic import ValidationError

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
    #: the continuation's ``joined_by`` marker (a wrapped shell command's trailing ``\``), if any
    joined_regex: Optional[regex.Pattern] = None


@dataclass(frozen=True)
class CompiledPrefix:
    spec: PrefixFormat | ProcessTag | CommonWrapper
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
    #: results of pure functions of the packs (e.g. the prefilter's literal plan), pickled with
    #: the pack set so that a later start need not compute them
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def rule(self, rule_id: str) -> CompiledRule:
        for pack in self.packs.values():
            for r in pack.rules:
                if r.rule.id == rule_id:
                    return r
        raise KeyError(rule_id)


def _load_history(path: Path) -> LadderHistory:
    """``ladder-history.toml``, validated. Raises ``PackError`` (called lazily, see ``Ladders``)."""
    return LadderHistory(_validate(HistoryFile, _read_toml(path), path, cache=True))


def _load_dispatch(path: Path) -> DispatchFile:
    """``dispatch.toml``, validated (each entry's ``releases`` a specifier). Raises ``PackError``."""
    df = _validate(DispatchFile, _read_toml(path), path, cache=True)
    for e in df.dispatch:
        _spec(e.releases, path, e.name)
    return df


#: rule files every pack loads after its own (``patterns/common-rules/*.toml``): line shapes of the
#: hosts any engine runs in (an IPython notebook, a rich / typer traceback), not of one engine. A
#: ``{engine}`` in a rule id becomes the pack's engine name, so each pack's copy keeps its own id.
COMMON_RULES = "common-rules"


#: wrapper files every pack loads after its own ``[[wrapper]]`` entries
#: (``patterns/common-wrappers/*.toml``): what a library or host puts before any engine's line
#: (torch.distributed's ``[rankN]: ``), so no engine's pack owns it
COMMON_WRAPPERS = "common-wrappers"


def _common_wrappers(root: Path) -> tuple[CompiledPrefix, ...]:
    """The compiled ``[[wrapper]]`` entries of ``root/common-wrappers/*.toml``, in file then entry order."""
    out: list[CompiledPrefix] = []
    for path in sorted((root / COMMON_WRAPPERS).glob("*.toml")):
        wf = _validate(WrapperFile, _read_toml(path), path)
        out += [CompiledPrefix(w, _compile(w.pattern, path, w.id), None) for w in wf.wrapper]
    return tuple(out)


def _rule_files(folder: Path, common: tuple[Path, ...]) -> list[Path]:
    """The pack's own rule files in name order, then the shared ``common`` ones (after the last own file)."""
    return sorted((folder / "rules").glob("*.toml")) + list(common)


def _load_pack(folder: Path, common: tuple[Path, ...] = (), wrappers: tuple[CompiledPrefix, ...] = ()) -> Pack:
    meta_path = folder / "pack.toml"
    meta = _validate(PackFile, _read_toml(meta_path), meta_path)

    def comp(items):
        return [CompiledPrefix(p, _compile(p.pattern, meta_path, p.id), _spec(p.versions, meta_path, p.id))
                for p in items]

    rules: list[CompiledRule] = []
    seen: dict[str, Path] = {}
    for path in _rule_files(folder, common):
        data = _read_toml(path)
        if path in common:  # a shared file: each pack's copy of a rule gets the pack's own id
            data = {**data, "rule": [{**r, "id": str(r.get("id", "")).replace("{engine}", meta.pack.engine)}
                                     for r in data.get("rule", [])]}
        rf = _validate(RuleFile, data, path)
        for r in rf.rule:
            if r.id in seen:
                raise PackError(path, f"duplicate rule id (also in {seen[r.id].name})", rule=r.id)
            seen[r.id] = path
            flags = regex.IGNORECASE if r.ignore_case else 0
            item = LazyPattern(r.continuation.item, path, r.id, flags) if r.continuation else None
            joined = r.continuation.joined_by if r.continuation else None
            rules.append(CompiledRule(r, LazyPattern(r.pattern, path, r.id, flags), item,  # type: ignore[arg-type]
                                      _spec(r.versions, path, r.id), str(path),
                                      LazyPattern(joined, path, r.id, 0) if joined else None))  # type: ignore[arg-type]
    snapshots = {}
    for path in sorted((folder / "ladders").glob("*.toml")):
        lf = _validate(LadderFile, _read_toml(path), path)
        snapshots[lf.version] = lf
    history_path = folder / "ladder-history.toml"
    # every history release, composed on first use; the history itself read on first need
    dispatch_path = folder / "dispatch.toml"
    ladders = Ladders(snapshots, functools.partial(_load_history, history_path) if history_path.is_file() else None,
                      functools.partial(_load_dispatch, dispatch_path) if dispatch_path.is_file() else None)
    infer_path = folder / "infer.toml"
    infer = _validate(InferFile, _read_toml(infer_path), infer_path) if infer_path.is_file() else None
    if infer is not None:
        for spec in [p.versions for p in infer.predicate] + [c.versions for c in infer.chain] + \
                [i.versions for i in infer.infer]:
            _spec(spec, infer_path, None)
    return Pack(
        engine=meta.pack.engine, path=folder, meta=meta,
        wrappers=comp(meta.wrapper) + list(wrappers), processes=comp(meta.process), prefixes=comp(meta.prefix),
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
    from .. import gcpause

    root = Path(root) if root else patterns_root()
    key = _packset_key(root, engines)
    hit = _cached_packset(key)
    if hit is not None:
        gcpause.resume()
        return hit
    packset = _load_packset(root, engines)
    _store_packset(key, packset)
    gcpause.resume()
    return packset


def _load_packset(root: Path, engines: Optional[list[str]]) -> PackSet:
    findings_path = root / "findings.toml"
    findings = _validate(FindingsFile, _read_toml(findings_path), findings_path)
    packs = {}
    common = tuple(sorted((root / COMMON_RULES).glob("*.toml")))
    wrappers = _common_wrappers(root)
    for folder in sorted(p for p in root.iterdir() if (p / "pack.toml").is_file()):
        if engines and folder.name not in engines:
            continue
        pack = _load_pack(folder, common, wrappers)
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


@functools.lru_cache(maxsize=4)
def _default_packs() -> PackSet:
    return load_packs()


def default_packs() -> PackSet:
    """The shipped packs, loaded once per process (a paused collector resumes: ``logscan.gcpause``)."""
    packs = _default_packs()
    from .. import gcpause

    gcpause.resume()
    return packs
