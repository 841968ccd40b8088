"""What the gate knows of a run's engine release, and the releases a ``versions`` scope must be tried on.

A policy rule or allow-list entry scoped by ``versions`` (a PEP 440 specifier) is matched
against the run's release. Three cases (``EngineInfo.version_source``):

- **known**: the log printed a release number: the rule is matched on it, as written.
- **inferred**: no usable version line (none, or a source build such as
  ``0.1.dev14910+g20b14095a``), but era hints fit the shipped releases ``lo .. hi``
  (``EngineInfo.release_range``): the real release is any version in that range.
- **unknown**: nothing tells: the real release is any version at all.

Fail closed: when the release is not known, the gate judges the check on every release the
range allows and keeps the worst outcome (the *stricter reading*), so an unknown or inferred
release can never pass where a known one would fail. A specifier's truth is constant between
the versions it names, so a finite set of representative versions (``probe_versions``) covers
every case: each version a scope names, the versions just around it (``.dev0``, ``.post1``,
one step above), the ends of the range, and the shipped releases inside it.
"""
from __future__ import annotations

from typing import Iterable, Optional

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..models import EngineInfo

_LOWEST, _HIGHEST = Version("0.dev0"), Version("99999")
_PAD = 6  #: release components a probe "just above V" is padded to


@dataclass(frozen=True)
class Release:
    """A run's release as the gate sees it: ``exact`` when logged, else a range (``None`` ends: open)."""

    exact: Optional[str] = None
    low: Optional[str] = None
    high: Optional[str] = None
    inferred: bool = False  #: True: ``low .. high`` comes from era hints; False with no exact: unknown

    @property
    def known(self) -> bool:
        return self.exact is not None

    def describe(self) -> str:
        """``release inferred, 0.10.2–0.33.0`` or ``release unknown`` (empty when known)."""
        if self.known:
            return ""
        if self.inferred and self.low and self.high:
            span = self.low if self.low == self.high else f"{self.low}–{self.high}"
            return f"release inferred, {span}"
        return "release unknown"


def _parse(v: Optional[str]) -> Optional[Version]:
    if not v:
        return None
    try:
        return Version(v.lstrip("vV"))
    except InvalidVersion:
        return None


def release_of(engine: Optional[EngineInfo]) -> Release:
    """The ``Release`` of a run's ``EngineInfo`` (None: unknown, e.g. an input with no run).

    Exact only when the log printed a parsable release number (``version_source == "logged"``, or
    ``"reported"``: the reporter's environment block, collect_env / check_env, pip, an image tag);
    a source build or an unparsable version is inferred (with ``release_range``) or unknown.
    """
    if engine is None:
        return Release()
    if engine.version_source in ("logged", "reported") and _parse(engine.version) is not None:
        from ..analysis.ladders import parse_version

        if parse_version(engine.version) is not None:
            return Release(exact=engine.version)
    rng = engine.release_range
    if engine.version_source == "inferred" and rng and len(rng) == 2 and all(_parse(x) for x in rng):
        return Release(low=rng[0], high=rng[1], inferred=True)
    return Release()


def _named(specs: Iterable[str]) -> set[Version]:
    out: set[Version] = set()
    for spec in specs:
        for clause in SpecifierSet(spec):
            text = clause.version.removesuffix(".*")
            v = _parse(text)
            if v is not None:
                out.add(v)
    return out


def _around(v: Version) -> list[Version]:
    """Versions at and just around ``v``: every side of each comparison ``v`` can take part in."""
    rel = list(v.release)
    up = rel + [0] * (_PAD - len(rel)) + [1]
    bump = rel[:-1] + [rel[-1] + 1]
    minor = (rel + [0])[:2]
    minor = [minor[0], minor[1] + 1]
    base = ".".join(map(str, rel))
    out = [v, Version(base), Version(base + ".dev0"), Version(base + ".post1"),
           Version(".".join(map(str, up))), Version(".".join(map(str, bump))), Version(".".join(map(str, minor)))]
    if v.epoch:
        out = [Version(f"{v.epoch}!{x}") for x in out]
    return out


def probe_versions(release: Release, specs: Iterable[str], shipped: Iterable[str] = ()) -> list[str]:
    """The versions a not-known ``release`` is judged on (sorted, as text).

    ``specs``: every ``versions`` specifier of the policy. ``shipped``: the releases of the
    engine's ladders (those inside an inferred range are tried too). Raises nothing.
    """
    lo = _parse(release.low) or _LOWEST
    hi = _parse(release.high) or _HIGHEST
    points = {lo, hi}
    for v in _named(specs):
        points.update(_around(v))
    for s in shipped:
        v = _parse(s)
        if v is not None:
            points.add(v)
    if not release.inferred:
        points.update((_LOWEST, _HIGHEST))
    keep = sorted(p for p in points if lo <= p <= hi or not release.inferred)
    return [str(p) for p in keep]


def contains(spec: str, version: Optional[str]) -> bool:
    """``version`` satisfies ``spec`` (pre-releases included); False for a missing or bad version."""
    v = _parse(version)
    return v is not None and SpecifierSet(spec).contains(v, prereleases=True)
