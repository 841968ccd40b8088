"""tools/raise_coverage.py: a raised refusal rendered as the cause of a failed start gets its
finding code; a shape check gets none and is listed as a miss (smoke test on three templates)."""
from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import SHARED
from tools import raise_coverage as rc

TOOL = SHARED / "tools" / "template_coverage.py"
pytestmark = pytest.mark.skipif(not TOOL.is_file(), reason="shared/tools/template_coverage.py not found")

TEMPLATES = [
    # shared/reference/sglang/templates.jsonl (0.5.16): an arch refusal, a shape check, a logged line
    {"template": "cutedsl_bf16_gemm requires SM100/SM103 (Blackwell)", "level": "raise", "exception": "RuntimeError",
     "file": "sglang/jit_kernel/cutedsl_bf16_gemm.py", "function": "_tgv_bf16_gemm_run", "tags": ["platform"]},
    {"template": "row-padded quant expects a 2D input", "level": "raise", "exception": "ValueError",
     "file": "sglang/srt/layers/quantization/fp8_kernel.py", "function": "f", "tags": ["quant_method"]},
    {"template": "Using {backend} backend", "level": "info", "file": "x.py", "tags": ["linear_kernel"]},
]


def test_codes_by_line_reads_nested_findings():
    rep = {"runs": [{"findings": [{"code": "A", "line": 3}], "start_failure": {"code": "START_FAILED", "line": 3}}]}
    assert rc.codes_by_line(rep) == {3: {"A", "START_FAILED"}}


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_arch_refusal_counted_shape_check_missed(engine, tmp_path, capsys):
    tpl = tmp_path / "templates.jsonl"
    tpl.write_text("\n".join(json.dumps(t) for t in TEMPLATES) + "\n")
    misses = tmp_path / "miss.txt"
    rc_ = rc.main([engine, "--templates", str(tpl), "--tool", str(TOOL), "--misses", str(misses),
                   "--cmd", f"{sys.executable} -m logscan scan --format json"])
    out = capsys.readouterr().out.splitlines()
    assert rc_ == 0
    assert out[0] == "runs 2 templates 2"  # one failed start per raise template, the info one left out
    assert "1 UNSUPPORTED_ON_ARCH" in out and "1 -" in out
    assert misses.read_text().strip() == "['quant_method'] row-padded quant expects a 2D input"


def test_missing_templates_exit_2(tmp_path):
    assert rc.main(["sglang", "--templates", str(tmp_path / "none.jsonl"), "--tool", str(TOOL)]) == 2
