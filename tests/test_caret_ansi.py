"""ANSI colour codes pasted in caret notation (``^[[1;36m``, ``^[[0m``, ``^[[K``) are removed like
raw ones (``sources/safe.CARET_ANSI``), on both prefilter engines, so the line prefix they hid is
read; text that only looks like one stays (docs/hostile-input.md).

Real log: vllm-298 (vllm-project/vllm#19904), whose reporter copied a terminal's ``cat -v``-style
output: every vLLM line starts ``^[[1;36m(VllmWorker rank=0 pid=21649)^[[0;0m ERROR``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from logscan.models import InputStats
from logscan.pipeline import scan_inputs
from logscan.sources.prefilter import Prefilter, available_backends
from logscan.sources.reader import clean
from logscan.sources.safe import clean_message

FIX = Path(__file__).parent.parent / "fixtures"
BACKENDS = available_backends()
#: vllm-298's first line, as pasted
LINE1 = ('^[[1;36m(VllmWorker rank=0 pid=21649)^[[0;0m ERROR 06-22 11:05:45 [multiproc_executor.py:527]   '
         'File "/usr/local/lib/python3.12/dist-packages/aiter/jit/core.py", line 607, in wrapper')


def _clean(text: str) -> str:
    return clean(text.encode(), InputStats(source="x.log"))


def test_caret_notation_csi_codes_are_removed_from_lines_and_messages():
    assert _clean(LINE1).startswith("(VllmWorker rank=0 pid=21649) ERROR 06-22 11:05:45 [multiproc_executor.py:527]")
    assert _clean("^[[32m INFO^[[0m ready^[[K") == " INFO ready"
    assert _clean("^[[?25lhidden cursor^[[m") == "hidden cursor"
    assert clean_message("^[[1mbold^[[0m") == "bold"


@pytest.mark.parametrize("text", [
    "grep -E '^[a-z]+$' file",        # a caret bracket that is no escape
    "sed 's/^[[:space:]]*//'",       # a POSIX class after '^['
    "match ^[[A-Z][a-z]* names",     # a regex class after '^[' (no parameter, the letter opens a range)
    "pattern ^[[0-9]",               # parameter with no final letter
    "unterminated ^[[ here",
    "a ^[ alone",
])
def test_text_that_only_looks_like_a_caret_escape_stays(text):
    assert _clean(text) == text
    assert clean_message(text) == text


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_keyword_split_by_a_caret_code_opens_the_prefilter(backend):
    pf = Prefilter(["Failed to find a kernel"], backend)
    lines = [b"noise", b"x Failed to ^[[1mfind a kernel^[[0m y", b"more noise ^[ plain"]
    buf = b"".join(x + b"\n" for x in lines)
    starts = sorted({buf.rfind(b"\n", 0, h) + 1 for h in pf.hits(buf)})
    assert starts == [len(lines[0]) + 1]


def _report(path: Path, prefilter: str) -> dict:
    return json.loads(scan_inputs([str(path)], prefilter=prefilter).model_dump_json())


@pytest.mark.parametrize("backend", BACKENDS + ["off"])
def test_vllm_298_reads_from_line_1_on_every_engine(backend):
    (run,) = _report(FIX / "vllm" / "vllm-298.log", backend)["runs"]
    assert run["first_line"] == 1
    eng = run["engine"]
    assert eng["name"] == "vllm" and eng["identified_by"].startswith("line 1 ")
    assert eng["release_range"] == ["0.8.0", "0.10.0"]  # bracketed format, 'VllmWorker rank=' tag
    assert eng["platform"] == "ROCM" and "AITER" in eng["platform_evidence"]
    sf = run["start_failure"]
    assert sf["failing_kernel"] == "AITER"
    assert sf["cause_line"] == 4 and sf["cause"].startswith("RuntimeError: cu_seqlens_k.value() must have shape")
    assert run["selections"] == [] and run["findings"] == []


def test_a_failing_kernel_of_no_single_platform_names_none(tmp_path):
    # counter-example: a Marlin failure (CUDA and ROCm both have Marlin) infers no platform
    log = tmp_path / "m.log"
    pre = "(VllmWorker rank=0 pid=7) ERROR 06-22 11:05:45 [multiproc_executor.py:527] "
    log.write_text("".join(pre + x + "\n" for x in (
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/site-packages/vllm/model_executor/layers/quantization/utils/marlin_utils.py",'
        " line 9, in apply_gptq_marlin_linear",
        "RuntimeError: Invalid thread config")), encoding="utf-8")
    (run,) = _report(log, "off")["runs"]
    assert run["start_failure"] is not None
    assert run["engine"]["platform"] is None
