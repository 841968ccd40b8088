"""Ladders follow the release: one log per vLLM era, the ladder release chosen, rungs and costs.

Fixtures ``fixtures/vllm/synthetic-era-*.log`` are built from the reference templates of that
release (their header says so); the real corpus logs cover the eras they come from. Each case
names what a reader of the log must be told: which ladder release was used, whether the
release was logged or inferred (and from what), and the rung and cost class of a kernel.
"""
from __future__ import annotations

import pytest

from logscan.pipeline import Pipeline, scan_inputs
from tests.conftest import FIXTURES

V = FIXTURES / "vllm"


def _run(name: str):
    report = scan_inputs([str(V / name)])
    assert len(report.runs) == 1, [r.engine for r in report.runs]
    return report.runs[0]


def _sel(run, kernel: str):
    found = [s for s in run.selections if s.kernel == kernel]
    assert found, f"{kernel} not selected; got {[s.kernel for s in run.selections]}"
    return found[0]


# (fixture, version_source, ladder release, kernel, rung, rungs, cost class, registry prefix)
CASES = [
    # pre-0.6 legacy prefix: no registry existed, so no ladder; the line itself states weight-only
    ("synthetic-era-0.5.log", "logged", None, "Marlin", None, None, "weight_only", None),
    # 0.6-0.8 V0 engine, no version line: inferred from the legacy prefix and kernel classes
    ("synthetic-era-0.7.log", "inferred", "0.7.3", "MacheteLinearKernel", 1, 3, "native",
     "_POSSIBLE_KERNELS@mixed_precision"),
    # 0.9-0.11 V1 with EngineCore/Worker prefixes: gpt-oss MXFP4 MoE if-chain of 0.10.2
    ("synthetic-era-0.10.log", "logged", "0.10.2", "FlashInfer MXFP4 BF16", 1, 7, "native",
     "ifchain:mxfp4:get_mxfp4_backend"),
    # 0.14+ registry era: Marlin FP8 is the FIRST CUDA FP8 rung of 0.22.1 (sixth in 0.33.0)
    ("synthetic-era-0.22.log", "logged", "0.22.1", "MarlinFP8ScaledMMLinearKernel", 1, 5, "weight_only",
     "_POSSIBLE_FP8_KERNELS"),
    ("synthetic-era-0.22.log", "logged", "0.22.1", "MARLIN", 6, 7, "weight_only", "moe:nvfp4:"),
    # real ROCm log (corpus vllm-022), no version line: the 0.7.3-0.14.1 class name fixes the era
    ("vllm-022.log", "inferred", "0.14.1", "TritonScaledMMLinearKernel", 2, 2, "portable",
     "_POSSIBLE_KERNELS@scaled_mm"),
    # template-built ROCm 0.33 log: no platform line at info level, AITER names decide the platform
    ("synthetic-rocm-0.33.log", "logged", "0.33.0", "AiterMxfp4LinearKernel", 2, 3, "native",
     "_POSSIBLE_MXFP4_KERNELS"),
    # real 0.5.4 log (corpus vllm-016): logged version older than every registry
    ("vllm-016.log", "logged", None, None, None, None, None, None),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}:{c[3]}" for c in CASES])
def test_era_ladder_rung_and_cost(case):
    name, source, ladder, kernel, rung, rungs, cost, registry = case
    run = _run(name)
    assert run.engine.version_source == source, run.engine.version_evidence
    assert run.engine.ladder_version == ladder
    if kernel is None:
        return
    s = _sel(run, kernel)
    assert s.cost_class.value == cost
    if rung is None:
        assert s.ladder is None
    else:
        assert (s.ladder.rung, s.ladder.rungs) == (rung, rungs)
        assert s.ladder.registry.startswith(registry)
        assert s.ladder.ladder_version == ladder


def test_inferred_release_says_from_what():
    run = _run("synthetic-era-0.7.log")
    ev = run.engine.version_evidence
    assert "releases 0.7.0 .. 0.7.3 fit" in ev  # 0.7.0 first prints "Automatically detected platform"
    assert "line format vllm-legacy" in ev and "process-vllmworkerprocess" in ev


def test_kernel_class_narrows_the_era_of_a_real_log():
    run = _run("vllm-022.log")
    assert "kernel class TritonScaledMMLinearKernel (on the ladders of 0.7.0 .. 0.14.1)" in run.engine.version_evidence


