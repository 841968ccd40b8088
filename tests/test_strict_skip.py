"""A line whose analysis raises is a counted skip for users, and a failure under tests.

``pipeline._SKIP`` keeps a user's pipeline from a traceback; of those exceptions, the ones a
programming error raises (KeyError, TypeError, IndexError) re-raise under ``LOGSCAN_STRICT=1``,
which tests/conftest.py sets, so that a bug cannot pass as a skipped line (LINES_NOT_READ).
"""
from __future__ import annotations

import pytest

from logscan.analysis.analyzer import Analyzer
from logscan.pipeline import Pipeline, strict
from tests.conftest import FIXTURES

LOG = FIXTURES / "vllm" / "vllm-005.log"  # a real log with kernel lines (Marlin, weight-only FP4)


def _feed_all(packs) -> Pipeline:
    pipe = Pipeline(packs, source=str(LOG))
    for n, line in enumerate(LOG.read_text(encoding="utf-8").splitlines(), 1):
        list(pipe.feed(n, line))
    list(pipe.close())
    return pipe


def _raising(exc: BaseException):
    def feed(self, ev, *hint):
        raise exc
        yield  # a generator, as Analyzer.feed is
    return feed


def test_the_tests_run_strict():
    assert strict()


@pytest.mark.parametrize("exc", [KeyError("family"), TypeError("unhashable"), IndexError("list index")],
                         ids=lambda e: type(e).__name__)
def test_a_programming_error_raises_under_strict(packs, monkeypatch, exc):
    monkeypatch.setattr(Analyzer, "feed", _raising(exc))
    with pytest.raises(type(exc)):
        _feed_all(packs)


@pytest.mark.parametrize("exc", [KeyError("family"), TypeError("unhashable"), IndexError("list index")],
                         ids=lambda e: type(e).__name__)
def test_without_strict_the_same_error_is_a_counted_skip(packs, monkeypatch, exc):
    monkeypatch.setenv("LOGSCAN_STRICT", "0")
    monkeypatch.setattr(Analyzer, "feed", _raising(exc))
    pipe = _feed_all(packs)
    assert pipe.skipped_lines > 0 and pipe.skip_reason.split(": ")[1] == type(exc).__name__


def test_a_value_past_a_bound_stays_a_skip_under_strict(packs, monkeypatch):
    """Hostile input (ValueError: a number past a parser bound) is no bug: a skip either way."""
    monkeypatch.setattr(Analyzer, "feed", _raising(ValueError("too many digits")))
    pipe = _feed_all(packs)
    assert pipe.skipped_lines > 0 and "ValueError: too many digits" in pipe.skip_reason
