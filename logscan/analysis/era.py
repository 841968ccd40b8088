"""Infer the engine release of a log that prints no usable version, from era hints.

An era hint is one thing seen in the log that only some releases print: a line-prefix or
process-tag format (``pack.toml`` ``versions``), a rule whose template exists only in some
releases (rule ``versions``), or a kernel class name that only some releases' ladders hold.
Each hint is a set of releases; the releases that satisfy the most hints win (ties: all of
them are reported, the newest is used for the ladder). Hints that disagree with the winners
are named, so the report never hides contradicting evidence.
"""
from __future__ import annotations

from typing import Callable, Optional

from packaging.specifiers import SpecifierSet

from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..packs.model_history import _v


#: ``Version(rel)`` parsed once per release name (``packs.model_history._v``): closing a run weighs
#: every era hint against every known release (a crash loop of 760 runs parsed 386k Versions)
release_version = _v


#: id(spec) -> (spec, {release: in spec}): the specifiers are the compiled rules' and prefixes'
#: (long-lived); keyed by identity because hashing a SpecifierSet costs more than the answer
_SPEC_MEMO: dict[int, tuple[SpecifierSet, dict[str, bool]]] = {}


def spec_allows(spec: SpecifierSet, rel: str) -> bool:
    """Whether release ``rel`` is in ``spec``, answered once per (spec, release) (``EraHint.from_spec``)."""
    got = _SPEC_MEMO.get(id(spec))
    if got is None or got[0] is not spec:
        if len(_SPEC_MEMO) > 4096:
            _SPEC_MEMO.clear()
        got = _SPEC_MEMO[id(spec)] = (spec, {})
    memo = got[1]
    ans = memo.get(rel)
    if ans is None:
        ans = memo[rel] = release_version(rel) in spec
    return ans


@dataclass(frozen=True)
class EraHint:
    """One piece of era evidence: what was seen (``why``) and the releases it allows."""

    why: str
    allows: Callable[[str], bool]

    @classmethod
    def from_spec(cls, why: str, spec: SpecifierSet) -> "EraHint":
        """A hint from a PEP 440 specifier (rule or prefix ``versions``)."""
        return cls(why, lambda rel, s=spec: spec_allows(s, rel))

    @classmethod
    def from_releases(cls, why: str, releases: frozenset[str]) -> "EraHint":
        """A hint from an explicit release set (e.g. the ladders that hold a kernel class)."""
        return cls(why, lambda rel, r=releases: rel in r)


@dataclass(frozen=True)
class EraGuess:
    """Result of ``infer_release``: fitting releases (oldest first), evidence, disagreeing hints."""

    releases: list[str]
    evidence: list[str]
    disagreeing: list[str]
    #: the oldest release the candidates hold: a range that starts there may reach further back
    #: (a 0.5.3 log fits "0.5.5 .. 0.7.3" only because nothing older is known; new-user trial)
    oldest_known: Optional[str] = None
    #: no release satisfies every hint that voted: the winners are a tie of releases each fitting only
    #: some of them (two era-specific tags of disjoint ranges), so the range is no release's
    split: bool = False

    @property
    def newest(self) -> str:
        return self.releases[-1]

    def describe(self) -> str:
        """``releases A .. B fit: hint; hint`` plus the hints that do not fit, if any."""
        lo, hi = self.releases[0], self.releases[-1]
        rng = lo if lo == hi else f"{lo} .. {hi}"
        older = (f" (or older: {lo} is the oldest release logscan holds)"
                 if self.oldest_known is not None and lo == self.oldest_known else "")
        if self.split:
            text = (f"releases {rng}{older} each fit only some of the hints, no release fits them all "
                    f"(the hints disagree; the ladder read with is a guess): " + "; ".join(self.evidence))
        else:
            text = f"releases {rng}{older} fit: " + "; ".join(self.evidence)
        if self.disagreeing:
            text += " (disagreeing, outvoted: " + "; ".join(self.disagreeing) + ")"
        return text


def infer_release(hints: list[EraHint], known: list[str]) -> Optional[EraGuess]:
    """Pick the ``known`` releases (sorted oldest first) that satisfy the most ``hints``.

    Returns None when there is no hint or no release satisfies any of them.
    """
    if not hints:
        return None
    scores = {rel: sum(1 for h in hints if h.allows(rel)) for rel in known}
    best = max(scores.values(), default=0)
    if best == 0:
        return None
    winners = [rel for rel in known if scores[rel] == best]
    agree = [h.why for h in hints if any(h.allows(r) for r in winners)]
    disagree = [h.why for h in hints if not any(h.allows(r) for r in winners)]
    # every winner fits ``best`` hints; fewer than the hints that fit some winner: a tie of releases that
    # each fit a different subset, so no release fits all the hints the range is built on
    split = best < len(agree)
    return EraGuess(winners, agree, disagree, known[0] if known else None, split)
