"""vLLM's FP8 dense-linear dispatch below the kernel registries (``patterns/vllm/dispatch.toml``).

Up to 0.18.1 ``Fp8LinearMethod`` runs FP8 Marlin (weight-only W8A16) below sm89 before any
registry is asked, and up to 0.14.1 CUTLASS / ``torch._scaled_mm`` are picked by
``apply_fp8_linear`` / ``Fp8LinearOp`` code; the 0.7.0 .. 0.14.1 scaled-mm registry served INT8
only. Before these entries an A100 + 0.7.3 FP8 walk predicted ``CutlassScaledMMLinearKernel``
(native, gated "sm75 or newer"), the INT8 rung.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from packaging.version import Version

from logscan.analysis.gates import Machine
from logscan.analysis.predict import walk
from logscan.cli import cli
from logscan.packs.dispatch import holds
from tests.conftest import ROOT

FP8 = "dispatch:fp8:Fp8LinearMethod"
FBGEMM = "dispatch:fp8:FBGEMMFp8LinearMethod"


def _walk(packs, scheme, version, cc, platform="CUDA", **kw):
    return walk(packs, "vllm", scheme, Machine(platform=platform, cc=cc, **kw), version)


def _history_releases(packs):
    return packs.packs["vllm"].ladders.history.releases


# (scheme, release, machine, predicted kernel, cost class, certain)
CASES = [
    ("FP8", "0.7.3", {"cc": 80}, "apply_fp8_marlin_linear", "weight_only", True),      # the new-user trial
    ("FP8", "0.7.3", {"cc": 90, "cuda": "12.4"}, "cutlass_w8a8_scaled_mm", "native", True),
    ("FP8", "0.7.3", {"cc": 89, "cuda": "12.4"}, "cutlass_w8a8_scaled_mm", "native", True),   # L4, CUDA >= 12.4
    ("FP8", "0.7.3", {"cc": 75}, None, None, False),                                  # T4: below Fp8Config's 80
    ("FP8", "0.14.1", {"cc": 75}, "apply_fp8_marlin_linear", "weight_only", True),     # get_min_capability 75 there
    ("FP8", "0.12.0", {"cc": 80}, "apply_fp8_marlin_linear", "weight_only", True),
    ("FP8", "0.12.0", {"cc": 100, "cuda": "12.8", "packages": frozenset({"flashinfer"}), "checkpoint": {"scales": ["per-tensor"]}},
     "flashinfer_w8a8_scaled_mm", "native", True),
    ("FP8", "0.18.1", {"cc": 80}, "apply_fp8_marlin_linear", "weight_only", True),     # Marlin before the registry
    ("FP8", "0.18.1", {"cc": 90}, "CutlassFP8ScaledMMLinearKernel", "native", True),   # the registry's CUTLASS
    ("FP8", "0.22.1", {"cc": 80}, "MarlinFP8ScaledMMLinearKernel", "weight_only", True),  # Marlin in the registry
    ("FBGEMM-FP8", "0.9.2", {"cc": 80}, "apply_fp8_marlin_linear", "weight_only", True),
    ("FBGEMM-FP8", "0.9.2", {"cc": 90, "cuda": "12.4"}, "cutlass_w8a8_scaled_mm", "native", True),
    ("FBGEMM-FP8", "0.18.1", {"cc": 80}, "apply_fp8_marlin_linear", "weight_only", True),
    ("FBGEMM-FP8", "0.33.0", {"cc": 80}, "MarlinFP8ScaledMMLinearKernel", "weight_only", True),
    ("FBGEMM-FP8", "0.33.0", {"cc": 90, "cuda": "12.4"}, "CutlassFP8ScaledMMLinearKernel", "native", True),
    ("INT8", "0.7.3", {"cc": 80}, "CutlassScaledMMLinearKernel", "native", True),      # the scaled-mm registry stays INT8's
]


@pytest.mark.parametrize("scheme,release,m,kernel,cost,certain", CASES,
                         ids=[f"{c[0]}-{c[1]}-sm{c[2]['cc']}-{i}" for i, c in enumerate(CASES)])
def test_fp8_walks(packs, scheme, release, m, kernel, cost, certain):
    w = _walk(packs, scheme, release, **m)
    assert w.ladder_version == release
    assert (w.predicted, w.predicted_cost_class, w.certain) == (kernel, cost, certain), w.outcome


def test_l4_below_cuda_12_4_falls_to_torch_scaled_mm_and_t4_is_refused(packs):
    w = _walk(packs, "FP8", "0.7.3", cc=89, cuda="12.1")
    assert {o.kernel for o in w.outcomes} == {"torch_per_tensor_w8a8_scaled_mm", "torch_channelwise_w8a8_scaled_mm"}
    w = _walk(packs, "FP8", "0.7.3", cc=75)
    assert all(r.verdict.value == "fails" for r in w.rungs) and "Minimum capability: 80" in w.outcome


def test_every_release_up_to_0_18_1_serves_fp8_below_sm89_with_marlin(packs):
    """On every shipped release up to 0.18.1 an A100 FP8 checkpoint gets the dispatch's
    weight-only Marlin; from 0.19.0 the walk is the registry's (whose CUTLASS rung, tested
    before Marlin in 0.29.0 .. 0.32.0, only asks for CUDA there: the source's choice, kept)."""
    for rel in _history_releases(packs):
        w = _walk(packs, "FP8", rel, cc=80)
        if Version(rel) < Version("0.19.0"):
            assert (w.registry, w.predicted, w.predicted_cost_class, w.certain) == (
                FP8, "apply_fp8_marlin_linear", "weight_only", True), (rel, w.outcome)
        else:
            assert w.registry == "_POSSIBLE_FP8_KERNELS", rel


