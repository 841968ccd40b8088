"""``logscan gate`` on real logs: emulation fails, native passes, allow-list expiry, NO_KERNEL_SEEN,
policy errors, exit statuses, and baselines (a kernel that moved down its ladder fails).

Real corpus logs come from ``fixtures/vllm`` (labels beside them). No bundled real log shows
emulation, so ``tests/data/constructed-emulation.log`` is vllm-009.log (real) with its one MoE
line's backend value replaced by ``EMULATION``, a member of the very candidate list the real
line prints (template ``Using '{backend.value}' NvFp4 MoE backend out of potential backends``,
vLLM 0.18.1 -> 0.33.0, fused_moe/oracle/nvfp4.py).
"""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import date

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from logscan.gate import default_policy_path
from logscan.gate.baseline import compare
from logscan.gate.evaluate import Verdict, evaluate
from logscan.gate.policy import PolicyError, load_policy, parse_policy
from logscan.models import Report
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES, ROOT

DATA = ROOT / "tests" / "data"
EMULATION = DATA / "constructed-emulation.log"
NATIVE = FIXTURES / "vllm" / "vllm-009.log"  # NVFP4 MoE on FLASHINFER_B12X (native), label: no findings
FP4_MARLIN = FIXTURES / "vllm" / "vllm-005.log"  # NVFP4 linear on Marlin (weight_only)
FP8_MARLIN = FIXTURES / "vllm" / "vllm-004.log"  # FP8 W8A8 on FP8 Marlin (weight_only)
AWQ_FORCED = FIXTURES / "vllm" / "vllm-002.log"  # no kernel selection, SLOW_QUANT_METHOD only
NATIVE_CUTLASS = ROOT / "tests" / "data" / "vllm-011-loaded.log"  # vllm-011 cut before its failure line; NVFP4: linear flashinfer-cutlass 2/14, MoE Cutlass (a CUTLASS rung)
MARLIN_SM120 = FIXTURES / "vllm" / "vllm-024.log"  # NVFP4: MoE MARLIN 6/8, linear Marlin 6/14


def run(*args, input=None):
    if args and args[0] == "gate":  # the fixtures are excerpts of starts, cut before the ready line:
        # --partial-log keeps these tests on what they test; tests/test_gateclosed.py tests START_INCOMPLETE
        args = ("gate", "--partial-log") + tuple(args[1:])
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def gate_json(*args):
    r = run("gate", "--format", "json", "--today", "2026-06-01", *args)
    return r, json.loads(r.stdout)


def test_label_of_native_log_says_native():
    label = json.loads(NATIVE.with_suffix(".label.json").read_text())
    assert [e["cost_class"] for e in label["expected"]] == ["native"] and label["expected_findings"] == []


def test_emulation_log_fails_the_default_gate():
    r, doc = gate_json(str(EMULATION))
    assert r.exit_code == 1
    failed = [c for c in doc["gate"]["checks"] if c["verdict"] == "fail"]
    # the EMULATION selection and the EMULATION finding of its line are one problem: one check naming both
    assert [(c["kind"], c["code"]) for c in failed] == [("finding", "EMULATION")]
    assert "MoE (NvFp4) runs EMULATION (emulated" in failed[0]["message"] and doc["gate"]["counts"]["fail"] == 1
    assert doc["gate"]["verdict"] == "fail"
    assert "gate FAILED" in r.stderr and "EMULATION" in r.stderr


def test_native_real_log_passes():
    r, doc = gate_json(str(NATIVE))
    assert r.exit_code == 0
    assert doc["gate"]["verdict"] == "pass"
    assert [(c["kind"], c["kernel"], c["verdict"]) for c in doc["gate"]["checks"]] == [
        ("selection", "FLASHINFER_B12X", "pass")]


def test_weight_only_warns_but_passes_by_default():
    r, doc = gate_json(str(FP4_MARLIN))
    assert r.exit_code == 0
    assert doc["gate"]["verdict"] == "warn"
    assert {c["verdict"] for c in doc["gate"]["checks"]} == {"warn"}


