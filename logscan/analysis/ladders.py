"""Place a logged kernel name on its engine release's ordered fallback ladder.

Ladders are the shipped ``patterns/<engine>/ladders/<release>.toml`` files (vLLM: the
``_POSSIBLE_*KERNELS`` registries and MoE oracle priority lists, extracted with ``ast`` from
each release) plus ``ladder-history.toml``, which gives every release's own orderings (see
``logscan/packs/history.py``). ``LadderIndex.pick_release`` chooses the engine's own release
when shipped (else the newest shipped not newer); ``LadderIndex.place`` finds the registry and
rung of a name and the release range in which that list holds (``holds_in``).
"""
from __future__ import annotations

import functools
from typing import Optional

import regex
from packaging.version import InvalidVersion, Version

from .. import rxcache
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..models import CostClass, LadderPosition, RungElsewhere
from ..packs.history import release_span
from ..packs.loader import Pack
from ..packs.model import LadderFile, Registry
from ..packs.model_history import _v  # ``Version(text)`` parsed once per text (re-exported)


def role_registries(ladder: LadderFile, hint: Optional[str]) -> list[Registry]:
    """The kernel registries of ``ladder`` (not attention) whose role the regex ``hint`` matches
    (case-insensitive; every one for no hint or a hint that is no regex), in ladder order."""
    hint_re = None
    if hint:
        try:
            hint_re = rxcache.compile(hint, regex.I)
        except regex.error:
            hint_re = None
    return [r for r in ladder.registry if r.kind != "attention" and (hint_re is None or hint_re.search(r.role))]


_NOT_ALNUM = rxcache.compile(r"[^a-z0-9]")


@functools.lru_cache(maxsize=8192)
def norm(name: str) -> str:
    """Compare names ignoring case and punctuation: ``flashinfer-cutlass`` == ``FLASHINFER_CUTLASS``.

    Memoised: placing a run's kernels asks for the same few hundred names thousands of times."""
    return _NOT_ALNUM.sub("", name.lower())


def parse_version(text: Optional[str]) -> Optional[Version]:
    """``0.10.1.1`` -> Version; a leading ``v`` is dropped; None for unparsable or dev ``0.1.devN`` builds."""
    if not text:
        return None
    try:
        v = _v(text.lstrip("vV"))
    except InvalidVersion:
        return None
    if v.release[:2] == (0, 1) and v.is_devrelease:  # setuptools-scm build from a source checkout
        return None
    return v


@dataclass
class Placement:
    """Result of ``LadderIndex.place``: the position and the cost class it implies."""

    position: LadderPosition
    cost_class: CostClass
    registry: Registry