def test_dispatch_entries_cover_each_release_once(packs):
    df = packs.packs["vllm"].ladders.dispatch
    for rel in _history_releases(packs):
        fp8 = [e for e in df.dispatch if e.name == FP8 and holds(e, rel)]
        fb = [e for e in df.dispatch if e.name == FBGEMM and holds(e, rel)]
        assert len(fp8) == (1 if Version(rel) < Version("0.19.0") else 0), rel
        assert len(fb) == 1, rel


def test_marlin_stays_outside_the_registry_exactly_where_the_dispatch_says(packs):
    """The ``then`` entries (0.15.0 ..) put apply_fp8_marlin_linear before _POSSIBLE_FP8_KERNELS:
    right only while the registry's CUDA list lacks MarlinFP8ScaledMMLinearKernel (the history,
    read from each release's source), which 0.19.0 added."""
    hist = packs.packs["vllm"].ladders.history
    df = packs.packs["vllm"].ladders.dispatch
    for rel in hist.releases:
        lists = dict(next((plats for reg, plats in hist.at(rel) if reg.name == "_POSSIBLE_FP8_KERNELS"), {}))
        in_registry = "MarlinFP8ScaledMMLinearKernel" in lists.get("CUDA", [])
        dispatched = any(e.name == FP8 and holds(e, rel) for e in df.dispatch)
        if lists:
            assert in_registry != dispatched, rel


def test_composed_and_snapshot_releases_get_their_own_era(packs):
    lad = packs.packs["vllm"].ladders
    cuda = {rel: next(r for r in lad[rel].registry if r.name == FP8).platforms["CUDA"]
            for rel in ("0.7.2", "0.7.3", "0.10.1.1", "0.10.2")}
    assert "flashinfer_w8a8_scaled_mm" not in cuda["0.10.1.1"] and "flashinfer_w8a8_scaled_mm" in cuda["0.10.2"]
    rocm = {rel: next(r for r in lad[rel].registry if r.name == FP8).platforms["ROCM"] for rel in ("0.7.2", "0.7.3")}
    assert "torch_per_token_w8a8_scaled_mm" not in rocm["0.7.2"] and "torch_per_token_w8a8_scaled_mm" in rocm["0.7.3"]
    # 0.15.0 (composed) .. 0.18.1 (snapshot): Marlin, then that release's own registry list
    for rel in ("0.15.0", "0.18.1"):
        reg = next(r for r in lad[rel].registry if r.name == FP8)
        own = next(r for r in lad[rel].registry if r.name == "_POSSIBLE_FP8_KERNELS").platforms["CUDA"]
        assert reg.platforms["CUDA"] == ["apply_fp8_marlin_linear", *own]
    assert not any(r.name == FP8 for r in lad["0.19.0"].registry)
    # the snapshot files stay as generated from the reference
    assert not any(r.name.startswith("dispatch:") for r in lad.snapshots["0.7.3"].registry)


