"""The public Python API, used only through ``import logscan`` (``__all__``, ``py.typed``)."""
from __future__ import annotations

import datetime as dt
import gzip
import json
import subprocess
import sys

import pytest

import logscan
from tests.conftest import ROOT

LOG = ROOT / "fixtures" / "vllm" / "vllm-005.log"  # real: NVFP4 served by weight-only Marlin, TP=2
FAILED = ROOT / "fixtures" / "vllm" / "vllm-019.log"  # real: the start failed


def test_all_names_resolve_and_are_documented():
    assert {"scan", "gate", "Report", "GateResult", "Verdict"} <= set(logscan.__all__)
    for name in logscan.__all__:
        obj = getattr(logscan, name)
        assert name == "__version__" or obj.__doc__, name
    assert (ROOT / "logscan" / "py.typed").is_file()


def test_public_functions_show_their_real_parameters():
    """``logscan.gate`` is the gate package made callable: ``inspect.signature`` / ``help`` must show
    ``logscan.api.gate``'s parameters, not the wrapper's ``(*args, **kwargs)`` (a new user's IDE did)."""
    import inspect

    params = inspect.signature(logscan.gate).parameters
    assert list(params)[:2] == ["report", "policy"]
    assert {"baseline", "today", "patterns", "partial_log"} <= set(params)
    assert list(inspect.signature(logscan.scan).parameters)[0] != "args"


def test_scan_a_path_gives_the_cli_json_report():
    report = logscan.scan(LOG)
    assert isinstance(report, logscan.Report)
    (sel,) = report.runs[0].selections
    assert (sel.kernel, sel.cost_class, sel.ladder.rung, sel.ladder.rungs) == ("Marlin", logscan.CostClass.weight_only, 6, 14)
    out = subprocess.run([sys.executable, "-m", "logscan.cli", "scan", "--format", "json", str(LOG)],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["runs"] == json.loads(report.model_dump_json())["runs"]


def test_scan_lines_file_objects_and_paths_agree(tmp_path):
    by_path = logscan.scan(str(LOG)).runs
    text = LOG.read_text()
    gz = tmp_path / "x.log.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    for src in (iter(text.splitlines()), text.splitlines(keepends=True), open(LOG, "rb"), open(LOG)):
        runs = logscan.scan(src, name="server.log").runs
        assert [s.model_dump(exclude={"source"}) for s in runs[0].selections] == \
               [s.model_dump(exclude={"source"}) for s in by_path[0].selections]
        assert runs[0].source == "server.log"
    assert len(logscan.scan([LOG, gz]).runs) == 2


def test_scan_keeps_an_unreadable_input_as_an_error_not_an_exception(tmp_path):
    report = logscan.scan([tmp_path / "missing.log", LOG])
    assert report.inputs[0].error and not report.inputs[1].error and report.runs


def test_scan_refuses_an_unknown_gpu():
    with pytest.raises(ValueError, match="unknown GPU"):
        logscan.scan(LOG, gpu="H9000")


def test_gate_default_policy_warns_on_weight_only_and_fails_a_failed_start():
    result = logscan.gate(logscan.scan(LOG))  # an excerpt cut before its ready line: START_INCOMPLETE
    assert isinstance(result, logscan.GateResult)
    assert result.verdict == logscan.Verdict.fail
    assert [c.code for c in result.checks if c.verdict == logscan.Verdict.fail] == ["START_INCOMPLETE"]
    result = logscan.gate(logscan.scan(LOG), partial_log=True)
    assert result.verdict == logscan.Verdict.warn
    assert logscan.gate(logscan.scan(FAILED)).verdict == logscan.Verdict.fail


def test_gate_with_a_policy_file_and_a_fixed_date(tmp_path):
    policy = tmp_path / "gate.toml"
    policy.write_text('[[rule]]\ncost_classes = ["weight_only"]\nlevel = "fail"\nreason = "W4A4 only"\n'
                      '[[allow]]\ncost_classes = ["weight_only"]\nreason = "canary"\nexpires = 2031-01-01\n')
    report = logscan.scan(LOG)
    # LOG is an excerpt cut before its ready line: partial_log keeps this test on the allow-list
    assert logscan.gate(report, policy, today=dt.date(2030, 12, 31), partial_log=True).verdict == logscan.Verdict.passed
    late = logscan.gate(report, policy, today=dt.date(2031, 1, 2), partial_log=True)
    assert late.verdict == logscan.Verdict.fail and any(c.allowance and c.allowance.expired for c in late.checks)


def test_gate_baseline_report_and_errors(tmp_path):
    report = logscan.scan(LOG)
    assert logscan.gate(report, baseline=report).changes
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nlevel = "maybe"\n')
    with pytest.raises(logscan.PolicyError):
        logscan.gate(report, bad)
    with pytest.raises(logscan.SideError):
        logscan.gate(report, baseline=logscan.scan(iter(["no engine line here\n"])))
