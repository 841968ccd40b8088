"""No output promises a list it does not print, and Xinference's wrapper lines are not vLLM's.

Before, the default policy's rule for KERNEL_NOT_FOUND / UNSUPPORTED_ON_ARCH said "the engine's
reasons are listed with the check" while the gate's text printed no reason at all (the JSON's
``reasons`` were never shown): 57 of the bundled fixtures' gate outputs carried the promise, and
26 of those checks have no reason at all to print. The check over every bundled fixture below
fails on any sentence that says something is listed (or follows, or is below) with no item
under it.
"""
from __future__ import annotations

import re
from datetime import date

import pytest

from logscan.formats import text
from logscan.gate import default_policy_path
from logscan.gate.evaluate import evaluate
from logscan.gate.policy import load_policy
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

#: a sentence that announces a list: what it announces must follow it
PROMISE = re.compile(r"\b(?:are|is|be) listed\b|\blisted (?:below|here|with)\b|\bas follows\b|"
                     r"\bthe following\b|\bsee below\b|\bbelow:", re.I)
#: the lines that are items of a list under a check or a finding (not its own evidence or verdict)
ITEM = re.compile(r"^\s*(?:reason:|- |\d+\. |line \d+:)")

LOGS = sorted(FIXTURES.glob("*/*.log"))


def _gate_text(paths):
    packs = default_packs()
    policy = load_policy(None, set(packs.findings.code), default_policy_path())
    report = scan_inputs([str(p) for p in paths])
    return text.render(report, evaluate(report, policy, packs.findings, date(2026, 12, 2))), report


def _broken_promises(out: str) -> list[str]:
    lines = out.splitlines()
    bad = []
    for i, line in enumerate(lines):
        if not PROMISE.search(line):
            continue
        depth = len(line) - len(line.lstrip())
        block = []
        for nxt in lines[i + 1:]:
            if not nxt.strip() or len(nxt) - len(nxt.lstrip()) <= depth:
                break
            block.append(nxt)
        if not any(ITEM.match(b) for b in block):
            bad.append(line.strip()[:200])
    return bad


def test_the_promise_check_can_fail():
    assert _broken_promises("  [fail] x: the engine's reasons are listed with the check\n      decided by y\n")
    assert not _broken_promises("  [fail] x: the reasons are listed with the check\n      reason:   z\n")


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_no_gate_or_scan_output_promises_a_list_it_does_not_print(log):
    out, report = _gate_text([log])
    assert not _broken_promises(out), _broken_promises(out)
    for run in report.runs:  # the JSON: a finding that says its reasons are listed has some
        for f in run.findings:
            if PROMISE.search(f.title):
                assert f.reasons, (f.code, f.title)


def test_the_gate_prints_the_engines_reasons_of_a_check():
    # vllm-001: every NVFP4 MoE kernel refused, each with its reason (KERNEL_NOT_FOUND)
    out, report = _gate_text([FIXTURES / "vllm" / "vllm-001.log"])
    reasons = [r for run in report.runs for f in run.findings if f.code == "KERNEL_NOT_FOUND" for r in f.reasons]
    assert reasons
    gate_part = out[out.index("\nGate: "):]
    for r in reasons[:20]:
        assert f"reason:   {r[:300]}" in gate_part or r[:80] in gate_part, r


# vLLM 0.2-era AWQ refusal on a V100 (fixtures/vllm/vllm-106.log, the real line), relayed the way
# Xinference relays a backend's exception: its own logger line, its traceback frames (the shape of
# xorbitsai/inference#869), then the error prefixed with the actor's "[address=…, pid=…]".
REFUSAL = (FIXTURES / "vllm" / "vllm-106.log").read_text().splitlines()[0]
WRAPPER = [
    "2024-01-08 08:03:57,300 xinference.core.worker 129598 ERROR    Failed to load model qwen-chat-1-0",
    "Traceback (most recent call last):",
    '  File "/opt/inference/xinference/core/worker.py", line 381, in launch_builtin_model',
    "    await model_ref.load()",
    '  File "/opt/inference/xinference/model/llm/vllm/core.py", line 160, in load',
    "    self._engine = AsyncLLMEngine.from_engine_args(engine_args)",
]
VLLM_FRAME = ['  File "/opt/venv/lib/python3.9/site-packages/vllm/engine/async_llm_engine.py", line 496, in from_engine_args',
              "    engine_configs = engine_args.create_engine_configs()"]
