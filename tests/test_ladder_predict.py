"""Gate evaluation and ladder walks: the predictions the seeds state outright, pinned per (scheme, arch).

Facts (shared/reference/seeds/000_*, 003_*, vLLM main @ 528772a4): MXFP4 on sm90 never reaches
a native GEMM; NVFP4 off sm100/sm120 lands on Marlin W4A16; W4A8-FP8 only on exactly sm90;
AWQ/Marlin nothing below sm75; block FP8 via CUTLASS refused on sm120 and below sm90; FP8 on
Ampere runs weight-only Marlin; FlashInfer MXFP4 passes the arch gate on sm120 (>=100).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logscan.analysis.gates import Machine, Verdict, evaluate
from logscan.analysis.predict import walk
from logscan.cli import cli
from logscan.packs.model import GateTerm
from tests.conftest import ROOT, SHARED

#: shared/reference: beside the repo (/work/main) or two levels up (a work tree /work/wt/<name>)
REF = next((p for p in (SHARED, ROOT.parent.parent / "shared") if (p / "reference" / "vllm").is_dir()),
           SHARED) / "reference" / "vllm"


def _walk(packs, scheme, cc, version=None, **kw):
    return walk(packs, "vllm", scheme, Machine(cc=cc, **kw), version)


def _rung(w, kernel):
    return next(r for r in w.rungs if r.kernel == kernel)


# (scheme, cc, machine extras, expected predicted kernel or None, certain)
PREDICTIONS = [
    ("NVFP4", 90, {}, "MarlinNvFp4LinearKernel", True),
    ("NVFP4", 89, {}, "MarlinNvFp4LinearKernel", True),
    ("NVFP4", 80, {}, "MarlinNvFp4LinearKernel", True),
    ("NVFP4", 75, {}, "MarlinNvFp4LinearKernel", True),
    ("NVFP4", 70, {"packages": frozenset()}, "EmulationNvFp4LinearKernel", True),
    ("NVFP4", 100, {"cuda": "12.8", "packages": frozenset({"flashinfer"})}, "FlashInferCuteDslNvFp4LinearKernel", True),
    ("NVFP4", 100, {"cuda": "12.6", "packages": frozenset()}, "MarlinNvFp4LinearKernel", True),
    ("NVFP4", 100, {}, "MarlinNvFp4LinearKernel", False),
    ("MXFP4", 90, {}, "MarlinMxFp4LinearKernel", True),
    ("FP8", 80, {}, "MarlinFP8ScaledMMLinearKernel", True),
    ("FP8-BLOCK", 120, {"packages": frozenset()}, "MarlinFP8ScaledMMLinearKernel", True),
]


@pytest.mark.parametrize("scheme,cc,extra,kernel,certain", PREDICTIONS,
                         ids=[f"{s}-sm{c}-{i}" for i, (s, c, *_r) in enumerate(PREDICTIONS)])
def test_predicted_rung(packs, scheme, cc, extra, kernel, certain):
    w = _walk(packs, scheme, cc, **extra)
    assert (w.predicted, w.certain) == (kernel, certain), w.outcome
    assert [r.kernel for r in w.rungs if r.predicted] == [kernel]


@pytest.mark.parametrize("cc", [70, 75, 80, 86, 89, 90])
def test_mxfp4_never_reaches_a_native_gemm_up_to_sm90(packs, cc):
    w = _walk(packs, "MXFP4", cc, cuda="13.0", packages=frozenset({"flashinfer", "flashinfer.cute_dsl", "b12x", "humming"}))
    assert [r.kernel for r in w.rungs if r.cost_class == "native" and r.verdict != Verdict.fails] == []


@pytest.mark.parametrize("cc", [100, 103, 120])
def test_flashinfer_mxfp4_arch_gate_is_ge_100_so_sm120_passes_with_cutedsl(packs, cc):
    w = _walk(packs, "MXFP4", cc, packages=frozenset({"flashinfer", "flashinfer.cute_dsl"}))
    assert w.predicted == "FlashInferMxFp4LinearKernel" and w.certain


@pytest.mark.parametrize("cc,accepted", [(80, Verdict.fails), (89, Verdict.fails), (90, Verdict.passes),
                                         (100, Verdict.fails), (103, Verdict.fails), (120, Verdict.fails)])
def test_w4a8_fp8_only_on_exactly_sm90(packs, cc, accepted):
    w = _walk(packs, "W4A8-FP8", cc)
    assert w.scheme_verdict == accepted
    assert _rung(w, "CutlassW4A8LinearKernel").hardware == accepted


@pytest.mark.parametrize("cc", [60, 61, 70, 72])
def test_awq_and_marlin_nothing_below_sm75(packs, cc):
    w = _walk(packs, "AWQ", cc)
    assert w.scheme_verdict == Verdict.fails and w.predicted is None
    assert _rung(w, "MarlinLinearKernel").verdict == Verdict.fails
    assert _walk(packs, "NVFP4", cc).rungs[5].kernel == "MarlinNvFp4LinearKernel"
    assert _rung(_walk(packs, "NVFP4", cc), "MarlinNvFp4LinearKernel").verdict == Verdict.fails


@pytest.mark.parametrize("cc", [75, 80, 90])
def test_awq_accepted_from_sm75(packs, cc):
    assert _walk(packs, "AWQ", cc).scheme_verdict == Verdict.passes


@pytest.mark.parametrize("cc,verdict", [(80, Verdict.fails), (89, Verdict.fails), (90, Verdict.unknown),
                                        (100, Verdict.unknown), (120, Verdict.fails)])
def test_block_fp8_cutlass_refused_on_sm120_and_below_sm90(packs, cc, verdict):
    assert _rung(_walk(packs, "FP8-BLOCK", cc), "CutlassFp8BlockScaledMMKernel").verdict == verdict
    assert _rung(_walk(packs, "FP8-BLOCK", cc, cuda="12.8"), "CutlassFp8BlockScaledMMKernel").verdict == (
        Verdict.passes if verdict == Verdict.unknown else Verdict.fails)


@pytest.mark.parametrize("cc,verdict", [(90, Verdict.passes), (100, Verdict.fails), (89, Verdict.fails)])
def test_blockwise_torch_fp8_is_hopper_exactly(packs, cc, verdict):
    assert _rung(_walk(packs, "FP8-BLOCK", cc), "BlockWiseTorchFP8ScaledMMLinearKernel").hardware == verdict


@pytest.mark.parametrize("cc,cuda,verdict", [(100, "12.8", Verdict.unknown), (100, "12.6", Verdict.fails),
                                             (120, "12.8", Verdict.unknown), (90, "13.0", Verdict.fails)])
def test_native_nvfp4_cutlass_needs_cuda_12_8_and_sm100_or_sm120(packs, cc, cuda, verdict):
    # unknown, not passes: whether the wheel compiled ENABLE_NVFP4_SM100/SM120 is not given
    assert _rung(_walk(packs, "NVFP4", cc, cuda=cuda), "CutlassNvFp4LinearKernel").verdict == verdict


def test_fp8_per_tensor_cutlass_cuda_floor_is_12_4_on_sm89():
    from logscan.packs.loader import default_packs
    packs = default_packs()
    assert _rung(_walk(packs, "FP8", 89, cuda="12.3"), "CutlassFP8ScaledMMLinearKernel").verdict == Verdict.fails
    assert _rung(_walk(packs, "FP8", 89, cuda="12.4"), "CutlassFP8ScaledMMLinearKernel").verdict == Verdict.passes
    assert _rung(_walk(packs, "FP8", 90, cuda="12.0"), "CutlassFP8ScaledMMLinearKernel").verdict == Verdict.passes


@pytest.mark.parametrize("term,machine,verdict", [
    ({"kind": "cc_min", "cc": 75}, Machine(cc=None), Verdict.unknown),
    ({"kind": "cc_min", "cc": 75}, Machine(cc=75), Verdict.passes),
    ({"kind": "cc_eq", "cc": 90}, Machine(cc=100), Verdict.fails),
    ({"kind": "cc_family", "major": 12}, Machine(cc=121), Verdict.passes),
    ({"kind": "cuda_min", "version": "12.8"}, Machine(cuda="12.10"), Verdict.passes),
    ({"kind": "package", "name": "flashinfer"}, Machine(packages=None), Verdict.unknown),
    ({"kind": "package", "name": "flashinfer"}, Machine(packages=frozenset()), Verdict.fails),
    ({"kind": "env", "name": "VLLM_BATCH_INVARIANT", "default": "0", "negate": True}, Machine(), Verdict.passes),
    ({"kind": "env", "name": "VLLM_BATCH_INVARIANT", "default": "0", "negate": True},
     Machine(env={"VLLM_BATCH_INVARIANT": "1"}), Verdict.fails),
    ({"kind": "opaque", "text": "x"}, Machine(cc=90), Verdict.unknown),
    ({"kind": "cc_min", "cc": 89, "only_on": ["CUDA"]}, Machine(platform="CPU"), Verdict.passes),
    ({"kind": "any_of", "options": [[{"kind": "cc_eq", "cc": 90}], [{"kind": "package", "name": "x"}]]},
     Machine(cc=80), Verdict.unknown),
])
def test_three_valued_terms(term, machine, verdict):
    assert evaluate(GateTerm.model_validate(term), machine, {}).verdict == verdict


@pytest.mark.parametrize("facts,verdict", [({"act_type": ["float16"]}, Verdict.passes),
                                           ({"act_type": ["float16", "bfloat16"]}, Verdict.unknown),
                                           ({"act_type": ["int8"]}, Verdict.fails), ({}, Verdict.unknown)])
def test_checkpoint_terms_use_scheme_facts(facts, verdict):
    t = GateTerm(kind="dtype", field="act_type", values=["float16"])
    assert evaluate(t, Machine(cc=80), facts).verdict == verdict


def _reference_versions():
    return sorted(p.name[len("ladders-"):-len(".json")] for p in REF.glob("ladders-*.json"))


@pytest.mark.parametrize("version", _reference_versions())
def test_shipped_ladders_keep_the_source_order_and_every_kernel_has_its_gate(packs, version):
    ref = json.loads((REF / f"ladders-{version}.json").read_text())
    lf = packs.packs["vllm"].ladders[version]
    regs = {r.name: r for r in lf.registry}
    for name, reg in ref["registries"].items():
        if reg["kind"] in ("linear", "moe"):
            assert regs[name].platforms == reg["platforms"], name
    kernels = ref.get("kernels", {})
    for k, info in kernels.items():
        if info.get("gate") and not info["gate"].startswith("no gate"):
            assert lf.kernel[k].gates, f"{version} {k}: gate not structured"


def test_cli_ladder_json_has_the_rung_fields():
    r = CliRunner().invoke(cli, ["ladder", "vllm", "nvfp4", "--gpu", "H100", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    for rung in doc["rungs"]:
        assert {"kernel", "rung", "cost_class", "gate", "verdict", "predicted"} <= set(rung)
    assert [x["kernel"] for x in doc["rungs"] if x["predicted"]] == ["MarlinNvFp4LinearKernel"]


def test_cli_ladder_older_release_and_bad_input():
    r = CliRunner().invoke(cli, ["ladder", "vllm", "NVFP4", "--gpu", "sm90", "--engine-version", "0.22.1", "--format", "json"])
    assert json.loads(r.output)["ladder_version"] == "0.22.1"
    assert CliRunner().invoke(cli, ["ladder", "vllm", "nope"]).exit_code == 2
    assert CliRunner().invoke(cli, ["ladder", "vllm", "NVFP4", "--gpu", "Z80"]).exit_code == 2


def test_cli_explain_lists_every_ladder_with_position():
    r = CliRunner().invoke(cli, ["explain", "MarlinNvFp4LinearKernel", "--format", "json"])
    rows = json.loads(r.output)["ladders"]
    # rows of consecutive releases that agree are merged: the newest is its last_version
    assert {(x["last_version"], x["rung"], x["rungs"]) for x in rows} >= {("0.33.0", 6, 14)}
    assert all(x["cost_class"] == "weight_only" for x in rows)


def test_if_chain_steps_are_gates_and_unknown_env_defaults_stay_unknown(packs):
    """0.18.1 selects NVFP4 linears by an if/elif chain (select_nvfp4_linear_backend): each
    outcome's gate is its step condition; the env defaults of that chain are not in the reference."""
    w = walk(packs, "vllm", "NVFP4", Machine(cc=90), "0.18.1")
    assert w.registry.startswith("ifchain:nvfp4_utils")
    assert _rung(w, "FLASHINFER_CUTLASS").verdict == Verdict.fails      # cc>=100
    assert _rung(w, "MARLIN").verdict == Verdict.unknown and w.predicted is None
    env = {"VLLM_USE_FBGEMM": "0", "VLLM_USE_NVFP4_CT_EMULATIONS": "0", "VLLM_NVFP4_GEMM_BACKEND": "None"}
    w = walk(packs, "vllm", "NVFP4", Machine(cc=90, env=env), "0.18.1")
    assert (w.predicted, w.certain) == ("MARLIN", True)
    w = walk(packs, "vllm", "NVFP4", Machine(cc=100, env=env, packages=frozenset({"flashinfer"})), "0.18.1")
    assert w.predicted == "FLASHINFER_CUTLASS"


