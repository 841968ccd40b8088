"""enginesA batch (issue 16, docs/corpus.md): the general mechanisms its first sight showed missing,
each on the batch's real log (fixtures/) and with counter-examples that must stay as they were:

- an ANSI code whose ESC a syslog relay spelled ``#033`` (rsyslog, AWS CloudWatch: tgi-121) is
  removed like a raw one, so the engine's line prefix is read;
- MLC-LLM's compile-pipeline sentences (mlc-llm-125) and its C++ runtime frames (mlc-llm-126)
  name the engine, as its Python package frames do.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from logscan.models import InputStats
from logscan.sources.reader import clean
from logscan.sources.safe import clean_message
from tests.conftest import scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures"

# tgi-121's first line shape (TGI 3.0.0 on SageMaker, as CloudWatch shows it), with a kernel line
_CW = "#033[2m2025-01-17T15:08:27.088671Z#033[0m #033[32m INFO#033[0m #033[2mtext_generation_launcher#033[0m#033[2m:#033[0m "


def _stats() -> InputStats:
    return InputStats(source="x.log")


def test_a_syslog_spelled_ansi_code_is_removed_like_a_raw_one():
    raw = (_CW + "Using exllama kernels v2").encode()
    assert clean(raw, _stats()) == "2025-01-17T15:08:27.088671Z  INFO text_generation_launcher: Using exllama kernels v2"
    assert clean_message("#033[1mbold#033[0m") == "bold"


def test_text_that_only_looks_like_an_escape_stays():
    # a '#033' not followed by a CSI sequence, and an issue number, are text
    for text in ("see issue #033 for details", "tag #0330", "colour #033[ unterminated"):
        assert clean(text.encode(), _stats()) == text


def test_a_cloudwatch_relayed_tgi_kernel_line_is_read(tmp_path):
    log = write_log(tmp_path, _CW + "Using exllama kernels v2\n")
    (run,) = scan_json(log)["runs"]
    assert run["engine"]["name"] == "tgi"
    assert [s["kernel"] for s in run["selections"]] == ["ExLlama v2"]  # the version as logged (depth13)


def test_tgi_121_is_a_tgi_run_with_its_requested_fp8():
    (run,) = scan_json(FIX / "tgi" / "tgi-121.log")["runs"]
    assert run["engine"]["name"] == "tgi"
    assert run["config"]["quantization"] == "Fp8"
    assert run["selections"] == [] and run["findings"] == []


@pytest.mark.parametrize("log", [
    "mlc-llm-125",  # compile-pipeline sentences under the prefix MLC-LLM shares with SGLang
    "mlc-llm-126",  # C++ runtime frames (mlc-llm/cpp/serve/*.cc, mlc::llm::)
    "mlc-llm-127",  # serve engine-mode lines (second batch)
])
def test_mlc_llm_sentences_and_frames_name_the_engine_and_nothing_else(log):
    (run,) = scan_json(FIX / "mlc-llm" / f"{log}.log")["runs"]
    assert run["engine"]["name"] == "mlc-llm"
    assert run["selections"] == [] and run["findings"] == []


def test_the_same_sentences_under_another_engine_prefix_stay_that_engine(tmp_path):
    # SGLang shares MLC-LLM's Python-logging prefix; an SGLang line says SGLang, and a generic
    # memory sentence names no engine
    log = write_log(tmp_path, "[2025-12-10 10:37:50 TP0] Load weight begin. avail mem=75.00 GB\n")
    (run,) = scan_json(log)["runs"]
    assert run["engine"]["name"] == "sglang"
    log = write_log(tmp_path, "[2025-12-10 10:37:50] INFO memory.py:12: Memory usage: 3.2 GB\n", "y.log")
    assert all(r["engine"]["name"] != "mlc-llm" for r in scan_json(log)["runs"])


# --- second batch (enginesA-2) -------------------------------------------------------------------

def test_an_argparse_usage_text_is_lmdeploy_but_states_no_model_or_backend():
    (run,) = scan_json(FIX / "lmdeploy" / "lmdeploy-128.log")["runs"]
    assert run["engine"]["name"] == "lmdeploy"
    cfg = run["config"]
    assert cfg["model"] is None and cfg["quantization"] is None
    assert "lmdeploy_backend_asked" not in (cfg.get("extra") or {})


def test_a_real_command_still_gives_its_model_and_backend(tmp_path):
    log = write_log(tmp_path, "lmdeploy serve api_server --backend pytorch /models/Qwen2-7B-AWQ\n"
                              "lmdeploy serve api_server Qwen2-7B-AWQ --backend turbomind --model-format awq\n")
    runs = scan_json(log)["runs"]
    assert runs[-1]["config"]["model"] == "Qwen2-7B-AWQ"
    assert runs[-1]["config"]["quantization"] == "awq"


def test_turbomind_old_prefix_line_reaches_the_reader_with_its_era():
    # lmdeploy-126: '[TM][WARNING] [LlamaTritonModel] max_context_token_num = 16384.' is TurboMind
    # <= 0.12's own line; its prefix dates the run (< 0.13) and it says TurboMind runs. With the byte
    # prefilter on (the default) the line must not be skipped, or the era hint is lost.
    (run,) = scan_json(FIX / "lmdeploy" / "lmdeploy-126.log")["runs"]
    assert run["engine"]["release_range"] == ["0.9.2", "0.12.3"]
    assert run["config"]["extra"]["lmdeploy_backend"] == "turbomind"
