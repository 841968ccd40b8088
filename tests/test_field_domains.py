"""A checkpoint field named by several gates is ONE variable of the outcome walk.

vLLM 0.33.0's mixed-precision (W4A16) ladder gates Machete on ``group_size in {-1, 64, 128}``,
Marlin on ``{-1, 32, 64, 128}``, AllSpark on ``{-1}`` ... (vllm/model_executor/kernels/linear/
mixed_precision/*.py ``can_implement``). Read as independent yes/no facts they made worlds
where ``group_size in {-1}`` holds and ``group_size in {-1, 64, 128}`` does not, and a matrix
row of ~700 lines. These tests fail on that reading.
"""
from __future__ import annotations

import json
import re

from click.testing import CliRunner

from logscan.analysis.matrix import NOTE_ALTERNATIVES
from logscan.cli import cli


def _matrix(*args):
    r = CliRunner().invoke(cli, ["matrix", *args, "--format", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_group_size_is_one_variable_in_every_condition():
    vllm = next(w for w in _matrix("W4A16", "--gpu", "H100")["walks"] if w["engine"] == "vllm")
    assert len(vllm["outcomes"]) > 1
    for o in vllm["outcomes"]:
        for alt in o["when"]:
            said = [fact for fact in alt if fact.startswith("group_size")]
            assert len(said) <= 1, (o["kernel"], alt)  # one statement of the field per world
            assert not any(re.search(r"group_size in \{[^}]*\} (holds|does not hold)", f) for f in alt), alt


def test_no_world_gives_two_outcomes_the_same_group_size_alone():
    # the walk is a partition: Machete's world (group_size in {-1, 64, 128} and both shapes hold)
    # is never also a Marlin world
    vllm = next(w for w in _matrix("W4A16", "--gpu", "H100")["walks"] if w["engine"] == "vllm")
    first = vllm["outcomes"][0]
    assert first["kernel"] == "MacheteLinearKernel"
    assert first["when"] and all(any(f.startswith("group_size in {-1, 64, 128}") for f in alt) for alt in first["when"])


def test_matrix_note_spells_out_at_most_the_limit_and_counts_the_rest():
    d = _matrix("W4A16", "--gpu", "H100")
    vllm = next(w for w in d["walks"] if w["engine"] == "vllm")
    note = {r["engine"]: r for r in d["rows"]}["vllm"]["note"]
    assert "other case" in note and "logscan ladder ENGINE SCHEME" in note
    spelled = note.count("if ")
    assert spelled <= NOTE_ALTERNATIVES * len(vllm["outcomes"])
    assert spelled < sum(len(o["when"]) for o in vllm["outcomes"])  # the rest is counted, not spelled


def test_given_group_size_decides_without_a_split():
    w = next(w for w in _matrix("W4A16", "--gpu", "H100", "--group-size", "32")["walks"] if w["engine"] == "vllm")
    assert w["outcomes"]
    assert all(not f.startswith("group_size") for o in w["outcomes"] for alt in o["when"] for f in alt)
    assert all(o["kernel"] != "MacheteLinearKernel" for o in w["outcomes"])  # Machete takes -1/64/128 only
