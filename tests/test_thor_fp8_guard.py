"""vLLM's CUTLASS FP8 GEMM on Thor (sm110), by release (trial 38, /tmp/t38/a-vllm39712.log:
"This kernel only supports sm100f."): csrc/cutlass_extensions/common.hpp ``enable_sm100f_only``
admits __CUDA_ARCH__ 1000 / 1030 only in 0.16.0-0.20.2 (read in each sdist); 0.21.0 has
``enable_sm100_to_sm120`` (PR #39712). Data: patterns/planning/vllm.toml ``[[add]]``."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.cli import cli


def _cutlass(gpu, version, cuda="13.0"):
    r = CliRunner().invoke(cli, ["ladder", "vllm", "FP8", "--gpu", gpu, "--cuda", cuda,
                                 "--engine-version", version, "--format", "json"])
    assert r.exit_code == 0, r.output
    w = json.loads(r.output)
    return w, next(x for x in w["rungs"] if x["kernel"] == "CutlassFP8ScaledMMLinearKernel")


@pytest.mark.parametrize("version", ["0.16.0", "0.19.1", "0.20.2"])
def test_trial38_thor_cutlass_fp8_fails_before_0_21(version):
    w, rung = _cutlass("Thor", version)
    assert rung["verdict"] == "fails"
    assert any(t["verdict"] == "fails" and "enable_sm100f_only" in t["source"] for t in rung["terms"])
    assert all(o["kernel"] != "CutlassFP8ScaledMMLinearKernel" for o in w["outcomes"])


def test_thor_cutlass_fp8_passes_from_0_21_and_other_archs_are_untouched():
    assert _cutlass("Thor", "0.21.0")[1]["verdict"] == "passes"
    assert _cutlass("H100", "0.19.1", "12.8")[1]["verdict"] == "passes"
    assert _cutlass("B200", "0.19.1", "12.8")[1]["verdict"] == "passes"


def _outcomes(gpu):
    r = CliRunner().invoke(cli, ["ladder", "vllm", "FP8", "--gpu", gpu, "--format", "json"])
    assert r.exit_code == 0, r.output
    return [(o["kernel"], " ".join(c for alt in o.get("when") or [] for c in alt))
            for o in json.loads(r.output)["outcomes"]]


def test_trial38_cuda_unknown_outcomes_below_the_archs_first_runtime_are_pruned():
    # patterns/gpus.toml [capability.min_cuda]: sm110 needs CUDA 13.0 (CUDA 13.0 renumbered sm101 as
    # sm110), sm90 11.8 (clang MinVersionForOffloadArch)
    thor = _outcomes("Thor")
    assert thor and not any("< 12.0" in w for _, w in thor)
    assert [k for k, _ in thor] == ["FlashInferFP8ScaledMMLinearKernel", "CutlassFP8ScaledMMLinearKernel"]
    h100 = _outcomes("H100")
    assert any("11.8 <= CUDA runtime < 12.0" in w for _, w in h100)  # still possible on Hopper


def test_the_cuda_floor_is_planning_only():
    from logscan.analysis.gates import Machine, Verdict, evaluate
    from logscan.packs.model import GateTerm

    t = GateTerm(kind="cuda_min", version="12.0")
    assert evaluate(t, Machine(cc=110), {}).verdict == Verdict.unknown  # scan's machine: no floor
    assert evaluate(t, Machine(cc=110, cuda_floor="13.0"), {}).verdict == Verdict.passes
    assert evaluate(t, Machine(cc=90, cuda_floor="11.8"), {}).verdict == Verdict.unknown
