"""Every report carries the text report's notes on an input (``formats.inputs.input_warnings``).

Before, the text report said "empty input: 0 lines read", "read N line(s) with repairs: ...",
"interrupted by SIGINT after line 0" while the JSON's ``inputs[]`` had ``warning: null`` and the
Markdown and HTML said nothing: a consumer of the JSON read a damaged input as a clean one.
The inputs are real bundled logs, damaged the way a user's are (bytes that are not UTF-8, NUL
padding, a line past the reader's limit, a CRI record the runtime never finished).
"""
from __future__ import annotations

import gzip
import html
import json
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES

LOG = (FIXTURES / "vllm" / "vllm-005.log").read_bytes()  # NVFP4 on Marlin (weight-only), two TP ranks


def _cri(data: bytes) -> bytes:
    """The log as a CRI (containerd) file whose last record the runtime never finished (``P``)."""
    lines = data.splitlines()
    out = [b"2026-01-01T00:00:00.000000000Z stdout F " + ln for ln in lines]
    out.append(b"2026-01-01T00:00:01.000000000Z stdout P unfinished partial recor")
    return b"\n".join(out) + b"\n"


DAMAGED = {
    "empty": b"",
    "invalid-utf8": LOG.replace(b"Marlin", b"Mar\xff\xfelin", 1),
    "nul-padding": LOG + b"\0" * 64 + b"\n",
    "over-long-line": LOG + b"x" * (2 << 20) + b"\n",
    "cri-unfinished": _cri(LOG),
    "gzip-trailing-garbage": gzip.compress(LOG) + b"garbage",
}


def _run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _text_notes(out: str, path: str) -> list[str]:
    line = next(ln for ln in out.splitlines() if ln.startswith(f"! {path}: "))
    return line[len(f"! {path}: "):].split("; ")


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_json_markdown_and_html_carry_the_text_reports_input_notes(tmp_path, name):
    path = tmp_path / (name + (".log.gz" if name.startswith("gzip") else ".log"))
    path.write_bytes(DAMAGED[name])
    notes = _text_notes(_run("scan", str(path)).stdout, str(path))
    assert notes and all(notes)
    doc = json.loads(_run("scan", "--format", "json", str(path)).stdout)
    assert doc["inputs"][0]["warnings"] == notes
    md = _run("gate", "--format", "markdown", str(path)).stdout
    page = _run("scan", "--format", "html", str(path)).stdout
    for note in notes:
        assert note in md.replace("\\|", "|"), (note, md)
        assert html.escape(note, quote=True) in page, note


def test_a_clean_real_log_has_no_warnings():
    doc = json.loads(_run("scan", "--format", "json", str(FIXTURES / "vllm" / "vllm-005.log")).stdout)
    assert "warnings" not in doc["inputs"][0] and doc["inputs"][0]["warning"] is None


def test_an_input_that_cannot_be_opened_has_its_error_and_no_warnings(tmp_path):
    """``gate`` reports it (INPUT_UNREADABLE); ``scan`` refuses it before any output (exit 2,
    tests/test_cli12_exits.py), so the JSON record is the gate's."""
    doc = json.loads(_run("gate", "--format", "json", str(tmp_path / "missing.log")).stdout)
    assert doc["inputs"][0]["error"] and "warnings" not in doc["inputs"][0]


def test_json_of_an_input_interrupted_before_its_first_byte_says_so():
    p = subprocess.Popen([sys.executable, "-m", "logscan.cli", "scan", "--format", "json", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        import time

        time.sleep(3.0)  # start-up; nothing is written: the pipe stays open and empty
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    warnings = json.loads(out)["inputs"][0]["warnings"]
    assert len(warnings) == 1 and warnings[0].startswith("interrupted by SIGINT after line 0"), warnings


def test_schema_lists_the_warnings_the_json_carries():
    schema = json.loads(_run("schema").stdout)["$defs"]["InputStats"]["properties"]
    assert {"type": "array", "items": {"type": "string"}} in schema["warnings"]["anyOf"]
    gated = json.loads(_run("schema", "--gate").stdout)
    assert "warnings" in json.dumps(gated)


@pytest.mark.parametrize("log", ["vllm/vllm-200.log", "sglang/sglang-007.log", "vllm/vllm-120.log",
                                 "sglang/sglang-110.log"])  # (traceback), (unconfirmed), (?), (inferred)
def test_html_marks_each_selection_as_the_text_report_does(log):
    """The HTML page marked only ``(inferred)``: a kernel read from a traceback frame, one its run
    never confirmed, or an ambiguous one read as plainly observed there."""
    from logscan.formats.text import selection_mark
    from logscan.pipeline import scan_inputs

    report = scan_inputs([str(FIXTURES / log)])
    marks = [(s.kernel, selection_mark(s)) for run in report.runs for s in run.selections]
    assert any(m for _, m in marks), marks  # the log shows a mark: the test can fail
    text = _run("scan", str(FIXTURES / log)).stdout
    page = _run("scan", "--format", "html", str(FIXTURES / log)).stdout
    for kernel, mark in marks:
        assert f"{kernel}{mark}" in text, (kernel, mark)
        assert f"<code>{html.escape(kernel, quote=True)}</code>{html.escape(mark, quote=True)} " in page, (kernel, mark)
