"""Hardware floors of native low-precision compute (patterns/hardware-floors.toml, analysis/floors.py).

An engine's gate can miss the hardware: vLLM 0.29.0-0.32.0's CutlassFP8ScaledMMLinearKernel checks
only CUDA (vllm-project/vllm#55008, the A100 repro is fixtures/vllm/vllm-134.log), 0.30.0-0.33.0's
FlashInfer TRTLLM / cuDNN / FBGEMM NVFP4 kernels only that their package imports. A native rung of
an FP8 / FP4 / MX registry never passes below its floor, in ladder, matrix, explain and scan. A log
line stating the GPU lacks native FP4 / FP8 explains the fallback without --gpu. Real logs:
vllm-018 (club-3090#594, FP8 Marlin on a 3090), vllm-005 (the README's NVFP4 Marlin log),
vllm-134 (vllm#55008: 'Selected CutlassFP8ScaledMMLinearKernel' on an A100).
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.analysis.floors import floor_for, floor_terms, load_floors
from logscan.cli import cli
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

V018 = FIXTURES / "vllm" / "vllm-018.log"
V005 = FIXTURES / "vllm" / "vllm-005.log"
V134 = FIXTURES / "vllm" / "vllm-134.log"


def _ladder(*args) -> dict:
    r = CliRunner().invoke(cli, ["ladder", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def _codes(report) -> list[str]:
    return [f.code for run in report.runs for f in run.findings]


@pytest.mark.parametrize("version", ["0.29.0", "0.30.0", "0.31.0", "0.32.0"])
def test_cutlass_fp8_is_below_the_floor_on_an_a100(version):
    w = _ladder("vllm", "FP8", "--gpu", "A100", "--engine-version", version)
    rung = next(r for r in w["rungs"] if r["kernel"] == "CutlassFP8ScaledMMLinearKernel")
    assert rung["verdict"] == "fails"
    assert any("below the FP8 hardware floor" in t["why"] for t in rung["terms"])
    assert (w["predicted"], w["predicted_cost_class"]) == ("MarlinFP8ScaledMMLinearKernel", "weight_only")
    assert any("vllm-project/vllm#55008" in n for n in w["notes"])  # the engine itself would select it


@pytest.mark.parametrize("gpu", ["H100", "L4"])
def test_cutlass_fp8_stays_native_at_or_above_sm89(gpu):
    w = _ladder("vllm", "FP8", "--gpu", gpu, "--engine-version", "0.31.0")
    assert (w["predicted"], w["predicted_cost_class"]) == ("CutlassFP8ScaledMMLinearKernel", "native")
    assert not w["notes"]


def test_nvfp4_native_rungs_fail_on_a_v100_and_emulation_is_taken():
    w = _ladder("vllm", "NVFP4", "--gpu", "V100", "--with", "flashinfer")
    by = {r["kernel"]: r for r in w["rungs"]}
    for k in ("FlashInferTrtllmNvFp4LinearKernel", "FlashInferCudnnNvFp4LinearKernel"):
        assert by[k]["verdict"] == "fails" and by[k]["hardware"] == "fails"
    assert w["predicted"] == "EmulationNvFp4LinearKernel" and w["certain"]


def test_nvfp4_on_h100_is_marlin_and_no_native_rung_is_left_open():
    w = _ladder("vllm", "NVFP4", "--gpu", "H100")
    assert (w["predicted"], w["certain"]) == ("MarlinNvFp4LinearKernel", True)
    # TRTLLM / cuDNN / FBGEMM were 'unknown' on sm90 (their gates name a package only)
    assert all(r["verdict"] == "fails" for r in w["rungs"] if r["cost_class"] == "native")


@pytest.mark.parametrize("gpu", ["B200", "RTX 5090"])
def test_fp4_capable_gpus_keep_their_native_rungs(gpu):
    w = _ladder("vllm", "NVFP4", "--gpu", gpu, "--with", "flashinfer", "--cuda", "12.8")
    by = {r["kernel"]: r for r in w["rungs"]}
    assert by["FlashInferTrtllmNvFp4LinearKernel"]["verdict"] == "passes"
    # the most capable outcome is native (on the RTX 5090 it waits on the ENABLE_NVFP4_SM120 build)
    assert w["outcomes"][0]["cost_class"] == "native"


def test_weight_only_and_emulated_rungs_have_no_floor():
    w = _ladder("vllm", "FP8", "--gpu", "A100", "--engine-version", "0.30.0")
    marlin = next(r for r in w["rungs"] if r["kernel"] == "MarlinFP8ScaledMMLinearKernel")
    assert "floor" not in marlin["gate"]
    assert floor_terms("fp8 linear", "weight_only", []) == []
    assert floor_terms("nvfp4 linear", "emulated", []) == []
    assert floor_terms("wna16 linear", "native", []) == []  # 16-bit activations: no floor


def test_rocm_fp8_needs_mi300_or_newer():
    old = _ladder("vllm", "FP8", "--gpu", "MI250X", "--engine-version", "0.18.1")
    assert old["predicted"] is None  # gfx90a has no FP8 MFMA
    new = _ladder("vllm", "FP8", "--gpu", "MI300X", "--engine-version", "0.18.1")
    assert any(r["cost_class"] == "native" and r["verdict"] != "fails" for r in new["rungs"])


def test_matrix_vllm_nvfp4_on_a_v100_is_emulation():
    r = CliRunner().invoke(cli, ["matrix", "NVFP4", "--gpu", "V100", "--format", "json"])
    assert r.exit_code == 0, r.output
    row = next(x for x in json.loads(r.output)["rows"] if x["engine"] == "vllm")
    assert (row["executes"], row["cost_class"], row["basis"]) == ("EmulationNvFp4LinearKernel", "emulated", "certain")


def test_explain_shows_the_floor_of_the_029_032_cutlass_rung():
    r = CliRunner().invoke(cli, ["explain", "CutlassFP8ScaledMMLinearKernel", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = [x for x in json.loads(r.output)["ladders"] if x["ladder_version"] == "0.29.0"]
    assert rows and all("FP8 hardware floor" in x["words"] for x in rows)


def test_vllm_018_on_an_a100_raises_no_unexpected_fallback():
    report = scan_inputs([str(V018)], gpu="A100", engine_version={"vllm": "0.30.0"})
    codes = _codes(report)
    assert "UNEXPECTED_FALLBACK" not in codes
    assert "WEIGHT_ONLY_SUBSTITUTION" in codes  # the log's own fallback stays reported


def test_vllm_018_on_an_h100_is_still_an_unexpected_fallback():
    # counter-example: above the floor CUTLASS FP8 is reachable, so Marlin is below it (the log
    # states no quantization, so its FP8 line does not contradict --gpu: statements.py)
    report = scan_inputs([str(V018)], gpu="H100", engine_version={"vllm": "0.30.0"})
    assert "UNEXPECTED_FALLBACK" in _codes(report)


def test_the_fp4_marlin_line_explains_nothing_without_a_gpu():
    """vLLM prints 'Your GPU does not have native support for FP4 computation' wherever the FP4 Marlin
    path is prepared, on sm110 / sm120 GPUs too (vllm-007, -024, -105, -115, -308, -325): it is no
    evidence that the GPU lacks FP4, so vllm-005's fallback stays UNEXPLAINED until --gpu tells
    (fail closed: a fleet gate catching 'a B200 landed on Marlin' must not pass on that line)."""
    report = scan_inputs([str(V005)])
    sel = report.runs[0].selections[0]
    assert sel.kernel == "Marlin" and sel.ladder.stated_refused == [] and sel.ladder.undecided
    r = CliRunner().invoke(cli, ["scan", str(V005)])
    assert "fallback UNEXPLAINED" in r.output and "fallback explained by the log" not in r.output


def test_the_fp8_marlin_line_under_a_stated_fp8_quantization_explains_the_fallback():
    """vllm-338 (vllm#42390, real): '--quantization fp8' on the command and vLLM's FP8 Marlin sentence,
    which under a W8A8 method is printed only below sm89 (fp8.py use_marlin): the rungs behind the FP8
    hardware floor are refused by the log itself."""
    v338 = V005.parent / "vllm-338.log"
    sel = scan_inputs([str(v338)]).runs[0].selections[0]
    assert sel.kernel == "Marlin" and sel.ladder.stated_refused and not sel.ladder.undecided
    assert "line 10 states the GPU lacks native FP8 compute" in sel.ladder.stated_by
    r = CliRunner().invoke(cli, ["scan", str(v338)])
    assert "fallback explained by the log: line 10" in r.output


def test_the_fp8_marlin_line_without_a_stated_quantization_explains_nothing():
    """vllm-018 (real) prints the FP8 Marlin sentence but states no quantization: a W8A16 FP8
    checkpoint reaches the same sentence on an H100, so the fallback stays undecided."""
    sel = scan_inputs([str(V005.parent / "vllm-018.log")]).runs[0].selections[0]
    assert sel.ladder.stated_refused == [] and sel.ladder.undecided


def test_vllm_005_with_a_b200_is_judged_on_the_gpu_not_the_line():
    # counter-example: the FP4 Marlin line is printed on FP4-capable GPUs too; a known GPU decides
    report = scan_inputs([str(V005)], gpu="B200")
    sel = report.runs[0].selections[0]
    assert sel.ladder.stated_refused == [] and sel.ladder.undecided


def test_a_logged_kernel_below_its_floor_is_no_gpu_contradiction():
    # vllm#55008: vLLM 0.29.0 itself logs the CUTLASS FP8 kernel on an A100 (then fails)
    report = scan_inputs([str(V134)], gpu="A100", engine_version={"vllm": "0.29.0"})
    assert "GPU_CONTRADICTS_LOG" not in _codes(report)
    (f,) = [f for r in report.runs for f in r.findings if f.code == "BELOW_HARDWARE_FLOOR"]
    assert f.severity.value == "warning" and f.inferred and "first FP8 GEMM" in f.title
    assert any("vllm-project/vllm#55008" in r for r in f.reasons)


def test_a_logged_kernel_below_its_floor_with_an_inferred_release_names_both_readings():
    # vllm-134 prints no release (0.18.1 .. 0.33.0 fit): the gate miss covers 0.29.0-0.32.0 only
    report = scan_inputs([str(V134)], gpu="A100")
    (f,) = [f for r in report.runs for f in r.findings if f.code == "BELOW_HARDWARE_FLOOR"]
    assert any("inferred, 0.18.1 .. 0.33.0" in r for r in f.reasons)
    assert any("in any other, the engine would not have selected it" in r for r in f.reasons)


@pytest.mark.parametrize("version", ["0.25.0", "0.33.0"])
def test_a_logged_kernel_below_its_floor_no_gate_miss_explains_contradicts_gpu(version):
    # 0.33.0 asks cutlass_fp8_supported() (#55884), 0.25.0 predates the miss: the engine would not
    # select CUTLASS FP8 on sm80, so --gpu A100 is not this log's GPU
    report = scan_inputs([str(V134)], gpu="A100", engine_version={"vllm": version})
    (f,) = [f for r in report.runs for f in r.findings if f.code == "GPU_CONTRADICTS_LOG"]
    assert "hardware floor" in f.title and "BELOW_HARDWARE_FLOOR" not in _codes(report)


@pytest.mark.parametrize("gpu", [None, "H100", "L4"])
def test_a_logged_kernel_at_or_above_its_floor_or_with_no_gpu_raises_nothing(gpu):
    report = scan_inputs([str(V134)], gpu=gpu)
    assert not {"BELOW_HARDWARE_FLOOR", "GPU_CONTRADICTS_LOG"} & set(_codes(report))


def test_a_weight_only_kernel_has_no_floor_to_be_below():
    report = scan_inputs([str(V018)], gpu="A100")  # FP8 Marlin on an sm80: what the floor predicts
    assert not {"BELOW_HARDWARE_FLOOR", "GPU_CONTRADICTS_LOG"} & set(_codes(report))


def test_every_gate_miss_names_a_native_rung_of_its_floor_in_its_releases():
    packs = default_packs()
    for fid, f in load_floors().items():
        for m in f["gate_miss"]:
            pack = packs.packs[m["engine"]]
            rels = [r for r in pack.ladders if m["releases"].contains(r)]
            assert rels, f"floor {fid}: gate miss {m['releases']} covers no shipped {m['engine']} release"
            for k in m["kernels"]:
                held = [r for r in rels for reg in pack.ladders[r].registry
                        if floor_for(reg.role) == fid and any(k in rungs for rungs in reg.platforms.values())]
                assert held, f"floor {fid}: {k} is on no {fid}-floored registry in {m['releases']}"


def test_every_floor_role_matches_a_shipped_registry():
    roles = {reg.role for pack in default_packs().packs.values() for lf in pack.ladders.values()
             for reg in lf.registry}
    for fid, f in load_floors().items():
        for rx in f["roles"]:
            assert any(rx.search(r) for r in roles), f"floor {fid}: role {rx.pattern!r} matches no registry"
        assert f["source"] and f["cuda_cc"] >= 89


def test_lacks_native_names_a_floor():
    floors = load_floors()
    seen = set()
    for pack in default_packs().packs.values():
        for rule in (c.rule for c in pack.rules):
            fid = getattr(rule, "lacks_native", None)
            if fid:
                assert fid in floors, f"{rule.id}: lacks_native {fid!r} is no floor"
                seen.add(rule.id)
    assert {"vllm.fallback.marlin-fp8", "sglang.fallback.marlin-fp8", "sglang.fallback.nvfp4-w4a4-marlin"} <= seen
    # the FP4 Marlin sentences are printed on FP4-capable GPUs too: they must state no lack
    assert not {"vllm.fallback.marlin-fp4", "sglang.fallback.marlin-fp4"} & seen
