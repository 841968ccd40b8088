"""Real logs (bundled from the labelled corpus): labels are met, reports are pinned by snapshots.

The label beside each log (``*.label.json``, hand-made from the public bug report) names the
kernels the log shows, their expected cost classes and the findings a careful reader derives.
Snapshots pin the whole JSON and text reports; refresh them on purpose with
``pytest --snapshot-update`` and review the diff.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from logscan.formats import json as json_format
from logscan.formats import text as text_format
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES, ROOT, corpus_params, load_tool, pending_fixtures

LOGS = sorted(FIXTURES.glob("*/*.log"))
LABELLED = [p for p in LOGS if p.with_suffix(".label.json").exists()]
PENDING, UNMET = pending_fixtures()


def _mark(paths):
    return [pytest.param(p, id=p.stem, marks=pytest.mark.xfail(strict=True, reason="pending: labelled, not met yet"))
            if p.stem in UNMET else pytest.param(p, id=p.stem) for p in paths]


def _report(path: Path):
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return scan_inputs([str(path.relative_to(ROOT))])
    finally:
        os.chdir(cwd)


def _walk(doc):
    """Every object with a ``kernel`` (and its ``cost_class``) and every ``code``, wherever it sits:
    the collection rule of shared/corpus/eval.py, as the project's scorer applies it
    (``tools/corpus_score.collect``; a finding naming the kernel counts, as in vllm-023)."""
    kernels, codes = [], set()
    _scorer().collect({"runs": doc["runs"]}, kernels, codes)
    return kernels, codes


def _scorer():
    """``tools/corpus_score.py`` (tools/ is not a package), loaded once (``conftest.load_tool``)."""
    return load_tool("corpus_score")


@pytest.mark.parametrize("log", corpus_params([p for p in LABELLED if p.stem not in UNMET])
                         + _mark([p for p in LABELLED if p.stem in UNMET]))
def test_label_is_met(log):
    label = json.loads(log.with_suffix(".label.json").read_text())
    doc = json.loads(_report(log).model_dump_json())
    kernels, codes = _walk(doc)
    for want in label.get("expected") or []:
        name = want["kernel"].lower()
        got = {c for k, c in kernels if k.lower() == name or (len(name) >= 4 and name in k.lower())}
        assert got, f"kernel {want['kernel']} not reported (got {kernels})"
        if want.get("cost_class") not in (None, "unknown"):
            assert want["cost_class"] in got, f"{want['kernel']}: want {want['cost_class']}, got {got}"
    optional = set(label.get("optional_findings") or [])
    expected = set(label.get("expected_findings") or []) - {"NONE", ""} - optional
    assert codes - optional == expected


@pytest.mark.parametrize("log", [p for p in LOGS if p.stem not in PENDING], ids=lambda p: p.stem)
def test_snapshot_json_and_text(log, snapshot):
    snapshot.snapshot_dir = ROOT / "tests" / "snapshots" / log.parent.name
    report = _report(log)
    snapshot.assert_match(json_format.render(report), f"{log.stem}.json")
    snapshot.assert_match(text_format.render(report), f"{log.stem}.txt")
