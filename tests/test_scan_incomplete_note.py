"""``scan``'s summary says what ``gate`` fails as START_INCOMPLETE: a run that chose kernels but that no
line shows to have come up or failed. Before, a new user saw a clean scan and then a failing gate on
the same log (the README's quick-start log, vllm-005, is such a window)."""
from __future__ import annotations

import logscan
from logscan.formats.text import render
from tests.conftest import ROOT

FX = ROOT / "fixtures"


def _summary(path) -> str:
    return render(logscan.scan(path)).rstrip("\n").splitlines()[-1]


def test_a_cut_window_with_kernels_says_the_gate_will_fail_it():
    s = _summary(FX / "vllm" / "vllm-005.log")  # real: NVFP4 on Marlin, the log ends at line 19
    assert "1 start(s) not seen to come up or fail (run 1" in s and "START_INCOMPLETE" in s
    res = logscan.gate(logscan.scan(FX / "vllm" / "vllm-005.log"))
    assert "START_INCOMPLETE" in {c.code for c in res.checks if c.verdict.value == "fail"}


def test_a_start_that_came_up_or_failed_says_nothing_of_it():
    for path in (FX / "sglang" / "sglang-009.log",  # real: 'The server is fired up and ready to roll!'
                 FX / "vllm" / "vllm-020.log"):     # real: the start failed
        s = _summary(path)
        assert "not seen to come up" not in s, path
        res = logscan.gate(logscan.scan(path))
        assert "START_INCOMPLETE" not in {c.code for c in res.checks}, path
