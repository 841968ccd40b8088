"""Every prediction the seeds make (tests/data/seed_facts.toml) is what `logscan ladder` answers.

Each row is one engine x scheme x machine question, the expected answer and the seed sentence
it comes from. A row fails when the walk's set of outcomes contradicts the sentence.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from logscan.analysis.predict import walk
from logscan.cli import _machine, _scheme_for
from logscan.packs.loader import default_packs

ROWS = tomllib.loads((Path(__file__).parent / "data" / "seed_facts.toml").read_text())["fact"]


def answer(row: dict):
    """Walk the row's question exactly as `logscan ladder` would."""
    m = _machine(row.get("platform", "cuda"), row.get("gpu"), row.get("cuda"), row.get("with"), row.get("builds"),
                 tuple(row.get("env", ())), row.get("torch"), scales=row.get("scales"), act_scale=row.get("act_scale"),
                 group_size=row.get("group_size"), n=row.get("n"), k=row.get("k"), gfx=row.get("gfx"),
                 moe=row.get("moe"))
    scheme = _scheme_for(row["scheme"], row.get("scales"), row.get("moe"))
    return walk(default_packs(), row["engine"], scheme, m, row.get("engine_version"))


def check(row: dict, w) -> list[str]:
    """The ways the walk contradicts the row (empty: it agrees)."""
    errs = []
    kernels = [o.kernel for o in w.outcomes if o.kernel]
    refused = w.scheme_verdict.value == "fails" or (bool(w.outcomes) and all(o.refused for o in w.outcomes))
    can_refuse = w.scheme_verdict.value == "fails" or any(o.refused for o in w.outcomes)
    if "kernel" in row and not (w.certain and w.predicted == row["kernel"]):
        errs.append(f"expected certain {row['kernel']}, got: {w.outcome}")
    if "selects_then_fails" in row:  # reachable by the engine's own gate, below the hardware floor
        k = row["selects_then_fails"]
        if not any(f"it selects {k} and fails" in n for n in w.notes) or w.predicted == k:
            errs.append(f"expected a note that the engine selects {k} and fails, got: {w.outcome}; {w.notes}")
    if "first" in row and (not kernels or kernels[0] != row["first"]):
        errs.append(f"expected {row['first']} first, got: {w.outcome}")
    for k in row.get("includes", []):
        if k not in kernels:
            errs.append(f"expected {k} among the outcomes, got: {w.outcome}")
    for k in row.get("excludes", []):
        if k in kernels:
            errs.append(f"{k} must not be an outcome, got: {w.outcome}")
    if "refused" in row and refused != row["refused"]:
        errs.append(f"expected refused={row['refused']}, got: {w.outcome}")
    if "can_refuse" in row and can_refuse != row["can_refuse"]:
        errs.append(f"expected can_refuse={row['can_refuse']}, got: {w.outcome}")
    if "classes" in row:
        bad = [f"{o.kernel} ({o.cost_class})" for o in w.outcomes if o.kernel and o.cost_class not in row["classes"]]
        if bad:
            errs.append(f"outcomes outside {row['classes']}: {bad}")
    verdicts = {r.kernel: r.verdict.value for r in w.rungs}
    for k, v in row.get("rungs", {}).items():
        if verdicts.get(k) != v:
            errs.append(f"rung {k}: expected {v}, got {verdicts.get(k, 'not on the ladder')}")
    if "disagreement" in row and row["disagreement"] not in [d["kernel"] for d in w.disagreements]:
        errs.append(f"no reference/seed disagreement reported on {row['disagreement']}")
    return errs


def test_table_is_broad():
    """At least 60 rows, all four engines with ladders, every scheme family of the seeds."""
    assert len(ROWS) >= 60
    assert {r["engine"] for r in ROWS} >= {"vllm", "sglang", "trtllm", "llamacpp"}
    schemes = {r["scheme"] for r in ROWS}
    assert schemes >= {"NVFP4", "MXFP4", "MXFP6", "MXFP8", "FP8", "FP8-BLOCK", "W4A8-FP8", "W4A8-INT8",
                       "W4A16", "AWQ", "GGUF-KQUANT", "NVFP4-MOE", "FP8-MOE"}
    assert len({r["id"] for r in ROWS}) == len(ROWS)
    for r in ROWS:
        assert r["sentence"].strip() and r["seed"] in {"000", "001", "003"}
        assert set(r) & {"kernel", "first", "includes", "excludes", "refused", "can_refuse", "classes", "rungs",
                         "disagreement", "selects_then_fails"}, r["id"]


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_seed_fact(row):
    errs = check(row, answer(row))
    assert not errs, f"{row['id']} (seed {row['seed']}: {row['sentence'][:160]}): " + "; ".join(errs)


def test_check_can_fail():
    """The checker rejects a contradicting answer (a wrong kernel, a refusal where one runs)."""
    row = dict(ROWS[0])
    w = answer(row)
    assert check(dict(row, kernel="NoSuchKernel"), w)
    assert check({"refused": True, "id": "x"}, w)
