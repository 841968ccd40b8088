"""SGLang's ladder history: every release 0.3.0 -> 0.5.23, derived from its own if/elif code.

patterns/sglang/ladder-history.toml was written by ``tools/refresh.py sglang`` over each
release's sdist (or wheel) with the recipes of tools/derive_sglang_recipes.toml. These tests
check it against the hand-made snapshots, that an SGLang log's rungs come from its release,
that --engine-version takes any SGLang release and refuses others, and refresh.py end to end on
the bundled synthetic tree tests/data/sglang-0.5.24 (its sglang/__init__.py raises: never imported).
"""
from __future__ import annotations

import io
import json
import re
import shutil

import pytest
from click.testing import CliRunner
from packaging.version import Version

from logscan.analysis.ladders import LadderIndex
from logscan.analysis.releases import ReleaseError, resolve_release
from logscan.cli import cli
from logscan.packs.loader import default_packs
from logscan.pipeline import Pipeline
from tests.conftest import load_tool, ROOT

PACKS = default_packs()
SGL = PACKS.packs["sglang"]
HIST = SGL.ladders.history
TREE = ROOT / "tests" / "data" / "sglang-0.5.24"
SHIPPED = ROOT / "patterns" / "sglang" / "ladder-history.toml"
BLOCK_FP8 = ("[2025-06-01 10:00:00 TP0] Using default W8A8 Block FP8 kernel config. Performance might be "
             "sub-optimal! Config file not found at /x/N=4096,K=7168,device_name=NVIDIA_H100_80GB_HBM3,"
             "dtype=fp8_w8a8,block_shape=[128, 128].json")



refresh = load_tool("refresh")
lh = load_tool("ladder_history")
ds = load_tool("derive_sglang")


def _refresh(*args):
    out = io.StringIO()
    return refresh.run(list(args), out=out), out.getvalue()


def test_every_sglang_release_from_0_3_0_to_0_5_23_is_shipped():
    rels = HIST.releases
    assert rels[0] == "0.3.0" and rels[-1] == "0.5.23" and len(rels) == 110
    assert set(rels) <= set(SGL.ladders)
    # 0.3.x quantizes through vLLM's code: no SGLang ladder, and none borrowed from 0.5.3
    assert HIST.at("0.3.6") == [] and SGL.ladders["0.3.6"].registry == []


@pytest.mark.parametrize("release", sorted(SGL.ladders.snapshots, key=Version))
def test_history_equals_each_hand_made_snapshot(release):
    """A snapshot's registries the history derives are exactly its CUDA orderings, and no derived
    registry of that release is missing from the snapshot. (0.5.23's NPU / XPU block-FP8 lists
    are in the history only: in the snapshot their shared Triton rung would make every Triton
    block-FP8 line platform-ambiguous, and their cost on those devices was not read.)"""
    snap = SGL.ladders.snapshots[release]
    want = {r.name: r.platforms.get("CUDA") for r in snap.registry if r.name in HIST.derived}
    got = {reg.name: plats.get("CUDA") for reg, plats in HIST.at(release)}
    assert got == want


def test_hand_made_ladders_are_marked_with_why():
    made = {r.name: r.handmade for r in HIST.file.registry if r.handmade}
    assert set(made) == {"ModelOptFp4LinearMethod", "Mxfp4MoEMethod (gpt-oss)"}
    assert all(len(why) > 40 for why in made.values())
    assert not made.keys() & HIST.derived


def test_each_rung_keeps_its_branch_test_as_gate_source():
    plats = {reg.name: p for reg, p in HIST.at("0.5.23")}["initialize_fp4_gemm_config"]
    rungs = dict(zip(plats["CUDA"], HIST.gates("0.5.23", "initialize_fp4_gemm_config", "CUDA")))
    assert rungs["marlin"] == "backend == 'auto' and is_cuda() and (10, 0) > get_device_capability() >= (8, 0)"
    assert HIST.gates("0.5.16", "initialize_fp4_gemm_config", "CUDA")[0].endswith("is_sm100_supported()")


def test_a_log_of_an_older_release_gets_that_releases_rungs():
    """The block-FP8 chain put DeepGEMM 4th before 0.5.6.post2 (Triton 5/5 either way) and
    lists NPU and XPU rungs from 0.5.20: each release's own list places the rung."""
    idx = LadderIndex(SGL)
    p = idx.place("0.4.9.post6", "deep_gemm", None, "CUDA")
    assert (p.position.rung, p.position.rungs, p.position.holds_in) == (4, 5, "0.4.7\u20130.5.6.post1")
    p = idx.place("0.5.12", "deep_gemm", None, "CUDA")
    assert (p.position.rung, p.position.holds_in) == (1, "0.5.6.post2\u20130.5.23")
    assert idx.place("0.4.6", "deep_gemm", None, "CUDA") is None  # no block-FP8 chain yet
    pipe = Pipeline(source="mem", engine_version={"sglang": "0.5.12"})
    runs = [r for _, r in pipe.feed(1, BLOCK_FP8) if r] + [r for _, r in pipe.close() if r]
    (run,) = runs
    (sel,) = run.selections
    assert (run.engine.ladder_version, sel.ladder.rung, sel.ladder.rungs) == ("0.5.12", 5, 5)
    assert sel.ladder.holds_in == "0.5.6.post2\u20130.5.23"


