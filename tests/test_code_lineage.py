"""Finding codes a user filters on are stable: ``ARCH_NOT_COMPILED`` is a documented child of
``UNSUPPORTED_ON_ARCH`` (``patterns/findings.toml`` ``parent``), and ``--fail-on`` and gate
policies that name the parent take the child too.

Real logs: fixtures/llamacpp/llamacpp-109.log (RTX 5090 D, compute capability 12.0, a build whose
``ARCHS`` stop at 900: only an older family, PTX_JIT_FALLBACK, inferred, no parent) and llamacpp-140
(the official Windows release on sm89, ARCHS up to 750, working: the same inferred state). The child
ARCH_NOT_COMPILED (nothing at or below the device) is checked on a Tesla P40 (sm61) against ARCHS
750,800: no device code at all.
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
WINDOWS_RELEASE_4060 = str(FIXTURES / "llamacpp" / "llamacpp-140.log")
P40_ON_TURING_BUILD = (
    "ggml_cuda_init: found 1 CUDA devices:\n"
    "  Device 0: Tesla P40, compute capability 6.1, VMM: yes\n"
    "system_info: n_threads = 16 | CUDA : ARCHS = 750,800 | USE_GRAPHS = 1 |\n"
)


@pytest.fixture()
def p40_build(tmp_path):
    p = tmp_path / "p40.log"
    p.write_text(P40_ON_TURING_BUILD)
    return str(p)


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_the_child_names_its_parent():
    f = default_packs().findings
    assert f.lineage("ARCH_NOT_COMPILED") == ("ARCH_NOT_COMPILED", "UNSUPPORTED_ON_ARCH")
    assert f.covers("UNSUPPORTED_ON_ARCH", "ARCH_NOT_COMPILED")
    assert not f.covers("ARCH_NOT_COMPILED", "UNSUPPORTED_ON_ARCH")  # the child does not take the parent
    assert f.lineage("EMULATION") == ("EMULATION",)


def test_a_build_with_nothing_at_or_below_the_device_reports_the_child(p40_build):
    doc = json.loads(run("scan", "--format", "json", p40_build).stdout)
    assert [x["code"] for r in doc["runs"] for x in r["findings"]] == ["ARCH_NOT_COMPILED"]


@pytest.mark.parametrize("log", [OLD_BUILD_5090, WINDOWS_RELEASE_4060])
def test_a_build_of_only_an_older_family_may_run_by_ptx_jit(log):
    # the ARCHS list does not say whether the older arch's PTX is embedded (ggml's default build
    # embeds it and works, llamacpp-140; a real-only build fails): a warning of its own, no refusal
    doc = json.loads(run("scan", "--format", "json", log).stdout)
    assert [x["code"] for r in doc["runs"] for x in r["findings"]] == ["PTX_JIT_FALLBACK"]
    assert default_packs().findings.lineage("PTX_JIT_FALLBACK") == ("PTX_JIT_FALLBACK",)


@pytest.mark.parametrize("fail_on,exit_code", [
    ("UNSUPPORTED_ON_ARCH", 1),  # the parent takes the child
    ("ARCH_NOT_COMPILED", 1),
    ("EMULATION", 0),
])
def test_fail_on_takes_children(fail_on, exit_code, p40_build):
    r = run("scan", "--fail-on", fail_on, p40_build)
    assert r.exit_code == exit_code, r.output


@pytest.mark.parametrize("fail_on,exit_code", [("UNSUPPORTED_ON_ARCH", 0), ("ARCH_NOT_COMPILED", 0), ("PTX_JIT_FALLBACK", 1)])
def test_a_filter_on_the_refusal_leaves_a_working_older_build_alone(fail_on, exit_code):
    r = run("scan", "--fail-on", fail_on, WINDOWS_RELEASE_4060)
    assert r.exit_code == exit_code, r.output


def test_the_default_gate_does_not_fail_a_working_default_build():
    r = run("gate", "--format", "json", "--today", "2026-06-01", WINDOWS_RELEASE_4060)
    doc = json.loads(r.stdout)
    verdicts = {c.get("code"): c["verdict"] for c in doc["gate"]["checks"]}
    # a warning no rule names warns (the default policy's severity rules), it does not fail
    # (the window's NO_KERNEL_SEEN still fails it: no kernel shown)
    assert verdicts["PTX_JIT_FALLBACK"] == "warn"


def test_gate_policy_naming_the_parent_takes_the_child(tmp_path, p40_build):
    pol = tmp_path / "p.toml"
    pol.write_text('defaults = false\n[[rule]]\nlevel = "fail"\ncodes = ["UNSUPPORTED_ON_ARCH"]\nreason = "arch"\n')
    r = run("gate", "--format", "json", "--today", "2026-06-01", "--policy", str(pol), p40_build)
    doc = json.loads(r.stdout)
    failed = [c for c in doc["gate"]["checks"] if c["verdict"] == "fail"]
    assert [c["code"] for c in failed] == ["ARCH_NOT_COMPILED"] and r.exit_code == 1
    pol.write_text('defaults = false\n[[rule]]\nlevel = "fail"\ncodes = ["KERNEL_NOT_FOUND"]\nreason = "x"\n')
    r = run("gate", "--format", "json", "--today", "2026-06-01", "--policy", str(pol), p40_build)
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
