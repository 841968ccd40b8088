"""Traceback frames in a kernel's apply path (patterns/vllm/rules/25-frames.toml, docs/traceback-frames.md).

vllm-200 (vllm-project/vllm#22821, GLM-4.5V-FP8 on an A800) is a 10-line window of a worker's
traceback: compressed_tensors_w8a16_fp8.py apply_weights -> apply_fp8_marlin_linear ->
gptq_marlin_gemm -> RuntimeError. No sentence names the kernel; the frames say which ran.
"""
from __future__ import annotations

from click.testing import CliRunner

from logscan.cli import cli
from logscan.models import CostClass, Selection
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

LOG = FIXTURES / "vllm" / "vllm-200.log"


def _run():
    report = scan_inputs([str(LOG)])
    assert len(report.runs) == 1
    return report.runs[0]


def test_fp8_marlin_frame_is_a_weight_only_selection_seen_in_a_traceback():
    run = _run()
    assert [(s.family, s.kernel, s.cost_class.value, s.line, s.rule) for s in run.selections] == [
        ("linear (FP8)", "Marlin", "weight_only", 4, "vllm.frame.fp8-marlin-apply")]
    sel = run.selections[0]
    assert sel.reasoning.startswith("traceback:")  # it ran (crashed inside it): not "unconfirmed"
    assert "unconfirmed" not in sel.reasoning
    assert sel.ladder is not None and sel.ladder.registry == "_POSSIBLE_FP8_KERNELS"


def test_fp8_marlin_frame_gives_the_weight_only_finding():
    codes = {(f.code, f.line) for f in _run().findings}
    assert ("WEIGHT_ONLY_SUBSTITUTION", 4) in codes


def test_op_frame_of_the_selected_kernel_corroborates_it():
    # gptq_marlin_gemm (line 6) is Marlin's op (lexicon [[kernel]] aliases): under the Marlin
    # selection of line 4 it is corroboration, not a "not understood" line
    run = _run()
    assert run.unexplained == []
    assert "corroborated by a traceback frame (line 6, in gptq_marlin_gemm, an op of Marlin)" in run.selections[0].reasoning


def test_ambiguous_apply_frame_alone_is_not_understood_never_silent(tmp_path):
    # the same window without the apply_fp8_marlin_linear frame: no selection for the op frame to
    # corroborate, so it stays listed (the frame alone does not say which format Marlin served)
    lines = LOG.read_text().splitlines()
    log = tmp_path / "op-only.log"
    log.write_text("\n".join(ln for ln in lines if "apply_fp8_marlin_linear" not in ln) + "\n")
    run = scan_inputs([str(log)]).runs[0]
    assert run.selections == []
    assert [(u.message.split(" in ")[-1], u.rule) for u in run.unexplained] == [("gptq_marlin_gemm", "vllm.frame.kernel-apply")]


def test_failed_start_still_rests_on_the_other_traceback_lines():
    sf = _run().start_failure
    assert sf is not None and sf.line == 2 and sf.cause_line == 10
    assert sf.cause.startswith("RuntimeError: Invalid thread config")


def test_gate_fails_on_the_weight_only_frame():
    r = CliRunner().invoke(cli, ["scan", "--fail-on", "weight_only", str(LOG)], catch_exceptions=False)
    assert r.exit_code == 1
    r = CliRunner().invoke(cli, ["scan", "--fail-on", "WEIGHT_ONLY_SUBSTITUTION", str(LOG)], catch_exceptions=False)
    assert r.exit_code == 1


def test_text_marks_the_selection_as_read_from_a_traceback():
    from logscan.formats.text import selection_mark

    sel = _run().selections[0]
    assert selection_mark(sel) == " (traceback)"
    plain = Selection(family="linear (FP8)", kernel="Marlin", cost_class=CostClass.weight_only, line=1,
                      evidence="x", rule="vllm.fallback.marlin-fp8")
    assert selection_mark(plain) == ""