def test_engine_version_takes_any_sglang_release_and_refuses_others():
    assert resolve_release(PACKS, "sglang", "0.4.3.post2") == "0.4.3.post2"
    with pytest.raises(ReleaseError, match="nearest: 0.5.23"):
        resolve_release(PACKS, "sglang", "0.5.24")
    with pytest.raises(ReleaseError, match="nearest: 0.4.10.post2 and 0.5.1"):
        resolve_release(PACKS, "sglang", "0.5.0")
    r = CliRunner().invoke(cli, ["ladder", "sglang", "FP8", "--gpu", "H100", "--engine-version", "0.5.24"])
    assert r.exit_code == 2 and "nearest: 0.5.23" in r.output
    r = CliRunner().invoke(cli, ["scan", "--engine-version", "sglang=0.5.12", "--format", "json", "-"],
                           input=BLOCK_FP8 + "\n")
    run = json.loads(r.output)["runs"][0]
    assert run["engine"]["ladder_version"] == "0.5.12" and run["selections"][0]["ladder"]["rungs"] == 5
    # 0.5.21 also lists NPU and XPU rungs; the shared Triton fallback still names CUDA only
    r = CliRunner().invoke(cli, ["scan", "--engine-version", "sglang=0.5.21", "--format", "json", "-"],
                           input=BLOCK_FP8 + "\n")
    eng = json.loads(r.output)["runs"][0]["engine"]
    assert (eng["ladder_version"], eng["platform"], eng["platform_source"]) == ("0.5.21", "CUDA", "inferred")


def test_refresh_derives_diffs_and_writes_a_new_release(tmp_path):
    hist = tmp_path / "h.toml"
    shutil.copy(SHIPPED, hist)
    shutil.copy(SHIPPED.with_name("template-history.toml"), tmp_path / "template-history.toml")
    rc, out = _refresh("sglang", "0.5.24", "--source", str(TREE), "--history", str(hist))
    assert rc == 0, out
    assert "sglang 0.5.24 (added) vs 0.5.23: " in out
    assert "new kernel      flashinfer_deepgemm_w8a8_block_fp8_linear" in out  # unnamed: kept as in source
    assert ("added rung      dispatch_w8a8_block_fp8_linear [CUDA] flashinfer_deepgemm_w8a8_block_fp8_linear "
            "(rung 2/6)") in out
    assert "gone platform   dispatch_w8a8_block_fp8_linear [NPU]" in out
    assert "gone registry" not in out and "new registry" not in out
    assert "reordered       ModelOptNvFp4FusedMoEMethod.create_moe_runner [CUDA]" in out
    assert "gate changed    initialize_fp4_gemm_config [CUDA] marlin: " in out and "cuda_at_least(12, 0)" in out
    new, old = lh.expand(lh.load(hist)), lh.expand(lh.load(SHIPPED))
    assert list(new)[-1] == "0.5.24" and all(new[r] == old[r] for r in old)
    (o_new, t_new, n_new), (o_old, t_old, n_old) = _parts(hist.read_text()), _parts(SHIPPED.read_text())
    assert o_new - o_old < 3000  # ranges extend, nothing is copied
    assert n_new > n_old and t_new - t_old < 400 * (n_new - n_old)  # terms: once per new gate text
    assert "handmade = " in hist.read_text()
    rc, out = _refresh("sglang", "0.5.24", "--check", "--source", str(TREE), "--history", str(hist))
    assert (rc, out.splitlines()[0]) == (0, "sglang 0.5.24: shipped == source")


def _parts(text: str) -> tuple[int, int, int]:
    """Bytes outside the ``terms`` blocks, bytes inside them, and the number of gate texts they hold."""
    blocks = re.findall(r"^terms = \[\n(.*?)^\]\n", text, re.M | re.S)
    rest = re.sub(r"^terms = \[\n.*?^\]\n", "", text, flags=re.M | re.S)
    return len(rest), sum(len(b) for b in blocks), sum(b.count("\n") for b in blocks)


def test_check_exits_1_when_the_shipped_data_differs_from_the_source():
    rc, out = _refresh("sglang", "0.5.23", "--check", "--source", str(TREE), "--history", str(SHIPPED))
    assert rc == 1 and "sglang 0.5.23: shipped != source" in out and "npu-mxfp8" in out


def test_a_function_without_the_choice_is_no_registry(tmp_path):
    """A release whose create_moe_runner makes no auto choice lacks the NVFP4 MoE registry."""
    q = tmp_path / "sglang" / "srt" / "layers" / "quantization"
    q.mkdir(parents=True)
    (q / "modelopt_quant.py").write_text(
        "class ModelOptNvFp4FusedMoEMethod:\n    def create_moe_runner(self, layer, cfg):\n"
        "        if get_moe_runner_backend().is_flashinfer_trtllm():\n            self.runner = make(cfg)\n")
    assert ds.derive(tmp_path) == []
    with pytest.raises(ds.DeriveError):
        ds.find_sglang_root(tmp_path / "sglang")


def test_a_vllm_run_never_reads_the_sglang_history(tmp_path):
    """The history is loaded on the first SGLang ladder lookup only (start-up cost)."""
    import functools

    from logscan.packs.loader import load_packs
    from logscan.pipeline import scan_inputs

    packs = load_packs(ROOT / "patterns")
    assert isinstance(packs.packs["sglang"].ladders._history, functools.partial)
    log = tmp_path / "v.log"
    log.write_text("INFO 05-11 08:00:01 [utils.py:233] vLLM server version 0.31.0, serving model m\n"
                   "INFO 05-11 08:00:02 [cuda.py:1] Using MarlinNvFp4LinearKernel for NVFP4 GEMM\n")
    (run,) = scan_inputs([str(log)], packs=packs).runs
    assert run.engine.name == "vllm" and run.selections
    assert isinstance(packs.packs["sglang"].ladders._history, functools.partial)
    assert "0.4.9.post6" in packs.packs["sglang"].ladders  # the first lookup reads it
    assert not isinstance(packs.packs["sglang"].ladders._history, functools.partial)
