"""A CI walk-through: the documented GitHub Actions and GitLab CI jobs' logscan commands, run
verbatim in a shell, with this checkout's ``logscan`` on PATH in place of an install from the
package index (issue 12, "Done when").

Where the examples live may change (README.md or docs/*.md), so they are found by shape, not by
heading: every ```yaml block of README.md and docs/*.md is parsed; a GitHub Actions job is a
document with ``jobs.<job>.steps`` whose ``run`` mentions ``logscan``; a GitLab CI job is a top-level
mapping with a ``script`` list that mentions ``logscan``. A block preceded by the HTML comment
``<!-- ci-example: github -->`` or ``<!-- ci-example: gitlab -->`` is taken first when present.
The policy is the documented policy example (the ```toml block holding ``[[rule]]``), written
where the jobs expect it (``.ci/gate.toml``), the baseline a JSON report of a known-good start
(``.ci/good.json``). Steps that install (``pip install``) or start the engine (``vllm serve``,
``curl``, ``kill``) are not run: ``server.log`` is a real log put there instead.
Allow-list expiry is judged on a fixed date (``LOGSCAN_TODAY``) so the result does not depend on
the day the tests run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import regex
import yaml

from tests.conftest import FIXTURES, ROOT

DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
_FENCE = regex.compile(r"(?:<!--\s*ci-example:\s*(\w+)\s*-->\s*\n)?```(yaml|toml)\n(.*?)```", flags=regex.S)
NOT_RUN = regex.compile(r"\b(pip install|vllm serve|curl|kill|timeout 900)\b")


def _blocks():
    for doc in DOCS:
        for m in _FENCE.finditer(doc.read_text(encoding="utf-8")):
            yield m.group(1), m.group(2), m.group(3)


def _github_commands() -> list[str]:
    found = []
    for marker, lang, text in _blocks():
        if lang != "yaml":
            continue
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), dict):
            continue
        for job in doc["jobs"].values():
            runs = [s["run"] for s in (job or {}).get("steps", []) if isinstance(s, dict) and "run" in s]
            if any("logscan" in r for r in runs):
                found.append((marker != "github", runs))
    assert found, "no GitHub Actions job running logscan in README.md or docs/*.md"
    return sorted(found, key=lambda f: f[0])[0][1]


def _gitlab_commands() -> list[str]:
    found = []
    for marker, lang, text in _blocks():
        if lang != "yaml":
            continue
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        if not isinstance(doc, dict) or "jobs" in doc or "apiVersion" in doc:
            continue
        for job in doc.values():
            script = job.get("script") if isinstance(job, dict) else None
            if isinstance(script, list) and any("logscan" in str(c) for c in script):
                found.append((marker != "gitlab", [str(c) for c in script]))
    assert found, "no GitLab CI job running logscan in README.md or docs/*.md"
    return sorted(found, key=lambda f: f[0])[0][1]


def _policy() -> str:
    for _, lang, text in _blocks():
        if lang == "toml" and "[[rule]]" in text and "level" in text:
            return text
    raise AssertionError("no policy example ([[rule]] toml block) in README.md or docs/*.md")


def _logscan_bin(tmp: Path) -> Path:
    """A bin folder whose ``logscan`` is this checkout's (the local install in place of the index)."""
    bindir = tmp / "bin"
    bindir.mkdir()
    exe = bindir / "logscan"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} -m logscan.cli \"$@\"\n")
    exe.chmod(0o755)
    return bindir


def _workspace(tmp_path: Path, log: Path, good_json: str) -> dict:
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "gate.toml").write_text(_policy())
    shutil.copy(log, tmp_path / "server.log")
    (tmp_path / ".ci" / "good.json").write_text(good_json)
    env = dict(os.environ, PATH=f"{_logscan_bin(tmp_path)}{os.pathsep}{os.environ['PATH']}",
               LOGSCAN_TODAY="2026-06-01", GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
               MODEL="nvidia/Qwen3-30B-A3B-NVFP4")
    return env


def _run(commands: list[str], cwd: Path, env: dict) -> list[tuple[str, int]]:
    out = []
    for cmd in commands:
        if "logscan" not in cmd or NOT_RUN.search(cmd):
            continue
        r = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in r.stderr, r.stderr
        out.append((cmd, r.returncode))
    assert out, "no logscan command to run"
    return out


GOOD = FIXTURES / "vllm" / "vllm-009.log"  # NVFP4 MoE on FLASHINFER_B12X: native
BAD = ROOT / "tests" / "data" / "constructed-emulation.log"  # the same start on the EMULATION backend


@pytest.fixture(scope="module")
def good_json() -> str:
    r = subprocess.run([sys.executable, "-m", "logscan.cli", "scan", "--format", "json", str(GOOD)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("ci", ["github", "gitlab"])
@pytest.mark.parametrize("log,status", [(GOOD, 0), (BAD, 1)], ids=["native", "emulation"])
def test_documented_ci_job_runs_verbatim_with_the_documented_exit_codes(tmp_path, good_json, ci, log, status):
    commands = _github_commands() if ci == "github" else _gitlab_commands()
    env = _workspace(tmp_path, log, good_json)
    results = _run(commands, tmp_path, env)
    gates = [(c, rc) for c, rc in results if "logscan gate" in c]
    assert gates, results
    for cmd, rc in gates:
        assert rc == status, f"{cmd!r} exited {rc}, expected {status}"
    for name in ("logscan-junit.xml",):
        assert (tmp_path / name).stat().st_size > 0
    assert any((tmp_path / n).exists() and (tmp_path / n).stat().st_size > 0
               for n in ("logscan.sarif", "gl-logscan.sarif"))
    if ci == "github":  # the summary step ran and appended the markdown report
        assert "logscan gate" in (tmp_path / "summary.md").read_text()
