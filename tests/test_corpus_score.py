"""tools/corpus_score.py (the project's port of shared/corpus/eval.py) over the bundled corpus.

Every real labelled log under ``fixtures/`` must score 1.000 on its own; the logs listed in
``fixtures/corpus-known-misses.toml`` are expected failures with their reason, not dropped.
The scoring rules themselves are checked on small hand-made reports, so a change in the
scorer that would make its figures drift from eval.py's fails here.
"""
from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, corpus_params, known_misses, load_tool

cs = load_tool("corpus_score")

PAIRS = cs.labelled_logs(FIXTURES)
LOGS = [log for log, _ in PAIRS]


def test_the_bundled_corpus_is_found_and_real_only():
    names = {f"{log.parent.name}/{log.stem}" for log in LOGS}
    # the 26 first logs, the 12 added to shared/corpus with issue 11, and later batches
    assert {"vllm/vllm-001", "vllm/vllm-029", "sglang/sglang-007", "trtllm/trtllm-003", "llamacpp/llamacpp-002"} <= names
    assert len(LOGS) >= 38
    assert not [n for n in names if "synthetic" in n]
    for log, lab in PAIRS:
        label = json.loads(lab.read_text(encoding="utf-8"))
        assert label["source_url"].startswith("https://"), log
        # usable: false is kept only for a log that measures engine identification alone (issue 16:
        # "the engine is right, or unknown, on every log"): nothing to score, and the label says so
        assert label["usable"] is True or (not label["kernels_logged"] and not label.get("expected_findings")
                                           and "engine" in label.get("notes", "").lower()), log
        # fixtures/other/ holds the negative corpus: logs of neighbouring tools where none of the
        # seven engines ran; its labels name no engine (engine: null, tests/test_negative_corpus.py)
        assert label["engine"] == log.parent.name or (label["engine"] is None and log.parent.name == "other"), log
        text = log.read_text(encoding="utf-8", errors="replace")
        for name in label["kernels_logged"]:
            assert name in text, f"{log}: labelled kernel {name!r} does not occur verbatim"


def test_known_misses_name_bundled_logs():
    names = {f"{log.parent.name}/{log.stem}" for log in LOGS}
    misses = known_misses()
    assert set(misses) <= names
    assert all(reason.strip() for reason in misses.values())


@pytest.mark.parametrize("log", corpus_params(LOGS))
def test_log_scores_one(log):
    label = json.loads(cs.label_of(log).read_text(encoding="utf-8"))
    s = cs.score_report(label, cs.in_process(log))
    assert s.problems == [] and s.figures()["score"] == 1.0


def test_corpus_totals_are_the_sum_of_the_logs():
    total, per_engine, per_log = cs.score_corpus(PAIRS)
    assert total.logs == len(PAIRS) == sum(s.logs for s in per_engine.values())
    assert total.k_all == sum(s.k_all for _, s in per_log)
    assert total.f_exp == sum(s.f_exp for _, s in per_log)
    assert total.crashes == 0
    misses = {f"{log.parent.name}/{log.stem}" for log, s in per_log if not s.perfect}
    # every miss is a listed known miss: an unlisted miss is a regression
    assert misses <= set(known_misses())


def test_matching_rules_are_eval_pys():
    label = {"kernels_logged": ["Marlin", "EMULATION"],
             "expected": [{"kernel": "Marlin", "cost_class": "weight_only"},
                          {"kernel": "EMULATION", "cost_class": "unknown"}],
             "expected_findings": ["WEIGHT_ONLY_SUBSTITUTION"], "optional_findings": ["SLOW_QUANT_METHOD"]}
    report = {"runs": [{"selections": [{"kernel": "MarlinFP8ScaledMMLinearKernel", "cost_class": "weight_only"},
                                       {"kernel": "emulation", "cost_class": "emulated"}],
                        "findings": [{"code": "WEIGHT_ONLY_SUBSTITUTION"}, {"code": "SLOW_QUANT_METHOD"}]}]}
    s = cs.score_report(label, report)
    assert (s.k_hit, s.k_all, s.c_hit, s.c_all, s.f_tp, s.f_rep, s.f_exp) == (2, 2, 1, 1, 1, 1, 1)
    assert s.perfect


def test_a_short_name_matches_only_exactly_and_a_false_finding_costs_precision():
    label = {"kernels_logged": ["CK"], "expected": [{"kernel": "CK", "cost_class": "native"}],
             "expected_findings": []}
    s = cs.score_report(label, {"kernel": "CKFusedMoE", "cost_class": "native", "x": [{"code": "EMULATION"}]})
    assert (s.k_hit, s.c_hit, s.f_rep, s.f_tp) == (0, 0, 1, 0)
    fig = s.figures()
    assert fig["kernel_recall"] == 0.0 and fig["finding_precision"] == 0.0 and fig["finding_recall"] == 1.0
    assert len(s.problems) == 3


def test_a_crash_makes_the_score_zero():
    total = cs.LogScore()
    total.add(cs.score_report({"kernels_logged": [], "expected_findings": []}, {"runs": []}))
    total.add(cs.score_report({"kernels_logged": []}, None))
    assert total.crashes == 1 and total.figures()["score"] == 0.0


def test_cli_prints_per_engine_figures(capsys):
    assert cs.main([str(FIXTURES), "--by-engine", "--only", "llamacpp"]) == 0
    out = capsys.readouterr().out.splitlines()
    n = len([log for log in LOGS if log.parent.name == "llamacpp"])
    engine_lines = [line for line in out if line.startswith("[")]
    assert engine_lines == [line for line in engine_lines if line.startswith(f"[llamacpp] logs={n} ")] != []
    assert out[-1].startswith("score=")
    assert cs.main([str(FIXTURES / "no-such-dir")]) == 2
