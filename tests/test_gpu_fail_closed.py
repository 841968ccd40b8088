"""GPU names and capabilities resolve from ``patterns/gpus.toml`` or not at all (fail closed).

The table is checked against the device lines real logs print (``fixtures/``: ggml's ``Device 0:
NAME, compute capability X.Y``, SGLang / vLLM tuning paths ``device_name=NVIDIA_H800``, nvidia-smi's
truncated names); a name the table does not hold is unknown, never matched from a near name
(``RTX 509`` is not an ``RTX 5090``), and ``--gpu`` refuses it; a capability given directly
(``12.1``, ``sm_121``, ``sm121a``, ``sm_100f``) parses with no name, but only one NVIDIA lists.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import regex
from click.testing import CliRunner

from logscan.analysis import gpus
from logscan.analysis.fallback import GPU_NEED
from logscan.analysis.infer import parse_capability
from logscan.cli import cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _fixture_lines(pattern: str) -> list[tuple[str, regex.Match]]:
    rx = regex.compile(pattern)
    out = []
    for path in sorted(FIXTURES.glob("*/*.log")):
        for line in path.read_text(errors="replace").splitlines():
            m = rx.search(line)
            if m:
                out.append((path.name, m))
    return out


def test_every_device_line_of_the_fixtures_agrees_with_the_table():
    # ggml prints the device's own capability next to its name: the table must say the same
    # (llamacpp-109 RTX PRO 6000 Blackwell Server Edition 12.0, RTX 5090 D 12.0, RTX 4050 Laptop
    # GPU 8.9, H800 9.0, RTX 2080 Ti 7.5, ROCm RX 7900 XTX 11.0 ...)
    lines = _fixture_lines(r"Device \d+: (?P<name>[^,]+), compute capability (?P<maj>\d+)\.(?P<min>\d)")
    assert len(lines) >= 10
    resolved = set()
    for stem, m in lines:
        g = gpus.resolve_gpu(m["name"])
        if g is None:
            continue
        assert g.cc == int(m["maj"]) * 10 + int(m["min"]), (stem, m.group(0))
        resolved.add(m["name"])
    assert {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA GeForce RTX 5090 D", "NVIDIA H800",
            "NVIDIA GeForce RTX 4050 Laptop GPU", "NVIDIA GeForce RTX 4070 SUPER", "NVIDIA GeForce RTX 2080 Ti",
            "AMD Radeon RX 7900 XTX"} <= resolved


@pytest.mark.parametrize("path_name, cc", [
    ("NVIDIA_H100_80GB_HBM3", 90), ("NVIDIA_L40S", 89), ("NVIDIA_B200", 100), ("NVIDIA_H800", 90),
    ("NVIDIA_A100-SXM4-80GB", 80), ("NVIDIA_H20-3e", 90), ("NVIDIA_H20", 90), ("NVIDIA_GeForce_RTX_4090", 89),
    ("NVIDIA_GeForce_RTX_3090", 86), ("NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition", 120), ("NVIDIA_L20", 89),
    ("NVIDIA_H200", 90), ("AMD_Instinct_MI325X", 94)])
def test_tuning_path_device_names_of_the_fixtures_resolve(path_name, cc):
    assert any(m["d"] == path_name for _, m in _fixture_lines(r"device_name=(?P<d>[A-Za-z0-9_-]+)"))
    assert gpus.resolve_gpu(path_name).cc == cc


def test_a_tuning_path_device_the_table_does_not_know_stays_unknown_in_the_report():
    # sglang-009: device_name=NVIDIA_RTX_6000D, a China-market part NVIDIA's CUDA GPUs page does not
    # list: no capability is guessed from "RTX 6000 Ada" / "RTX PRO 6000"; the rungs stay undecided
    # for want of the GPU instead of being judged
    assert gpus.resolve_gpu("NVIDIA_RTX_6000D") is None
    r = CliRunner().invoke(cli, ["scan", str(FIXTURES / "sglang" / "sglang-009.log")])
    assert "gpu=NVIDIA_RTX_6000D" in r.output
    assert GPU_NEED in r.output and "exactly sm120" in r.output  # the sm120 rung is named, not judged
    assert "  gpu      NVIDIA_RTX_6000D is not in logscan's GPU table" in r.output
    given = CliRunner().invoke(cli, ["scan", str(FIXTURES / "sglang" / "sglang-009.log"), "--gpu", "sm120"])
    assert "not in logscan's GPU table" not in given.output and GPU_NEED not in given.output


@pytest.mark.parametrize("stem", ["sglang/sglang-225", "llamacpp/llamacpp-109", "vllm/vllm-154"])
def test_a_known_gpu_or_a_platform_without_capability_gets_no_unknown_gpu_line(stem):
    # sglang-225: NVIDIA_H20-3e (Hopper); llamacpp-109: RTX PRO 6000 Blackwell Server Edition;
    # vllm-154: TPU v6e, a platform no compute capability judges
    r = CliRunner().invoke(cli, ["scan", str(FIXTURES / f"{stem}.log")])
    assert "gpu=" in r.output and "not in logscan's GPU table" not in r.output


@pytest.mark.parametrize("name, cc", [
    ("NVIDIA A100 80G...", 80), ("NVIDIA A100-SXM...", 80),            # nvidia-smi truncations (fixtures)
    ("NVIDIA RTX PRO 6000 Blac...", 120), ("NVIDIA RTX PRO 5000 Blac...", 120), ("NVIDIA RTX PRO 4000 Blac...", 120),
    ("NVIDIA GeForce RTX 5090 Laptop GPU", 120), ("NVIDIA GeForce RTX 5070 Ti Laptop GPU", 120),
    ("NVIDIA GeForce RTX 5050 Laptop GPU", 120), ("NVIDIA_GeForce_RTX_5060_Ti", 120),
    ("NVIDIA RTX PRO 2000 Blackwell", 120), ("NVIDIA RTX PRO 4500 Blackwell Server Edition", 120),
    ("NVIDIA B300 SXM6 AC", 103), ("NVIDIA GB300", 103), ("NVIDIA GB10", 121), ("DGX Spark", 121),
    ("NVIDIA Thor", 110), ("Jetson T5000", 110), ("Jetson Orin Nano", 87),
    ("NVIDIA H200 NVL", 90), ("NVIDIA H20", 90), ("NVIDIA A800-SXM4-80GB", 80), ("NVIDIA L20", 89),
    ("NVIDIA RTX 4000 SFF Ada Generation", 89), ("NVIDIA RTX 2000 Ada Generation", 89), ("NVIDIA RTX A2000", 86),
    ("Quadro RTX 5000", 75), ("NVIDIA GeForce GTX 1660 SUPER", 75), ("NVIDIA GeForce RTX 3050", 86),
    ("AMD Instinct MI355X", 95), ("AMD_Instinct_MI350X", 95), ("AMD Instinct MI325X", 94), ("AMD Instinct MI100", 90),
    ("AMD Radeon RX 9070 XT", 120), ("AMD Radeon AI PRO R9700", 120), ("AMD Radeon RX 9060 XT", 120),
    ("AMD Radeon 8060S Graphics", 115), ("AMD Radeon RX 7800 XT", 110)])
def test_current_gpus_resolve_as_their_vendors_list_them(name, cc):
    assert gpus.resolve_gpu(name).cc == cc


@pytest.mark.parametrize("name", [
    "RTX 509", "NVIDIA GeForce RTX 509", "RTX 50", "RTX 50900", "H10", "H900", "NVIDIA H1000", "GH2000",
    "RTX 6000", "NVIDIA RTX 6000D", "RTX 2050",          # RTX 2050 is Ampere, not a Turing RTX 20
    "GeForce GTX TITAN X",                                # 5.2 (Maxwell) while TITAN X (Pascal) is 6.1
    "B3000", "GB1000", "MI300Y", "MI3550X", "RX 9070X", "Thorium", "Orinx", "L40SX", "A1000", "T40",
    "AMD Radeon Graphics", "Intel(R) Arc(TM) B590 Graphics", "Pro B6", "nothing known"])
def test_near_miss_and_unknown_names_resolve_to_nothing(name):
    assert gpus.resolve_gpu(name) is None


@pytest.mark.parametrize("text, cc", [
    ("12.1", 121), ("sm_121", 121), ("sm121a", 121), ("SM_120A", 120), ("sm_100f", 100), ("sm100a", 100),
    ("compute_90a", 90), ("11.0", 110), ("sm_110", 110), ("sm_101", 101), ("10.3", 103), ("cc 8.9", 89),
    ("120", 120), ("sm_75", 75), ("6.1", 61)])
def test_a_capability_given_directly_parses_with_no_name(text, cc):
    g = gpus.resolve_gpu(text)
    assert g is not None and g.cc == cc and g.platform == "CUDA"


@pytest.mark.parametrize("text", ["sm_999", "13.0", "12.9", "sm_122", "sm_12", "1.0", "999"])
def test_a_capability_nvidia_does_not_list_is_unknown(text):
    assert gpus.resolve_gpu(text) is None
    assert "unknown compute capability" in gpus.unknown_gpu_message(text)


@pytest.mark.parametrize("text", ["sm90x", "sm_90b", "sm_90af", "sm-90", "9.0.1"])
def test_an_arch_with_a_suffix_nvcc_does_not_have_is_unknown(text):
    # only nvcc's 'a' (arch-specific) and 'f' (family) suffixes; it was any letter
    assert gpus.resolve_gpu(text) is None


@pytest.mark.parametrize("text, cc", [("sm_100f", 100), ("sm_121a", 121), ("12.1", 121), ("sm_90a", 90)])
def test_a_logged_capability_keeps_its_arch_suffix_readable(text, cc):
    assert parse_capability(text) == cc


@pytest.mark.parametrize("gfx, name, cc", [("gfx950", "MI355X", 95), ("gfx942", "MI300X", 94),
                                           ("gfx1151", "Ryzen AI Max", 115), ("gfx1201", "RX 9070 XT", 120),
                                           ("gfx1200", "RX 9060 XT", 120), ("GFX90A", "MI250X", 90)])
def test_a_rocm_arch_resolves_to_its_entry(gfx, name, cc):
    g = gpus.resolve_gpu(gfx)
    assert (g.name, g.cc, g.platform, g.gfx) == (name, cc, "ROCM", gfx.lower())


@pytest.mark.parametrize("name", ["Intel(R) Arc(TM) B580 Graphics", "Intel(R) Arc(TM) Pro B60 Graphics",
                                  "Intel(R) Arc(TM) A770 Graphics", "Intel(R) Data Center GPU Max 1550"])
def test_intel_gpus_are_xpu_devices_with_no_compute_capability(name):
    # torch.xpu's names (fixtures: llama.cpp SYCL 'Intel(R) Arc(TM) A770 Graphics'); the platform, not
    # an sm number, judges them
    g = gpus.resolve_gpu(name)
    assert g.platform == "XPU" and g.cc is None


def test_planning_on_an_intel_gpu_is_the_xpu_platform():
    r = CliRunner().invoke(cli, ["matrix", "FP8", "--gpu", "Intel(R) Arc(TM) B580 Graphics"])
    assert r.exit_code == 0 and "on XPU, compute capability unknown" in r.output
    r = CliRunner().invoke(cli, ["matrix", "FP8", "--gpu", "B580", "--platform", "rocm"])
    assert r.exit_code == 2 and "XPU device, not ROCM" in r.output


def test_a_rocm_arch_no_entry_has_is_unknown():
    # it was Gpu("gfx1036", None, "ROCM"): a device of no capability, judged anyway
    assert gpus.resolve_gpu("gfx1036") is None
    assert "unknown ROCm arch" in gpus.unknown_gpu_message("gfx1036")


@pytest.mark.parametrize("command", [["matrix", "NVFP4"], ["ladder", "vllm", "FP8"]])
@pytest.mark.parametrize("gpu, said", [("RTX 509", "unknown GPU 'RTX 509'"), ("sm_999", "unknown compute capability"),
                                       ("gfx1036", "unknown ROCm arch"), ("NVIDIA RTX 6000D", "unknown GPU")])
def test_planning_refuses_an_unknown_gpu(command, gpu, said):
    r = CliRunner().invoke(cli, [*command, "--gpu", gpu])
    assert r.exit_code == 2 and said in r.output


def test_gate_refuses_an_unknown_gpu_before_judging():
    log = str(FIXTURES / "sglang" / "sglang-009.log")
    r = CliRunner().invoke(cli, ["gate", log, "--gpu", "RTX 509"])
    assert r.exit_code == 2 and "unknown GPU 'RTX 509'" in r.output and "did you mean RTX 5090" in r.output


@pytest.mark.parametrize("gpu, where", [("sm121a", "sm121"), ("12.1", "sm121"), ("Jetson Thor", "sm110"),
                                        ("RTX PRO 4000", "sm120")])
def test_planning_takes_a_capability_or_a_new_name(gpu, where):
    r = CliRunner().invoke(cli, ["matrix", "NVFP4", "--gpu", gpu])
    assert r.exit_code == 0, r.output
    assert where in r.output


@pytest.mark.parametrize("args", [["scan", "--gpu", "", "LOG"], ["gate", "--gpu", "  ", "LOG"],
                                  ["matrix", "NVFP4", "--gpu", ""], ["ladder", "vllm", "NVFP4", "--gpu", ""]])
def test_an_empty_gpu_is_refused_not_read_as_no_gpu(args):
    """``--gpu "$GPU"`` with ``$GPU`` unset (second new-user trial: taken silently as unknown)."""
    from click.testing import CliRunner

    from logscan.cli import cli
    from tests.conftest import FIXTURES

    args = [str(FIXTURES / "vllm" / "vllm-005.log") if a == "LOG" else a for a in args]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "empty" in res.output, res.output
