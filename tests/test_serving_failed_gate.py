"""The gate fails a start that came up and then failed (SERVING_FAILED, trial 6): the scan reads
such a run as a failure while serving, not START_FAILED (docs/lifecycle.md), and before this check
a smoke test whose engine crashed on its first request passed the default gate."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES

SERVING = ["vllm/vllm-160", "vllm/vllm-161", "sglang/sglang-160", "sglang/sglang-161", "sglang/sglang-162",
           "sglang/sglang-111"]


def _gate(*args: str) -> tuple[int, dict]:
    p = subprocess.run([sys.executable, "-m", "logscan", "gate", "--format", "json", *args],
                       capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout)["gate"]


@pytest.mark.parametrize("name", SERVING)
def test_a_failure_while_serving_fails_the_default_gate_even_on_a_partial_log(name):
    # --partial-log: START_INCOMPLETE unjudged, so only the serving failure can fail the gate
    rc, g = _gate("--partial-log", str(FIXTURES / f"{name}.log"))
    got = [(c["code"], c["verdict"]) for c in g["checks"] if c["code"] in ("SERVING_FAILED", "START_FAILED")]
    assert got == [("SERVING_FAILED", "fail")], got
    assert rc == 1 and g["verdict"] == "fail"
    (c,) = [c for c in g["checks"] if c["code"] == "SERVING_FAILED"]
    assert "the engine failed after it came up" in c["message"]


def test_a_failed_start_is_start_failed_not_serving_failed():
    rc, g = _gate(str(FIXTURES / "vllm" / "vllm-200.log"))
    codes = [c["code"] for c in g["checks"]]
    assert "START_FAILED" in codes and "SERVING_FAILED" not in codes and rc == 1


def test_a_policy_can_warn_on_it(tmp_path):
    pol = tmp_path / "p.toml"
    pol.write_text('[[rule]]\nlevel = "warn"\ncodes = ["SERVING_FAILED"]\nreason = "known flaky request"\n')
    rc, g = _gate("--partial-log", "--policy", str(pol), str(FIXTURES / "vllm" / "vllm-160.log"))
    (c,) = [c for c in g["checks"] if c["code"] == "SERVING_FAILED"]
    assert c["verdict"] == "warn"
