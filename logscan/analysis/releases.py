"""Answer in a release's terms: check an asked-for engine release, and group per-release rows.

``--engine-version`` of ``ladder``, ``explain``, ``matrix`` and ``scan`` must name a release
whose ladder is shipped (``patterns/<engine>/ladders`` snapshots plus ``ladder-history.toml``):
an unknown one is refused with the nearest shipped releases named, never rounded to one.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from packaging.version import Version

from ..packs.history import release_span
from ..packs.loader import PackSet
from .ladders import LadderIndex, parse_version


class ReleaseError(Exception):
    """The asked-for release is not a release number, or no ladder of it is shipped."""


def resolve_release(packs: PackSet, engine: str, text: str) -> str:
    """The shipped ladder release of ``engine`` equal to ``text`` (``0.31`` == ``0.31.0``).

    Raises ``ReleaseError`` naming the nearest shipped releases (older and newer) when there is
    none, or when ``text`` is not a release number or ``engine`` has no pack.
    """
    v = parse_version(text)
    if v is None:
        raise ReleaseError(f"engine version {text!r} is not a release number")
    if engine not in packs.packs:
        raise ReleaseError(f"no pack for engine {engine!r}")
    idx = LadderIndex(packs.packs[engine])
    hit = idx.exact(text)
    if hit is not None:
        return hit
    older, newer = idx.nearest(v)
    near = " and ".join(x for x in (older, newer) if x) or "none"
    span = release_span(idx.releases[0], idx.releases[-1]) if idx.releases else "none"
    raise ReleaseError(f"{engine} {text} has no shipped ladder (shipped: {len(idx.releases)} releases, {span}); "
                       f"nearest: {near}. Give a shipped release, or add it from a logscan checkout with "
                       f"tools/refresh.py {engine} {text} (a maintainer's tool, not installed).")


def engines_with(packs: PackSet, text: str) -> dict[str, str]:
    """Engine -> its shipped release equal to ``text``, for every engine that ships one."""
    out = {}
    for eng, pack in packs.packs.items():
        try:
            out[eng] = resolve_release(packs, eng, text)
        except ReleaseError:
            continue
    return out


def parse_engine_version(packs: PackSet, text: str, engine: Optional[str] = None) -> dict[str, str]:
    """``--engine-version [ENGINE=]V`` -> engine -> shipped release.

    Without an engine, every engine that ships ``V``; raises ``ReleaseError`` (naming vLLM's
    nearest releases, or the given engine's) when none does.
    """
    if "=" in text:
        engine, text = (x.strip() for x in text.split("=", 1))
    if engine:
        return {engine.lower(): resolve_release(packs, engine.lower(), text)}
    got = engines_with(packs, text)
    if not got:
        resolve_release(packs, "vllm" if "vllm" in packs.packs else next(iter(packs.packs)), text)
    return got


def pinned(packs: PackSet, engine: str, release: str) -> PackSet:
    """A view of ``packs`` whose ``engine`` holds only its ladders up to ``release`` (for matrix)."""
    pack = packs.packs[engine]
    keep = {r: pack.ladders[r] for r in pack.ladders if Version(r) <= Version(release)}
    packs2 = dict(packs.packs)
    packs2[engine] = dataclasses.replace(pack, ladders=keep)
    return dataclasses.replace(packs, packs=packs2, derived={})


def group_rows(rows: list[dict], packs: PackSet) -> list[dict]:
    """Merge rows of consecutive releases that agree on everything but the release.

    Each row is a ``predict.explain`` row (``engine``, ``ladder_version``, ...). A merged row
    keeps ``ladder_version`` (the first release) and gains ``releases`` (``0.30.0–0.33.0``)
    and ``last_version``. Consecutive means adjacent in that engine's shipped release list.
    """
    order = {eng: {r: i for i, r in enumerate(sorted(p.ladders, key=Version))} for eng, p in packs.packs.items()}
    out: list[dict] = []
    open_: dict[tuple, dict] = {}
    for row in rows:
        eng, rel = row.get("engine"), row.get("ladder_version")
        # a release's own gate (packs/history.py marks it "(0.4.4's own gate)") names the release,
        # which the row's range already says: without the name, releases that agree are one row
        mark = f"({rel}'s own gate)"
        row = {k: v.replace(mark, "(the release's own gate)") if isinstance(v, str) else v for k, v in row.items()}
        key = tuple(sorted((k, repr(v)) for k, v in row.items() if k != "ladder_version"))
        prev = open_.get(key)
        pos = order.get(eng, {}).get(rel)
        if prev is not None and pos is not None and order[eng].get(prev["last_version"], -2) == pos - 1:
            prev["last_version"] = rel
            prev["releases"] = release_span(prev["ladder_version"], rel)
            continue
        new = dict(row, releases=rel, last_version=rel)
        open_[key] = new
        out.append(new)
    return out
