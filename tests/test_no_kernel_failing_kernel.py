"""NO_KERNEL_SEEN beside a failed start that names its failing kernel says both facts (trial 35:
'failing kernel: CUTLASS' in START_FAILED and 'names no quantized kernel selection' read as a
contradiction). Real logs: sglang-296 (DeepGEMM), mlc-llm-148 (CUTLASS); vllm-005 has selections."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES


def _no_kernel_messages(log):
    r = CliRunner().invoke(cli, ["gate", str(log), "--format", "json"])
    d = json.loads(r.stdout)
    return [c["message"] for c in d["gate"]["checks"] if c.get("code") == "NO_KERNEL_SEEN"]


@pytest.mark.parametrize("log,kernel", [("sglang/sglang-296.log", "DeepGEMM"), ("mlc-llm/mlc-llm-148.log", "CUTLASS")])
def test_the_failing_kernel_is_named_beside_no_selection(log, kernel):
    msgs = _no_kernel_messages(FIXTURES / log)
    assert len(msgs) == 1 and f"its failure names {kernel} as the failing kernel" in msgs[0]
    assert "no line states what the engine chose" in msgs[0]
