"""The vocabulary sweep: a kernel sentence no rule reads is listed as "not understood"
(patterns/common-rules/95-unread-kernel.toml, analysis/trust.unread_lines), never silently
dropped, never a selection or finding; the gate says so (gate/unread.py). Real logs only."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import logscan
from logscan.analysis.trust import unread_lines
from logscan.models import Event
from logscan.packs.loader import default_packs
from logscan.sources.prefilter import make_prefilter

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
UNREAD = "unread.kernel-sentence"


def _lines(rel: str) -> list[str]:
    return (FIX / rel).read_text(encoding="utf-8", errors="surrogateescape").splitlines()


def _fold(lines: list[str], width: int = 100) -> list[str]:
    """The lines as a terminal of ``width`` columns folds them (tgi-101 at 100 columns)."""
    return [ln[i:i + width] for ln in lines for i in range(0, max(len(ln), 1), width)]


def _scan(lines: list[str]):
    return logscan.scan([x + "\n" for x in lines])


def _unread(report) -> list:
    return [u for r in report.runs for u in r.unexplained if u.kind == "unread"]


def test_a_cut_kernel_line_is_listed_with_the_kernel_it_names():
    """tgi-102 line 31, 'Using exllama kern' (cut in the paste): no rule reads it, so it is listed."""
    rep = logscan.scan(str(FIX / "tgi" / "tgi-102.log"))
    [u] = _unread(rep)
    assert (u.line, u.rule, u.message) == (31, UNREAD, "Using exllama kern")
    assert "names kernel exllama" in u.why and "no rule reads this sentence" in u.why


def test_tgi_101_folded_at_100_columns_no_longer_loses_its_kernel_silently():
    lines = _lines("tgi/tgi-101.log")
    assert [s.kernel for r in _scan(lines).runs for s in r.selections] == ["Marlin FP8"]
    assert not _unread(_scan(lines))
    folded = _scan(_fold(lines))
    assert not [s for r in folded.runs for s in r.selections]  # the rule needs the whole sentence
    [u] = _unread(folded)
    assert u.line == 1 and "Marlin" in u.why


def test_the_sweep_changes_no_selection_finding_run_or_event():
    """On a log with a swept line: everything but the not-understood list is as without the sweep
    (the events of kind unread are kept apart from the run's evidence)."""
    rep = json.loads(logscan.scan(str(FIX / "tgi" / "tgi-102.log")).model_dump_json())
    packs = default_packs()
    bare = json.loads(logscan.scan(str(FIX / "tgi" / "tgi-102.log"), patterns=_without_sweep(packs)).model_dump_json())
    for r, b in zip(rep["runs"], bare["runs"]):
        r["unexplained"] = [u for u in r["unexplained"] if u["kind"] != "unread"]
        assert r == b
    assert rep["events"] == bare["events"] and len(rep["runs"]) == len(bare["runs"])


def _without_sweep(packs):
    """A copy of the shipped pattern folder without the sweep's rule file (a baseline)."""
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="logscan-nosweep-"))
    shutil.copytree(packs.root, tmp / "patterns")
    (tmp / "patterns" / "common-rules" / "95-unread-kernel.toml").unlink()
    return tmp / "patterns"


@pytest.mark.parametrize("rel,line", [
    ("vllm/vllm-171.log", 2),   # 'Weight-only FP8 compression will be used leveraging the Marlin kernel.': the
                                # second half of line 1's statement, which a rule read (Marlin)
    ("vllm/vllm-012.log", 6),   # 'Reasons: {FLASH_ATTN: [...], FLASHINFER: ...': attention backends
    ("sglang/sglang-281.log", 4),  # 'CUTLASS flashinfer backend:': a heading of the text
    ("trtllm/trtllm-002.log", 2),  # a C++ backtrace frame naming CutlassFp8BlockScaleGemmRunner
    ("vllm/vllm-175.log", 6),   # ' Backend:   Triton': a launch script's banner
    ("vllm/vllm-001.log", 1),   # 'Using MarlinLinearKernel for ...': read by its rule
])
def test_lines_that_state_no_unread_choice_are_not_swept(rel, line):
    rep = logscan.scan(str(FIX / rel))
    assert line not in [u.line for u in _unread(rep)]


def test_a_quoted_source_line_of_a_traceback_is_not_swept():
    rep = _scan(["Traceback (most recent call last):",
                 '  File "/usr/lib/python3/dist-packages/vllm/model_executor/layers/fused_moe/layer.py", line 12, in f',
                 "    use_marlin_kernel = select_backend(dispatch='triton')",
                 "RuntimeError: boom"])
    assert not _unread(rep)