def test_a_log_with_no_kernel_is_not_a_pass_by_silence(tmp_path):
    r, doc = gate_json(str(AWQ_FORCED))
    assert r.exit_code == 1
    assert [c["code"] for c in doc["gate"]["checks"] if c["verdict"] == "fail"] == ["NO_KERNEL_SEEN"]
    empty = tmp_path / "empty.log"
    empty.write_text("just some text\n")
    r, doc = gate_json(str(empty))
    assert r.exit_code == 1 and doc["gate"]["checks"][0]["code"] == "NO_KERNEL_SEEN"
    policy = tmp_path / "p.toml"
    policy.write_text('[[rule]]\nlevel = "warn"\ncodes = ["NO_KERNEL_SEEN"]\nreason = "models without quantization"\n')
    r, doc = gate_json("--policy", str(policy), str(AWQ_FORCED))
    assert r.exit_code == 0 and doc["gate"]["verdict"] == "warn"


#: vllm-011 and vllm-004 are crashed starts ("EngineCore/WorkerProc failed to start."), which the
#: default policy fails (START_FAILED, tested in test_start_failure.py); tests of the baseline and
#: scheme judgement on them let that one check pass and judge the rest.
START_FAILED_PASSES = '[[rule]]\nlevel = "pass"\ncodes = ["START_FAILED"]\nreason = "judged elsewhere"\n\n'


def _policy(tmp_path, text):
    p = tmp_path / "policy.toml"
    p.write_text(text)
    return str(p)


ALLOW = """
[[allow]]
cost_classes = ["weight_only"]
scheme = "NVFP4*"
reason = "pre-Blackwell canary pool, tracked in INFRA-123"
expires = 2026-03-31
"""


def test_expired_allow_list_entry_fails_and_says_so(tmp_path):
    policy = _policy(tmp_path, '[[rule]]\nlevel = "fail"\ncost_classes = ["weight_only"]\n' + ALLOW)
    r, doc = gate_json("--policy", policy, str(FP4_MARLIN))  # judged on 2026-06-01
    assert r.exit_code == 1
    checks = doc["gate"]["checks"]
    assert all(c["verdict"] == "fail" and c["allowance"]["expired"] for c in checks)
    assert all("EXPIRED on 2026-03-31" in c["message"] for c in checks)
    assert f"{policy}:" in checks[0]["allowance"]["where"]


def test_unexpired_allow_list_entry_passes_with_its_reason(tmp_path):
    policy = _policy(tmp_path, '[[rule]]\nlevel = "fail"\ncost_classes = ["weight_only"]\n' + ALLOW)
    r = run("gate", "--format", "json", "--today", "2026-03-31", "--policy", policy, str(FP4_MARLIN))
    assert r.exit_code == 0
    checks = json.loads(r.stdout)["gate"]["checks"]
    assert all(c["verdict"] == "pass" and "INFRA-123" in c["message"] for c in checks)


def test_an_expired_entry_also_fails_a_check_that_only_warned(tmp_path):
    r, doc = gate_json("--policy", _policy(tmp_path, ALLOW), str(FP4_MARLIN))
    assert r.exit_code == 1


def test_rules_per_scheme_and_per_engine(tmp_path):
    policy = _policy(tmp_path, START_FAILED_PASSES + """
[[rule]]
level = "fail"
engine = "vllm"
scheme = "NVFP4*"
cost_classes = ["weight_only"]
reason = "NVFP4 must run W4A4 on this fleet"
""")
    assert run("gate", "--policy", policy, str(FP4_MARLIN)).exit_code == 1  # NVFP4 W4A4 on Marlin
    assert run("gate", "--policy", policy, str(FP8_MARLIN)).exit_code == 0  # FP8 W8A8 on Marlin: default warn
    other = _policy(tmp_path, '[[rule]]\nlevel = "fail"\nengine = "sglang"\ncost_classes = ["weight_only"]\n')
    assert run("gate", "--policy", other, str(FP4_MARLIN)).exit_code == 0


