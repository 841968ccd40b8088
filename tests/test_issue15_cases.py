"""The twelve planning answers of issue 15, asked as a new user would (CLI), each with the right answer."""
from __future__ import annotations

import json

from click.testing import CliRunner

from logscan.cli import cli

from .conftest import FIXTURES


def run(*args):
    return CliRunner().invoke(cli, list(args))


def walk_json(*args):
    r = run("ladder", *args, "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def kernels(w):
    return [o["kernel"] for o in w["outcomes"] if o["kernel"]]


def test_1_fp8_on_h100_is_native_never_marlin():
    for args in (["vllm", "FP8", "--gpu", "H100"], ["vllm", "FP8", "--gpu", "H100", "--cuda", "11.8"]):
        w = walk_json(*args)
        assert "MarlinFP8ScaledMMLinearKernel" not in kernels(w)
        assert {o["cost_class"] for o in w["outcomes"]} == {"native"}
    mx = json.loads(run("matrix", "FP8", "--gpu", "H100", "--format", "json").output)
    row = next(r for r in mx["rows"] if r["engine"] == "vllm")
    assert row["cost_class"] == "native" and "Marlin" not in row["executes"]
    w = walk_json("vllm", "FP8", "--gpu", "H100", "--cuda", "11.8", "--scales", "per-channel")
    assert (w["predicted"], w["certain"]) == ("ChannelWiseTorchFP8ScaledMMLinearKernel", True)


def test_2_mxfp8_on_a100_is_weight_only_marlin():
    w = walk_json("vllm", "MXFP8", "--gpu", "A100")
    assert (w["predicted"], w["predicted_cost_class"], w["certain"]) == ("MarlinMxfp8LinearKernel", "weight_only", True)


def test_3_mi355x_is_not_mi300x():
    a, b = walk_json("vllm", "MXFP8", "--gpu", "MI355X"), walk_json("vllm", "MXFP8", "--gpu", "MI300X")
    assert a["predicted"] == "RocmDotScaledMxfp8LinearKernel" and b["predicted"] == "EmulationMxfp8LinearKernel"
    assert walk_json("vllm", "MXFP8", "--gfx", "gfx950")["predicted"] == "RocmDotScaledMxfp8LinearKernel"


def test_4_w4a8_int8_is_a_load_failure_and_a16_kernels_are_not_native():
    w = walk_json("vllm", "W4A8-INT8", "--gpu", "H100", "--with", "none")
    assert all(o["refused"] for o in w["outcomes"]) and "WNA16" in w["outcome"]
    costs = {r["kernel"]: r["cost_class"] for r in w["rungs"]}
    assert costs["MacheteLinearKernel"] == costs["MarlinLinearKernel"] == "weight_only"


def test_5_b12x_fp8_rungs_can_pass():
    w = walk_json("vllm", "FP8-BLOCK", "--gpu", "RTX 5090", "--cuda", "12.8", "--with", "b12x")
    assert (w["predicted"], w["certain"]) == ("B12xFp8BlockScaledMMKernel", True)
    w = walk_json("vllm", "FP8", "--gpu", "RTX 5090", "--with", "b12x", "--scales", "per-tensor",
                  "--act-scale", "static", "--k", "4096")
    verdict = {r["kernel"]: r["verdict"] for r in w["rungs"]}
    assert verdict["B12xTensorFP8ScaledMMLinearKernel"] == "passes"
    # sm120 needs CUDA 12.8+ (patterns/gpus.toml [capability.min_cuda]), so CUTLASS's 'CUDA 12.0 or
    # newer' holds and its rung 2 outranks B12x's rung 3 (before the per-arch floor, an unknown
    # runtime left CUTLASS undecided and the walk named B12x)
    assert (w["predicted"], verdict["CutlassFP8ScaledMMLinearKernel"]) == ("CutlassFP8ScaledMMLinearKernel", "passes")


def test_6_fell_counts_only_better_rungs():
    r = run("scan", str(FIXTURES / "vllm" / "synthetic-era-0.26.log"))
    assert "below MarlinFP8ScaledMMLinearKernel" not in r.output
    assert "PerTensorTorchFP8ScaledMMLinearKernel: fell" not in r.output


def test_7_matrix_leads_with_the_native_rung_one_convention():
    mx = json.loads(run("matrix", "NVFP4", "--gpu", "B200", "--cuda", "12.8", "--format", "json").output)
    rows = {r["engine"]: r for r in mx["rows"]}
    assert rows["vllm"]["cost_class"] == "native" and rows["vllm"]["basis"] == "conditional"
    assert "flashinfer installed" in rows["vllm"]["note"]
    assert rows["sglang"]["cost_class"] == "native" and rows["sglang"]["basis"] == "conditional"


def test_8_moe_ladders():
    w = walk_json("vllm", "NVFP4-MOE", "--gpu", "H100", "--with", "none")
    assert (w["predicted"], w["certain"]) == ("MARLIN", True)
    w = walk_json("vllm", "MXFP4", "--engine-version", "0.18.1", "--gpu", "H100")
    assert w["ladder_version"] == "0.18.1" and "MARLIN" in kernels(w) and w["notes"]
    w = walk_json("sglang", "NVFP4", "--moe", "--gpu", "A100")
    assert w["predicted"] == "marlin-moe"


def test_9_explain_knows_what_scan_prints():
    for name in ("FP4 Marlin (W4A16)", "FLASHINFER_B12X"):
        r = run("explain", name)
        assert r.exit_code == 0 and "on no shipped ladder" not in r.output
    rows = json.loads(run("explain", "flashinfer-cutlass", "--format", "json").output)["ladders"]
    assert any(x["last_version"] == "0.33.0" and x["registry"] == "_POSSIBLE_NVFP4_KERNELS"
               and (x["rung"], x["rungs"]) == (2, 14) for x in rows)
    assert run("explain", "NoSuchKernelAnywhere").exit_code == 2


def test_10_llamacpp_q8_activations_are_not_weight_only():
    w = walk_json("llamacpp", "NVFP4", "--gpu", "B200")
    assert w["predicted_cost_class"] == "activation_upcast"


def test_11_gates_in_words_source_one_flag_away():
    out = run("ladder", "vllm", "W4A16", "--gpu", "H100").output
    assert "query_machete_supported_quant_types" not in out and "weight type uint4" in out
    out = run("ladder", "vllm", "FP8", "--gpu", "H100").output
    flat = " ".join(out.split())  # gates wrap across lines
    assert "NOT cc>=0" not in out and "compute capability unknown or sm100 or newer" in flat
    assert max(len(line) for line in out.splitlines()[3:]) <= 130
    src = run("ladder", "vllm", "FP8", "--gpu", "H100", "--gate-source").output
    assert "NOT cc>=0 | cc>=100" in src


def test_12_reference_seed_disagreement_is_flagged():
    r = run("ladder", "vllm", "MXFP4", "--gpu", "MI300X", "--with", "none")
    assert "the reference and the seeds differ on EmulationMxfp4LinearKernel" in r.output
    assert "seed:" in r.output and "reference:" in r.output and "source wins" in r.output
