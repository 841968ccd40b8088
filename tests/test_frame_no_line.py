"""A traceback frame header without its line number (``File "p.py", in f``: a pasted log whose
reporter dropped the numbers, sglang-105) is a frame like CPython's ``File "p.py", line N, in f``
(``packs.model_rules.FRAME_SHAPE``, ``sources/quoted.FRAME_HEAD``, ``failhead._WHERE``, each
pack's ``*.uncaught.traceback`` and frame rules; docs/traceback-frames.md). The no-line form must
end with the function: text after it is prose, not a frame.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from logscan.analysis.frames import frame_parts
from logscan.models import Record
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from logscan.sources.quoted import QuotedSource

FIX = Path(__file__).parent.parent / "fixtures"
NO_LINE = '  File "/home/user/miniconda3/lib/python3.12/site-packages/sglang/srt/multiplex/pdmux_context.py", in get_arch_constraints'
PROSE = ['File "model.safetensors", in shard 3 is corrupt', 'File "a.bin", in progress (42 %)']


def _report(path: Path) -> dict:
    return json.loads(scan_inputs([str(path)], prefilter="off").model_dump_json())


def test_frame_parts_of_a_header_without_line_number():
    assert frame_parts(NO_LINE) == ("/home/user/miniconda3/lib/python3.12/site-packages/sglang/srt/multiplex/"
                                    "pdmux_context.py", "get_arch_constraints")
    assert frame_parts('  File "/x/y.py", line 7, in f') == ("/x/y.py", "f")
    assert frame_parts("File not found: model.safetensors") is None


@pytest.mark.parametrize("engine", sorted(default_packs().packs))
def test_every_pack_reads_a_no_line_header_as_a_traceback_line_and_prose_as_none(engine):
    pack = default_packs().packs[engine]
    (cr,) = [c for c in pack.rules if c.rule.id.endswith(".uncaught.traceback")]
    assert cr.regex.search(NO_LINE)
    for text in PROSE:
        assert cr.regex.search(text) is None, text


def test_the_code_line_under_a_no_line_header_is_quoted_source():
    q = QuotedSource()
    pre = dict(source="t", process="VllmWorker", pid="7")
    assert q.quoted(Record(line=1, message=NO_LINE, **pre)) is False
    assert q.quoted(Record(line=2, message='    raise ValueError(f"Unsupported compute capability")', **pre))
    q = QuotedSource()  # counter-example: prose after the function is no header
    assert q.quoted(Record(line=1, message="  " + PROSE[0], **pre)) is False
    assert q.quoted(Record(line=2, message="    raise ValueError(x)", **pre)) is False


def test_sglang_105_names_where_it_raised():
    (run,) = _report(FIX / "sglang" / "sglang-105.log")["runs"]
    sf = run["start_failure"]
    assert sf["traceback_line"] == 1 and sf["raised_in_line"] == 1
    assert sf["raised_in"].endswith("sglang/srt/multiplex/pdmux_context.py, in get_arch_constraints")
    assert [f["code"] for f in run["findings"]] == ["UNSUPPORTED_ON_ARCH"]


def test_vllm_200_with_its_line_numbers_dropped_reads_as_the_original(tmp_path):
    # the real worker traceback (vllm-project/vllm#22821), every frame header's 'line N, ' removed
    original = (FIX / "vllm" / "vllm-200.log").read_text(encoding="utf-8")
    stripped = re.sub(r'(File "[^"]+"), line \d+,', r"\1,", original)
    assert stripped != original and ", line " not in stripped
    log = tmp_path / "vllm-200-no-line.log"
    log.write_text(stripped, encoding="utf-8")
    (a,) = _report(FIX / "vllm" / "vllm-200.log")["runs"]
    (b,) = _report(log)["runs"]
    sel = [(s["family"], s["kernel"], s["cost_class"], s["line"]) for s in a["selections"]]
    assert sel == [("linear (FP8)", "Marlin", "weight_only", 4)]
    assert [(s["family"], s["kernel"], s["cost_class"], s["line"]) for s in b["selections"]] == sel
    assert [f["code"] for f in b["findings"]] == [f["code"] for f in a["findings"]]
    fa, fb = a["start_failure"], b["start_failure"]
    for k in ("line", "cause_line", "traceback_line", "failing_kernel", "raised_in_line"):
        assert fb[k] == fa[k], k
    assert fb["raised_in"] == fa["raised_in"].replace(", line 1158", "")
    assert len(b["unexplained"]) == len(a["unexplained"])