def test_rules_on_kernels_match_logged_name_or_ladder_class(tmp_path):
    by_class = _policy(tmp_path, '[[rule]]\nlevel = "fail"\nkernels = ["Marlin*LinearKernel"]\n')
    r, doc = gate_json("--policy", by_class, str(FP4_MARLIN))  # logged "Marlin", class MarlinNvFp4LinearKernel
    assert r.exit_code == 1
    fails = [c for c in doc["gate"]["checks"] if c["verdict"] == "fail"]
    assert fails and fails[0]["kernel"] == "Marlin"
    native = _policy(tmp_path, '[[rule]]\nlevel = "fail"\nkernels = ["flashinfer_b12x"]\n')
    r, doc = gate_json("--policy", native, str(NATIVE))
    assert r.exit_code == 1 and doc["gate"]["checks"][0]["code"] == "KERNEL_POLICY"


def test_first_matching_rule_wins_and_defaults_can_be_dropped(tmp_path):
    allow_emu = _policy(tmp_path, '[[rule]]\nlevel = "pass"\ncost_classes = ["emulated"]\nreason = "CPU CI"\n')
    assert run("gate", "--policy", allow_emu, str(EMULATION)).exit_code == 0
    no_defaults = _policy(tmp_path, 'defaults = false\n[[rule]]\nlevel = "warn"\ncodes = ["SLOW_QUANT_METHOD"]\n')
    r, doc = gate_json("--policy", no_defaults, str(AWQ_FORCED))
    assert r.exit_code == 0 and doc["gate"]["verdict"] == "warn"


def test_engine_versions_scope(tmp_path):
    # vllm-016 logs its version (v0.5.4) and fails with UNSUPPORTED_ON_ARCH
    log = str(FIXTURES / "vllm" / "vllm-016.log")
    old = _policy(tmp_path, '[[rule]]\nlevel = "pass"\nversions = "<0.6"\ncodes = ["UNSUPPORTED_ON_ARCH", "NO_KERNEL_SEEN"]\n')
    assert run("gate", "--policy", old, log).exit_code == 0
    new = _policy(tmp_path, '[[rule]]\nlevel = "pass"\nversions = ">=0.6"\ncodes = ["UNSUPPORTED_ON_ARCH", "NO_KERNEL_SEEN"]\n')
    assert run("gate", "--policy", new, log).exit_code == 1


@pytest.mark.parametrize("text,line,key,words", [
    ('[[rule]]\nlevel = "fail"\ncost_classes = ["emulated"]\nlevle = "x"\n', 4, "rule[0].levle", "Extra inputs"),
    ('[[rule]]\nlevel = "fail"\ncodes = ["EMULATION"]\n\n[[rule]]\nlevel = "block"\ncodes = ["EMULATION"]\n',
     6, "rule[1].level", "'fail', 'warn' or 'pass'"),
    ('[[allow]]\ncodes = ["EMULATION"]\nreason = "x"\nexpires = "next year"\n', 4, "allow[0].expires", "date"),
    ('[[allow]]\ncodes = ["EMULATION"]\nexpires = 2026-01-01\n', 1, "allow[0].reason", "Field required"),
    ('[[rule]]\nlevel = "fail"\ncodes = ["EMULATON"]\n', 3, "rule[0].codes", "unknown finding code EMULATON"),
    ('[[rule]]\nlevel = "fail"\ncost_classes = ["slow"]\n', 3, "rule[0].cost_classes", "native"),
    ('[[rule]]\nlevel = "fail"\n', 1, "rule[0]", "names no target"),
    ('[[rule]]\nlevel = "fail"\nversions = "0.10"\ncodes = ["EMULATION"]\n', 3, "rule[0].versions", "PEP 440"),
    ('defaults = "yes"\n', 1, "defaults", "boolean"),
    ('[[rule]]\nlevel = "fail\n', 2, None, "invalid TOML"),
])
def test_policy_errors_name_file_line_and_key(tmp_path, text, line, key, words):
    path = _policy(tmp_path, text)
    r = run("gate", "--policy", path, str(NATIVE))
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    assert f"{path}:{line}" in r.stderr, r.stderr
    if key:
        assert f"(key {key})" in r.stderr, r.stderr
    assert words in r.stderr, r.stderr


