"""A choice absent from the candidate list its own line logs ('Using X ... out of potential backends: [...]').

vLLM's MoE oracles print ``_make_log_backend`` (the full AVAILABLE_BACKENDS list) for an explicitly
requested backend too (fused_moe/oracle/nvfp4.py 0.20.0 ``_return_or_raise``), so a choice the list
does not hold contradicts the line's "out of": forced, or a build whose list differs. Real logs:
vllm-101 and vllm-009 (vllm-project/vllm#31085, FLASHINFER_B12X absent from the 7-backend list).
Counter-examples: vllm-352 (B12X in its list), synthetic-era-0.22 (MARLIN in its list), vllm-112.
"""
from __future__ import annotations

import pytest

from logscan.analysis.logged_ladder import OFF_LIST, OFF_LIST_NOTE, off_list
from logscan.formats import text as text_format
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

V = FIXTURES / "vllm"


@pytest.mark.parametrize("name", ["vllm-101", "vllm-009"])
def test_a_choice_absent_from_its_logged_list_is_said_not_placed(name):
    rep = scan_inputs([str(V / f"{name}.log")])
    (run,) = rep.runs
    sel = next(s for s in run.selections if s.kernel == "FLASHINFER_B12X")
    assert sel.ladder is None  # not placed on a list that does not hold it
    assert sel.reasoning.startswith(OFF_LIST_NOTE) and "7 candidate(s)" in sel.reasoning
    (u,) = [u for u in run.unexplained if u.kind == OFF_LIST]
    assert u.line == sel.line == 1 and "forced" in u.why
    # precision: a native kernel chosen explicitly is no degradation: no finding of any level
    assert not run.findings and sel.cost_class.value == "native"
    out = text_format.render(rep)
    assert "FLASHINFER_B12X: not on its logged list: line 1" in out


@pytest.mark.parametrize("name", ["vllm-352", "synthetic-era-0.22", "vllm-112", "vllm-283", "vllm-170"])
def test_a_choice_its_list_holds_is_not_off_list(name):
    rep = scan_inputs([str(V / f"{name}.log")])
    assert not [u for r in rep.runs for u in r.unexplained if u.kind == OFF_LIST]
    assert not [s for r in rep.runs for s in r.selections if (s.reasoning or "").startswith(OFF_LIST_NOTE)]


def test_off_list_needs_a_whole_list():
    assert not off_list("MARLIN", [], None)  # no list, or one cut short ('[...]'): nothing claimed
    assert off_list("FLASHINFER_B12X", ["FLASHINFER_TRTLLM", "MARLIN"], None)
    assert not off_list("flashinfer-trtllm", ["FLASHINFER_TRTLLM", "MARLIN"], None)  # spelled apart, same name
