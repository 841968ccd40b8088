"""What a new user's trial found (fresh clone, real logs): each a test that failed before the fix."""
from __future__ import annotations

from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES


def _run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_a_walk_with_several_outcomes_marks_no_rung_as_the_one_picked():
    out = _run("ladder", "vllm", "FP8", "--gpu", "H100").output
    assert "outcomes (most capable first)" in out
    marked = [ln.split()[1] for ln in out.splitlines() if ln.startswith(("=>", "? "))]
    assert marked == ["2/7", "4/7", "5/7"], marked  # CUTLASS if CUDA >= 12.0, else a torch rung by scale type
    assert not [ln for ln in out.splitlines() if ln.startswith("=>")]


def test_a_certain_walk_still_marks_its_rung():
    out = _run("ladder", "vllm", "NVFP4", "--gpu", "A100", "--cuda", "12.8", "--with", "none").output
    assert any(ln.startswith("=>") for ln in out.splitlines()), out


def test_every_better_rung_named_in_a_fall_has_its_gate_or_a_count_of_the_rest():
    out = _run("scan", str(FIXTURES / "vllm" / "vllm-005.log")).output
    fell = next(ln for ln in out.splitlines() if "fell " in ln and "better rung(s)" in ln)
    named = fell.split(" below ", 1)[1].rstrip(" .").split(", ")
    needs = [ln.strip().split(":", 1)[0] for ln in out.splitlines() if ln.startswith("      ") and ": needs " in ln]
    assert needs == named[: len(needs)] and len(needs) == min(len(named), 6), (named, needs)


def test_unexplained_with_nothing_to_show_says_so_on_stderr():
    r = CliRunner().invoke(cli, ["scan", "--unexplained", str(FIXTURES / "vllm" / "vllm-005.log")])
    assert r.exit_code == 0 and r.stdout == "" and "no kernel-relevant line left unexplained" in r.stderr


def test_a_failed_start_is_counted_in_the_summary():
    out = _run("scan", str(FIXTURES / "vllm" / "vllm-019.log")).output
    summary = next(ln for ln in out.splitlines() if ln.startswith("Summary:"))
    assert summary.endswith("; 1 start(s) FAILED (START_FAILED)"), summary


def test_help_names_every_cost_class_and_engine():
    out = _run("--help").output
    for word in ("activation_upcast", "TGI", "LMDeploy", "MLC-LLM"):
        assert word in out
