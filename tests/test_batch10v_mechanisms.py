"""Corpus batch 10v-2 (docs/corpus.md, "Batch 10v"): the two general mechanisms, each on the real
logs (fixtures/vllm/vllm-312, -313, -102) and with a counter-example that must stay as it was.

- '<A> backend not available. Using <B> backend' names the GEMM library that runs
  (``vllm.grammar.unavailable-then-using``; AITER's automatic selector, vllm#56543);
- a current-device refusal is fatal only when raised or when it opens its line
  (``vllm.limits.current-device``): quoted mid-prose for a candidate the MoE oracle skipped it is not.
"""
from __future__ import annotations

from pathlib import Path

from tests.conftest import scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "vllm"


def _codes(path: Path) -> list[str]:
    return [f["code"] for run in scan_json(path)["runs"] for f in run["findings"]]


def _selections(path: Path) -> list[dict]:
    return [s for run in scan_json(path)["runs"] for s in run["selections"]]


def test_aiter_unavailable_then_using_names_the_triton_build_without_a_finding():
    (sel,) = _selections(FIX / "vllm-312.log")
    assert sel["kernel"] == "TRITON" and sel["rule"] == "vllm.grammar.unavailable-then-using"
    assert _codes(FIX / "vllm-312.log") == []


def test_an_unavailable_attention_backend_is_no_gemm_selection(tmp_path):
    log = write_log(tmp_path, "(EngineCore_DP0 pid=1) WARNING 02-01 10:00:00 [x.py:1] "
                              "FlashInfer backend not available, using Triton attention backend.\n")
    assert [s for s in _selections(log) if s["rule"] == "vllm.grammar.unavailable-then-using"] == []


def test_a_skipped_oracle_candidate_quoted_in_prose_is_no_arch_refusal():
    assert "UNSUPPORTED_ON_ARCH" not in _codes(FIX / "vllm-313.log")


def test_a_raised_or_wrapped_current_device_refusal_still_is_one(tmp_path):
    # vllm-102: the ValueError wrapped by the reporter, the clause on its own second line
    assert "UNSUPPORTED_ON_ARCH" in _codes(FIX / "vllm-102.log")
    log = write_log(tmp_path, "(EngineCore_DP0 pid=1) ERROR 02-01 10:00:00 [core.py:708] ValueError: Mxfp4 MoE "
                              "backend 'B12X_MXFP4' does not support the deployment configuration since kernel "
                              "does not support current device cuda\n")
    assert "UNSUPPORTED_ON_ARCH" in _codes(log)