def test_a_line_before_any_run_goes_to_the_next_run_of_its_source():
    """vllm-001's kernel line reworded 'Use ...' opens no run; the run its next line opens lists it."""
    lines = _lines("vllm/vllm-001.log")
    lines[0] = lines[0].replace("Using MarlinLinearKernel", "Use MarlinLinearKernel")
    [u] = _unread(_scan(lines))
    assert u.line == 1 and "MarlinLinearKernel" in u.why


def test_an_unread_line_in_a_log_without_a_run_opens_none():
    rep = _scan(["Use MarlinLinearKernel for CompressedTensorsWNA16"])
    assert rep.runs == []


def test_every_rank_printing_the_same_unread_sentence_is_listed_once():
    ev = [Event(line=i, rule="vllm." + UNREAD, kind="unread", source="t", message="Use Marlin now",
                groups={"kernel": "Marlin", "verb": "Use"}) for i in (3, 4)]
    assert [u.line for u in unread_lines(ev, [])] == [3]


def test_the_sweep_keywords_reach_the_matcher_through_the_byte_prefilter():
    """A line without any rule keyword never reaches the matcher: every example of the sweep must
    hold a keyword the byte prefilter searches."""
    packs = default_packs()
    pre = make_prefilter(packs, "python")
    sweep = [cr for cr in packs.packs["vllm"].rules if cr.rule.kind == "unread"]
    assert sweep
    for cr in sweep:
        for ex in cr.rule.examples:
            assert pre.hits(b"noise line\n" + ex.encode() + b"\n"), ex
    assert not pre.hits(b"noise line\nnothing to see here\n")


def test_the_gate_warns_on_a_run_with_kernels_and_an_unread_kernel_line():
    g = logscan.gate(logscan.scan(str(FIX / "tgi" / "tgi-102.log")))
    [c] = [c for c in g.checks if c.code == "KERNEL_LINE_UNREAD"]
    assert c.verdict.value == "warn" and c.line == 31 and "exllama" in c.message


def test_the_gate_names_the_unread_line_in_no_kernel_seen():
    """A run whose only kernel evidence is an unread sentence does not read as a log without kernels."""
    g = logscan.gate(_scan(_fold(_lines("tgi/tgi-101.log"))))
    [c] = [c for c in g.checks if c.code == "NO_KERNEL_SEEN"]
    assert c.verdict.value == "fail" and "line 1 names kernel Marlin" in c.message
    assert "not a log without kernels" in c.message
    assert not [c for c in g.checks if c.code == "KERNEL_LINE_UNREAD"]  # one problem, one check


def test_a_log_without_unread_lines_gets_no_unread_check():
    g = logscan.gate(logscan.scan(str(FIX / "tgi" / "tgi-101.log")))
    assert not [c for c in g.checks if c.code == "KERNEL_LINE_UNREAD"]
    assert all("names kernel" not in c.message for c in g.checks)


def test_reworded_kernel_lines_surface_instead_of_vanishing():
    """tools/unread_rewordings.py: the rewordings of five real kernel lines that no rule reads any
    more vanished before the sweep and are listed as not understood now."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from _common import tool

    ur = tool("unread_rewordings")
    before = {"placed": 0, "event": 0, "unread": 0, "vanished": 0}
    after = dict(before)
    for _path, _n, _name, lines, at in ur.cases():
        b, a = ur.outcome(lines, at)
        before[b] += 1
        after[a] += 1
    assert before["vanished"] >= 5
    # one left: vllm-304's 'Use X for MXFP8 GEMM:' ends with ':', a heading's shape the sweep leaves
    assert after["vanished"] <= 1
    # a line only an event holds is silent too (analysis/targets.py): none is left
    assert after["event"] == 0
    assert after["placed"] == before["placed"]


def test_a_line_by_line_pipeline_yields_no_unread_event_as_scan_keeps_none():
    """The property test's case (tests/test_properties.py): an upper-cased copy of a read kernel line is
    swept; neither the report's events nor a line-by-line pipeline's carry it, the run lists it."""
    from logscan.pipeline import Pipeline

    line = "(Worker_TP0 pid=7) INFO 01-07 13:43:10 [modelopt.py:916] Using flashinfer-cutlass for NVFP4 GEMM"
    lines = [line] * 3 + [line.upper()]  # (one or two lines after its selection it would be its rest)
    rep = _scan(lines)
    assert [u.line for u in _unread(rep)] == [4] and all(e.kind != "unread" for e in rep.events)
    pipe = Pipeline(default_packs(), source="<stdin>")
    got = [ev for n, text in enumerate(lines, 1) for ev, _ in pipe.feed(n, text) if ev is not None]
    got += [ev for ev, _ in pipe.close() if ev is not None]
    assert [e.line for e in got] == [e.line for e in rep.events]
