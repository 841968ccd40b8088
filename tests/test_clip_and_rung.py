"""Text is cut with an ellipsis at a word boundary, and ``RUNG -`` is explained (issue 12, "Also")."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from logscan.formats.clip import ELLIPSIS, clip
from logscan.formats.text import RUNG_NONE
from logscan.formats.text import render as text_render
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


@given(st.text(min_size=0, max_size=400), st.integers(2, 300))
def test_clip_is_bounded_marked_and_a_prefix(text, limit):
    out = clip(text, limit)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
    else:
        assert out.endswith(ELLIPSIS) and text.startswith(out[:-1])


def test_clip_cuts_between_words():
    s = "Failed to find a kernel that can implement the WNA16 linear layer"
    out = clip(s, 30)
    assert out == "Failed to find a kernel that…"
    assert out[:-1].split()[-1] in s.split()


def test_text_report_never_cuts_evidence_silently(packs, tmp_path):
    line = ("(EngineCore_DP0 pid=1) ERROR 01-07 13:43:31 [core.py:867] EngineCore failed to start. "
            + "word " * 200)
    p = tmp_path / "x.log"
    p.write_text(line + "\n")
    out = text_render(scan_inputs([str(p)], packs))
    shown = next(ln for ln in out.splitlines() if "start FAILED" in ln)
    assert shown.endswith("word…")


def test_rung_dash_is_explained_where_it_appears(packs):
    out = text_render(scan_inputs([str(FIXTURES / "sglang" / "sglang-001.log")], packs))
    assert "  -  " in out or " - " in out
    assert RUNG_NONE in out
    report = scan_inputs([str(FIXTURES / "vllm" / "vllm-005.log")], packs)
    assert all(sel.ladder for run in report.runs for sel in run.selections)
    assert "RUNG - means" not in text_render(report)  # said only where a dash is shown


def test_rung_dash_note_does_not_claim_the_release_holds_no_ladder_with_the_name():
    """vllm-352 (real): FLASHINFER_B12X chosen as an NvFp4 MoE backend, on no MoE ladder; 'RUNG -'
    said 'on no shipped ladder of this engine release' although explain finds the name on the NVFP4
    linear ladders (new-user trial 2): the note speaks of the layer family's ladders."""
    from click.testing import CliRunner

    from logscan.cli import cli
    from tests.conftest import FIXTURES

    out = CliRunner().invoke(cli, ["scan", str(FIXTURES / "vllm" / "vllm-352.log")]).output
    assert "RUNG - means no shipped ladder of this engine release places the kernel for this layer family" in out
    assert "on no shipped ladder of this engine release" not in out
    assert CliRunner().invoke(cli, ["explain", "FLASHINFER_B12X"]).exit_code == 0
