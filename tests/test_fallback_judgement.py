"""Issue 16: a fallback below a better rung is judged on the run's known facts, for every engine
with ladders (analysis/fallback.py), and a selection its run's own failure refuses is marked and
folded into that failure (analysis/refused.py, gate/fallback.py). Real fixtures throughout:

- sglang-010 (sgl-project/sglang#5390): B200 (the device_name of the tuned-config path), Triton
  W8A8 block FP8 (rung 5/5) below DeepGEMM and FlashInfer, whose needs (deep_gemm / flashinfer
  installed, CUDA runtime >= 12.8, --fp8-gemm-backend, the release) the log does not give:
  UNEXPLAINED, not UNEXPECTED_FALLBACK and not silence. The gates are the planning overlay's
  (patterns/planning/sglang.toml): the 0.5.23 ladder records none for this if/elif chain.
- vllm-001 (vllm-project/llm-compressor#973): 'Using MarlinLinearKernel for ...' then
  KERNEL_NOT_FOUND whose reasons say 'MarlinLinearKernel cannot implement due to: ...'.
"""
from __future__ import annotations

import json

from click.testing import CliRunner

from logscan.analysis.refused import mark_refused
from logscan.cli import cli
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

SG010 = FIXTURES / "sglang" / "sglang-010.log"
V001 = FIXTURES / "vllm" / "vllm-001.log"
V276 = FIXTURES / "vllm" / "vllm-276.log"


def _sel(path, **kw):
    report = scan_inputs([str(path)], **kw)
    return report, report.runs[0].selections[0]


def test_sglang_010_fallback_is_unexplained_with_its_undecided_needs():
    report, sel = _sel(SG010)
    assert sel.kernel == "W8A8 Block FP8 kernel" and sel.ladder.rung == 5
    und = {u.kernel: u for u in sel.ladder.undecided}
    assert set(und) == {"deep_gemm", "flashinfer"}
    deep = " ".join(und["deep_gemm"].needs)
    assert "deep_gemm installed" in deep and "SGLANG_ENABLE_JIT_DEEPGEMM" in deep and "release" in deep
    assert "sm90 or newer" not in deep  # B200 (sm100) meets the capability need: it is decided
    assert "CUDA runtime 12.8 or newer" in " ".join(und["flashinfer"].needs)
    assert not [f for f in report.runs[0].findings if f.code in ("UNEXPECTED_FALLBACK", "FALLBACK_UNEXPLAINED")]
    text = CliRunner().invoke(cli, ["scan", str(SG010)]).output
    assert "W8A8 Block FP8 kernel: fallback UNEXPLAINED" in text and "deep_gemm: undecided:" in text


def test_sglang_010_gate_warns_and_a_policy_on_the_parent_fails_it(tmp_path):
    r = CliRunner().invoke(cli, ["gate", "--partial-log", "--format", "json", str(SG010)])
    assert r.exit_code == 0, r.output
    checks = json.loads(r.stdout)["gate"]["checks"]
    chk = [c for c in checks if c["line"] == 1]
    assert len(chk) == 1 and chk[0]["code"] == "FALLBACK_UNEXPLAINED" and chk[0]["verdict"] == "warn"
    assert any(x.startswith("deep_gemm undecided:") for x in chk[0]["reasons"])
    pol = tmp_path / "gate.toml"
    pol.write_text('[[rule]]\nlevel = "fail"\ncodes = ["UNEXPECTED_FALLBACK"]\nreason = "B200 fleet"\n')
    assert CliRunner().invoke(cli, ["gate", "--partial-log", "--policy", str(pol), str(SG010)]).exit_code == 1
    # scan --fail-on reads the same report fact, by the code or its parent
    for code in ("FALLBACK_UNEXPLAINED", "UNEXPECTED_FALLBACK"):
        res = CliRunner().invoke(cli, ["scan", "--fail-on", code, str(SG010)])
        assert res.exit_code == 1 and "FALLBACK_UNEXPLAINED" in res.output
    assert CliRunner().invoke(cli, ["scan", "--fail-on", "KERNEL_NOT_FOUND", str(SG010)]).exit_code == 0


