"""A finding is one per (run, layer family, code) (issue 12, case 6).

vllm-005 then vllm-018 in one file has two weight-only selections (linear NVFP4 at line 16,
linear FP8 at line 25); it used to give one WEIGHT_ONLY_SUBSTITUTION finding, and so one follow
record and ``logscan_findings_total`` 1, while the gate counted two. (The file was read as one
run then; it is two since ``analysis/newstart.py``: Worker_TP0 pid=646817, then pid=101 of
vllm-018's start. Scan, gate and follow must still agree on two findings.) In vllm-024 the
MoE finding took the linear layer's warning as its evidence.
"""
from __future__ import annotations

import io
import json

from prometheus_client import generate_latest

from logscan.follow.metrics import FollowMetrics
from logscan.follow.runner import Follower
from logscan.gate import default_policy_path
from logscan.gate.evaluate import evaluate
from logscan.gate.policy import load_policy
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _concat(tmp_path):
    p = tmp_path / "c.log"
    p.write_bytes((FIXTURES / "vllm" / "vllm-005.log").read_bytes() + (FIXTURES / "vllm" / "vllm-018.log").read_bytes())
    return p


def test_two_families_two_findings_in_scan_gate_and_follow(packs, tmp_path):
    path = _concat(tmp_path)
    runs = scan_inputs([str(path)], packs).runs
    assert [r.first_line for r in runs] == [1, 25]
    wo = [f for run in runs for f in run.findings if f.code == "WEIGHT_ONLY_SUBSTITUTION"]
    assert sorted((f.family, f.line) for f in wo) == [("linear (FP8)", 25), ("linear (NVFP4)", 16)]
    policy = load_policy(None, set(packs.findings.code), default_policy_path())
    import datetime as dt

    gate = evaluate(scan_inputs([str(path)], packs), policy, packs.findings, dt.date(2026, 6, 1))
    assert sorted(c.line for c in gate.checks if c.code == "WEIGHT_ONLY_SUBSTITUTION") == [16, 25]
    out = io.StringIO()
    m = FollowMetrics("sidecar", packs.findings.cost_class_finding)
    f = Follower([str(path)], packs, out, metrics=m, idle_flush=0.0)
    f.poll_once()
    f.end_all()
    recs = [json.loads(ln) for ln in out.getvalue().splitlines()]
    fams = sorted(r["finding"]["family"] for r in recs if r["type"] == "finding"
                  and r["finding"]["code"] == "WEIGHT_ONLY_SUBSTITUTION")
    assert fams == ["linear (FP8)", "linear (NVFP4)"]
    text = generate_latest(m.registry).decode()
    assert 'logscan_findings_total{code="WEIGHT_ONLY_SUBSTITUTION",severity="warning"} 2.0' in text


def test_moe_finding_keeps_its_own_evidence(packs):
    run = scan_inputs([str(FIXTURES / "vllm" / "vllm-024.log")], packs).runs[0]
    by_family = {f.family: f for f in run.findings if f.code == "WEIGHT_ONLY_SUBSTITUTION"}
    moe = next(v for k, v in by_family.items() if k and k.startswith("MoE"))
    lin = next(v for k, v in by_family.items() if k and k.startswith("linear"))
    assert "MoE backend" in moe.evidence and "MARLIN" in moe.evidence
    assert "native support for FP4" in lin.evidence
    assert moe.line != lin.line
