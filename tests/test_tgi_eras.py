"""TGI release eras (issue 16): which ladder a TGI log is read against.

patterns/tgi/ladder-history.toml lists every release 2.0.0 .. 3.3.7 with the rung lists of its
era (read by hand at the release tags of huggingface/text-generation-inference); the era files
patterns/tgi/ladders/{2.0.0,2.1.0,2.2.0,2.4.0,3.0.2,3.3.7}.toml give the facts. A logged release
(docker image tag, --env 'Docker label') is read against its own era; a log that states none says
so and names the ladder it was read against (the newest, 3.3.7); a release outside every era
(0.9, 1.3.0) is read against none.
"""
from __future__ import annotations

import pytest
from packaging.version import Version

from logscan.analysis.ladders import LadderIndex
from logscan.packs.loader import default_packs
from tests.conftest import one_run, scan_json, write_log

TGI = default_packs().packs["tgi"]
IDX = LadderIndex(TGI)
HIST = TGI.ladders.history


def _fp8(release: str, platform: str = "CUDA") -> list[str]:
    reg = next(r for r in TGI.ladders[release].registry if r.name == "get_fp8_linear")
    return list(reg.platforms.get(platform, []))


def _gptq(release: str, platform: str = "CUDA") -> list[str]:
    reg = next(r for r in TGI.ladders[release].registry if r.name == "GPTQ/AWQ weights loader")
    return list(reg.platforms.get(platform, []))


def _scan(tmp_path, *messages: str) -> dict:
    text = "".join(f"2024-08-20T10:00:0{i}.000000Z  INFO text_generation_launcher: {m}\n"
                   for i, m in enumerate(messages))
    (run,) = scan_json(write_log(tmp_path, text))["runs"]
    return run


def test_every_tgi_release_2_0_0_to_3_3_7_is_shipped():
    rels = HIST.releases
    assert rels[0] == "2.0.0" and rels[-1] == "3.3.7" and len(rels) == 29
    assert rels == sorted(rels, key=Version)
    # candidates 2.0+ are history releases; the pre-2.0 ones (a 1.x Args dump dates a log there,
    # tgi.quant.args-*-1x) are older than the history and have no era ladder: read against none
    assert {r for r in TGI.meta.pack.releases if Version(r) >= Version("2.0.0")} <= set(rels) | {"2.0.4"}
    assert all(Version(r) < Version(rels[0]) for r in set(TGI.meta.pack.releases) - set(rels) - {"2.0.4"})
    assert set(TGI.ladders.snapshots) == {"2.0.0", "2.1.0", "2.2.0", "2.4.0", "3.0.2", "3.3.7"}


@pytest.mark.parametrize("release", sorted(TGI.ladders.snapshots, key=Version))
def test_history_equals_each_era_file(release):
    """The hand-kept orderings of an era file's release are exactly that file's lists."""
    snap = TGI.ladders.snapshots[release]
    assert {r.name: r.platforms for r in snap.registry} == {reg.name: p for reg, p in HIST.at(release)}
    for reg in snap.registry:  # every rung is described
        assert all(k in snap.kernel for rungs in reg.platforms.values() for k in rungs), reg.name


