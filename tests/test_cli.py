"""The command line as a user meets it: exit statuses, formats, errors without tracebacks."""
from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES

FP4_MARLIN = FIXTURES / "vllm" / "vllm-005.log"  # NVFP4 on Marlin W4A16 (weight-only), two TP ranks
NATIVE = FIXTURES / "vllm" / "vllm-009.log"  # NVFP4 MoE on FLASHINFER_B12X (native)


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_json_report_has_kernel_cost_class_code_and_events():
    r = run("scan", "--format", "json", str(FP4_MARLIN))
    assert r.exit_code == 0
    doc = json.loads(r.output)
    sel = doc["runs"][0]["selections"][0]
    assert sel["kernel"] == "Marlin" and sel["cost_class"] == "weight_only"
    assert sel["ladder"]["kernel_class"] == "MarlinNvFp4LinearKernel"
    assert sel["ranks"] == ["TP0", "TP1"]
    assert {f["code"] for f in doc["runs"][0]["findings"]} == {"WEIGHT_ONLY_SUBSTITUTION"}
    assert all("line" in e and "rule" in e for e in doc["events"])


def test_fail_on_cost_class_exits_1_and_native_log_exits_0():
    assert run("scan", "--fail-on", "weight_only", str(FP4_MARLIN)).exit_code == 1
    assert run("scan", "--fail-on", "weight_only,emulated", str(NATIVE)).exit_code == 0


def test_fail_on_finding_code():
    assert run("scan", "--fail-on", "WEIGHT_ONLY_SUBSTITUTION", str(FP4_MARLIN)).exit_code == 1


def test_fail_on_unknown_value_is_a_usage_error():
    r = run("scan", "--fail-on", "slow", str(FP4_MARLIN))
    assert r.exit_code == 2 and "unknown cost class or finding code" in r.output


def test_missing_file_exits_2_with_one_line():
    r = subprocess.run([sys.executable, "-m", "logscan.cli", "scan", "/nonexistent/x.log"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "No such file" in r.stderr
    # the path once, on stderr (docs/fail-closed.md: an input that cannot be opened has no report)
    assert r.stdout == "" and r.stderr.count("/nonexistent/x.log") == 1


def test_stdin_dash_is_read():
    r = run("scan", "--format", "json", "-", input=FP4_MARLIN.read_bytes())
    assert r.exit_code == 0
    assert json.loads(r.output)["runs"][0]["selections"][0]["cost_class"] == "weight_only"


def test_several_inputs_give_runs_of_each():
    r = run("scan", "--format", "json", str(FP4_MARLIN), str(NATIVE))
    sources = [run_["source"] for run_ in json.loads(r.output)["runs"]]
    assert sources == [str(FP4_MARLIN), str(NATIVE)]


def test_schema_is_json_schema_of_the_report():
    doc = json.loads(run("schema").output)
    assert doc["title"] == "Report" and "Selection" in doc["$defs"]


def test_schema_lists_exactly_the_event_fields_the_json_carries():
    """``Event.pid`` / ``timestamp`` tell starts apart inside the analyzer and are excluded from
    the report: the published schema must not promise them either."""
    doc = json.loads(run("schema").output)
    report = json.loads(run("scan", "--format", "json", str(FP4_MARLIN)).output)
    carried = {k for ev in report["events"] for k in ev}
    listed = set(doc["$defs"]["Event"]["properties"])
    assert carried and carried <= listed
    assert not {"pid", "timestamp"} & listed


def test_broken_pack_is_named_and_exits_2(tmp_path):
    import shutil
    from logscan.packs.loader import patterns_root

    dst = tmp_path / "patterns"
    shutil.copytree(patterns_root(), dst)
    (dst / "vllm" / "rules" / "99-bad.toml").write_text(
        '[[rule]]\nid = "vllm.bad.regex"\nkind = "failure"\npattern = "(unclosed"\n'
        'keywords = ["x"]\nexamples = ["x"]\n')
    r = run("scan", "--patterns", str(dst), str(FP4_MARLIN))
    assert r.exit_code == 2
    assert "99-bad.toml" in r.output and "vllm.bad.regex" in r.output and "broken regex" in r.output


def test_unknown_pack_key_is_named(tmp_path):
    import shutil
    from logscan.packs.loader import patterns_root

    dst = tmp_path / "patterns"
    shutil.copytree(patterns_root(), dst)
    (dst / "vllm" / "rules" / "99-bad.toml").write_text(
        '[[rule]]\nid = "vllm.bad.key"\nkind = "failure"\npattern = "x"\nkeywords = ["x"]\n'
        'examples = ["x"]\nseverity = "high"\n')
    r = run("packs", "--patterns", str(dst))
    assert r.exit_code == 2 and "severity" in r.output and "99-bad.toml" in r.output
