"""Gate policy: a TOML file (read with tomllib, validated with pydantic) saying what fails the gate.

The policy models are plain frozen classes (``logscan.plain``); the pydantic model generated from
them (``logscan.validate``) checks a policy text the first time it is seen, and the validated
policy is kept in the cache folder keyed by that text (``packcache.cached_valid``), so a gate with
a policy seen before parses no TOML and imports no pydantic (start-up, issue 18).

A policy holds ordered ``[[rule]]`` tables (scope + targets + ``level``) and ``[[allow]]``
entries (scope + targets + ``reason`` + ``expires``). The shipped default policy is
``patterns/gate-policy.toml``; a policy file's rules come first and the defaults are appended
after them unless the file says ``defaults = false``. Every error names the file, the line
(where the TOML gives one) and the key, and raises ``PolicyError``.
"""
from __future__ import annotations

import fnmatch
import functools
import sys
from dataclasses import field
from datetime import date
from pathlib import Path
from typing import Literal, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from .. import rxcache
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..models import CostClass
from ..packs.model_base import _Strict, strict
from ..plain import after_check, field_check, spec

Level = Literal["fail", "warn", "pass"]


class PolicyError(Exception):
    """A policy file is unreadable, invalid TOML, or fails validation.

    The message names the file, the line when known, and the key (``rule[2].level``).
    """

    def __init__(self, path: str, message: str, line: Optional[int] = None, key: Optional[str] = None):
        self.path, self.line, self.key = path, line, key
        where = path + (f":{line}" if line else "") + (f" (key {key})" if key else "")
        super().__init__(f"{where}: {message}")


@strict
class Scope(_Strict):
    """What a rule or allow-list entry applies to, and which checks it names.

    Scope (all optional, all must match): ``engine`` (glob on the engine name, e.g. ``vllm``),
    ``versions`` (PEP 440 specifier on the engine release; a run whose release the log does
    not print is judged on every release its inferred range, or any release, allows, and the
    worst outcome is kept: ``gate/releases.py``), ``scheme`` (glob on the scheme the kernel's
    ladder serves, e.g. ``NVFP4*``, ``FP8 W8A8``; case-insensitive), ``family`` (glob on the
    layer family, e.g. ``MoE*``).

    Targets (at least one): ``cost_classes`` (a selection of that class, and the finding code
    ``findings.toml`` maps that class to), ``codes`` (finding codes), ``kernels`` (globs on
    the kernel name as logged or its ladder class, case-insensitive), ``severities`` (a
    finding the scan rates ``warning`` or ``error``, whatever its code: the default policy's
    last rules, so that a finding no rule names is never a silent pass).
    """

    engine: Optional[str] = None
    versions: Optional[str] = None
    scheme: Optional[str] = None
    family: Optional[str] = None
    cost_classes: list[CostClass] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    severities: list[Literal["info", "warning", "error"]] = field(default_factory=list)

    @field_check("versions")
    def _spec(cls, v: Optional[str]) -> Optional[str]:
        if v is not None:
            try:
                SpecifierSet(v)
            except InvalidSpecifier:
                raise ValueError(f"invalid PEP 440 version specifier {v!r} (e.g. '>=0.10,<0.12')") from None
        return v

    @field_check("codes")
    def _code_shape(cls, v: list[str]) -> list[str]:
        for c in v:
            if not rxcache.fullmatch(r"[A-Z][A-Z0-9_]{1,60}", c):
                raise ValueError(f"finding code {c!r} must be UPPER_SNAKE_CASE (see 'logscan codes')")
        return v

    @after_check
    def _has_target(self):
        if not (self.cost_classes or self.codes or self.kernels or self.severities):
            raise ValueError("names no target: give cost_classes, codes, kernels or severities")
        return self


@strict
class PolicyRule(Scope):
    """One ``[[rule]]``: checks in scope that hit a target get ``level`` (fail, warn or pass)."""

    level: Level
    reason: str = ""


@strict
class AllowEntry(Scope):
    """One ``[[allow]]`` entry: a known, accepted failure, with why and until when.

    A check that fails or warns and that the entry matches passes until ``expires`` (a TOML
    date, inclusive); after that date the check fails with a message saying the entry expired.
    """

    reason: str = spec(min_length=1)
    expires: date