def test_a_logged_server_option_is_a_known_fact(tmp_path):
    # the resolved-dict dump of fixtures/sglang/synthetic-modelopt-nvfp4-hopper.log (fp8_gemm_runner_backend
    # 'auto', read through pack option_args as --fp8-gemm-backend) before sglang-010's lines: the option
    # need is decided, the package needs stay undecided
    dump = next(ln for ln in (FIXTURES / "sglang" / "synthetic-modelopt-nvfp4-hopper.log").read_text().splitlines()
                if "server_args=" in ln)
    log = tmp_path / "with-args.log"
    log.write_text(dump + "\n" + SG010.read_text())
    _, sel = _sel(log)
    deep = " ".join(next(u for u in sel.ladder.undecided if u.kernel == "deep_gemm").needs)
    assert "--fp8-gemm-backend" not in deep and "deep_gemm installed" in deep


def test_a_rung_the_logs_own_switch_disabled_is_explained():
    # vllm-276 exports VLLM_DISABLED_KERNELS=CutlassFp8BlockScaledMMKernel: that rung is explained by
    # the log, so it is neither UNEXPECTED_FALLBACK nor undecided; DeepGEMM's needs stay undecided
    _, sel = _sel(V276)
    assert "CutlassFp8BlockScaledMMKernel" in sel.ladder.above
    kernels = [u.kernel for u in sel.ladder.undecided]
    assert "CutlassFp8BlockScaledMMKernel" not in kernels and "DeepGemmFp8BlockScaledMMKernel" in kernels


def test_vllm_001_selection_is_refused_by_its_own_kernel_not_found():
    report, sel = _sel(V001)
    assert sel.kernel == "MarlinLinearKernel" and sel.refused is not None
    assert sel.refused.code == "KERNEL_NOT_FOUND" and sel.refused.reason.startswith("MarlinLinearKernel cannot implement")
    text = CliRunner().invoke(cli, ["scan", str(V001)]).output
    assert "MarlinLinearKernel (refused)" in text and "refused by the run's own failure at line 2" in text


def test_vllm_001_gate_has_no_quiet_pass_for_the_refused_selection():
    r = CliRunner().invoke(cli, ["gate", "--format", "json", str(V001)])
    assert r.exit_code == 1
    checks = json.loads(r.stdout)["gate"]["checks"]
    assert not [c for c in checks if c["verdict"] == "pass"]
    knf = next(c for c in checks if c["code"] == "KERNEL_NOT_FOUND")
    assert knf["verdict"] == "fail" and "MarlinLinearKernel (refused)" in knf["message"]
    assert not [c for c in checks if c["kind"] == "selection"]  # folded into the failing check


def test_a_reason_refuses_only_the_kernel_it_leads_with():
    packs = default_packs()
    report = scan_inputs([str(V001)])
    run = report.runs[0]
    knf = next(f for f in run.findings if f.code == "KERNEL_NOT_FOUND")
    ladders = packs.packs["vllm"].ladders
    for reasons, refused in (
            (["MacheteLinearKernel requires capability 90, current compute capability is 80"], False),
            (["ExllamaLinearKernel cannot implement due to: use MarlinLinearKernel instead"], False),
            (["  - MarlinLinearKernel cannot implement due to: shape"], True)):
        sel = run.selections[0].model_copy(update={"refused": None})
        mark_refused([sel], [knf.model_copy(update={"reasons": reasons})], packs.findings, ladders)
        assert (sel.refused is not None) == refused, reasons
    # a code whose reasons are not refusals (findings.toml has no reasons_refuse for it) refuses nothing
    sel = run.selections[0].model_copy(update={"refused": None})
    other = knf.model_copy(update={"code": "BACKEND_OVERRIDE_IGNORED"})
    mark_refused([sel], [other], packs.findings, ladders)
    assert sel.refused is None
