"""The gate fails closed on what a new-user trial found passing or mislabelled (real fixtures):
a start cut off before it came up (START_INCOMPLETE), an unreadable input (INPUT_UNREADABLE),
FALLBACK_UNEXPLAINED under --gpu, --engine-version, stdin read with no PATH, repo-relative SARIF."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from logscan.formats.sarif import repo_relative

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures"
CUT_009 = FIX / "vllm" / "vllm-009.log"  # ends mid weight loading: '67% Completed | 2/3', no newline
CUT_014 = FIX / "vllm" / "vllm-014.log"
CAME_UP = FIX / "sglang" / "sglang-009.log"  # 'Application startup complete.' then a kernel line
FAILED = FIX / "vllm" / "vllm-011.log"  # chose kernels, then the start failed
FP4_MARLIN = FIX / "vllm" / "vllm-005.log"  # NVFP4 on Marlin, 'Your GPU does not have native support for FP4'


def gate(*args, input=None):
    r = CliRunner().invoke(cli, ["gate", "--format", "json", "--today", "2026-12-02", *map(str, args)],
                           input=input, catch_exceptions=False)
    return r, (json.loads(r.stdout) if r.stdout.lstrip().startswith("{") else None)


def codes(doc, verdict):
    return [c["code"] for c in doc["gate"]["checks"] if c["verdict"] == verdict]


@pytest.mark.parametrize("log", [CUT_009, CUT_014], ids=["vllm-009", "vllm-014"])
def test_a_start_cut_off_before_it_came_up_fails(log):
    assert not log.read_bytes().endswith(b"\n") or "Application startup complete" not in log.read_text()
    r, doc = gate(log)
    assert r.exit_code == 1 and doc["gate"]["verdict"] == "fail"
    assert codes(doc, "fail") == ["START_INCOMPLETE"]
    chk = next(c for c in doc["gate"]["checks"] if c["code"] == "START_INCOMPLETE")
    assert chk["kind"] == "start" and chk["line"] == doc["runs"][0]["last_line"]
    assert "not seen to complete" in chk["message"] and "engine release not printed" in chk["message"]


def test_partial_log_leaves_it_unjudged_and_says_so():
    r, doc = gate("--partial-log", CUT_009)
    assert r.exit_code == 0 and doc["gate"]["verdict"] == "pass"
    assert "START_INCOMPLETE" not in [c["code"] for c in doc["gate"]["checks"]]
    assert "--partial-log" in r.stderr and "not judged" in r.stderr


def test_a_policy_rule_can_make_it_warn(tmp_path):
    pol = tmp_path / "p.toml"
    pol.write_text('[[rule]]\nengine = "vllm"\nlevel = "warn"\ncodes = ["START_INCOMPLETE"]\nreason = "tail of a pod"\n')
    r, doc = gate("--policy", pol, CUT_009)
    assert r.exit_code == 0 and doc["gate"]["verdict"] == "warn" and codes(doc, "warn") == ["START_INCOMPLETE"]


def test_a_start_that_came_up_or_failed_is_not_incomplete():
    r, doc = gate(CAME_UP)
    assert r.exit_code == 0 and "START_INCOMPLETE" not in [c["code"] for c in doc["gate"]["checks"]]
    r, doc = gate(FAILED)
    got = [c["code"] for c in doc["gate"]["checks"]]
    assert "START_FAILED" in got and "START_INCOMPLETE" not in got


def test_an_engine_without_a_ready_rule_only_warns(monkeypatch):
    from datetime import date

    from logscan.gate import default_policy_path
    from logscan.gate.evaluate import evaluate, ready_engines_of
    from logscan.gate.policy import load_policy
    from logscan.packs.loader import default_packs
    from logscan.pipeline import scan_inputs

    packs = default_packs()
    assert "vllm" in ready_engines_of(packs)  # every shipped pack has one (99-uncaught.toml)
    report = scan_inputs([str(CUT_009)], packs)
    policy = load_policy(None, set(packs.findings.code), default_policy_path())
    res = evaluate(report, policy, packs.findings, date(2026, 12, 2), ready_engines=ready_engines_of(packs) - {"vllm"})
    chk = next(c for c in res.checks if c.code == "START_INCOMPLETE")
    assert chk.verdict.value == "warn" and "no ready rule" in chk.message


@pytest.mark.parametrize("target", ["missing", "dir", "empty-arg"])
def test_unreadable_input_has_its_own_code(tmp_path, target):
    path = {"missing": tmp_path / "nope.log", "dir": tmp_path, "empty-arg": ""}[target]
    r, doc = gate(path)
    assert r.exit_code == 2
    assert codes(doc, "fail") == ["INPUT_UNREADABLE"]
    assert [c["code"] for c in doc["gate"]["checks"]] == ["INPUT_UNREADABLE"]  # no NO_KERNEL_SEEN beside it


@pytest.mark.parametrize("fmt,needle", [("text", "INPUT_UNREADABLE"), ("junit", 'type="INPUT_UNREADABLE"'),
                                        ("sarif", '"ruleId": "INPUT_UNREADABLE"'),
                                        ("github", "title=logscan INPUT_UNREADABLE")])
def test_unreadable_input_in_every_ci_format(tmp_path, fmt, needle):
    r = CliRunner().invoke(cli, ["gate", "--format", fmt, str(tmp_path / "nope.log")], catch_exceptions=False)
    assert r.exit_code == 2 and needle in r.stdout


def test_unexplained_fallback_under_gpu_warns():
    # B200 could take the FP4 rungs above Marlin; the log does not say whether their software
    # needs hold (CUDA runtime, build flag, flashinfer): FALLBACK_UNEXPLAINED, a kind of
    # UNEXPECTED_FALLBACK that the default policy warns on, never a quiet pass nor a false error
    # one selection, one check: the weight-only Marlin check carries its UNEXPLAINED fallback
    r, doc = gate("--partial-log", "--gpu", "B200", FP4_MARLIN)
    chk = next(c for c in doc["gate"]["checks"] if "UNEXPLAINED" in c["message"])
    assert chk["verdict"] == "warn" and chk["code"] in ("WEIGHT_ONLY_SUBSTITUTION", "FALLBACK_UNEXPLAINED")
    assert any("flashinfer installed" in x for x in chk["reasons"])
    assert len([c for c in doc["gate"]["checks"] if c["line"] == chk["line"]]) == 1
    assert "UNEXPECTED_FALLBACK" not in [c["code"] for c in doc["gate"]["checks"]]
    r, doc = gate("--partial-log", FP4_MARLIN)  # no GPU told, none logged: the GPU is an undecided need
    chk = next(c for c in doc["gate"]["checks"] if "UNEXPLAINED" in c["message"])
    assert any("the GPU it ran on" in x for x in chk["reasons"])
    assert "UNEXPECTED_FALLBACK" not in [c["code"] for c in doc["gate"]["checks"]]


def test_marlins_unconditional_fp4_warning_is_no_gpu_contradiction():
    # vLLM prints 'Your GPU does not have native support for FP4' whenever Marlin takes an FP4 layer
    # (marlin_utils_fp4.prepare_fp4_layer_for_marlin), also on Blackwell: it proves no GPU (docs/ci-gate.md)
    assert "does not have native support for FP4" in FP4_MARLIN.read_text()
    r, doc = gate("--partial-log", "--gpu", "B200", FP4_MARLIN)
    assert "GPU_CONTRADICTS_LOG" not in [c["code"] for c in doc["gate"]["checks"]]


def test_engine_version_pins_the_release_as_for_scan():
    r, doc = gate("--partial-log", "--engine-version", "0.31.0", CUT_009)
    assert r.exit_code == 0 and doc["runs"][0]["engine"]["version"] == "0.31.0"
    r, _ = gate("--engine-version", "0.31.7", CUT_009)
    assert r.exit_code == 2 and "0.31" in r.stderr


def test_no_path_reads_stdin_and_says_so():
    r, doc = gate(input=CUT_009.read_text())
    assert "no PATH given: reading the log from stdin" in r.stderr
    assert doc["gate"]["verdict"] == "fail" and codes(doc, "fail") == ["START_INCOMPLETE"]
    r, _ = gate("-", input=CUT_009.read_text())
    assert "no PATH given" not in r.stderr
    help_ = CliRunner().invoke(cli, ["gate", "--help"]).stdout + CliRunner().invoke(cli, ["scan", "--help"]).stdout
    assert help_.count("With no PATH the log is read from stdin") == 2


def test_sarif_uri_is_repo_relative_under_the_workspace(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.chdir(ROOT)
    r = CliRunner().invoke(cli, ["gate", "--format", "sarif", str(CUT_009)], catch_exceptions=False)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for res in json.loads(r.stdout)["runs"][0]["results"]
            for loc in res["locations"]}
    assert uris == {"fixtures/vllm/vllm-009.log"}
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT / "fixtures"))
    assert repo_relative(str(CUT_009)) == "vllm/vllm-009.log"
    outside = tmp_path / "x.log"
    assert repo_relative(str(outside)) == outside.resolve().as_posix()
    assert repo_relative("<stdin>") == "<stdin>"


def test_an_empty_path_is_named_as_such_not_as_a_directory():
    # `logscan gate "$LOG"` with LOG unset: Path("") is the current directory, which read as
    # "is a directory" under a blank name (trial 6)
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "logscan", "gate", ""], capture_output=True, text=True)
    assert p.returncode == 2
    assert "an empty path" in p.stderr and "is a directory" not in p.stderr + p.stdout
    assert "[fail] '' INPUT_UNREADABLE" in p.stdout


def test_the_one_pass_over_events_finds_the_runs_that_came_up(tmp_path):
    """``incomplete.runs_up`` (one pass over the events) gives the runs the per-run definition of
    ``came_up`` gives: a ready event of the run's source, at or after its first line and before
    the next run of that source. Real logs, joined into one file so that its runs alternate
    between coming up and not, plus a second input."""
    from logscan.gate.incomplete import came_up, runs_up
    from logscan.packs.loader import default_packs
    from logscan.pipeline import scan_inputs

    joined = tmp_path / "restarts.log"
    joined.write_bytes(b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in (CAME_UP, CUT_014, CAME_UP, FAILED)))
    report = scan_inputs([str(joined), str(CAME_UP)], default_packs())

    def by_definition(run):
        nxt = min((r.first_line for r in report.runs if r.source == run.source and r.first_line > run.first_line),
                  default=None)
        return any(e.kind == "ready" and e.source == run.source and e.line >= run.first_line
                   and (nxt is None or e.line < nxt) for e in report.events)

    up = runs_up(report)
    want = [by_definition(r) for r in report.runs]
    assert [(r.source, r.first_line) in up for r in report.runs] == want
    assert [came_up(report, r) for r in report.runs] == want
    assert True in want and False in want and len({r.source for r in report.runs}) == 2
