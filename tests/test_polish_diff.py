"""``logscan diff`` / ``gate --baseline`` on a layer family that one side lacks.

Before, ``diff --format json`` gave ``cost: "same"`` for a family missing on one side (and for one
added), as if its cost class had been compared. It now says ``removed`` / ``added``, the text and
Markdown MOVE cell say ``family removed`` / ``family added``, and the exit statuses stay as
documented (1 for a family gone missing, 0 for one added). Real bundled log: sglang-002 logs a
block-FP8 linear and a block-FP8 MoE kernel; its first four lines (the linear one only) are the
other side, the start cut before the MoE layers were set up.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES

FULL = FIXTURES / "sglang" / "sglang-002.log"
MOE = "MoE (block FP8 W8A8)"


@pytest.fixture()
def linear_only(tmp_path):
    lines = FULL.read_text().splitlines(keepends=True)
    cut = tmp_path / "sglang-002-linear-only.log"
    cut.write_text("".join(lines[:4]))
    return cut


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("direction,status,cost,exit_code", [("removed", "missing", "removed", 1),
                                                             ("added", "new", "added", 0)])
def test_a_family_on_one_side_only_is_added_or_removed_not_same_cost(linear_only, direction, status, cost,
                                                                     exit_code):
    old, new = (FULL, linear_only) if direction == "removed" else (linear_only, FULL)
    r = _run("diff", "--format", "json", old, new)
    assert r.exit_code == exit_code, r.output
    ch = {c["family"]: c for c in json.loads(r.stdout)["changes"]}
    assert (ch[MOE]["status"], ch[MOE]["cost"]) == (status, cost)
    assert ch["linear (block FP8 W8A8)"]["cost"] == "same"  # both sides: the cost classes were compared
    text = _run("diff", old, new)
    assert text.exit_code == exit_code
    row = next(ln for ln in text.stdout.splitlines() if ln.lstrip().startswith(MOE) and "  " in ln.strip())
    assert row.rstrip().endswith(f"{status}, family {direction}"), row
    md = _run("diff", "--format", "markdown", old, new)
    assert f"| {status}, family {direction} |" in md.stdout and md.exit_code == exit_code


def test_the_gate_judges_a_missing_family_as_missing_only(linear_only):
    # excerpts cut before their ready line: --partial-log keeps this test on the baseline checks
    doc = json.loads(_run("gate", "--partial-log", "--format", "json", "--baseline", FULL, linear_only).stdout)
    codes = [c["code"] for c in doc["gate"]["checks"] if c["kind"] == "baseline" and c.get("family") == MOE]
    assert codes == ["FAMILY_MISSING"]
    msg = next(c["message"] for c in doc["gate"]["checks"] if c.get("code") == "FAMILY_MISSING")
    assert "COST_CLASS_CHANGED" not in msg and "family removed" in msg
    added = json.loads(_run("gate", "--partial-log", "--format", "json", "--baseline", linear_only, FULL).stdout)
    assert doc["gate"]["verdict"] == "fail" and added["gate"]["verdict"] == "pass"
    assert not [c for c in added["gate"]["checks"] if c.get("code") == "COST_CLASS_CHANGED"]
