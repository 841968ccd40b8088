"""docs/follow.md stays true: its metrics table names every metric ``FollowMetrics`` exports.
(The Kubernetes files themselves live in deploy/ and are checked by tests/test_deploy.py.)"""
from __future__ import annotations

import regex

from logscan.follow.metrics import FollowMetrics
from tests.conftest import ROOT
from tests.test_deploy import PENDING_METRICS

FOLLOW = (ROOT / "docs" / "follow.md").read_text()


def _metric_names() -> set[str]:
    m = FollowMetrics("daemonset", ["weight_only"])
    names = set()
    for fam in m.registry.collect():
        names.add(fam.name)
        names.update(s.name for s in fam.samples)
    names.update(f"{fam.name}_total" for fam in m.registry.collect() if fam.type == "counter")
    return names


def test_metrics_table_names_every_metric():
    table = FOLLOW.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    listed = set(regex.findall(r"`(logscan_[a-z_]+)`", table))
    exported = {n for n in _metric_names() if not n.endswith("_created")}
    families = {fam.name for fam in FollowMetrics("sidecar", []).registry.collect()}
    for fam in families:
        assert fam in listed or f"{fam}_total" in listed, fam
    assert listed <= exported | PENDING_METRICS


def test_follow_doc_links_every_deploy_file():
    for f in (ROOT / "deploy").glob("*.yaml"):
        assert f"../deploy/{f.name}" in FOLLOW, f.name
