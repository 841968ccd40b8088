"""Every code ``logscan codes`` lists works in ``scan --fail-on`` (issue 12, case 2).

``scan --fail-on START_FAILED`` used to exit 0 on a log whose report says "start FAILED":
the code was accepted and never looked for. Now each code either fires on a report that holds
it (and only then), or, when only the gate can raise it, is refused with exit 2.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from logscan.cli import _failed, _parse_fail_on, cli
from logscan.models import StartFailure
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

PACKS = default_packs()
CODES = sorted(PACKS.findings.code)
BASE = scan_inputs([str(FIXTURES / "vllm" / "vllm-005.log")], PACKS)


def _holding(code: str):
    """vllm-005's report made to hold ``code`` (the way the analyser would record it)."""
    r = BASE.model_copy(deep=True)
    run = r.runs[0]
    if code == "START_FAILED":
        run.start_failure = StartFailure(line=19, evidence="EngineCore failed to start.", rule="t")
    elif code == "NO_KERNEL_SEEN":
        run.selections = []
    else:
        f = run.findings[0].model_copy(update={"code": code})
        run.findings.append(f)
    return r


@pytest.mark.parametrize("code", CODES)
def test_every_listed_code_works_in_fail_on(code):
    info = PACKS.findings.code[code]
    res = CliRunner().invoke(cli, ["scan", "--fail-on", code, str(FIXTURES / "vllm" / "vllm-005.log")])
    if info.raised_by == "gate":
        assert res.exit_code == 2 and "raised only by 'logscan gate'" in res.output
        return
    assert _parse_fail_on(code) == {code}
    present = {c for run in BASE.runs for f in run.findings for c in PACKS.findings.lineage(f.code)}
    if any(s.ladder and s.ladder.undecided for run in BASE.runs for s in run.selections):
        # a report fact the gate checks (ladder.undecided), like NO_KERNEL_SEEN: vllm-005's Marlin
        # fell below FP4 rungs the log does not decide; its parent's filter takes it too
        present |= set(PACKS.findings.lineage("FALLBACK_UNEXPLAINED"))
    assert bool(_failed(BASE, {code})) == (code in present)
    assert _failed(_holding(code), {code}), f"--fail-on {code} does not fire on a report holding it"


def test_fail_on_start_failed_on_the_real_failed_start():
    res = CliRunner().invoke(cli, ["scan", "--fail-on", "START_FAILED", str(FIXTURES / "vllm" / "vllm-019.log")])
    assert res.exit_code == 1, res.output
    assert "START_FAILED (line 9, cause line 7)" in res.output  # the EngineCore line, the DeepGEMM exception
    ok = CliRunner().invoke(cli, ["scan", "--fail-on", "START_FAILED", str(FIXTURES / "vllm" / "vllm-005.log")])
    assert ok.exit_code == 0


def test_codes_marks_the_gate_only_codes():
    out = CliRunner().invoke(cli, ["codes"]).output
    for code, info in PACKS.findings.code.items():
        line = next(ln for ln in out.splitlines() if ln.startswith(code + " "))
        assert ("gate only" in line) == (info.raised_by == "gate")


def test_gate_takes_gpu_and_cuda_so_unexpected_fallback_can_be_gated(tmp_path):
    """Issue 12 case 9: 'a B200 landed on Marlin' (vllm-005's NVFP4 linear on Marlin) fails a CI gate."""
    pol = tmp_path / "gate.toml"
    pol.write_text('[[rule]]\nlevel = "fail"\ncodes = ["UNEXPECTED_FALLBACK"]\nreason = "B200 fleet"\n')
    log = str(FIXTURES / "vllm" / "vllm-005.log")
    # vllm-005 is an excerpt cut before its ready line: --partial-log keeps this on UNEXPECTED_FALLBACK
    r = CliRunner().invoke(cli, ["gate", "--partial-log", "--policy", str(pol), "--gpu", "B200", "--cuda", "12.8", log])
    assert r.exit_code == 1, r.output
    # the FP4 rungs' flashinfer / build-flag needs are not in the log: FALLBACK_UNEXPLAINED, a child
    # of UNEXPECTED_FALLBACK, which the rule naming the parent fails
    assert "FALLBACK_UNEXPLAINED" in r.output and "sm100" in r.output
    # without --gpu the log names no GPU: whether Marlin was a fallback is undecided, and a policy that
    # fails fallbacks fails it (fail closed); the default policy only warns on it
    r = CliRunner().invoke(cli, ["gate", "--partial-log", "--policy", str(pol), log])
    assert r.exit_code == 1 and "the GPU it ran on" in r.output
    assert CliRunner().invoke(cli, ["gate", "--partial-log", log]).exit_code == 0  # weight_only: warn
    bad = CliRunner().invoke(cli, ["gate", "--gpu", "Z9000", log])
    assert bad.exit_code == 2 and "unknown GPU" in bad.output
    assert CliRunner().invoke(cli, ["gate", "--cuda", "twelve", log]).exit_code == 2


def test_a_gate_only_code_in_scan_fail_on_points_to_gate_without_a_false_precondition():
    """START_INCOMPLETE is raised by a plain 'logscan gate' (default policy): the error said it
    'needs --baseline or a --policy' (new-user trial 2)."""
    r = CliRunner().invoke(cli, ["scan", "--fail-on", "START_INCOMPLETE", str(FIXTURES / "vllm" / "vllm-005.log")])
    assert r.exit_code == 2
    assert "run 'logscan gate' on the log" in r.output and "(it needs --baseline or a --policy)" not in r.output
