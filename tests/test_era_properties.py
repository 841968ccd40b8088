"""Properties of release picking and era inference (hypothesis): no hard-coded answers.

- ``pick_release(v)`` is the newest shipped ladder not newer than ``v``;
- ``infer_release`` returns releases that satisfy the most hints, names every hint either as
  fitting or as outvoted, and never invents a release outside the candidates.
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from logscan.analysis.analyzer import candidate_releases
from logscan.packs.loader import default_packs

KNOWN_RELEASES = candidate_releases(default_packs().packs["vllm"])
from logscan.analysis.era import EraHint, infer_release
from logscan.analysis.ladders import LadderIndex
from logscan.packs.loader import default_packs

IDX = LadderIndex(default_packs().packs["vllm"])

versions = st.builds(lambda a, b, c: Version(f"0.{a}.{b}" + (f".post{c}" if c else "")),
                     st.integers(0, 40), st.integers(0, 12), st.integers(0, 2))


@settings(max_examples=200, deadline=None)
@given(versions)
def test_pick_release_is_newest_shipped_not_newer(v):
    got = IDX.pick_release(v)
    older = [r for r in IDX.releases if Version(r) <= v]
    if not older:
        assert got is None
    else:
        assert got == max(older, key=Version)


spec_texts = st.sampled_from([">=0.6.6", "<0.8", ">=0.8", ">=0.10.2", "<0.11", ">=0.14.1", ">=0.18.1",
                              ">=0.10.2,<0.22", ">=0.22.1", "<0.10", ">=0.26.0", ">=0.33.0", ">=0.7.3,<0.15"])
release_sets = st.frozensets(st.sampled_from(KNOWN_RELEASES), min_size=1, max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(spec_texts.map(lambda s: EraHint.from_spec(s, SpecifierSet(s))),
                          release_sets.map(lambda r: EraHint.from_releases(",".join(sorted(r)), r))),
                min_size=1, max_size=6))
def test_inference_picks_the_releases_with_most_hints(hints):
    guess = infer_release(hints, KNOWN_RELEASES)
    scores = {rel: sum(h.allows(rel) for h in hints) for rel in KNOWN_RELEASES}
    best = max(scores.values())
    if best == 0:
        assert guess is None
        return
    assert guess is not None
    assert guess.releases == [r for r in KNOWN_RELEASES if scores[r] == best]
    assert guess.newest == guess.releases[-1]
    # every hint is accounted for: fitting (evidence) or outvoted (disagreeing), never both
    assert set(guess.evidence).isdisjoint(guess.disagreeing) or len(hints) != len(set(h.why for h in hints))
    assert {h.why for h in hints} == set(guess.evidence) | set(guess.disagreeing)
    text = guess.describe()
    assert text.startswith("releases ")
    if guess.disagreeing:
        assert "outvoted" in text
