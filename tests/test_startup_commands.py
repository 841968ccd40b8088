"""Start-up of every subcommand a user runs once per log (issue 18): on its warm path (the pack
cache and the validated-file cache filled by an earlier start), none imports pydantic or the other
heavy modules it does not use. A probe runs the command in a subprocess and lists ``sys.modules``.

No timing here: ``bench/startup.py`` prints the figures (docs/startup.md).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES
from tests.test_startup_imports import PROBE  # run the CLI, then print the modules it imported

LOG = str(FIXTURES / "vllm" / "vllm-005.log")
OTHER = str(FIXTURES / "vllm" / "vllm-022.log")


#: imported by no warm start of these subcommands (``schema`` is the one whose point is pydantic)
HEAVY = {"pydantic", "pydantic_core", "logscan.validate", "jsonschema", "rich", "logscan.formats.html",
         "annotated_types"}


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    cache = tmp_path_factory.mktemp("cache")
    e = {**os.environ, "LOGSCAN_CACHE_DIR": str(cache)}
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    return e


@pytest.fixture(scope="module")
def saved_report(env, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("report") / "good.json"
    r = subprocess.run([sys.executable, "-m", "logscan", "scan", "--format", "json", LOG], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    path.write_text(r.stdout)
    return str(path)


def _modules(env: dict, args: list[str]) -> set[str]:
    def once() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                              timeout=180, env=env)

    once()  # the first start of this code may validate pack files (a cold cache imports pydantic)
    r = once()
    line = [ln for ln in r.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, r.stderr
    return set(line[-1].split()[1:])


def _top(mods: set[str]) -> set[str]:
    return {m for m in mods if m in HEAVY or m.split(".")[0] in HEAVY}


#: subcommand -> (arguments, a module its run must show: the probe did run it, modules it must not load)
CASES = {
    "scan text": (["scan", LOG], "logscan.formats.text", {"logscan.gate.evaluate", "logscan.analysis.predict",
                                                         "prometheus_client"}),
    "scan json": (["scan", "--format", "json", LOG], "logscan.formats.json",
                  {"logscan.gate.evaluate", "logscan.formats.text", "prometheus_client"}),
    "gate": (["gate", LOG], "logscan.gate.evaluate", {"logscan.analysis.predict", "prometheus_client",
                                                      "tomllib"}),  # the policy text was seen before
    "gate sarif": (["gate", "--format", "sarif", LOG], "logscan.formats.sarif", {"prometheus_client"}),
    "gate junit": (["gate", "--format", "junit", LOG], "logscan.formats.junit", {"prometheus_client"}),
    "diff logs": (["diff", LOG, OTHER], "logscan.gate.baseline", {"logscan.gate.evaluate", "prometheus_client"}),
    "explain": (["explain", "marlin"], "logscan.analysis.predict", {"logscan.pipeline", "hyperscan",
                                                                  "prometheus_client"}),
    "ladder": (["ladder", "vllm", "NVFP4", "--gpu", "H100"], "logscan.analysis.predict",
               {"logscan.pipeline", "hyperscan", "prometheus_client"}),
    "matrix": (["matrix", "NVFP4", "--gpu", "H100"], "logscan.analysis.predict",
               {"logscan.pipeline", "hyperscan", "prometheus_client"}),
    "codes": (["codes"], "logscan.packs.loader", {"logscan.pipeline", "logscan.analysis.predict", "hyperscan"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_warm_start_imports_no_pydantic_and_nothing_heavy_it_does_not_use(env, case):
    args, ran, unused = CASES[case]
    mods = _modules(env, args)
    assert ran in mods, (case, "the probe did not run the command")
    assert not _top(mods), (case, sorted(_top(mods)))
    assert not (mods & unused), (case, sorted(mods & unused))


@pytest.mark.parametrize("cmd", ["gate", "diff"])
def test_a_saved_report_as_baseline_or_side_is_read_without_pydantic(env, saved_report, cmd):
    args = ["gate", "--baseline", saved_report, LOG] if cmd == "gate" else ["diff", saved_report, OTHER]
    mods = _modules(env, args)
    assert "logscan.gate.baseline" in mods and "logscan.plaincheck" in mods  # the report was validated
    assert not _top(mods), sorted(_top(mods))


def test_a_damaged_saved_report_is_judged_by_pydantic_with_its_message(env, saved_report, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(open(saved_report).read().replace('"kernel":', '"kernal":', 1))
    r = subprocess.run([sys.executable, "-m", "logscan", "diff", str(bad), OTHER], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 2
    assert "not a valid logscan JSON report: runs.0.selections.0.kernel: Field required" in r.stderr


def test_a_custom_policy_is_cached_validated_and_a_bad_one_still_names_its_line(env, tmp_path):
    good = tmp_path / "policy.toml"
    good.write_text('[[rule]]\nlevel = "fail"\nkernels = ["*marlin*"]\n')
    mods = _modules(env, ["gate", "--policy", str(good), LOG])
    assert "logscan.gate.policy" in mods and not _top(mods), sorted(_top(mods))
    assert "tomllib" not in mods  # read validated from the cache, keyed by its text
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nlevel = "fail"\n')
    r = subprocess.run([sys.executable, "-m", "logscan", "gate", "--policy", str(bad), LOG], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 2
    assert f"{bad}:1 (key rule[0]): names no target" in r.stderr


def test_follow_starts_without_pydantic(env):
    args = ["follow", "--metrics-addr", "127.0.0.1:0", "--poll-interval", "0.05", LOG]
    subprocess.run([sys.executable, "-m", "logscan", "scan", LOG], env=env, capture_output=True, timeout=120)
    proc = subprocess.Popen([sys.executable, "-c", PROBE, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert first.startswith('{"type":"selection"'), first
    line = [ln for ln in err.splitlines() if ln.startswith("MODULES ")]
    assert line, err
    mods = set(line[-1].split()[1:])
    assert "logscan.follow.runner" in mods and "prometheus_client" in mods  # it served metrics
    assert not _top(mods), sorted(_top(mods))
