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
ARTIFACTS: set[tuple[str, str]] = {
    # a paste already flattened to one 1000-character line (its own line ends lost): cut at 120,
    # pieces begin with '(SGLangWorker pid=...)' tags and are read as lines of their own, which
    # is what the engine printed; the failed start it then shows the flattened line hides
    ("hard-wrap-120", "sglang-107.log"),
} | {
    # sglang-101 is itself a paste hard-wrapped at 235 columns (sources/rewrap.py joins its
    # pieces, so its run ends at the last piece, line 5). A presentation that puts a prefix on
    # every line puts one on each piece too, as if the engine had printed them as lines (a
    # terminal wraps the prefixed line instead): the cut is then not joined and the run ends at
    # line 4, the last piece's line before it. Only the span differs; the score is the same.
    (name, "sglang-101.log") for name in (
        "markdown-quote", "compose", "kubectl-timestamps", "journald", "cri", "docker-json",
        "github-actions", "grafana-loki", "relay-bracketed", "indent-4")
}
#: hard-wrap losses of a log with ONE line cut ONCE: a single cut is no evidence of a width
#: (``sources/rewrap.CONFIRM``; a natural line as long as the longest followed by an unprefixed
#: line looks the same); ``test_a_single_cut_is_the_only_wrap_left_unjoined`` checks each
SINGLE_CUT: set[tuple[str, str]] = {
    ("hard-wrap-120", f"{stem}.log") for stem in (
        "llamacpp-111", "llamacpp-130", "llamacpp-134", "llamacpp-135", "sglang-006", "sglang-007",
        "trtllm-167", "vllm-003", "vllm-107", "vllm-136", "vllm-382")
} | {("hard-wrap-160", "sglang-104.log"), ("hard-wrap-160", "trtllm-001.log"), ("hard-wrap-200", "sglang-104.log"),
     ("hard-wrap-160", "llamacpp-267.log"), ("hard-wrap-200", "llamacpp-267.log")}  # batch 18a/18b: one-line windows

_PAIRS = cov.scored_pairs(FIXTURES)
_RESULTS = cov.measure(_PAIRS, cov.DEFAULT + list(cov.WRAPS))


def test_the_corpus_has_logs_to_score():
    assert len(_PAIRS) >= 150


@pytest.mark.parametrize("name", [n for n in cov.DEFAULT if n != "as-printed"])
def test_no_log_loses_its_score_under_a_presentation(name):
    _total, lost = _RESULTS[name]
    unexplained = [(log, problems) for log, problems in lost if (name, log) not in ARTIFACTS]
    assert not unexplained, f"{name}: {unexplained}"


@pytest.mark.parametrize("name", list(cov.WRAPS))
def test_a_hard_wrapped_paste_is_rejoined(name):
    """A terminal's hard wrap at 120/160/200 columns loses nothing but single cuts
    (sources/rewrap.py), and adds no false finding."""
    total, lost = _RESULTS[name]
    unexplained = [(log, problems) for log, problems in lost
                   if (name, log) not in ARTIFACTS and (name, log) not in SINGLE_CUT]
    assert not unexplained, f"{name}: {unexplained}"
    assert total.figures()["finding_precision"] == 1.0
    assert total.figures()["kernel_recall"] == 1.0


def test_a_single_cut_is_the_only_wrap_left_unjoined():
    """Each SINGLE_CUT log has exactly one line longer than the width, cut once."""
    logs = {log.name: log for log, _ in _PAIRS}
    for name, log in SINGLE_CUT:
        width = int(name.rsplit("-", 1)[1])
        long = [len(line) for line in logs[log].read_text(encoding="utf-8", errors="replace").split("\n")
                if len(line) > width]
        assert len(long) == 1 and long[0] <= 2 * width, (name, log, long)


def test_every_listed_artifact_still_loses_something():
    """An artifact (or single cut) that no longer loses is stale: drop it from the list."""
    for name, log in ARTIFACTS | SINGLE_CUT:
        assert log in {lost_log for lost_log, _ in _RESULTS[name][1]}, (name, log)


def test_a_presentation_changes_every_line_and_keeps_its_words():
    text = "INFO 06-15 00:04:48 api_server.py:177] vLLM API server version 0.5.5\nUsing exllama kernels v1\n"
    for name in cov.DEFAULT:
        out = cov.present(text, cov.PRESENTATIONS[name])
        assert out.count("\n") == 2, name
        assert "vLLM API server version 0.5.5" in out and "Using exllama kernels v1" in out, name
        assert (out == text) == (name == "as-printed"), name
