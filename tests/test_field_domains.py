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

from logscan.analysis.matrix import NOTE_MAX_CHARS
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


def test_matrix_note_stays_a_cell_and_names_every_other_outcome():
    d = _matrix("W4A16", "--gpu", "H100")
    vllm = next(w for w in d["walks"] if w["engine"] == "vllm")
    note = {r["engine"]: r for r in d["rows"]}["vllm"]["note"]
    assert len(note) < 2 * NOTE_MAX_CHARS  # was ~60,000 characters with every alternative spelled out
    assert "logscan ladder vllm W4A16" in note  # where the conditions are
    for o in vllm["outcomes"][1:]:  # every other outcome is still named
        assert (o["kernel"] or "the layer fails to load") in note


def test_a_short_note_keeps_its_conditions():
    rows = {r["engine"]: r for r in _matrix("W4A16", "--gpu", "H100")["rows"]}
    note = rows["sglang"]["note"]
    assert len(note) <= NOTE_MAX_CHARS and "group_size" in note and "logscan ladder" not in note


def test_given_group_size_decides_without_a_split():
    w = next(w for w in _matrix("W4A16", "--gpu", "H100", "--group-size", "32")["walks"] if w["engine"] == "vllm")
    assert w["outcomes"]
    assert all(not f.startswith("group_size") for o in w["outcomes"] for alt in o["when"] for f in alt)
    assert all(o["kernel"] != "MacheteLinearKernel" for o in w["outcomes"])  # Machete takes -1/64/128 only

