"""``logscan follow`` reports what ``scan`` reports, once, on every labelled corpus log of every engine.

Each log grows five lines per poll under an in-process ``Follower``; the selections and
findings it prints must be exactly those of ``scan_inputs`` on the whole file, each once.
The logs are the corpus bundled under ``fixtures/`` (real logs with a label beside them), so a
fresh clone runs this without ``../shared``.
"""
from __future__ import annotations

import collections
import io
import json

import pytest

from logscan.follow.runner import Follower
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

CORPUS = sorted(p for p in FIXTURES.glob("*/*.log")
                if not p.name.startswith("synthetic-") and p.with_suffix(".label.json").exists())


@pytest.mark.parametrize("log", CORPUS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_follow_agrees_with_scan_on_the_corpus(packs, tmp_path, log):
    expected = set()
    for run in scan_inputs([str(log)], packs).runs:
        expected |= {(run.first_line, "s", s.family, s.kernel, s.cost_class.value) for s in run.selections}
        expected |= {(run.first_line, "f", f.family, f.code) for f in run.findings}
        if run.start_failure is not None:
            expected.add((run.first_line, "x", run.start_failure.line))
    lines = log.read_bytes().split(b"\n")
    path = tmp_path / "engine.log"
    out = io.StringIO()
    f = Follower([str(path)], packs, out, idle_flush=0.0)
    with open(path, "wb") as fh:
        for i in range(0, len(lines), 5):
            fh.write(b"\n".join(lines[i:i + 5]) + (b"\n" if i + 5 < len(lines) else b""))
            fh.flush()
            f.poll_once()
    f.poll_once()
    f.end_all()  # the end of the input, as scan has
    got: collections.Counter = collections.Counter()
    for line in out.getvalue().splitlines():
        r = json.loads(line)
        if r["type"] == "selection":
            s = r["selection"]
            got[(r["run_line"], "s", s["family"], s["kernel"], s["cost_class"])] += 1
        elif r["type"] == "start_failure":
            got[(r["run_line"], "x", r["start_failure"]["line"])] += 1
        else:
            got[(r["run_line"], "f", r["finding"].get("family"), r["finding"]["code"])] += 1
    assert [k for k, n in got.items() if n > 1] == []
    assert set(got) == expected
