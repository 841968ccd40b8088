"""The ladder history: every vLLM release's own orderings, rung ranges, and --engine-version.

The history (patterns/vllm/ladder-history.toml) was derived with tools/refresh.py from each
release's sdist. These tests check it against the detailed snapshots (the reference data),
that a log is placed on its exact release, that each rung names the releases where its list
holds, and that an unshipped release is refused, never rounded.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from packaging.version import Version

from logscan.analysis.ladders import LadderIndex
from logscan.analysis.releases import ReleaseError, group_rows, resolve_release
from logscan.cli import cli
from logscan.packs.loader import default_packs
from logscan.pipeline import Pipeline

PACKS = default_packs()
VLLM = PACKS.packs["vllm"]
IDX = LadderIndex(VLLM)
HIST = VLLM.ladders.history


def _run(*lines):
    pipe = Pipeline(source="mem")
    runs = []
    for i, text in enumerate(lines, 1):
        runs += [r for _, r in pipe.feed(i, text) if r is not None]
    runs += [r for _, r in pipe.close() if r is not None]
    (run,) = runs
    return run


def _vllm_lines(version=None):
    head = [f"INFO 05-11 08:00:01 [utils.py:233] vLLM server version {version}, serving model m"] if version else []
    return head + [
        "INFO 05-11 08:00:02 [cuda.py:1] Using MarlinNvFp4LinearKernel for NVFP4 GEMM",
    ]


def test_every_vllm_release_from_0_6_6_to_0_33_0_is_shipped():
    rels = HIST.releases
    assert rels[0] == "0.6.6" and rels[-1] == "0.33.0" and len(rels) == 56
    assert rels == sorted(rels, key=Version)
    assert set(rels) <= set(VLLM.ladders)


@pytest.mark.parametrize("release", sorted(VLLM.ladders.snapshots, key=Version))
def test_history_equals_each_detailed_snapshot(release):
    """The derived orderings of a snapshot release are exactly the snapshot's linear / MoE registries."""
    snap = VLLM.ladders.snapshots[release]
    want = {r.name: r.platforms for r in snap.registry if r.kind in ("linear", "moe")}
    got = {reg.name: plats for reg, plats in HIST.at(release)}
    assert got == want


def test_a_0_31_0_log_gets_its_rungs_from_0_31_0():
    """0.31.0's NVFP4 list has 13 rungs (14 in 0.32.0+): the log's own release decides."""
    run = _run(*_vllm_lines("0.31.0"))
    (s,) = run.selections
    assert run.engine.ladder_version == "0.31.0"
    assert (s.ladder.rung, s.ladder.rungs, s.ladder.holds_in) == (6, 13, "0.30.0\u20130.31.0")
    assert not s.ladder.elsewhere  # a logged release is one release: nothing to disagree
    p = IDX.place("0.31.0", "HummingMxFp6LinearKernel", None, "CUDA")
    assert (p.position.rung, p.position.rungs, p.position.holds_in) == (1, 2, "0.31.0\u20130.33.0")
    assert IDX.place("0.30.0", "HummingMxFp6LinearKernel", None, "CUDA") is None


def test_inferred_range_that_disagrees_says_so_in_json_and_text():
    run = _run(*_vllm_lines())
    (s,) = run.selections
    assert run.engine.version_source == "inferred"
    ranges = {x.releases: (x.rung, x.rungs) for x in s.ladder.elsewhere}
    assert s.ladder.ladder_version == "0.33.0" and s.ladder.holds_in == "0.32.0\u20130.33.0"
    assert ranges["0.30.0\u20130.31.0"] == (6, 13)
    out = CliRunner().invoke(cli, ["scan", "-"], input="\n".join(_vllm_lines()) + "\n")
    assert "in 0.30.0\u20130.31.0" in out.output and "the inferred releases disagree" in out.output


def test_unknown_logged_release_says_which_ladder_it_gets():
    run = _run(*_vllm_lines("0.34.0"))
    assert run.engine.ladder_version == "0.33.0"
    assert "0.34.0 has no shipped ladder" in run.engine.version_evidence


@pytest.mark.parametrize("text,near", [("0.34.0", "0.33.0"), ("0.31.1", "0.31.0 and 0.32.0"), ("0.5.0", "0.6.6")])
def test_resolve_release_refuses_with_the_nearest(text, near):
    with pytest.raises(ReleaseError, match=f"nearest: {near}"):
        resolve_release(PACKS, "vllm", text)
    assert resolve_release(PACKS, "vllm", "0.31") == "0.31.0"


