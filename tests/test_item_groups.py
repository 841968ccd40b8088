"""A multi-line continuation keeps the named groups of each of its items (``Event.item_groups``),
not only their texts: vllm-001 (vllm#11218, a KERNEL_NOT_FOUND whose reason lines say
'MacheteLinearKernel requires capability 90, current compute capability is 80')."""
from __future__ import annotations

from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _kernel_not_found(path):
    rep = scan_inputs([str(path)], default_packs())
    (ev,) = [e for e in rep.events if e.rule == "vllm.kernel.not-found"] or [None]
    return rep, ev


def test_each_item_keeps_its_own_groups():
    rep, ev = _kernel_not_found(FIXTURES / "vllm" / "vllm-001.log")
    assert ev is not None and len(ev.items) >= 2
    assert len(ev.item_groups) == len(ev.items)
    haves = [g.get("have") for g in ev.item_groups]
    assert "80" in haves  # the Machete reason's stated capability, read from its own item
    assert all("item" not in g for g in ev.item_groups)
    assert rep.runs[0].config.compute_capability == "80"


def test_item_groups_stay_out_of_the_report_json():
    rep, ev = _kernel_not_found(FIXTURES / "vllm" / "vllm-001.log")
    assert "item_groups" not in ev.model_dump(mode="json") and ev.item_groups
