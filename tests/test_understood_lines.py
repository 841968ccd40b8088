"""A line a rule read into named values (platform, version, config) is understood, even when a vaguer
event-only shape also noticed it (logscan/analysis/trust.unexplained).

sglang-257 / 258 (sglang#5775, #4421): vLLM's ROCm import warning '`fork` method is not supported by
ROCm. VLLM_WORKER_MULTIPROC_METHOD is overridden to `spawn` instead.' gives platform ROCm
(vllm.platform.rocm-spawn) and is also matched by the kernel-requirement family; it is no longer
listed as 'not understood'.
"""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


@pytest.mark.parametrize("log", ["sglang-257", "sglang-258"])
def test_rocm_spawn_warning_is_a_platform_statement(log):
    (run,) = scan_inputs([str(FIXTURES / "sglang" / f"{log}.log")]).runs
    assert run.engine.platform == "ROCM"
    assert not any("method is not supported by ROCm" in u.message for u in run.unexplained)


def test_a_refusal_without_a_platform_reading_stays_not_understood(tmp_path):
    """The same family on a line no fact rule reads is still listed (honesty kept)."""
    p = tmp_path / "x.log"
    p.write_text("INFO 04-27 07:30:19 __init__.py:179] Automatically detected platform rocm.\n"
                 "WARNING 04-27 07:30:20 fused_moe.py:34] The fused MoE method is not supported by this build.\n")
    (run,) = scan_inputs([str(p)]).runs
    assert any("fused MoE method is not supported" in u.message for u in run.unexplained)
