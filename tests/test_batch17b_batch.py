"""Corpus batch 17b (docs/corpus.md, "Batch 17b"): llama.cpp, LMDeploy and a ggml program (fixtures/llamacpp/
llamacpp-257, fixtures/lmdeploy/lmdeploy-176, fixtures/other/other-140). First sight 0.875: one false finding,
BACKEND_OVERRIDE_IGNORED on lmdeploy-176, whose command asks '--backend pytorch' and whose log then says
'Fallback to pytorch engine because ... not supported by turbomind engine': nothing the user asked was replaced.

Mechanism: a rule's ``no_finding_when`` (run fact -> regex) drops the rule's finding when the run states that
fact (the launch command's ``lmdeploy_backend_asked``), the line keeping its event and facts
(analysis/statements.as_stated_for). A run that asks TurboMind, or asks nothing, keeps the finding.
"""
from __future__ import annotations

import pytest

from tests.conftest import finding_codes, one_run, runs_of, write_log

FALLBACK = ("2026-04-01 16:16:59,225 - lmdeploy - WARNING - archs.py:45 - Fallback to pytorch engine because "
            "`/m/Qwen3.5-122b-A10B-AWQ` not supported by turbomind engine.\n")


def test_asked_pytorch_backend_is_no_override():
    run = one_run("lmdeploy-176")
    assert "BACKEND_OVERRIDE_IGNORED" not in finding_codes(run)
    assert run["start_failure"] is not None  # the transformers refusal still fails the start


@pytest.mark.parametrize("command, finding", [
    ("lmdeploy serve api_server /m/Qwen3.5-122b-A10B-AWQ --backend pytorch --tp 4\n", False),
    ("lmdeploy serve api_server /m/Qwen3.5-122b-A10B-AWQ --backend turbomind --tp 4\n", True),
    ("lmdeploy serve api_server /m/Qwen3.5-122b-A10B-AWQ --tp 4\n", True),
    ("", True),
])
def test_fallback_finding_follows_the_backend_asked(tmp_path, command, finding):
    runs = runs_of(write_log(tmp_path, command + FALLBACK))
    codes = set().union(*(finding_codes(r) for r in runs))
    assert ("BACKEND_OVERRIDE_IGNORED" in codes) is finding


@pytest.mark.parametrize("name", ["lmdeploy-101", "lmdeploy-142"])
def test_turbomind_runs_keep_the_finding(name):
    assert "BACKEND_OVERRIDE_IGNORED" in finding_codes(one_run(name))


def test_every_no_finding_when_fact_is_set_by_a_rule_of_its_pack(packs):
    # fail closed: a quieting fact no rule of the pack states would silently never apply
    quieted = 0
    for pack in packs.packs.values():
        set_keys = {k for cr in pack.rules for k in cr.rule.sets}
        for cr in pack.rules:
            for key in cr.rule.no_finding_when:
                quieted += 1
                assert key in set_keys, f"{cr.rule.id}: no rule of {pack.engine} sets {key}"
    assert quieted  # the check reads the field it guards (lmdeploy.engine.fallback-pytorch has one)
