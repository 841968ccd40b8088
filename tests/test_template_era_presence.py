"""Template-history era hints: a template's first release (presence) outweighs its last (absence).

The history keeps only the most specific template per rule example, so a sentence a later release
prints through a vaguer template looks as if it ended (tools/derive_templates.release_rule_templates).
sglang-236 (Mar 2026) holds three such literal templates that end at 0.5.1.post3 and 'Using KV cache
dtype' (0.5.3 ->): the era must come out 0.5.3 .., not 0.4.6.post1 .. 0.5.1.post3.
"""
from __future__ import annotations

from packaging.version import Version

from logscan.analysis.template_era import TemplateHistory, _presence_first
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _engine(log: str):
    (run,) = scan_inputs([str(FIXTURES / "sglang" / f"{log}.log")]).runs
    return run.engine


def test_sglang_236_era_follows_the_newest_first_release():
    eng = _engine("sglang-236")
    lo, hi = eng.release_range
    assert Version(lo) >= Version("0.5.3"), eng.version_evidence
    assert Version(hi) >= Version("0.5.10")  # Mar 2026: at least 0.5.9 / 0.5.10 were out
    assert "absence after 0.5.1.post3 not counted" in eng.version_evidence


def _hist():
    return TemplateHistory(["1", "2", "3", "4", "5"])


def test_ends_are_lifted_only_against_a_newer_first_release():
    th = _hist()
    old = ("old sentence", frozenset({"1", "2"}))
    new = ("new sentence", frozenset({"4", "5"}))
    got = {t: lift for t, _, lift in _presence_first(th, [old, new], ["1", "3", "5"])}
    assert got["old sentence"] == frozenset({"3", "4", "5"}) and got["new sentence"] == frozenset()


def test_agreeing_templates_keep_their_ends():
    th = _hist()
    a = ("a", frozenset({"1", "2", "3"}))
    b = ("b", frozenset({"2", "3", "4"}))
    assert all(not lift for _, _, lift in _presence_first(th, [a, b], ["1", "5"]))
    assert all(not lift for _, _, lift in _presence_first(th, [a], ["1", "5"]))
