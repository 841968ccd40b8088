"""The reader and unwrapper: bytes of any kind in, numbered clean lines out, nothing lost."""
from __future__ import annotations

import gzip
import io
import json

from logscan.models import InputStats
from logscan.pipeline import scan_inputs
from logscan.sources.reader import open_input, read_lines
from logscan.sources.unwrap import unwrap

KERNEL_LINE = "(EngineCore_DP0 pid=1) INFO 01-07 13:43:10 [modelopt.py:916] Using flashinfer-cutlass for NVFP4 GEMM"


def _lines(data: bytes, **kw):
    st = InputStats(source="t")
    return list(unwrap(read_lines(io.BufferedReader(io.BytesIO(data)), st, **kw))), st


def test_crlf_ansi_nul_and_invalid_utf8():
    data = b"\x1b[36m(Worker pid=1)\x1b[0m INFO 01-01 00:00:00 [x.py:1] a\xff\x00b\r\nnext\r\n"
    out, st = _lines(data)
    assert out[0] == (1, "(Worker pid=1) INFO 01-01 00:00:00 [x.py:1] a\ufffdb", False)
    assert out[1] == (2, "next", False)
    assert st.decode_errors == 1


def test_overlong_line_is_cut_flagged_and_the_next_line_kept():
    data = b"A" * 5000 + b"\n" + KERNEL_LINE.encode() + b"\n"
    out, st = _lines(data, max_line=1024)
    assert out[0][0] == 1 and len(out[0][1]) == 1024 and out[0][2] is True
    assert out[1] == (2, KERNEL_LINE, False)
    assert st.truncated_lines == 1


def test_last_line_without_newline_is_kept():
    out, _ = _lines(b"a\nb")
    assert out == [(1, "a", False), (2, "b", False)]


def test_cri_partial_lines_are_joined_with_the_first_line_number():
    half = KERNEL_LINE[:40], KERNEL_LINE[40:]
    data = (f"2026-01-07T13:43:10.123456789Z stdout P {half[0]}\n"
            f"2026-01-07T13:43:10.123456789Z stdout F {half[1]}\n"
            f"2026-01-07T13:43:11Z stderr F done\n").encode()
    out, _ = _lines(data)
    assert out == [(1, KERNEL_LINE, False), (3, "done", False)]


def test_cri_stream_cut_inside_a_partial_line_keeps_the_part():
    data = f"2026-01-07T13:43:10Z stdout P {KERNEL_LINE[:30]}\n".encode()
    out, _ = _lines(data)
    assert out == [(1, KERNEL_LINE[:30], True)]


def test_docker_json_file_lines_are_unwrapped_and_split_entries_joined():
    a = json.dumps({"log": KERNEL_LINE[:50], "stream": "stdout", "time": "2026-01-07T13:43:10Z"})
    b = json.dumps({"log": KERNEL_LINE[50:] + "\n", "stream": "stdout", "time": "2026-01-07T13:43:10Z"})
    out, _ = _lines((a + "\n" + b + "\n").encode())
    assert out == [(1, KERNEL_LINE, False)]


def test_json_formatter_line_becomes_a_prefixed_line(tmp_path):
    rec = {"levelname": "INFO", "filename": "modelopt.py", "lineno": 916,
           "message": "Using flashinfer-cutlass for NVFP4 GEMM"}
    p = tmp_path / "j.log"
    p.write_text(json.dumps(rec) + "\n")
    report = scan_inputs([str(p)])
    assert [e.rule for e in report.events] == ["vllm.linear.format-gemm"]
    assert report.runs[0].selections[0].kernel == "flashinfer-cutlass"


def test_gzip_is_detected_by_magic_bytes(tmp_path):
    p = tmp_path / "server.log.1"  # no .gz suffix on purpose
    p.write_bytes(gzip.compress((KERNEL_LINE + "\n").encode()))
    fh, _ = open_input(str(p))
    st = InputStats(source="t")
    assert [t for _, t, _ in read_lines(fh, st)] == [KERNEL_LINE]


def test_truncated_gzip_keeps_lines_and_reports_the_error(tmp_path):
    body = "\n".join(f"line {i}" for i in range(2000)).encode() + b"\n" + KERNEL_LINE.encode() + b"\n"
    blob = gzip.compress(body)
    p = tmp_path / "cut.log.gz"
    p.write_bytes(blob[: len(blob) * 2 // 3])
    report = scan_inputs([str(p)])
    st = report.inputs[0]
    assert st.error and "corrupt" in st.error or "early" in st.error
    assert st.lines > 100


def test_line_numbers_survive_interleaving_and_blank_lines(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("\n\nnoise\n" + KERNEL_LINE + "\n")
    report = scan_inputs([str(p)])
    assert report.events[0].line == 4