@pytest.mark.parametrize("release, fp8, gptq, facts", [
    # 2.0: Fp8Linear only (layers/linear.py get_linear), no Marlin at all
    ("2.0.0", ["torch._scaled_mm"], ["ExLlama v2", "Triton QuantLinear"], "2.0.0"),
    ("2.0.4", ["torch._scaled_mm"], ["ExLlama v2", "Triton QuantLinear"], "2.0.0"),
    # 2.1: GPTQ-Marlin (layers/marlin.py can_use_gptq_marlin, GPTQ only)
    ("2.1.1", ["torch._scaled_mm"], ["GPTQMarlinWeightsLoader", "ExLlama v2", "Triton QuantLinear"], "2.1.0"),
    # 2.2-2.3: get_fp8_linear: Marlin FP8 on CC 8, FBGEMM on CC 9
    ("2.2.0", ["GPTQMarlinFP8Linear", "FBGEMM fp8", "torch._scaled_mm"], None, "2.2.0"),
    ("2.3.1", ["GPTQMarlinFP8Linear", "FBGEMM fp8", "torch._scaled_mm"], None, "2.2.0"),
    # 2.4.0-3.0.1: CUTLASS w8a8 from marlin_kernels replaces FBGEMM
    ("2.4.0", ["GPTQMarlinFP8Linear", "cutlass_scaled_mm", "torch._scaled_mm"], None, "2.4.0"),
    ("3.0.1", ["GPTQMarlinFP8Linear", "cutlass_scaled_mm", "torch._scaled_mm"], None, "2.4.0"),
    ("3.0.2", ["GPTQMarlinFP8Linear", "cutlass_scaled_mm", "torch._scaled_mm"], None, "3.0.2"),
    ("3.2.3", ["GPTQMarlinFP8Linear", "cutlass_scaled_mm", "torch._scaled_mm"], None, "3.0.2"),
    ("3.3.7", ["GPTQMarlinFP8Linear", "cutlass_scaled_mm", "torch._scaled_mm"], None, "3.3.7"),
])
def test_each_release_gets_its_eras_lists_and_facts(release, fp8, gptq, facts):
    assert IDX.exact(release) == release
    assert _fp8(release) == fp8
    if gptq is not None:
        assert _gptq(release) == gptq
    lf = TGI.ladders[release]
    assert lf.version == release
    assert release == facts or f"carried from {facts}" in lf.source


def test_gaudi_and_rocm_fp8_lists_hold_only_where_the_source_has_them():
    assert _fp8("3.1.1", "HPU") == [] and _fp8("3.2.0", "HPU") == ["Fp8Linear (HPU fp8_gemm_v2)"]
    assert _fp8("2.3.1", "ROCM") == [] and len(_fp8("2.4.0", "ROCM")) == 2


def test_era_hints_are_the_orderings_not_a_neighbouring_era():
    # without exact_rungs a rung leaked into the releases next to its era files
    assert IDX.releases_holding_class("FBGEMM fp8") == {"2.2.0", "2.3.0", "2.3.1"}
    assert min(IDX.releases_holding_class("GPTQ-Marlin"), key=Version) == "2.1.0"
    assert min(IDX.releases_holding_class("cutlass w8a8"), key=Version) == "2.4.0"


def test_a_logged_release_is_read_against_its_era(tmp_path):
    run = _scan(tmp_path, "Docker label: 2.3.1", "Using FBGEMM fp8 optimized kernels")
    assert run["engine"]["version"] == "2.3.1" and run["engine"]["ladder_version"] == "2.3.1"
    (sel,) = run["selections"]
    assert (sel["ladder"]["rung"], sel["ladder"]["rungs"]) == (2, 3)
    assert sel["ladder"]["holds_in"] == "2.2.0–2.3.1"


@pytest.mark.parametrize("label, rung", [("2.0.4", (1, 2)), ("2.4.1", (2, 3))])
def test_exllama_is_the_first_gptq_rung_before_marlin_came(tmp_path, label, rung):
    run = _scan(tmp_path, f"Docker label: {label}", "Using exllama kernels v2")
    assert run["engine"]["ladder_version"] == label
    (sel,) = run["selections"]
    assert (sel["ladder"]["rung"], sel["ladder"]["rungs"]) == rung


def test_the_sm89_marlin_fp8_wording_dates_the_log_from_3_0_2(tmp_path):
    run = _scan(tmp_path, "GPU supports FP8, but using Marlin FP8 kernel for better performance")
    assert run["engine"]["release_range"] == ["3.0.2", "3.3.7"]
    # the other wording is older (GPTQMarlinFP8Linear.__init__ from 2.2.0): tgi-101, a real log
    assert one_run("tgi-101")["engine"]["release_range"] == ["2.2.0", "3.3.7"]