def test_same_lines_without_version_use_a_newer_ladder():
    """The 0.22.1 lines minus the version line: inferred, the newest fitting ladder is used, said so."""
    lines = [ln for ln in (V / "synthetic-era-0.22.log").read_text().splitlines()
             if ln and not ln.startswith("#") and "server version" not in ln]
    pipe = Pipeline(source="mem")
    runs = []
    for i, text in enumerate(lines, 1):
        runs += [r for _, r in pipe.feed(i, text) if r is not None]
    runs += [r for _, r in pipe.close() if r is not None]
    (run,) = runs
    assert run.engine.version_source == "inferred"
    assert run.engine.ladder_version == "0.33.0"
    assert "0.20.0 .. 0.33.0" in run.engine.version_evidence  # MarlinNvFp4LinearKernel appears in 0.20.0
    s = _sel(run, "MarlinFP8ScaledMMLinearKernel")
    assert (s.ladder.rung, s.ladder.rungs) == (6, 7)


def test_v1_process_tags_give_ranks_and_era():
    run = _run("synthetic-era-0.10.log")
    s = _sel(run, "FlashInfer MXFP4 BF16")
    assert s.ranks == ["TP0", "TP1"]
    assert run.engine.platform == "CUDA" and run.engine.platform_source == "logged"
    assert [a.backend for a in run.attention] == ["Flash Attention"]


def test_rocm_platform_inferred_from_aiter_names():
    run = _run("synthetic-rocm-0.33.log")
    assert (run.engine.platform, run.engine.platform_source) == ("ROCM", "inferred")
    assert "only the ROCM ones hold AiterMxfp4LinearKernel" in run.engine.platform_evidence
    assert _sel(run, "AiterMxfp4LinearKernel").ladder.platform == "ROCM"
    assert {f.code for f in run.findings} == {"UNTUNED_SHAPE"}
    assert [a.backend for a in run.attention] == ["ROCM_AITER_FA"]


def test_degradations_only_the_rung_tells_end_to_end():
    """synthetic-era-0.26.log: two starts, no degradation printed; both are inferred from the rung."""
    report = scan_inputs([str(V / "synthetic-era-0.26.log")])
    mx, fp8 = report.runs
    s = _sel(mx, "EmulationMxfp8LinearKernel")
    assert (s.cost_class.value, s.ladder.ladder_version, s.ladder.rung) == ("dequant_at_load", "0.26.0", 4)
    assert [(f.code, f.inferred) for f in mx.findings] == [("DEQUANT_AT_LOAD", True)]
    s = _sel(fp8, "PerTensorTorchFP8ScaledMMLinearKernel")
    assert (s.cost_class.value, s.ladder.rung, s.ladder.rungs) == ("native", 4, 6)
    assert [(f.code, f.inferred) for f in fp8.findings] == [("FP8_PER_TENSOR_FALLBACK", True)]
    assert fp8.config.quantization == "fp8" and fp8.engine.platform == "CUDA"


def test_version_inference_candidates_come_from_each_engines_pack():
    """vLLM's release list lives in its pack; an engine without one infers among its own ladders only."""
    from logscan.analysis.analyzer import candidate_releases
    from logscan.packs.loader import default_packs

    packs = default_packs().packs
    assert candidate_releases(packs["vllm"])[0] == "0.5.5" and candidate_releases(packs["vllm"])[-1] == "0.33.0"
    assert set(candidate_releases(packs["trtllm"])) == set(packs["trtllm"].ladders)


def test_a_range_from_the_oldest_known_release_says_an_older_one_may_fit():
    # new-user trial: a vLLM 0.5.3 log was 'releases 0.5.5 .. 0.7.3 fit': 0.5.5 is only the oldest
    # release the templates hold, so the range is said to reach further back
    from logscan.analysis.era import EraHint, infer_release
    old = EraHint("line format vllm-legacy (<0.8)", lambda r: r < "0.8")
    guess = infer_release([old], ["0.5.5", "0.6.0", "0.7.3", "0.8.0"])
    assert guess.describe().startswith("releases 0.5.5 .. 0.7.3 (or older: 0.5.5 is the oldest release logscan holds) fit: ")
    new = EraHint("template (>=0.6)", lambda r: r >= "0.6")
    assert "or older" not in infer_release([new], ["0.5.5", "0.6.0", "0.7.3"]).describe()
