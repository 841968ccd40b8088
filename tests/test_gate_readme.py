"""docs/ci-gate.md stays true: its CI examples use this project's action and template (never
the package index's unrelated ``logscan``), its policy example is a valid policy, its formats
table is complete."""
from __future__ import annotations

import regex
import yaml

from logscan.cli import GATE_FORMATS
from logscan.gate.policy import parse_policy
from tests.conftest import ROOT

GATE = (ROOT / "docs" / "ci-gate.md").read_text()


def _block(after: str, lang: str) -> str:
    part = GATE.split(after, 1)[1]
    return regex.search(rf"```{lang}\n(.*?)```", part, flags=regex.S).group(1)


def test_github_workflow_uses_the_action_and_uploads_its_reports():
    doc = yaml.safe_load(_block("## GitHub Actions", "yaml"))
    steps = doc["jobs"]["kernel-gate"]["steps"]
    (gate,) = [s for s in steps if s.get("id") == "gate"]
    assert gate["uses"].endswith("@v1") and gate["with"]["log"] == "server.log"
    assert "security-events" in doc["jobs"]["kernel-gate"]["permissions"]
    uploads = [s for s in steps if "upload-artifact" in s.get("uses", "")]
    assert uploads and all(s.get("if") == "always()" for s in uploads)
    assert "steps.gate.outputs.report-dir" in uploads[0]["with"]["path"]


def test_gitlab_example_extends_the_template_with_this_projects_source():
    doc = yaml.safe_load(_block("## GitLab CI", "yaml"))
    assert doc["include"][0]["file"] == "ci/gitlab/logscan.gitlab-ci.yml"
    assert (ROOT / doc["include"][0]["file"]).is_file()
    job = doc["kernel-gate"]
    assert job["extends"] == ".logscan-gate" and job["variables"]["LOGSCAN_SOURCE"].startswith("git+")


def test_policy_example_is_a_valid_policy(packs):
    pf = parse_policy(_block("**Policy file**", "toml"), "docs/ci-gate.md", set(packs.findings.code))
    assert pf.rule[0].level == "fail" and pf.allow[0].reason


def test_formats_table_lists_every_gate_format():
    listed = set(regex.findall(r"^\| `(\w+)` \|", GATE.split("**Formats**", 1)[1].split("\n## ", 1)[0], flags=regex.M))
    assert listed == set(GATE_FORMATS)
