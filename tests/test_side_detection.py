"""A comparison side (``gate --baseline``, ``diff OLD NEW``) is a JSON report only when it parses as
one; a log whose lines open with ``[`` (SGLang, TensorRT-LLM) is read as a log, and a damaged
report (``{"logscan_version": ...`` cut short) is still a clear exit-2 error (trial 2, item 1)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES

SGLANG = FIXTURES / "sglang" / "sglang-001.log"  # real; starts "[2025-..."; Marlin for linear
TRTLLM = FIXTURES / "trtllm" / "trtllm-107.log"  # real; starts "[TensorRT-LLM]..."; one selection
VLLM = FIXTURES / "vllm" / "vllm-009.log"


def run(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("log", [SGLANG, TRTLLM])
def test_a_log_starting_with_a_bracket_is_a_baseline_and_a_diff_side(log):
    assert log.read_bytes()[:1] == b"["
    d = run("diff", str(log), str(log))
    assert d.exit_code == 0, d.output
    assert "same" in d.stdout and "not valid JSON" not in d.output
    g = run("gate", "--baseline", str(log), str(log))
    assert "not valid JSON" not in g.output and "baseline: " in g.stdout


def test_a_truncated_report_is_still_exit_2_not_an_empty_log(tmp_path):
    whole = run("scan", "--format", "json", str(SGLANG)).stdout
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: len(whole) // 2])
    for args in (("diff", str(cut), str(SGLANG)), ("diff", str(SGLANG), str(cut)),
                 ("gate", "--baseline", str(cut), str(SGLANG))):
        r = run(*args)
        assert r.exit_code == 2 and str(cut) in r.stderr and "not valid JSON" in r.stderr


@pytest.mark.parametrize("content", ['[{"logscan_version": "0.1.0", "runs": [', '[ "a", ', "[]x"])
def test_a_damaged_json_array_is_still_an_error(tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    r = run("diff", str(bad), str(VLLM))
    assert r.exit_code == 2 and "not valid JSON" in r.stderr
