"""The README's CI-gate section stays true: its CI jobs are valid YAML that run ``logscan gate`` and
upload the JUnit/SARIF files, its policy example is a valid policy, its formats table is complete."""
from __future__ import annotations

import regex
import yaml

from logscan.cli import GATE_FORMATS
from logscan.gate.policy import parse_policy
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
GATE = README.split("## CI gate", 1)[1].split("\n## ", 1)[0]


def _block(after: str, lang: str) -> str:
    part = GATE.split(after, 1)[1]
    return regex.search(rf"```{lang}\n(.*?)```", part, flags=regex.S).group(1)


def test_github_actions_job_is_valid_yaml_that_gates_and_uploads():
    doc = yaml.safe_load(_block("### GitHub Actions", "yaml"))
    steps = doc["jobs"]["kernel-gate"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "vllm serve" in runs and "| logscan gate" in runs
    assert "junit=logscan-junit.xml" in runs and "sarif=logscan.sarif" in runs
    uploads = [s for s in steps if "upload" in s.get("uses", "")]
    assert any("logscan-junit.xml" in s["with"].get("path", "") for s in uploads)
    assert any(s["with"].get("sarif_file") == "logscan.sarif" for s in uploads)
    assert all(s.get("if") == "always()" for s in uploads)


def test_gitlab_ci_job_is_valid_yaml_that_gates_and_uploads():
    doc = yaml.safe_load(_block("### GitLab CI", "yaml"))
    job = doc["kernel-gate"]
    script = "\n".join(job["script"])
    assert "vllm serve" in script and "| logscan gate" in script
    assert job["artifacts"]["reports"]["junit"] == "logscan-junit.xml"
    assert "gl-logscan.sarif" in job["artifacts"]["paths"] and job["artifacts"]["when"] == "always"


def test_policy_example_is_a_valid_policy(packs):
    pf = parse_policy(_block("**Policy file**", "toml"), "README.md", set(packs.findings.code))
    assert pf.rule[0].level == "fail" and pf.allow[0].reason


def test_formats_table_lists_every_gate_format():
    listed = set(regex.findall(r"^\| `(\w+)` \|", GATE.split("**Formats**", 1)[1], flags=regex.M))
    assert listed == set(GATE_FORMATS)
