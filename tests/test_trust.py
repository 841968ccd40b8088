"""Findings a CI gate can trust (analysis/trust.py) and the lines logscan did not understand."""
from __future__ import annotations

import json

from click.testing import CliRunner

from logscan.cli import cli
from logscan.pipeline import scan_inputs


def _run(tmp_path, text):
    log = tmp_path / "x.log"
    log.write_text(text)
    rep = scan_inputs([str(log)])
    return rep, log


def test_an_optional_fusion_switched_off_is_no_arch_error(tmp_path):
    # an SGLang info line: an optional fusion needs SM100 and is disabled (not a fatal limit)
    rep, _ = _run(tmp_path, "[2026-11-29 10:00:00 TP0] flashinfer allreduce fusion requires SM100+; disabled.\n")
    (run,) = rep.runs
    assert run.engine.name == "sglang"
    assert "UNSUPPORTED_ON_ARCH" not in {f.code for f in run.findings}
    assert [e.rule for e in rep.events] == ["sglang.grammar.requires-optional"]


def test_a_missing_package_unrelated_to_kernels_is_no_finding(tmp_path):
    rep, _ = _run(tmp_path, "[2026-11-29 10:00:00 TP0] ModuleNotFoundError: No module named 'opentelemetry'\n"
                            "[2026-11-29 10:00:01 TP0] ModuleNotFoundError: No module named 'flashinfer'\n")
    (run,) = rep.runs
    (f,) = [f for f in run.findings if f.code == "OPTIONAL_PACKAGE_MISSING"]
    assert f.line == 2
    (u,) = run.unexplained
    assert u.line == 1 and "opentelemetry" in u.why and u.why.startswith("its finding was not trusted")


def test_slow_quant_method_needs_a_faster_method(tmp_path):
    line = "WARNING 06-17 13:04:11 [config.py:931] {m} quantization is not fully optimized yet. The speed can be slower.\n"
    rep, _ = _run(tmp_path, line.format(m="awq"))  # awq_marlin exists in every release the pack knows
    assert "SLOW_QUANT_METHOD" in {f.code for f in rep.runs[0].findings}
    rep, _ = _run(tmp_path, line.format(m="squeezellm"))  # no faster method is known
    assert "SLOW_QUANT_METHOD" not in {f.code for f in rep.runs[0].findings}
    assert rep.runs[0].unexplained and "no faster method" in rep.runs[0].unexplained[0].why


def test_an_error_on_an_unknown_engine_is_lowered_with_its_reason(tmp_path):
    rep, _ = _run(tmp_path, "RuntimeError: Unsupported kernel config for moe heuristic dispatch\n")
    (run,) = rep.runs
    assert run.engine.name == "unknown"
    assert run.findings and all(f.severity.value != "error" for f in run.findings)
    assert any("severity lowered" in r for f in run.findings for r in f.reasons)


def test_unexplained_in_json_text_summary_and_its_own_listing(tmp_path):
    # a kernel line no rule reads (SGLang 0.5.23's 'Warmed fused Mamba slot copy kernel in %.3f ms',
    # templates.jsonl); the Mamba pool line is read since batch 8s (sglang.mem.mamba-pool-allocated)
    text = ("[2026-06-24 11:50:38] Linear attention kernel backend: decode=triton, prefill=triton\n"
            "[2026-06-24 11:50:39] Warmed fused Mamba slot copy kernel in 1.512 ms\n")
    _, log = _run(tmp_path, text)
    runner = CliRunner()
    out = json.loads(runner.invoke(cli, ["scan", "--format", "json", str(log)]).output)
    assert out["summary"]["unexplained"] == len(out["runs"][0]["unexplained"]) >= 1
    txt = runner.invoke(cli, ["scan", str(log)]).output
    assert "Not understood" in txt and "kernel-relevant line(s) not understood" in txt
    listing = runner.invoke(cli, ["scan", "--unexplained", str(log)]).output.splitlines()
    assert listing and all("\t" in ln for ln in listing)
    assert listing[0].endswith("Linear attention kernel backend: decode=triton, prefill=triton") or \
        listing[0].endswith("Warmed fused Mamba slot copy kernel in 1.512 ms")


def test_understood_lines_are_not_unexplained(tmp_path):
    rep, _ = _run(tmp_path, "(EngineCore pid=1) INFO 06-24 14:35:38 [mxfp4.py:514] Using 'EMULATION' Mxfp4 MoE backend.\n")
    assert rep.runs[0].selections and rep.runs[0].unexplained == []