@strict
class PolicyFile(_Strict):
    """The whole policy file."""

    defaults: bool = spec(True, strict=True)  #: append the shipped default rules after this file's rules
    rule: list[PolicyRule] = field(default_factory=list)
    allow: list[AllowEntry] = field(default_factory=list)


@dataclass(frozen=True)
class Located:
    """A rule or allow entry with where it was written (for messages: ``policy.toml:14``)."""

    item: PolicyRule | AllowEntry
    where: str


@dataclass
class Policy:
    """A loaded policy: rules in decision order (file rules, then defaults) and allow entries."""

    source: str
    rules: list[Located] = field(default_factory=list)
    allow: list[Located] = field(default_factory=list)


# ---- matching -------------------------------------------------------------------------------

def _glob(pattern: Optional[str], value: Optional[str]) -> bool:
    if pattern is None:
        return True
    return value is not None and fnmatch.fnmatchcase(value.lower(), pattern.lower())


def _version(v: Optional[str]) -> Optional[Version]:
    if not v:
        return None
    try:
        return Version(v)
    except InvalidVersion:
        return None


@dataclass(frozen=True)
class Subject:
    """What a scope is matched against: one check's engine, release, scheme, family and hits."""

    engine: Optional[str]
    version: Optional[str]
    scheme: Optional[str]
    family: Optional[str]
    cost_class: Optional[str] = None
    code: Optional[str] = None
    kernels: tuple[str, ...] = ()
    #: the code's parents (``patterns/findings.toml`` ``parent``): a rule naming one takes the code
    parents: tuple[str, ...] = ()
    #: the scan's severity of a finding check (``info``, ``warning``, ``error``); None otherwise
    severity: Optional[str] = None


def matches(scope: Scope, s: Subject, cost_class_finding: dict[str, str]) -> bool:
    """True when ``s`` is in ``scope`` and hits one of its targets.

    A cost-class target also hits the finding code ``cost_class_finding`` maps it to
    (``patterns/findings.toml``: ``emulated`` -> ``EMULATION``), so one target covers the
    selection and the finding it implies.
    """
    if not (_glob(scope.engine, s.engine) and _glob(scope.scheme, s.scheme) and _glob(scope.family, s.family)):
        return False
    if scope.versions is not None:
        v = _version(s.version)
        if v is None or not SpecifierSet(scope.versions).contains(v, prereleases=True):
            return False
    classes = {c.value for c in scope.cost_classes}
    if s.cost_class is not None and s.cost_class in classes:
        return True
    if s.code is not None:
        if s.code in scope.codes or any(p in scope.codes for p in s.parents):
            return True
        if any(cost_class_finding.get(c) == s.code for c in classes):
            return True
    if s.severity is not None and s.severity in scope.severities:
        return True
    return any(_glob(k, name) for k in scope.kernels for name in s.kernels)


# ---- loading --------------------------------------------------------------------------------

_ARRAY = rxcache.compile(r"^\s*\[\[\s*([A-Za-z0-9_-]{1,64})\s*\]\]")
_TABLE = rxcache.compile(r"^\s*\[\s*([A-Za-z0-9_.-]{1,64})\s*\]")
_KEY = rxcache.compile(r"^\s*([A-Za-z0-9_-]{1,64})\s*=")


def locate(text: str, table: Optional[str], index: Optional[int], key: Optional[str]) -> Optional[int]:
    """1-based line of ``key`` in the ``index``-th ``[[table]]`` (or at top level), else of the header.

    A small scanner over the TOML text (tomllib keeps no positions): it understands table and
    array-of-tables headers and ``key =`` lines, which is all a policy file uses. The text is
    scanned once (``_positions``, cached), so locating every rule of a 4000-rule policy is linear.
    """
    headers, keys = _positions(text)
    if key is not None:
        n = keys.get((table, index, key))
        if n is not None:
            return n
    return headers.get((table, index))


