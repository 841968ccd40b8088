"""Shipped ladders keep the reference registries' exact order, per registry and platform.

The reference (``shared/reference/vllm/ladders-<v>.json``) was extracted with ``ast`` from
each vLLM wheel; ``tools/ladders_from_reference.py`` turns it into
``patterns/vllm/ladders/<v>.toml``. A rung moved by hand (or by a bug in the tool) would put
every kernel below it on the wrong rung, so the order is compared one list at a time.
Skipped when ``/work/shared`` (the read-only reference) is not beside the checkout.
"""
from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, SHARED

REFERENCE = SHARED / "reference" / "vllm"
REF_FILES = sorted(REFERENCE.glob("ladders-*.json")) if REFERENCE.is_dir() else []
LADDERS = ROOT / "patterns" / "vllm" / "ladders"

needs_reference = pytest.mark.skipif(not REF_FILES, reason="shared/reference/vllm is not available")


def _expected_platforms(reg: dict) -> dict[str, list[str]]:
    """The rung order the tool must keep: platform lists, or an if-chain's outcomes in step order."""
    if reg["kind"] == "if_chain" and reg.get("steps"):
        order: list[str] = []
        for step in reg["steps"]:
            member = step["backend"].split(".")[-1]
            if member not in order:
                order.append(member)
        return {"ANY": order}
    return {p: list(v) for p, v in reg.get("platforms", {}).items()}


@needs_reference
@pytest.mark.parametrize("ref", REF_FILES, ids=[p.stem for p in REF_FILES])
def test_every_shipped_ladder_keeps_reference_order(ref, packs):
    data = json.loads(ref.read_text())
    version = data["version"]
    # the snapshot as generated: the release's ladder adds the hand-kept dispatch registries
    # (patterns/vllm/dispatch.toml), which the reference does not hold
    ladder = packs.packs["vllm"].ladders.snapshots.get(version)
    assert ladder is not None, f"no shipped ladder for vLLM {version} (run tools/ladders_from_reference.py)"
    shipped = {r.name: r for r in ladder.registry}
    assert set(shipped) == set(data["registries"]), "registries added or lost"
    for name, reg in data["registries"].items():
        want = _expected_platforms(reg)
        got = shipped[name].platforms
        assert set(got) == set(want), f"{name}: platforms differ"
        for plat, rungs in want.items():
            assert got[plat] == rungs, f"{version} {name} [{plat}]: order differs"


@needs_reference
def test_every_reference_release_is_shipped():
    versions = {json.loads(p.read_text())["version"] for p in REF_FILES}
    shipped = {p.stem for p in LADDERS.glob("*.toml")}
    assert versions == shipped


def test_cost_classes_follow_the_registry_scheme(packs):
    """Marlin is weight-only on the FP8 / NVFP4 ladders, native where the checkpoint is W4A16."""
    ladder = packs.packs["vllm"].ladders["0.33.0"]
    regs = {r.role: r for r in ladder.registry}
    assert regs["fp8 linear"].cost["MarlinFP8ScaledMMLinearKernel"] == "weight_only"
    assert regs["wna16 linear"].cost["MarlinLinearKernel"] == "native"
    moe = {r.name: r for r in ladder.registry if r.kind == "moe"}
    gpt_oss = next(r for r in moe.values() if r.role == "mxfp4 moe (gpt-oss)")
    nvfp4 = next(r for r in moe.values() if r.role == "nvfp4 moe")
    assert gpt_oss.cost["MARLIN"] == "native"
    assert nvfp4.cost["MARLIN"] == "weight_only"
    assert nvfp4.cost["EMULATION"] == "emulated"
