"""Hand-kept dispatch registries merged into a release's ladder (``patterns/<engine>/dispatch.toml``).

Some kernel choices are made by code rather than by a registry list, so neither the reference
nor ``ladder-history.toml`` (``ast`` over the ``_POSSIBLE_*KERNELS`` lists) holds them: vLLM's
FP8 dense linear up to 0.18.1 runs FP8 Marlin (weight-only) below sm89 because
``Fp8LinearMethod.__init__`` sets ``use_marlin``, and otherwise ``apply_fp8_linear`` /
``Fp8LinearOp`` call CUTLASS or ``torch._scaled_mm``; the scaled-mm registry of 0.7.0 ..
0.14.1 served INT8 only. ``with_dispatch`` adds the entries whose ``releases`` hold the
release to its ``LadderFile`` (snapshot or composed), with their rungs' kernel facts.
"""

import functools
from typing import Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from .model import DispatchFile, DispatchRegistry, GateTerm, LadderFile, LadderKernel, Registry
from .model_history import _v


def holds(entry: DispatchRegistry, release: str) -> bool:
    """Whether ``entry`` describes ``release``'s code (pre-releases count as the release)."""
    return _holds(entry.releases, release)


@functools.lru_cache(maxsize=4096)
def _holds(releases: str, release: str) -> bool:
    """``holds`` by the entry's ``releases`` text: a scan's ``LadderIndex.elsewhere`` asks for
    each of ~10 entries at each of ~30 releases of an inferred range, and building the
    ``SpecifierSet`` each time was ~4 ms of a 20-line log's start (``_spec``: once per text)."""
    spec = _spec(releases)
    try:
        return spec is not None and spec.contains(_v(release), prereleases=True)
    except ValueError:
        return False


@functools.lru_cache(maxsize=1024)
def _spec(releases: str) -> Optional[SpecifierSet]:
    try:
        return SpecifierSet(releases)
    except (InvalidSpecifier, ValueError):
        return None


def _registry(entry: DispatchRegistry, ladder: LadderFile) -> Optional[Registry]:
    """The entry as a ``Registry`` of ``ladder``: ``then``'s list appended, ``requires`` on every rung.
    None when ``then`` names a registry the release lacks (its code does not ask one)."""
    platforms = {p: list(r) for p, r in entry.platforms.items()}
    gates: dict[str, list[GateTerm]] = {k: list(entry.requires) + list(v) for k, v in entry.gates.items()}
    cost = dict(entry.cost)
    if entry.then:
        target = next((r for r in ladder.registry if r.name == entry.then), None)
        if target is None:
            return None
        for p in platforms:
            tail = [k for k in target.platforms.get(p, []) if k not in platforms[p]]
            platforms[p] += tail
            for k in tail:
                own = target.gates.get(k) or (ladder.kernel[k].gates if k in ladder.kernel else [])
                if entry.requires or target.gates.get(k):
                    gates[k] = list(entry.requires) + list(own)
                if k in target.cost:
                    cost.setdefault(k, target.cost[k])
    for rungs in platforms.values():
        for k in rungs:
            if k not in gates and entry.requires:
                gates[k] = list(entry.requires)
    return Registry.model_construct(
        name=entry.name, kind="linear", role=entry.role, scheme=entry.scheme, file=entry.file,
        platforms=platforms, cost=cost, aliases=dict(entry.aliases), quantization=entry.quantization,
        exhausted=entry.exhausted, gates=gates, own_gates=[], releases=entry.releases, note=entry.note)


def with_dispatch(ladder: LadderFile, dispatch: Optional[DispatchFile]) -> LadderFile:
    """``ladder`` with the dispatch registries holding at its release (``ladder`` itself when none do)."""
    if dispatch is None:
        return ladder
    entries = [e for e in dispatch.dispatch if holds(e, ladder.version)]
    if not entries:
        return ladder
    first: list[Registry] = []
    last: list[Registry] = []
    kernels: dict[str, LadderKernel] = dict(ladder.kernel)
    for e in entries:
        reg = _registry(e, ladder)
        if reg is None:
            continue
        (first if e.place == "first" else last).append(reg)
        for rungs in reg.platforms.values():
            for k in rungs:
                if k not in kernels and k in dispatch.kernel:
                    kernels[k] = dispatch.kernel[k]
    if not first and not last:
        return ladder
    # ``source`` stays the ladder's (``holds_in`` reads its "carried from"): each added registry
    # names its own range (``releases``) and where it was read (``note``)
    return ladder.model_copy(update={"registry": first + list(ladder.registry) + last, "kernel": kernels})


def release_range(releases: str, shipped: list[str], release: str) -> Optional[tuple[str, str]]:
    """First and last of the ``shipped`` releases (oldest first) that ``releases`` admits, as
    one run around ``release``; None when ``release`` is not one of them."""
    try:
        spec = SpecifierSet(releases)
    except InvalidSpecifier:
        return None
    inside = [spec.contains(_v(r), prereleases=True) for r in shipped]
    if release not in shipped or not inside[shipped.index(release)]:
        return None
    i = j = shipped.index(release)
    while i > 0 and inside[i - 1]:
        i -= 1
    while j + 1 < len(shipped) and inside[j + 1]:
        j += 1
    return shipped[i], shipped[j]