@pytest.mark.parametrize("args", [
    ["ladder", "vllm", "NVFP4", "--gpu", "H100", "--engine-version", "0.34.0"],
    ["explain", "MarlinNvFp4LinearKernel", "--engine-version", "0.34.0"],
    ["matrix", "NVFP4", "--gpu", "H100", "--engine-version", "vllm=0.34.0"],
    ["scan", "--gpu", "H100", "--engine-version", "0.34.0", "-"],
])
def test_cli_refuses_an_unshipped_release_with_exit_2(args):
    r = CliRunner().invoke(cli, args, input="x\n")
    assert r.exit_code == 2, r.output
    assert "0.34.0 has no shipped ladder" in r.output and "nearest: 0.33.0" in r.output


def test_cli_answers_in_the_release_terms():
    r = CliRunner().invoke(cli, ["ladder", "vllm", "NVFP4", "--gpu", "H100", "--engine-version", "0.31.0",
                                 "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["ladder_version"] == "0.31.0"
    r = CliRunner().invoke(cli, ["explain", "MarlinNvFp4LinearKernel", "--engine-version", "0.31.0", "--format", "json"])
    rows = json.loads(r.output)["ladders"]
    assert [(x["ladder_version"], x["rung"], x["rungs"]) for x in rows] == [("0.31.0", 6, 13)]
    r = CliRunner().invoke(cli, ["matrix", "NVFP4", "--gpu", "H100", "--engine-version", "vllm=0.31.0", "--format", "json"])
    assert {x["engine"]: x["ladder_version"] for x in json.loads(r.output)["rows"]}["vllm"] == "0.31.0"
    r = CliRunner().invoke(cli, ["scan", "--engine-version", "0.31.0", "--format", "json", "-"],
                           input="\n".join(_vllm_lines()) + "\n")
    run = json.loads(r.output)["runs"][0]
    assert (run["engine"]["version_source"], run["engine"]["ladder_version"]) == ("given", "0.31.0")
    assert run["selections"][0]["ladder"]["rungs"] == 13


def test_explain_rows_name_their_release_range():
    rows = group_rows([{"engine": "vllm", "ladder_version": v, "rung": 1} for v in ("0.30.0", "0.31.0", "0.33.0")]
                      + [{"engine": "vllm", "ladder_version": "0.32.0", "rung": 2}], PACKS)
    assert [(r["releases"], r["rung"]) for r in rows] == [("0.30.0\u20130.31.0", 1), ("0.33.0", 1), ("0.32.0", 2)]


def test_composed_registries_get_roles_and_costs_from_their_family():
    """0.15.0's select_fp8_moe_backend list is in no snapshot: its role and costs come from the
    fp8 oracle's registries of the nearest snapshots, so a logged backend gets a cost class."""
    lf = VLLM.ladders["0.15.0"]
    reg = next(r for r in lf.registry if r.name == "moe:fp8:select_fp8_moe_backend.AVAILABLE_BACKENDS")
    assert reg.role == "fp8 moe" and reg.cost.get("MARLIN") and reg.cost.get("TRITON")
    assert "carried from 0.14.1" in lf.source


def test_the_inferred_releases_no_ladder_places_the_kernel_in_are_named():
    """vllm-005 (a source build whose lines fit 0.10.2 .. 0.33.0): the NVFP4 Marlin rung is known
    from 0.18.1 on only. The rung history named 0.18.1+ and said 'the inferred releases disagree'
    while the engine line said 0.10.2 .. 0.33.0 fit; the releases no shipped ladder places it in
    are named (``unplaced_in``), so every release of the range is accounted for once."""
    import logscan
    from logscan.packs.history import release_span
    from tests.conftest import FIXTURES

    path = FIXTURES / "vllm" / "vllm-005.log"
    (run,) = logscan.scan(str(path)).runs
    (s,) = run.selections
    lo, hi = run.engine.release_range
    era = [r for r in IDX.releases if Version(lo) <= Version(r) <= Version(hi)]

    def span(text):
        a, _, b = text.partition(" (as read in ")[0].partition("\u2013")
        return [r for r in era if Version(a) <= Version(r) <= Version(b or a)]

    spans = [s.ladder.holds_in, *(x.releases for x in s.ladder.elsewhere), *s.ladder.unplaced_in.split(", ")]
    covered = [r for t in spans for r in span(t)]
    assert sorted(covered, key=Version) == era
    assert s.ladder.unplaced_in == release_span("0.10.2", "0.18.0")
    out = CliRunner().invoke(cli, ["scan", str(path)]).output
    assert "\n      no linear (NVFP4) ladder shipped for 0.10.2\u20130.18.0 holds Marlin\n" in out