def test_scaled_mm_registry_is_int8(packs):
    reg = next(r for r in packs.packs["vllm"].ladders["0.7.3"].registry if r.name == "_POSSIBLE_KERNELS@scaled_mm")
    assert (reg.role, reg.scheme) == ("int8 linear", "INT8 W8A8")


def _scan(version, gpu=None):
    args = ["scan", "--format", "json", "--engine-version", version, str(ROOT / "fixtures" / "vllm" / "vllm-172.log")]
    if gpu:
        args[1:1] = ["--gpu", gpu]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.output)


def _positions(doc):
    out = []

    def walk_(o):
        if isinstance(o, dict):
            if "holds_in" in o and "rung" in o:
                out.append(o)
            for v in o.values():
                walk_(v)
        elif isinstance(o, list):
            for v in o:
                walk_(v)
    walk_(doc)
    return out


@pytest.mark.parametrize("version,rung,rungs,span", [("0.7.3", 1, 4, "0.7.3\u20130.8.4"),
                                                     ("0.12.0", 1, 5, "0.11.1\u20130.13.0"),
                                                     ("0.18.1", 1, 5, "0.15.0\u20130.18.1")])
def test_scan_places_the_fp8_marlin_warning_on_the_dispatch(version, rung, rungs, span):
    """fixtures/vllm/vllm-172 (the warning a real SM80 run printed, pasted in an issue): with its
    release given it sits on that release's Fp8LinearMethod dispatch (was: on no ladder, 'RUNG -')."""
    doc = _scan(version, gpu="A100")
    pos = _positions(doc)
    assert [(p["registry"], p["rung"], p["rungs"], p["holds_in"], p["kernel_class"]) for p in pos] == [
        (FP8, rung, rungs, span, "apply_fp8_marlin_linear")]
    assert "WEIGHT_ONLY_SUBSTITUTION" in json.dumps(doc)


def test_every_release_walks_its_own_ladder_for_fp8_and_fbgemm(packs):
    """No release borrows an older release's dispatch: a platform a ``then`` entry does not list
    would send the walk to the newest older ladder that serves it (0.14.1's ROCm rungs)."""
    for rel in _history_releases(packs):
        for scheme in ("FP8", "FBGEMM-FP8"):
            for m in ({"cc": 80}, {"cc": 94, "platform": "ROCM"}):
                assert _walk(packs, scheme, rel, **m).ladder_version == rel, (scheme, rel, m)


def test_explain_leaves_out_dispatch_lists_that_only_mirror_a_registry(packs):
    """From 0.19.0 the fbgemm_fp8 dispatch is _POSSIBLE_FP8_KERNELS itself: explain lists the
    registry once per release, while 0.15.0 .. 0.18.1 keep the dispatch rows (Marlin first)."""
    from logscan.analysis.explain import explain

    rows = [(r["ladder_version"], r["registry"], r["rung"], r["rungs"]) for r in explain(packs, "CutlassFP8ScaledMMLinearKernel")]
    assert ("0.18.1", FP8, 3, 5) in rows and ("0.18.1", FBGEMM, 3, 5) in rows and ("0.18.1", "_POSSIBLE_FP8_KERNELS", 2, 4) in rows
    assert not [r for r in rows if r[1] == FBGEMM and Version(r[0]) >= Version("0.19.0")]
