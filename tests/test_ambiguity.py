"""Several kernels named for one MoE family in one run: flagged as ambiguous, not asserted.

vllm-project/vllm#25709: vLLM 0.10's Fp8MoEMethod prints "Using DeepGemm kernels ..." and
"Using CutlassBlockScaledGroupedGemm kernels ..." when both are allowed; one of them runs.
"""
from __future__ import annotations

from logscan.pipeline import scan_inputs

P = "(EngineCore_DP0 pid=1) INFO 09-01 10:00:00 [fp8.py:{n}] "
TP = "(Worker_TP{r} pid={pid}) INFO 09-01 10:00:00 [fp8.py:{n}] "


def _run(tmp_path, lines):
    log = tmp_path / "x.log"
    log.write_text("\n".join(lines) + "\n")
    report = scan_inputs([str(log)])
    assert len(report.runs) == 1
    return report.runs[0]


def test_two_moe_kernels_of_one_printer_are_ambiguous(tmp_path):
    run = _run(tmp_path, [P.format(n=1) + "Using DeepGemm kernels for Fp8MoEMethod.",
                          P.format(n=2) + "Using CutlassBlockScaledGroupedGemm kernels for Fp8MoEMethod."])
    kernels = {s.kernel: s for s in run.selections}
    assert set(kernels) == {"DeepGemm", "CutlassBlockScaledGroupedGemm"}  # both named, neither dropped
    for s in kernels.values():
        assert s.reasoning.startswith("ambiguous:") and "DeepGemm (line 1)" in s.reasoning
    amb = [u for u in run.unexplained if u.why.startswith("ambiguous:")]
    assert [u.line for u in amb] == [2]


def test_one_moe_kernel_is_not_ambiguous(tmp_path):
    run = _run(tmp_path, [P.format(n=1) + "Using DeepGemm kernels for Fp8MoEMethod."])
    assert not (run.selections[0].reasoning or "").startswith("ambiguous:")
    assert not run.unexplained


def test_disjoint_ranks_are_rank_divergence_not_ambiguity(tmp_path):
    run = _run(tmp_path, [TP.format(r=0, pid=1, n=1) + "Using DeepGemm kernels for Fp8MoEMethod.",
                          TP.format(r=1, pid=2, n=2) + "Using CutlassBlockScaledGroupedGemm kernels for Fp8MoEMethod."])
    assert not any((s.reasoning or "").startswith("ambiguous:") for s in run.selections)
    assert "RANK_DIVERGENCE" in {f.code for f in run.findings}


def test_a_stated_fallback_says_which_one_runs(tmp_path):
    pre = "[2026-01-01 00:00:00 TP0] "
    run = _run(tmp_path, [pre + "FlashInfer TRTLLM MoE is enabled.",
                          pre + "AITER CK fused_moe failed (shape 3), falling back to Triton MoE runner"])
    assert len({s.kernel for s in run.selections}) == 2
    assert not any((s.reasoning or "").startswith("ambiguous:") for s in run.selections)


def test_two_linear_kernels_are_per_layer_not_ambiguous(tmp_path):
    run = _run(tmp_path, [P.format(n=1) + "Using MacheteLinearKernel for CompressedTensorsWNA16",
                          P.format(n=2) + "Using MarlinLinearKernel for CompressedTensorsWNA16"])
    assert len(run.selections) == 2
    assert not any((s.reasoning or "").startswith("ambiguous:") for s in run.selections)