class LadderIndex:
    """All shipped ladders of one engine, by release."""

    def __init__(self, pack: Pack):
        self.pack = pack

    def __getattr__(self, name: str):
        # built on first use: listing the releases reads the pack's ladder history, which a
        # run of another engine never needs (start-up cost)
        if name not in ("releases", "history", "_class_releases") or "pack" not in self.__dict__:
            raise AttributeError(name)
        self._build()
        return self.__dict__[name]

    def _build(self) -> None:
        pack = self.pack
        self.releases = sorted(pack.ladders, key=_v)
        self.history = getattr(pack.ladders, "history", None)
        snapshots = getattr(pack.ladders, "snapshots", pack.ladders)
        #: normalised kernel class name (or its logged alias) -> releases whose ladders hold it
        self._class_releases: dict[str, set[str]] = {}
        aliases: dict[str, list[str]] = {}
        snap_order = sorted(snapshots, key=_v)
        # a release between two snapshots may hold a class either holds: only the snapshots
        # were read for kernel tables, so neither neighbour's evidence excludes it
        between: dict[str, set[str]] = {s: {s} for s in snap_order}
        for rel in self.releases:
            if rel in between:
                continue
            lo = [x for x in snap_order if _v(x) < _v(rel)]
            hi = [x for x in snap_order if _v(x) > _v(rel)]
            for s in (lo[-1:] + hi[:1]):
                between[s].add(rel)
        exact: dict[str, list[tuple[str, list[str]]]] = {}  # linear class -> (first, last) spans
        if self.history is not None:  # linear rungs are classes; MoE rungs are enum members
            rels = self.history.releases
            for reg in self.history.file.registry:
                # a history that lists every rung in every release (TGI's hand-kept eras): its
                # if/elif rungs hold exactly where its orderings say, not in a neighbour's span
                if reg.kind == "linear" or (self.history.file.exact_rungs and reg.orderings):
                    for o in reg.orderings:
                        span = rels[self.history.index[o.first]: self.history.index[o.last] + 1]
                        for cls in o.rungs:
                            exact.setdefault(cls, []).append(span)
        for rel, ladder in snapshots.items():
            for cls, k in ladder.kernel.items():
                aliases.setdefault(cls, list(k.aliases))
                held = {rel} if cls in exact else between[rel]
                for name in [cls, *k.aliases]:
                    self._class_releases.setdefault(norm(name), set()).update(held)
        for cls, spans in exact.items():
            for name in [cls, *aliases.get(cls, ())]:
                for span in spans:
                    self._class_releases.setdefault(norm(name), set()).update(span)

    def releases_holding_class(self, name: str) -> set[str]:
        """Shipped releases whose ladders define the kernel class ``name`` (exact, case/punctuation-insensitive).

        Enum members such as ``MARLIN`` are not classes and give the empty set: they say
        nothing of the era. Used as an era hint by version inference.
        """
        return set(self._class_releases.get(norm(name), ()))

    def platforms_holding(self, release: str, name: str) -> set[str]:
        """Platforms whose lists in ``release`` hold ``name`` exactly (no substring match)."""
        ladder = self.pack.ladders.get(release)
        if ladder is None:
            return set()
        n = norm(name)
        out: set[str] = set()
        for reg in ladder.registry:
            # a hand-kept dispatch (dispatch.toml) names code paths by generic labels ('Marlin'
            # for FP8 Marlin): no evidence of the platform a line of another family ran on
            if reg.kind == "attention" or reg.releases:
                continue
            target = reg.aliases.get(name)
            for p, rungs in reg.platforms.items():
                for r in rungs:
                    k = ladder.kernel.get(r)
                    if r == target or norm(r) == n or (k and any(norm(a) == n for a in k.aliases)):
                        out.add(p)
                        break
        return out

    def pick_release(self, version: Optional[Version]) -> Optional[str]:
        """Newest shipped ladder release <= ``version``; the newest of all when ``version`` is None.

        Returns None when ``version`` predates every shipped ladder (e.g. vLLM 0.5.x, which had
        no kernel registry).
        """
        if not self.releases:
            return None
        if version is None:
            return self.releases[-1]
        best = None
        for rel in self.releases:
            if _v(rel) <= version:
                best = rel
        return best

    def nearest(self, version: Version) -> tuple[Optional[str], Optional[str]]:
        """The shipped releases right before and right after ``version`` (None at either end)."""
        older = [r for r in self.releases if _v(r) < version]
        newer = [r for r in self.releases if _v(r) > version]
        return (older[-1] if older else None), (newer[0] if newer else None)

    def exact(self, version: str) -> Optional[str]:
        """The shipped release equal to ``version`` (``0.31`` == ``0.31.0``); None if not shipped."""
        v = parse_version(version)
        return next((r for r in self.releases if v is not None and _v(r) == v), None)

    def holds_in(self, release: str, registry: Registry, platform: str) -> str:
        """The release range in which ``registry``'s ``platform`` list is the one of ``release``.

        From the history for registries derived from source (vLLM's ``linear`` and ``moe``
        lists, SGLang's if/elif chains); any other registry is known only at the snapshot it
        was read from, which is named.
        """
        if registry.releases:  # a hand-kept dispatch registry: the shipped releases its range admits
            from ..packs.dispatch import release_range

            got = release_range(registry.releases, sorted(self.pack.ladders, key=_v), release)
            if got is not None:
                return release_span(*got)
        if self.history is not None and (registry.kind in ("linear", "moe") or registry.name in self.history.derived):
            span = self.history.span(release, registry.name, platform)
            if span is not None:
                return release_span(*span)
        base = self.pack.ladders[release].version if release in self.pack.ladders else release
        snaps = getattr(self.pack.ladders, "snapshots", {})
        if release in snaps or not snaps:
            return base
        src = self.pack.ladders[release].source
        read_at = src.rsplit("carried from ", 1)[-1] if "carried from " in src else release
        return f"{release} (as read in {read_at})"

    @functools.cached_property
    def _elsewhere_memo(self) -> dict:
        """``elsewhere``'s answers by its arguments, one dict per index (cleared past 4,096 keys)."""
        return {}

    @functools.cached_property
    def _fitting_memo(self) -> dict:
        """``logged_ladder.fitting_releases``' answers, one dict per index (cleared past 1,024 keys)."""
        return {}

    def elsewhere(self, releases: list[str], chosen: Placement, name: str, hint: Optional[str],
                  platform: Optional[str], quantization: Optional[str] = None
                  ) -> tuple[list[RungElsewhere], Optional[str]]:
        """Where ``name`` sits in the other ``releases`` (an inferred range), when they disagree,
        and then the releases of the range no shipped ladder of which holds it (``0.10.2–0.18.0``,
        spans joined by ", "; None when every one does): ``([], None)`` when all agree.

        Consecutive releases with the same (registry, rung, rungs) form one entry; the entry of
        ``chosen`` is left out. Memoised per index on its arguments (``chosen`` only by its ladder
        release): a crash loop asks the same thousands of times (bench/crashloop.py).
        """
        memo = self._elsewhere_memo
        key = (tuple(releases), chosen.position.ladder_version, name, hint, platform, quantization)
        if key not in memo:
            if len(memo) > 4096:
                memo.clear()
            got, unplaced = self._elsewhere(releases, chosen, name, hint, platform, quantization)
            memo[key] = tuple((e.releases, e.rung, e.rungs, e.registry) for e in got), unplaced
        entries, unplaced = memo[key]
        return [RungElsewhere(releases=r, rung=n, rungs=k, registry=g) for r, n, k, g in entries], unplaced

    def _elsewhere(self, releases: list[str], chosen: Placement, name: str, hint: Optional[str],
                   platform: Optional[str], quantization: Optional[str] = None
                   ) -> tuple[list[RungElsewhere], Optional[str]]:
        groups: list[tuple[tuple, list[str]]] = []
        unplaced: list[list[str]] = []  # runs of consecutive releases no shipped ladder places it in
        last = None
        for rel in sorted(releases, key=_v):
            got = self._locate(rel, name, hint, platform, quantization) if rel in self.pack.ladders else None
            if got is None:
                if unplaced and unplaced[-1][-1] == last:
                    unplaced[-1].append(rel)
                else:
                    unplaced.append([rel])
                last = rel
                continue
            last = rel
            reg, plat, rungs, i = got
            holds = self.holds_in(rel, reg, plat)
            # a registry not derived from source is known only at snapshots: group by the one read
            read = holds.partition(" (as read in ")[2].rstrip(")") if holds else ""
            key = (reg.name, i + 1, len(rungs), read)
            if groups and groups[-1][0] == key:
                groups[-1][1].append(rel)
            else:
                groups.append((key, [rel]))
        if len({k[:3] for k, _ in groups}) < 2:
            return [], None
        return ([RungElsewhere(releases=release_span(rs[0], rs[-1]) + (f" (as read in {k[3]})" if k[3] else ""),
                               rung=k[1], rungs=k[2], registry=k[0])
                 for k, rs in groups if chosen.position.ladder_version not in rs],
                ", ".join(release_span(rs[0], rs[-1]) for rs in unplaced) or None)

    def is_composed(self, release: str) -> bool:
        """True when ``release``'s ladder is composed from the history (its if-chain and
        attention registries are carried from an older snapshot, not read from it)."""
        snaps = getattr(self.pack.ladders, "snapshots", None)
        return snaps is not None and release in self.pack.ladders and release not in snaps

    def next_release(self, release: str) -> Optional[str]:
        """The detailed snapshot release right after ``release`` (None for the newest)."""
        snaps = getattr(self.pack.ladders, "snapshots", self.pack.ladders)
        later = [r for r in sorted(snaps, key=_v) if _v(r) > _v(release)]
        return later[0] if later else None

    @staticmethod
    def _find(rungs: list[str], reg: Registry, ladder: LadderFile, name: str) -> Optional[int]:
        n = norm(name)
        if not n:
            return None
        target = reg.aliases.get(name)
        for i, r in enumerate(rungs):
            if r == name or r == target or norm(r) == n:
                return i
            k = ladder.kernel.get(r)
            if k and any(norm(a) == n for a in k.aliases):
                return i
        for alias, member in reg.aliases.items():
            if norm(alias) == n and member in rungs:
                return rungs.index(member)
        if len(n) >= 4:  # a short logged label ("Cutlass"): the least-qualified rung holding it wins
            hits = [(len(norm(r)), i) for i, r in enumerate(rungs) if n in norm(r)]
            if hits:
                return min(hits)[1]
        return None

    def holders(self, release: Optional[str], name: str) -> list[str]:
        """Names of the registries of ``release`` (attention ones left out) that hold ``name``
        exactly: a rung, a registry alias or a kernel alias (not ``place``'s short-label guess,
        'Cutlass' inside a class name); ``[]`` for a release with no shipped ladder."""
        ladder = self.pack.ladders.get(release) if release else None
        if ladder is None:
            return []
        n = norm(name)
        out = []
        for reg in ladder.registry:
            if reg.kind == "attention" or not n:
                continue
            rungs = {r for rs in reg.platforms.values() for r in rs}
            if (name in rungs or reg.aliases.get(name) in rungs or any(norm(r) == n for r in rungs)
                    or any(norm(a) == n and m in rungs for a, m in reg.aliases.items())
                    or any(norm(a) == n for r in rungs for a in (ladder.kernel[r].aliases if r in ladder.kernel else ()))):
                out.append(reg.name)
        return out

    def _locate(self, release: str, name: str, hint: Optional[str], platform: Optional[str],
                quantization: Optional[str] = None) -> Optional[tuple[Registry, str, list[str], int]]:
        """``(registry, platform, rungs, index)`` of the list of ``release`` that ``place`` puts
        ``name`` on (same arguments, same order of preference), or None; without the cost class
        and the skipped rungs, which ``elsewhere`` does not need."""
        ladder = self.pack.ladders[release]
        plat = (platform or "CUDA").upper()
        regs = role_registries(ladder, hint)
        # a hand-kept dispatch registry (dispatch.toml) after the release's own lists: a logged
        # registry choice ('Selected CutlassFP8ScaledMMLinearKernel for Fp8LinearMethod', made
        # even when 0.15.0 .. 0.18.1 then run Marlin) is that registry's rung; the dispatch
        # places what no list holds (FP8 Marlin before 0.19.0)
        regs.sort(key=lambda r: bool(r.releases))
        if quantization:
            def rank(r: Registry) -> int:
                if not r.quantization:
                    return 1
                try:
                    return 0 if rxcache.search(r.quantization, quantization, regex.I) else 2
                except regex.error:
                    return 1
            regs.sort(key=rank)  # stable: source order within each group
        for want_plat in (plat, "ANY", None):
            for reg in regs:
                for p, rungs in reg.platforms.items():
                    if want_plat is not None and p != want_plat:
                        continue
                    i = self._find(rungs, reg, ladder, name)
                    if i is not None:
                        return reg, p, rungs, i
        return None

    def place(self, release: Optional[str], name: str, hint: Optional[str], platform: Optional[str],
              quantization: Optional[str] = None, machine=None,
              disabled: Optional[dict[str, str]] = None) -> Optional[Placement]:
        """Find ``name`` on a ladder of ``release`` whose role matches the regex ``hint``.

        ``platform`` (CUDA, ROCM, XPU, CPU) is preferred; ``ANY`` lists serve every platform.
        ``quantization`` (the run's method) puts registries whose ``quantization`` regex matches
        it first and those whose regex does not match last. Returns None when no registry of
        that release holds the name. ``fell`` / ``above`` name only the skipped rungs better by
        cost class that could have passed on ``machine`` (``fell.better_skipped``; default: only
        the platform known), each with its gate in ``stopped_by`` (or the log's switch that
        disabled it: ``disabled``, kernel class -> switch name).
        """
        from .fell import better_skipped
        from .gates import Machine

        if release is None:
            return None
        got = self._locate(release, name, hint, platform, quantization)
        if got is None:
            return None
        reg, p, rungs, i = got
        ladder = self.pack.ladders[release]
        plat = (platform or "CUDA").upper()
        rung = rungs[i]
        k = ladder.kernel.get(rung)
        cost = reg.cost.get(rung) or (k.cost_class if k else "unknown")
        m = machine or Machine(platform=plat if p == "ANY" else p)
        refused: dict[str, str] = {}
        stopped = better_skipped(ladder, reg, rungs, i, cost, m, disabled, refused)
        pos = LadderPosition(
            registry=reg.name, role=reg.role, platform=p, ladder_version=release,
            rung=i + 1, rungs=len(rungs), fell=len(stopped), kernel_class=rung,
            above=list(stopped), stopped_by=stopped,
            min_capability=k.min_capability if k else None, gate=(k.gate or None) if k else None,
            holds_in=self.holds_in(release, reg, p), refused_on_gpu=refused or None,
        )
        return Placement(pos, CostClass(cost), reg)