@functools.lru_cache(maxsize=4)
def _positions(text: str) -> tuple[dict, dict]:
    """``({(table, index): header_line}, {(table, index, key): first_line})`` of a policy text, in one pass."""
    counts: dict[str, int] = {}
    here: tuple[Optional[str], Optional[int]] = (None, None)
    headers: dict[tuple, int] = {}
    keys: dict[tuple, int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        m = _ARRAY.match(raw)
        if m:
            name = m.group(1)
            counts[name] = counts.get(name, -1) + 1
            here = (name, counts[name])
            headers.setdefault(here, n)
            continue
        m = _TABLE.match(raw)
        if m:
            here = (m.group(1), None)
            continue
        m = _KEY.match(raw)
        if m:
            keys.setdefault((*here, m.group(1)), n)
    return headers, keys


def _where(path: str, text: str, table: str, i: int) -> str:
    line = locate(text, table, i, None)
    return f"{path}:{line}" if line else f"{path} {table}[{i}]"


def parse_policy(text: str, path: str, known_codes: set[str]) -> PolicyFile:
    """Parse and validate policy text; ``PolicyError`` names ``path``, the line and the key.

    A text parsed and validated by an earlier start is read from the cache folder, keyed by the
    text and the model code (``packcache.cached_valid``): no TOML parser, no pydantic."""
    from ..packs.packcache import cached_valid

    pf = cached_valid(PolicyFile, {"policy text": text}, lambda: _parsed(text, path))
    for tname, items in (("rule", pf.rule), ("allow", pf.allow)):
        for i, item in enumerate(items):
            bad = [c for c in item.codes if c not in known_codes]
            if bad:
                raise PolicyError(path, f"unknown finding code {', '.join(bad)} (see 'logscan codes')",
                                  locate(text, tname, i, "codes"), f"{tname}[{i}].codes")
    return pf


def _parsed(text: str, path: str) -> PolicyFile:
    """``text`` parsed (tomllib) and validated (pydantic); raises ``PolicyError``."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = rxcache.search(r"at line (\d{1,9})", str(exc))
        raise PolicyError(path, f"invalid TOML: {exc}", int(m.group(1)) if m else None) from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise PolicyError(path, f"invalid TOML: a value past a parser limit ({str(exc)[:120]})") from None
    except RecursionError:
        raise PolicyError(path, "invalid TOML: arrays or tables nested too deep") from None
    return _validated(data, text, path)


def _validated(data: dict, text: str, path: str) -> PolicyFile:
    """``data`` (the parsed policy ``text``) validated by pydantic; ``PolicyError`` names the line and key."""
    from pydantic import ValidationError

    try:
        return PolicyFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err["loc"])
        table = index = key = None
        if len(loc) >= 2 and isinstance(loc[1], int):
            table, index = str(loc[0]), loc[1]
            key = next((str(p) for p in loc[2:] if isinstance(p, str)), None)
        elif loc:
            key = str(loc[0])
        line = locate(text, table, index, key)
        name = (f"{table}[{index}]" if table else "") + (("." if table else "") + key if key else "")
        msg = err["msg"].removeprefix("Value error, ")
        raise PolicyError(path, msg, line, name or None) from None


def load_policy(path: Optional[str], known_codes: set[str], default_path: Path) -> Policy:
    """The policy to gate with: ``path``'s rules then the defaults (``default_path``), or the defaults.

    Raises ``PolicyError`` for an unreadable or invalid file (either one).
    """
    def read(p: str) -> str:
        try:
            return Path(p).read_text(encoding="utf-8-sig")  # a BOM (Windows editors) is not a statement
        except (OSError, UnicodeDecodeError) as exc:
            raise PolicyError(p, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None

    dtext = read(str(default_path))
    dpf = parse_policy(dtext, str(default_path), known_codes)
    defaults = [Located(r, f"default policy rule {i + 1} ({default_path.name}:{locate(dtext, 'rule', i, None)})")
                for i, r in enumerate(dpf.rule)]
    if path is None:
        return Policy(source="default", rules=defaults)
    text = read(path)
    pf = parse_policy(text, path, known_codes)
    rules = [Located(r, _where(path, text, "rule", i)) for i, r in enumerate(pf.rule)]
    allow = [Located(a, _where(path, text, "allow", i)) for i, a in enumerate(pf.allow)]
    return Policy(source=path, rules=rules + (defaults if pf.defaults else []), allow=allow)