def test_a_real_3_0_1_log_is_read_against_the_2_4_0_era():
    # tgi-116: the docker image tag text-generation-inference:3.0.1 on the pasted command: the
    # reporter's environment (env37: version_reported), read as exactly as a logged release
    e = one_run("tgi-116")["engine"]
    assert e["version"] == "3.0.1" and e["version_source"] == "reported" and e["ladder_version"] == "3.0.1"
    assert "carried from 2.4.0" in TGI.ladders["3.0.1"].source


def _tgi_102_v2(tmp_path) -> dict:
    """tgi-102 (real, Sept 2023) in the 1.2+ wording of its line: 'Using exllama kernels v2' (utils/
    weights.py v1.2.0 -> layers/gptq v3.3.7 print the version; 0.9.4-1.1.1 printed none)."""
    from tests.conftest import FIXTURES

    text = (FIXTURES / "tgi" / "tgi-102.log").read_text(encoding="utf-8")
    assert "Using exllama kernels\n" in text
    (run,) = scan_json(write_log(tmp_path, text.replace("Using exllama kernels\n", "Using exllama kernels v2\n")))["runs"]
    return run


@pytest.mark.parametrize("name", ["tgi-159", "tgi-102-v2"])
def test_a_log_with_no_release_says_so_and_names_its_ladder(name, tmp_path):
    e = (_tgi_102_v2(tmp_path) if name == "tgi-102-v2" else one_run(name))["engine"]
    assert e["version"] is None and e["version_source"] == "unknown" and e["ladder_version"] == "3.3.7"
    assert e["version_evidence"].startswith("release not logged, so read against the TGI 3.3.7 ladders")


def test_the_unversioned_exllama_line_dates_the_log_before_1_2():
    # tgi-102 as printed: 'Using exllama kernels' (utils/weights.py v0.9.4-v1.1.1, no version)
    e = one_run("tgi-102")["engine"]
    assert e["version_source"] == "inferred" and e["release_range"] == ["0.9.4", "1.1.1"]
    assert e["ladder_version"] is None


@pytest.mark.parametrize("name, release", [("tgi-155", "0.9"), ("tgi-145", "1.3.0")])
def test_a_release_outside_every_era_is_read_against_none(name, release):
    e = one_run(name)["engine"]
    assert e["version"] == release and e["ladder_version"] is None
    from click.testing import CliRunner

    from logscan.cli import cli
    from tests.conftest import FIXTURES

    out = CliRunner().invoke(cli, ["scan", str(FIXTURES / "tgi" / f"{name}.log")]).stdout
    assert f"ladders  none shipped for tgi {release}" in out


def test_an_unlogged_release_names_where_the_rung_sits_in_other_eras(tmp_path):
    # tgi-102 in the 1.2+ wording ('Using exllama kernels v2', no release): 2/3 on the newest ladder,
    # but 1/2 in 2.0.x (no GPTQ-Marlin yet); the report names both instead of the newest only
    (sel,) = _tgi_102_v2(tmp_path)["selections"]
    assert sel["kernel"] == "ExLlama v2"
    assert (sel["ladder"]["rung"], sel["ladder"]["rungs"], sel["ladder"]["holds_in"]) == (2, 3, "2.1.0–3.3.7")
    assert [(x["releases"], x["rung"], x["rungs"]) for x in sel["ladder"]["elsewhere"]] == [("2.0.0–2.0.4", 1, 2)]


def test_engine_version_reads_a_real_log_against_that_era():
    import json

    from click.testing import CliRunner

    from logscan.cli import cli
    from tests.conftest import FIXTURES

    out = CliRunner().invoke(cli, ["scan", "--format", "json", "--engine-version", "tgi=2.3.1",
                                   str(FIXTURES / "tgi" / "tgi-101.log")]).stdout
    (run,) = json.loads(out)["runs"]
    assert run["engine"]["ladder_version"] == "2.3.1" and run["engine"]["version_source"] == "given"
    (sel,) = run["selections"]
    assert sel["ladder"]["holds_in"] == "2.2.0–2.3.1" and "v2.2.0 .. v2.3.1" in sel["ladder"]["gate"]
