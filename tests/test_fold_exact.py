"""Byte-identical copies of a real failing log repeat EXACTLY: ``Folded.numbers_differ`` counts the
repeats that differ from their run in a number of the log's text, so copies of one file must count 0.

The new-user trial's ``for i in $(seq 300); do cat vllm-020.log; done`` said "1 differ in numbers".
Two causes, each tested here on real fixtures:

- the exact key made every ``line N`` of a text relative to the run's first line when N fell in the
  run's span, the log's own numbers too: the quoted traceback frame ``compressed_tensors_wNa16.py",
  line 92`` of the ninth copy (lines 89-99) read as ``line @3`` (``logscan/fold.py``);
- one line's events went to two runs: a copy's first frame is an identity event and an uncaught
  event; the identity went to the run before (named it, stretched its span over the line) before
  the uncaught event opened the next run, which then named its engine from the copy after it
  (vllm-116 catted: "identified_by line @0" against "@4", and a last run of no engine).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from logscan.fold import _norm
from logscan.pipeline import scan_inputs

FIX = Path(__file__).resolve().parent.parent / "fixtures"
_LINE_N = re.compile(r"\blines? (\d+)")


def _copies(tmp_path: Path, name: str) -> tuple[Path, int]:
    """``name`` catted often enough that some copy's span covers every 'line N' its text holds."""
    data = (FIX / name).read_bytes()
    data = data if data.endswith(b"\n") else data + b"\n"
    n = data.count(b"\n")
    top = max((int(m.group(1)) for m in _LINE_N.finditer(data.decode("utf-8", "replace"))), default=0)
    k = max(3, min(top // n + 3, 400))
    p = tmp_path / "copies.log"
    p.write_bytes(data * k)
    return p, k


@pytest.mark.parametrize("name", [
    "vllm/vllm-020.log",   # frame 'line 92' inside copy 9's span (89-99)
    "vllm/vllm-152.log", "vllm/vllm-200.log", "vllm/vllm-213.log", "vllm/vllm-240.log",
    "vllm/vllm-320.log", "vllm/vllm-329.log",
    "vllm/vllm-116.log",   # a frame line that is an identity and an uncaught event
    "trtllm/trtllm-116.log", "lmdeploy/lmdeploy-146.log", "mlc-llm/mlc-llm-171.log",
    "llamacpp/llamacpp-108.log", "sglang/sglang-293.log",
])
def test_byte_identical_copies_fold_with_no_number_differing(tmp_path, name):
    p, k = _copies(tmp_path, name)
    rep = scan_inputs([str(p)])
    folded = [r.folded for r in rep.runs if r.folded]
    assert folded, name
    assert [f.numbers_differ for f in folded] == [0] * len(folded), name
    assert rep.summary.runs + rep.summary.folded_runs == k  # one start per copy


@pytest.mark.parametrize("name", ["vllm/vllm-116.log", "trtllm/trtllm-116.log"])
def test_each_copy_is_one_run_that_names_itself(tmp_path, name):
    """Every copy of a real one-run log is one run, named by its own lines, its span its own."""
    one = scan_inputs([str(FIX / name)], fold=False).runs
    assert len(one) == 1
    p = tmp_path / "three.log"
    text = (FIX / name).read_text(encoding="utf-8")
    p.write_text(text * 3, encoding="utf-8")
    runs = scan_inputs([str(p)], fold=False).runs
    n = len(text.splitlines())
    assert len(runs) == 3
    for i, r in enumerate(runs):
        assert (r.first_line, r.last_line) == (one[0].first_line + i * n, one[0].last_line + i * n)
        assert r.engine.name == one[0].engine.name
        assert (r.start_failure is None) == (one[0].start_failure is None)
        named = _LINE_N.match(r.engine.identified_by or "")
        assert named and r.first_line <= int(named.group(1)) <= r.last_line, r.engine.identified_by
    folded = scan_inputs([str(p)]).runs
    assert len(folded) == 1 and folded[0].folded.runs == 2 and folded[0].folded.numbers_differ == 0


def test_the_exact_key_keeps_the_logs_own_numbers():
    """Only logscan's own 'line N' is made relative; a frame's source line, a parser's position and
    the log's own text keep their numbers (exact)."""
    span = (89, 99)
    doc = {"identified_by": "line 92: a traceback frame",
           "headline": 'ValueError … File "x.py", line 92, in f (line 93); its last frame, line 94, is in f',
           "reasoning": "the start failed at line 95 (JSONDecodeError: Expecting value: line 90 column 1)",
           "evidence": "error at line 91 of the config", "line": 92}
    got = _norm(doc, "", span, True)
    assert got["identified_by"] == "line @3: a traceback frame"
    assert got["headline"] == 'ValueError … File "x.py", line 92, in f (line @4); its last frame, line @5, is in f'
    assert got["reasoning"] == "the start failed at line @6 (JSONDecodeError: Expecting value: line 90 column 1)"
    assert got["evidence"] == "error at line 91 of the config"
    assert got["line"] == 3