ERROR = f"ValueError: [address=0.0.0.0:40363, pid=2342] {REFUSAL}"


@pytest.mark.parametrize("lines,engine", [(WRAPPER + [ERROR], "unknown"),
                                          (WRAPPER + VLLM_FRAME + [ERROR], "vllm")])
def test_xinference_wrapper_lines_do_not_name_vllm_but_vllms_own_frames_do(tmp_path, lines, engine):
    log = tmp_path / "xinference-vllm.log"
    log.write_text("\n".join(lines) + "\n")
    out, report = _gate_text([log])
    assert [r.engine.name for r in report.runs] == [engine]
    assert [f.code for r in report.runs for f in r.findings] == ["UNSUPPORTED_ON_ARCH"]
    assert not _broken_promises(out) and "Gate: FAIL" in out


def test_a_scan_warning_no_rule_names_warns_and_a_pass_beside_it_says_the_policy_is_silent(tmp_path):
    # llamacpp-002: GPU offload asked for, 'no usable GPU found' (a CPU-only run): the scan warns;
    # the default policy's severity rules warn on it (it read "[pass]" until the new-user trial)
    out, report = _gate_text([FIXTURES / "llamacpp" / "llamacpp-002.log"])
    assert [f.severity.value for r in report.runs for f in r.findings if f.code == "BACKEND_OVERRIDE_IGNORED"] == ["warning"]
    block = out[out.index("[warn]"):]
    assert "BACKEND_OVERRIDE_IGNORED" in block.splitlines()[0]
    assert "the scan rates this finding warning and no rule above names its code" in block
    # a policy without the defaults that names other codes only: a [pass] that says it is silence
    pol = tmp_path / "p.toml"
    pol.write_text('defaults = false\n[[rule]]\nlevel = "fail"\ncodes = ["START_FAILED"]\n')
    packs = default_packs()
    report = scan_inputs([str(FIXTURES / "llamacpp" / "llamacpp-002.log")])
    out = text.render(report, evaluate(report, load_policy(str(pol), set(packs.findings.code), default_policy_path()),
                                       packs.findings, date(2026, 12, 2)))
    block = out[out.index("[pass]"):]
    assert "BACKEND_OVERRIDE_IGNORED" in block.splitlines()[0]
    assert "the scan rates this finding warning, but no rule of the policy names BACKEND_OVERRIDE_IGNORED" in block


@pytest.mark.parametrize("log", ["vllm-120", "vllm-190"])
def test_a_family_with_several_kernels_named_may_run_each_not_runs_each(log):
    out, report = _gate_text([FIXTURES / "vllm" / f"{log}.log"])
    fams = [s.family for r in report.runs for s in r.selections]
    assert len(fams) > len(set(fams))  # one family, several kernels: the text marks each (?)
    sel_lines = [ln for ln in out[out.index("\nGate: "):].splitlines() if " selection: " in ln]
    assert sel_lines and all(" may run " in ln and " (?) (" in ln for ln in sel_lines), sel_lines


def test_a_selection_of_unknown_cost_class_says_so():
    out, _ = _gate_text([FIXTURES / "trtllm" / "trtllm-107.log"])
    assert "runs weight_only_groupwise_quant_matmul_plugin (cost class unknown)" in out


def test_the_html_platform_row_reads_as_a_sentence():
    from click.testing import CliRunner
    from logscan.cli import cli

    # vllm-270: no platform line, no platform-only name, no [cuda.py:N] tag (vllm-009, used before,
    # now has its platform from its cuda.py tag: corpus9v's file-tag evidence)
    page = CliRunner().invoke(cli, ["scan", "--format", "html", str(FIXTURES / "vllm" / "vllm-270.log")]).stdout
    assert "CUDA (assumed: no line names the platform)" in page and "(assumed) (unknown)" not in page


def test_a_finding_with_more_reasons_than_shown_says_how_many_more(tmp_path):
    """vllm-001's KERNEL_NOT_FOUND lists each kernel's refusal; with more refusals than the text
    shows (20), the text says how many it left out instead of cutting the list silently."""
    report = scan_inputs([str(FIXTURES / "vllm" / "vllm-001.log")])
    f = next(f for r in report.runs for f in r.findings if f.code == "KERNEL_NOT_FOUND")
    f.reasons = [f"{r} (copy {i})" for i in range(9) for r in f.reasons]
    assert len(f.reasons) > 20
    out = text.render(report)
    assert f"... and {len(f.reasons) - 20} more reason(s) (JSON findings[].reasons)" in out
