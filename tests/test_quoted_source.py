"""A traceback's quoted source line (the code under a ``File "...", line N, in f`` header) is no
log statement (``sources/quoted.py``, docs/traceback-frames.md "Quoted source lines").

The frame header is vllm-020's own (vllm PR #29443's paste, the EngineCore_DP0 process); under it
each rule's examples are quoted as code (indented deeper, as CPython prints the source line).
"""
from __future__ import annotations

from logscan.match import Matcher
from logscan.models import Record
from logscan.packs.loader import default_packs
from logscan.sources.quoted import QuotedSource
from tests.conftest import FIXTURES

_PACKS = default_packs()
_FRAME = FIXTURES.joinpath("vllm", "vllm-020.log").read_text(encoding="utf-8").splitlines()[0]
_HEADER = _FRAME.split(") ", 1)[1]  # '  File ".../compressed_tensors_wNa16.py", line 92, in create_weights'


def _events(lines: list[str], process: str = "EngineCore_DP0") -> list:
    m = Matcher(_PACKS)
    out = []
    for i, text in enumerate(lines, 1):
        out += list(m.feed(Record(source="t", line=i, message=text, process=process, pid=3300589)))
    return out + list(m.flush())


def _quotable():
    for pack in _PACKS.packs.values():
        for cr in pack.rules:
            r = cr.rule
            if r.kind in ("identity", "uncaught") or r.source_line or r.prefixed_only or r.frame:
                continue
            for ex in r.examples:
                if "\n" not in ex and not ex.lstrip().startswith("File "):
                    yield r.id, ex


def test_no_rule_reads_a_quoted_source_line():
    read_unquoted = 0
    for rid, ex in _quotable():
        code = "    " + ex.strip()
        assert not [e for e in _events([_HEADER, code]) if e.rule == rid and e.line == 2], (rid, ex)
        # the control: the same indented text with no frame above it is read by some rules
        read_unquoted += bool([e for e in _events(["x", code]) if e.rule == rid and e.line == 2])
    assert read_unquoted > 300  # the test can fail: without the mechanism these lines are read


def test_the_serving_loop_frame_rule_still_reads_its_quoted_code():
    evs = _events(['  File "/usr/lib/python3/site-packages/vllm/v1/engine/core.py", line 701, in run_engine_core',
                   "    engine_core.run_busy_loop()"])
    assert [e.rule for e in evs if e.line == 2] == ["vllm.run.loop-frame"]


def test_quoted_lines_are_per_process_and_near_their_frame():
    q = QuotedSource()
    rec = lambda n, msg, proc: Record(source="t", line=n, message=msg, process=proc)  # noqa: E731
    assert not q.quoted(rec(1, _HEADER, "Worker_TP0"))
    assert not q.quoted(rec(2, "    return self._call_impl(*args, **kwargs)", "Worker_TP1"))  # another rank
    assert q.quoted(rec(3, "    kernel_type = choose_mp_linear_kernel(mp_linear_kernel_config)", "Worker_TP0"))
    assert not q.quoted(rec(4, "    raise ValueError(", "Worker_TP0"))  # no frame above it any more
    q.quoted(rec(5, _HEADER, "Worker_TP0"))
    assert not q.quoted(rec(6, "ValueError: Failed to find a kernel", "Worker_TP0"))  # the exception line
    q.quoted(rec(7, _HEADER, "Worker_TP0"))
    assert not q.quoted(rec(40, "    far below: another statement", "Worker_TP0"))


def test_a_failure_report_says_where_the_process_raised():
    """vllm-252 (vllm#18421, eight interleaved ranks cut before their exception lines): the report
    names the innermost frame, file, source line and function, not only the log line."""
    from logscan.pipeline import scan_inputs

    (run,) = scan_inputs([str(FIXTURES / "vllm" / "vllm-252.log")], _PACKS).runs
    sf = run.start_failure
    assert sf.raised_in == "venv/lib/python3.10/site-packages/torch/nn/modules/module.py, line 1762, in _call_impl"
    assert sf.raised_in_line == 15
    # vllm-020: the exception's own process; its innermost frame is the kernel chooser that raised
    (run,) = scan_inputs([str(FIXTURES / "vllm" / "vllm-020.log")], _PACKS).runs
    assert run.start_failure.raised_in.endswith("mixed_precision/__init__.py, line 90, in choose_mp_linear_kernel")