def test_walk_uses_matrix_kept_ladders_and_engine_version(packs):
    assert walk(packs, "sglang", "NVFP4", Machine(cc=90)).predicted == "marlin"
    w = walk(packs, "trtllm", "FP8-BLOCK", Machine(cc=100), "0.21.0")
    assert (w.ladder_version, w.predicted) == ("0.21.0", None)
    with pytest.raises(Exception):
        walk(packs, "vllm", "NVFP4", Machine(cc=90), "0.14.1")  # no NVFP4 linear selection recorded in 0.14.1


@pytest.mark.parametrize("args", [["--cuda", "twelve"], ["--torch", "x.y"], ["--env", "NOEQUALS"],
                                  ["--engine-version", "latest"]])
def test_cli_ladder_bad_description_is_a_usage_error(args):
    r = CliRunner().invoke(cli, ["ladder", "vllm", "NVFP4", "--gpu", "H100", *args])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_a_rocm_machine_is_named_by_its_arch_not_by_an_sm_number():
    """'sm94' names no AMD GPU (new-user trial): the machine line says gfx942 and ROCm's device
    capability 9.4, which the ladders' gates compare."""
    from click.testing import CliRunner

    from logscan.cli import cli

    out = CliRunner().invoke(cli, ["ladder", "vllm", "FP8", "--gpu", "MI300X"]).output
    machine = next(line for line in out.splitlines() if line.strip().startswith("machine"))
    assert "gfx942 (MI300X), device capability 9.4" in machine and "sm94" not in machine
    out = CliRunner().invoke(cli, ["ladder", "vllm", "FP8", "--gpu", "H100"]).output
    assert "sm90 (H100)" in out
