"""A logged candidate list is the running process's ladder (task cands13, ``analysis/logged_ladder.py``).

The new-user trial's line is vllm-project/vllm#49070's (vLLM v0.25.1, H200 / H100, sm90):
"Using 'MARLIN' NvFp4 MoE backend out of potential backends: ['FLASHINFER_TRTLLM', 'FLASHINFER_CUTLASS',
'MARLIN']". It was placed on the 0.33.0 list (rung 6/8, four better rungs the log says were no candidates,
"the inferred releases disagree"). The logged list is the process's own: rung 3/3, the two rungs above it,
and the list narrows the inferred release. vllm-112 (vllm-project/vllm#33285, a real log of the 0.15 era)
prints the 10-backend FP8 list of vLLM 0.15.0 .. 0.16.0, in an order no later release has.
"""
from __future__ import annotations

import pytest

from logscan.api import scan
from logscan.analysis.logged_ladder import candidate_list
from tests.conftest import FIXTURES

#: the thread's selection line, as it quotes it, under a vLLM engine-core prefix
_LINE_49070 = ("(EngineCore_DP0 pid=81) INFO 07-19 10:00:20 [nvfp4.py:222] Using 'MARLIN' NvFp4 MoE backend out of "
               "potential backends: ['FLASHINFER_TRTLLM', 'FLASHINFER_CUTLASS', 'MARLIN'].\n")
_VERSION = "(APIServer pid=1) INFO 07-19 10:00:00 [api_server.py:1900] vLLM API server version 0.25.1\n"


def _moe(text: str, gpu=None):
    report = scan(text.splitlines(keepends=True), gpu=gpu)
    (run,) = report.runs
    (sel,) = [s for s in run.selections if s.family.startswith("MoE")]
    return run, sel


@pytest.mark.parametrize("text", [_LINE_49070, _VERSION + _LINE_49070])
def test_the_logged_list_is_the_ladder(text):
    run, sel = _moe(text)
    pos = sel.ladder
    assert (sel.kernel, pos.rung, pos.rungs) == ("MARLIN", 3, 3)
    assert pos.above == ["FLASHINFER_TRTLLM", "FLASHINFER_CUTLASS"] and pos.fell == 2
    assert pos.logged_list == ["FLASHINFER_TRTLLM", "FLASHINFER_CUTLASS", "MARLIN"] and pos.logged_line == text.count("\n")
    assert not pos.elsewhere  # the run's own list: no release range to disagree on it
    assert all(u.kernel in pos.above for u in pos.undecided)
    assert "FLASHINFER_CUTEDSL" not in pos.stopped_by and "VLLM_CUTLASS" not in pos.stopped_by


def test_the_logged_list_narrows_the_inferred_release():
    run, _ = _moe(_LINE_49070)
    # 0.14.1's NvFp4 if-chain holds only VLLM_CUTLASS and MARLIN: the list is 0.15.0 -> 's
    assert run.engine.version_source == "inferred" and run.engine.release_range[0] == "0.15.0"
    assert "candidate list" in run.engine.version_evidence


def test_an_h200_explains_the_fallback_on_the_logged_list():
    # both rungs above need sm100 (FLASHINFER_CUTLASS: sm100 or sm120): refused on sm90, nothing undecided
    _, sel = _moe(_VERSION + _LINE_49070, gpu="H200")
    assert sel.ladder.rung == 3 and not sel.ladder.undecided


def test_a_real_log_of_the_0_15_era_is_read_on_its_own_list():
    report = scan(FIXTURES / "vllm" / "vllm-112.log")
    for run in report.runs:
        assert run.engine.release_range == ["0.15.0", "0.16.0"]
        (sel,) = run.selections
        assert sel.ladder.registry == "moe:fp8:select_fp8_moe_backend.AVAILABLE_BACKENDS"
        assert sel.ladder.rungs == 10 and sel.ladder.logged_list[sel.ladder.rung - 1] == sel.kernel
    assert [r.selections[0].ladder.rung for r in report.runs] == [6, 8]  # VLLM_CUTLASS, TRITON


def test_a_kernel_the_list_does_not_name_keeps_the_shipped_ladder():
    # vllm-101: 'FLASHINFER_B12X' (requested explicitly) is not among the backends its line lists
    report = scan(FIXTURES / "vllm" / "vllm-101.log")
    sels = [s for run in report.runs for s in run.selections if s.kernel == "FLASHINFER_B12X"]
    assert sels and all(s.ladder is None or s.ladder.logged_list is None for s in sels)


@pytest.mark.parametrize("text,items", [
    ("['A', 'B_C', 'D']", ["A", "B_C", "D"]),
    ("[A, B]", ["A", "B"]),
    ("A, B", ["A", "B"]),
    ("[... MARLIN ...]", []),  # vllm-170: a list cut short is no ladder
    ("['A', 'A']", []),
    ("", []),
    (None, []),
])
def test_candidate_list(text, items):
    assert candidate_list(text) == items


def test_a_list_no_shipped_release_holds_is_named_not_dropped():
    # vllm-352 (a Sep 2026 PR's test log): 'B12X' among the candidates is on no shipped ladder
    (run,) = scan(FIXTURES / "vllm" / "vllm-352.log").runs
    assert "no shipped release's list holds them in this order" in run.engine.version_evidence
    assert "disagreeing" in run.engine.version_evidence