def test_missing_policy_file_is_exit_2():
    r = run("gate", "--policy", "/nonexistent/policy.toml", str(NATIVE))
    assert r.exit_code == 2 and "/nonexistent/policy.toml" in r.stderr


def test_unreadable_input_is_never_exit_0(tmp_path):
    # a passing log next to an unreadable one: still 2, and still every format is written
    out = tmp_path / "j.xml"
    r = subprocess.run([sys.executable, "-m", "logscan.cli", "gate", "--output", f"junit={out}", str(NATIVE),
                        "/nonexistent/x.log"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "No such file" in r.stderr
    assert out.read_text().startswith("<?xml")
    d = tmp_path / "adir"
    d.mkdir()
    assert run("gate", str(d)).exit_code == 2


def test_bad_output_and_today_options_are_usage_errors():
    assert run("gate", "--output", "pdf=x.pdf", str(NATIVE)).exit_code == 2
    assert run("gate", "--today", "tomorrow", str(NATIVE)).exit_code == 2


def test_stdin_is_read_and_can_be_named():
    r = run("gate", "--format", "json", "--stdin-name", "server.log", "-", input=EMULATION.read_bytes())
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert {c["source"] for c in doc["gate"]["checks"]} == {"server.log"}


def test_outputs_are_written_to_files(tmp_path):
    j, s, m = tmp_path / "r.xml", tmp_path / "r.sarif", tmp_path / "s.md"
    r = run("gate", "--output", f"junit={j}", "--output", f"sarif={s}", "--output", f"markdown={m}",
            "--format", "github", str(EMULATION))
    assert r.exit_code == 1
    assert "<testsuites" in j.read_text() and json.loads(s.read_text())["version"] == "2.1.0"
    assert "FAIL" in m.read_text() and r.stdout.startswith("::error ")


def test_gate_is_a_function_of_the_report_from_the_one_pipeline():
    report = scan_inputs([str(EMULATION)])
    r, doc = gate_json(str(EMULATION))
    del doc["gate"]
    assert Report.model_validate(doc) == report
    # a report read back from JSON (no log at all) gets the same judgement
    from logscan.packs.loader import default_packs

    packs = default_packs()
    policy = load_policy(None, set(packs.findings.code), default_policy_path())
    again = Report.model_validate_json(report.model_dump_json())
    a = evaluate(report, policy, packs.findings, date(2026, 6, 1))
    b = evaluate(again, policy, packs.findings, date(2026, 6, 1))
    assert a == b and a.verdict == Verdict.fail


def test_default_policy_is_the_documented_one(packs):
    policy = load_policy(None, set(packs.findings.code), default_policy_path())
    levels = {}
    for loc in policy.rules:
        for x in [c.value for c in loc.item.cost_classes] + loc.item.codes:
            levels.setdefault(x, loc.item.level)
    assert {k for k, v in levels.items() if v == "fail"} >= {
        "emulated", "dequant_at_load", "KERNEL_NOT_FOUND", "UNSUPPORTED_ON_ARCH", "NO_KERNEL_SEEN"}
    assert levels["weight_only"] == "warn"


def test_parse_policy_rejects_unknown_codes_via_error_type(packs):
    with pytest.raises(PolicyError) as exc:
        parse_policy('[[rule]]\nlevel = "fail"\ncodes = ["NOPE"]\n', "p.toml", set(packs.findings.code))
    assert exc.value.line == 3 and exc.value.key == "rule[0].codes"


# ---- baselines ------------------------------------------------------------------------------

@pytest.fixture
def good_json(tmp_path):
    path = tmp_path / "good.json"
    r = run("scan", "--format", "json", str(NATIVE_CUTLASS))
    assert r.exit_code == 0
    path.write_text(r.stdout)
    return path


def _moe_rung(log):
    sel = next(s for run in scan_inputs([str(log)]).runs for s in run.selections if s.family == "MoE (NvFp4)")
    return sel.ladder.rung, sel.ladder.rungs


def test_baseline_fails_when_a_kernel_moved_down_its_ladder(good_json):
    # vllm-011 (known good): MoE (NvFp4) on Cutlass; vllm-024: MARLIN, lower on the same ladder
    (old, n), (new, _) = _moe_rung(NATIVE_CUTLASS), _moe_rung(MARLIN_SM120)
    assert old < new
    r, doc = gate_json("--baseline", str(good_json), str(MARLIN_SM120))
    assert r.exit_code == 1
    moved = [c for c in doc["gate"]["checks"] if c["code"] == "KERNEL_MOVED_DOWN"]
    assert {c["family"] for c in moved} == {"MoE (NvFp4)", "linear (NVFP4 GEMM) / linear (NVFP4)"}
    assert all(c["verdict"] == "fail" for c in moved)
    moe = next(c for c in moved if c["family"] == "MoE (NvFp4)")
    assert f"Cutlass {old}/{n} native -> MARLIN {new}/{n} weight_only" in moe["message"]
    # one family change is one check: KERNEL_MOVED_DOWN, naming the cost-class change it also is
    base = [c for c in doc["gate"]["checks"] if c["kind"] == "baseline"]
    assert len(base) == len({c["family"] for c in base}) == 2
    assert all("also COST_CLASS_CHANGED: cost class changed since the baseline (worse)" in c["message"] for c in base)


def test_baseline_against_itself_passes(good_json):
    r, doc = gate_json("--baseline", str(good_json), str(NATIVE_CUTLASS))
    assert r.exit_code == 0
    assert [c["code"] for c in doc["gate"]["checks"] if c["verdict"] == "fail"] == []
    assert {c["kind"] for c in doc["gate"]["checks"]} == {"selection", "baseline"}
    assert all(ch["status"] == "same" for ch in doc["gate"]["changes"])


def test_a_failed_start_is_refused_as_a_baseline(tmp_path):
    """Issue 12 case 4: vllm-011 says 'EngineCore failed to start.': its kernels never served."""
    bad = tmp_path / "good.json"
    r = run("scan", "--format", "json", str(FIXTURES / "vllm" / "vllm-011.log"))
    bad.write_text(r.stdout)
    for args in (["gate", "--baseline", str(bad), str(NATIVE_CUTLASS)], ["diff", str(bad), str(NATIVE_CUTLASS)],
                 ["gate", "--baseline", str(FIXTURES / "vllm" / "vllm-011.log"), str(NATIVE_CUTLASS)]):
        res = run(*args)
        assert res.exit_code == 2, args
        assert "is a failed start (line 9: EngineCore failed to start.)" in res.stderr


def test_baseline_family_missing_fails(good_json):
    r, doc = gate_json("--baseline", str(good_json), str(NATIVE))
    assert r.exit_code == 1
    assert "FAMILY_MISSING" in {c["code"] for c in doc["gate"]["checks"] if c["verdict"] == "fail"}


def test_baseline_can_be_a_gate_json_or_a_log(tmp_path, good_json):
    gated = tmp_path / "gated.json"
    gated.write_text(run("gate", "--format", "json", str(NATIVE_CUTLASS)).stdout)
    for base in (gated, NATIVE_CUTLASS):
        assert run("gate", "--baseline", str(base), str(MARLIN_SM120)).exit_code == 1
        assert run("gate", "--policy", _policy(tmp_path, START_FAILED_PASSES), "--baseline", str(base),
                   str(NATIVE_CUTLASS)).exit_code == 0


def test_broken_baseline_is_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"logscan_version": "0.1.0", "runs": [{"index": "x"}]}')
    r = run("gate", "--baseline", str(bad), str(NATIVE))
    assert r.exit_code == 2 and "not a valid logscan JSON report" in r.stderr
    assert run("gate", "--baseline", "/nonexistent.json", str(NATIVE)).exit_code == 2


def test_compare_ranks_by_rung_on_one_ladder_and_by_fell_across_ladders():
    old, new = scan_inputs([str(NATIVE_CUTLASS)]), scan_inputs([str(MARLIN_SM120)])
    ch = {c.family: c for c in compare(old, new)}
    moe = ch["MoE (NvFp4)"]
    assert (moe.old.rung, moe.new.rung, moe.status, moe.cost) == (
        _moe_rung(NATIVE_CUTLASS)[0], _moe_rung(MARLIN_SM120)[0], "down", "worse")
    back = {c.family: c for c in compare(new, old)}
    assert back["MoE (NvFp4)"].status == "up" and back["MoE (NvFp4)"].cost == "better"


def test_diff_shows_rung_by_rung_and_exits_1_on_regression(good_json):
    r = run("diff", str(good_json), str(MARLIN_SM120))
    assert r.exit_code == 1
    (old, n), (new, _) = _moe_rung(NATIVE_CUTLASS), _moe_rung(MARLIN_SM120)
    assert "Cutlass" in r.stdout and f"{old}/{n}" in r.stdout and f"{new}/{n}" in r.stdout
    assert "down, cost worse" in r.stdout
    r = run("diff", str(NATIVE_CUTLASS), str(good_json))
    assert r.exit_code == 0 and "same" in r.stdout
    r = run("diff", "--format", "json", str(NATIVE_CUTLASS), str(MARLIN_SM120))
    doc = json.loads(r.stdout)
    assert {c["status"] for c in doc["changes"]} == {"down"}
    assert run("diff", "/nonexistent.log", str(NATIVE)).exit_code == 2


def test_gate_json_validates_against_its_published_schema():
    import jsonschema

    schema = json.loads(run("schema", "--gate").stdout)
    _, doc = gate_json(str(EMULATION))
    jsonschema.validate(doc, schema)
    assert "gate" in schema["properties"] and "gate" not in json.loads(run("schema").stdout)["properties"]


def test_scan_fail_on_no_kernel_seen_agrees_with_the_gate():
    assert run("scan", "--fail-on", "NO_KERNEL_SEEN", str(AWQ_FORCED)).exit_code == 1
    assert run("scan", "--fail-on", "NO_KERNEL_SEEN", str(NATIVE)).exit_code == 0


def test_an_expired_entry_that_matches_nothing_warns_to_remove_it(tmp_path):
    r, doc = gate_json("--policy", _policy(tmp_path, ALLOW), str(NATIVE))  # native: nothing to allow
    assert r.exit_code == 0 and doc["gate"]["verdict"] == "warn"
    stale = [c for c in doc["gate"]["checks"] if c["kind"] == "allow"]
    assert len(stale) == 1 and "expired on 2026-03-31 and matched nothing" in stale[0]["message"]
    r, doc = gate_json("--today", "2026-03-01", "--policy", _policy(tmp_path, ALLOW), str(NATIVE))
    assert doc["gate"]["verdict"] == "pass"


@pytest.mark.parametrize("content, words", [
    ("{broken", "not valid JSON"),
    ('{"x":1}', 'no "logscan_version" key'),
    ("  [1, 2]\n", "not a logscan report"),
    ("", "is empty"),
    ("\n  \n", "is empty"),
])
def test_a_baseline_that_is_not_a_report_is_exit_2_naming_the_file(tmp_path, content, words):
    bad = tmp_path / "broken.json"
    bad.write_text(content)
    r = run("gate", "--baseline", str(bad), str(NATIVE))
    assert r.exit_code == 2 and "PASS" not in r.stdout
    assert str(bad) in r.stderr and words in r.stderr and len(r.stderr.strip().splitlines()) == 1
    d = run("diff", str(bad), str(NATIVE))
    assert d.exit_code == 2 and str(bad) in d.stderr and words in d.stderr
    d = run("diff", str(NATIVE), str(bad))
    assert d.exit_code == 2 and str(bad) in d.stderr


def test_a_baseline_with_no_kernel_selection_is_exit_2(tmp_path):
    # vllm-002 (real): a run with no kernel selection; a report of it, and a text file with no run at all
    saved = tmp_path / "nokernel.json"
    saved.write_text(run("scan", "--format", "json", str(AWQ_FORCED)).stdout)
    prose = tmp_path / "notes.txt"
    prose.write_text("not a log of an engine start\n")
    for base in (AWQ_FORCED, saved, prose):
        r = run("gate", "--baseline", str(base), str(NATIVE))
        assert r.exit_code == 2 and "baseline holds no kernel selection" in r.stderr and str(base) in r.stderr


def test_a_json_lines_log_is_still_a_log_side(tmp_path):
    # Docker json-file wrapping of a real log: starts with "{" but is a log, not a broken report
    lines = NATIVE_CUTLASS.read_text().splitlines()
    wrapped = tmp_path / "docker.log"
    wrapped.write_text("".join(json.dumps({"log": ln + "\n", "stream": "stderr", "time": "t"}) + "\n" for ln in lines))
    assert run("gate", "--policy", _policy(tmp_path, START_FAILED_PASSES), "--baseline", str(wrapped),
               str(NATIVE_CUTLASS)).exit_code == 0
    assert run("gate", "--baseline", str(wrapped), str(MARLIN_SM120)).exit_code == 1


def test_weight_only_line_is_one_warning_not_two():
    # vllm-005 (real): line 16 both selects Marlin for NVFP4 linear (weight_only) and raises
    # WEIGHT_ONLY_SUBSTITUTION: one problem, one check
    r, doc = gate_json(str(FP4_MARLIN))
    checks = doc["gate"]["checks"]
    assert doc["gate"]["counts"] == {"pass": 0, "warn": 1, "fail": 0}
    (c,) = checks
    assert (c["code"], c["line"], c["family"]) == ("WEIGHT_ONLY_SUBSTITUTION", 16, "linear (NVFP4)")
    assert "weight-only kernel substituted" in c["message"] and "runs Marlin (weight_only" in c["message"]
    assert "1 warn" in run("gate", "--today", "2026-06-01", str(FP4_MARLIN)).stdout


def test_a_policy_that_treats_the_codes_apart_keeps_the_most_severe(tmp_path, good_json):
    pol = tmp_path / "p.toml"
    pol.write_text('[[rule]]\nlevel = "warn"\ncodes = ["KERNEL_MOVED_DOWN"]\n\n'
                   '[[rule]]\nlevel = "fail"\ncodes = ["COST_CLASS_CHANGED"]\n')
    r, doc = gate_json("--policy", str(pol), "--baseline", str(good_json), str(MARLIN_SM120))
    base = [c for c in doc["gate"]["checks"] if c["kind"] == "baseline"]
    assert r.exit_code == 1 and len(base) == 2
    assert {(c["code"], c["verdict"]) for c in base} == {("COST_CLASS_CHANGED", "fail")}
    assert all("also KERNEL_MOVED_DOWN: moved down its ladder since the baseline (warn)" in c["message"] for c in base)


def test_gate_text_names_the_default_and_the_kind():
    out = run("gate", "--today", "2026-06-01", str(NATIVE)).stdout
    assert "decided by default: no policy rule matched" in out and "no rule matched\n" not in out
    assert " selection: MoE (NvFp4) runs FLASHINFER_B12X" in out
    # no check is placed at "-" (the RUNG legend under a table says what "-" means there)
    assert not [ln for ln in out.splitlines() if " -: " in ln and not ln.lstrip().startswith("RUNG -:")]


SGL_MARLIN = FIXTURES / "sglang" / "sglang-001.log"  # "Using Marlin kernel": family linear (quantized), format unstated
SGL_BLOCK_FP8 = FIXTURES / "sglang" / "sglang-002.log"  # linear + MoE block FP8 W8A8 on DeepGEMM


def test_a_family_that_names_no_scheme_pairs_with_the_one_family_of_its_kind():
    ch = {c.family: c for c in compare(scan_inputs([str(SGL_MARLIN)]), scan_inputs([str(SGL_BLOCK_FP8)]))}
    lin = ch["linear (quantized) / linear (block FP8 W8A8)"]
    assert (lin.old.kernel, lin.new.kernel, lin.status) == ("Marlin", "DeepGEMM", "moved")
    assert ch["MoE (block FP8 W8A8)"].status == "new"  # no old MoE family: nothing to pair it with
    assert not any(c.status == "missing" for c in ch.values())
    back = {c.family: c for c in compare(scan_inputs([str(SGL_BLOCK_FP8)]), scan_inputs([str(SGL_MARLIN)]))}
    assert back["linear (block FP8 W8A8) / linear (quantized)"].new.kernel == "Marlin"


def test_two_families_of_one_kind_are_not_paired_with_a_generic_one():
    from logscan.gate.baseline import _pair_generic, family_states
    a = family_states(scan_inputs([str(SGL_MARLIN)]))
    b = family_states(scan_inputs([str(SGL_BLOCK_FP8)]))
    twin = b["linear (block FP8 W8A8)"].model_copy(update={"family": "linear (FP8 W8A8)"})
    b["linear (FP8 W8A8)"] = twin
    assert _pair_generic(a, b) == [] and "linear (quantized)" in a  # which of the two moved is unknown


def test_diff_fails_when_the_new_start_failed_though_its_families_match():
    # vllm-011 logs the same NVFP4 kernels as its cut copy, then 'EngineCore failed to start.':
    # every family reads 'same', yet the new start never served (a false exit 0 before)
    failed = FIXTURES / "vllm" / "vllm-011.log"
    r = run("diff", str(NATIVE_CUTLASS), str(failed))
    assert r.exit_code == 1
    assert "same" in r.stdout and "new run 1: start FAILED at line 9" in r.stdout
    doc = json.loads(run("diff", "--format", "json", str(NATIVE_CUTLASS), str(failed)).stdout)
    assert {c["status"] for c in doc["changes"]} == {"same"}
    assert [(f["run"], f["what"], f["line"]) for f in doc["new_failures"]] == [(1, "start FAILED", 9)]
    ok = run("diff", "--format", "json", str(NATIVE_CUTLASS), str(NATIVE_CUTLASS))
    assert ok.exit_code == 0 and json.loads(ok.stdout)["new_failures"] == []


def test_a_warning_finding_no_rule_names_warns_by_default_and_a_policy_can_accept_it(tmp_path):
    # new-user trial: llama.cpp's 'offloaded 0/N layers to GPU' (llamacpp-161, a real RTX 2080 Ti
    # log: every layer on the CPU) gave BACKEND_OVERRIDE_IGNORED [warning] in scan and [pass] in the gate
    log = str(FIXTURES / "llamacpp" / "llamacpp-161.log")
    out = CliRunner().invoke(cli, ["gate", "--partial-log", "--format", "json", log]).stdout
    checks = {c["code"]: c for c in json.loads(out)["gate"]["checks"]}
    assert checks["BACKEND_OVERRIDE_IGNORED"]["verdict"] == "warn"
    assert "no rule above names its code" in checks["BACKEND_OVERRIDE_IGNORED"]["message"]
    pol = tmp_path / "p.toml"
    pol.write_text('[[rule]]\nlevel = "pass"\ncodes = ["BACKEND_OVERRIDE_IGNORED"]\nreason = "our CPU runners"\n')
    out = CliRunner().invoke(cli, ["gate", "--partial-log", "--format", "json", "--policy", str(pol), log]).stdout
    checks = {c["code"]: c for c in json.loads(out)["gate"]["checks"]}
    assert checks["BACKEND_OVERRIDE_IGNORED"]["verdict"] == "pass"


def test_a_severities_target_takes_findings_of_that_severity_only():
    from logscan.gate.policy import PolicyRule, Subject, matches
    rule = PolicyRule(level="fail", severities=["error"])
    assert matches(rule, Subject("vllm", None, None, None, code="KV_CACHE_UNSUPPORTED", severity="error"), {})
    assert not matches(rule, Subject("vllm", None, None, None, code="KV_CACHE_UNSUPPORTED", severity="warning"), {})
    assert not matches(rule, Subject("vllm", None, None, None, cost_class="native"), {})
    with pytest.raises(PolicyError):
        parse_policy('[[rule]]\nlevel = "warn"\nseverities = ["fatal"]\n', "p.toml", {"START_FAILED"})
