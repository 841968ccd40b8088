"""The bundled real logs keep their score under every way a user pastes or ships a log.

``tools/presentation_coverage.py`` applies one presentation (a Markdown quote, docker compose's
``name  | ``, ``kubectl logs --timestamps``' RFC 3339 stamp, journald, CRLF, CRI and Docker JSON
records) to every line of each labelled log that has something to score, and scores it. A log that
scores lower under a presentation means the source layer misses that wrapper on a real log.
"""
from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, load_tool

cov = load_tool("presentation_coverage")

#: (presentation, log) pairs that lose something for a reason of the transform, not of logscan
ARTIFACTS: set[tuple[str, str]] = set()  # none today (lmdeploy-148's typed command read under a stamp too)

_PAIRS = cov.scored_pairs(FIXTURES)
_RESULTS = cov.measure(_PAIRS, cov.DEFAULT)


def test_the_corpus_has_logs_to_score():
    assert len(_PAIRS) >= 150


@pytest.mark.parametrize("name", [n for n in cov.DEFAULT if n != "as-printed"])
def test_no_log_loses_its_score_under_a_presentation(name):
    _total, lost = _RESULTS[name]
    unexplained = [(log, problems) for log, problems in lost if (name, log) not in ARTIFACTS]
    assert not unexplained, f"{name}: {unexplained}"


def test_every_listed_artifact_still_loses_something():
    """An artifact that no longer loses is stale: drop it from the list."""
    for name, log in ARTIFACTS:
        assert log in {lost_log for lost_log, _ in _RESULTS[name][1]}, (name, log)


def test_a_presentation_changes_every_line_and_keeps_its_words():
    text = "INFO 06-15 00:04:48 api_server.py:177] vLLM API server version 0.5.5\nUsing exllama kernels v1\n"
    for name in cov.DEFAULT:
        out = cov.present(text, cov.PRESENTATIONS[name])
        assert out.count("\n") == 2, name
        assert "vLLM API server version 0.5.5" in out and "Using exllama kernels v1" in out, name
        assert (out == text) == (name == "as-printed"), name
