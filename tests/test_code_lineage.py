"""Finding codes a user filters on are stable: ``ARCH_NOT_COMPILED`` is a documented child of
``UNSUPPORTED_ON_ARCH`` (``patterns/findings.toml`` ``parent``), and ``--fail-on`` and gate
policies that name the parent take the child too.

Real log: fixtures/llamacpp/llamacpp-109.log (RTX 5090 D, compute capability 12.0, a build
whose ``ARCHS`` stop at 900: ARCH_NOT_COMPILED, inferred; no line states a failure).
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from logscan.cli import cli
from logscan.packs.loader import default_packs
from logscan.packs.model import FindingsFile
from tests.conftest import FIXTURES

OLD_BUILD_5090 = str(FIXTURES / "llamacpp" / "llamacpp-109.log")


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_the_child_names_its_parent():
    f = default_packs().findings
    assert f.lineage("ARCH_NOT_COMPILED") == ("ARCH_NOT_COMPILED", "UNSUPPORTED_ON_ARCH")
    assert f.covers("UNSUPPORTED_ON_ARCH", "ARCH_NOT_COMPILED")
    assert not f.covers("ARCH_NOT_COMPILED", "UNSUPPORTED_ON_ARCH")  # the child does not take the parent
    assert f.lineage("EMULATION") == ("EMULATION",)


def test_real_log_reports_the_child():
    doc = json.loads(run("scan", "--format", "json", OLD_BUILD_5090).stdout)
    assert [x["code"] for r in doc["runs"] for x in r["findings"]] == ["ARCH_NOT_COMPILED"]


@pytest.mark.parametrize("fail_on,exit_code", [
    ("UNSUPPORTED_ON_ARCH", 1),  # the parent takes the child
    ("ARCH_NOT_COMPILED", 1),
    ("EMULATION", 0),
])
def test_fail_on_takes_children(fail_on, exit_code):
    r = run("scan", "--fail-on", fail_on, OLD_BUILD_5090)
    assert r.exit_code == exit_code, r.output


def test_gate_policy_naming_the_parent_takes_the_child(tmp_path):
    pol = tmp_path / "p.toml"
    pol.write_text('defaults = false\n[[rule]]\nlevel = "fail"\ncodes = ["UNSUPPORTED_ON_ARCH"]\nreason = "arch"\n')
    r = run("gate", "--format", "json", "--today", "2026-06-01", "--policy", str(pol), OLD_BUILD_5090)
    doc = json.loads(r.stdout)
    failed = [c for c in doc["gate"]["checks"] if c["verdict"] == "fail"]
    assert [c["code"] for c in failed] == ["ARCH_NOT_COMPILED"] and r.exit_code == 1
    pol.write_text('defaults = false\n[[rule]]\nlevel = "fail"\ncodes = ["KERNEL_NOT_FOUND"]\nreason = "x"\n')
    r = run("gate", "--format", "json", "--today", "2026-06-01", "--policy", str(pol), OLD_BUILD_5090)
    assert not [c for c in json.loads(r.stdout)["gate"]["checks"] if c["verdict"] == "fail"]


def test_a_stated_parent_replaces_the_inferred_child(tmp_path):
    # The fatal no-device-code line (ggml common.cuh no_device_code) states what the ARCHS list
    # implies: one UNSUPPORTED_ON_ARCH, no second, inferred ARCH_NOT_COMPILED.
    log = tmp_path / "b200.log"
    log.write_text(
        "ggml_cuda_init: found 1 CUDA devices:\n"
        "  Device 0: NVIDIA B200, compute capability 10.0, VMM: yes\n"
        "system_info: n_threads = 16 | CUDA : ARCHS = 750,800,860,890,900 | USE_GRAPHS = 1 |\n"
        "ggml/src/ggml-cuda/mmq.cuh:3884: ERROR: CUDA kernel mul_mat_q has no device code compatible with "
        "CUDA arch 1000. ggml-cuda.cu was compiled for: 750,800,860,890,900\n")
    doc = json.loads(run("scan", "--format", "json", str(log)).stdout)
    assert [x["code"] for r in doc["runs"] for x in r["findings"]] == ["UNSUPPORTED_ON_ARCH"]


def test_a_parent_must_exist_and_not_loop():
    base = {"severity": "warning", "title": "t", "explanation": "e"}
    with pytest.raises(ValidationError, match="not a finding code"):
        FindingsFile(code={"A": {**base, "parent": "B"}})
    with pytest.raises(ValidationError, match="loops"):
        FindingsFile(code={"A": {**base, "parent": "B"}, "B": {**base, "parent": "A"}})
