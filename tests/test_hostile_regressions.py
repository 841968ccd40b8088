"""Kept hostile inputs (``tests/data/hostile/``) through every subcommand and format, plus their classes.

The files are the minimal reproductions of issue 13 (``bigpid.log``: a 5000-digit pid;
``tp-superscript.log``: ``tensor_parallel_size=²``; ``surrogate.log``: a JSON ``\\ud800``;
``inject-*``: workflow commands and Markdown links in log text; ``policy-*``/``baseline-*``:
files nested or sized to break a parser; a UTF-16 report) and any input the fuzz suite
(``test_fuzz.py``) found failing. Each test checks the contract of
``tests/helpers/hostile_check.py`` and, where the file stands for a class, a variant of it.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES
from tests.helpers.hostile_check import check_log, check_side_files, check_text, run

HOSTILE = Path(__file__).parent / "data" / "hostile"
LOGS = sorted(HOSTILE.glob("*.log"))
KERNEL_LOG = FIXTURES / "vllm" / "vllm-024.log"


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_kept_hostile_log_keeps_the_contract_in_every_command_and_format(path, tmp_path):
    check_log(path, tmp_path)


@pytest.mark.parametrize("name", ["policy-deep-array.toml", "policy-huge-int.toml"])
def test_a_policy_built_to_break_the_parser_is_one_line_and_exit_2(name):
    res = run(["gate", "--policy", str(HOSTILE / name), str(KERNEL_LOG)])
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith("logscan: policy error: ") and res.stderr.count("\n") == 1, res.stderr


def test_a_deep_json_baseline_is_one_line_and_exit_2():
    check_side_files(KERNEL_LOG, baseline=HOSTILE / "baseline-deep-array.json")
    res = run(["gate", "--baseline", str(HOSTILE / "baseline-deep-array.json"), str(KERNEL_LOG)])
    assert res.exit_code == 2 and "nested too deep" in res.stderr and res.stderr.count("\n") == 1


def test_a_deep_json_object_baseline_too(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text('{"logscan_version": "0.1.0", "runs": ' + "[" * 50_000 + "]" * 50_000 + "}")
    res = run(["diff", str(p), str(KERNEL_LOG)])
    assert res.exit_code == 2 and "Traceback" not in res.stderr, res.stderr


def test_a_utf16_report_given_as_baseline_is_read_as_the_report_not_as_a_log(tmp_path):
    res = run(["gate", "--baseline", str(HOSTILE / "baseline-utf16-report.json"), str(KERNEL_LOG)])
    assert res.exit_code in (0, 1) and "baseline:" in res.stdout, res.stderr
    # the same report saved as UTF-8 gives the same comparison
    utf8 = tmp_path / "b.json"
    utf8.write_text((HOSTILE / "baseline-utf16-report.json").read_bytes().decode("utf-16"), encoding="utf-8")
    res8 = run(["gate", "--baseline", str(utf8), str(KERNEL_LOG)])
    assert res8.stdout.replace(str(utf8), "B") == res.stdout.replace(str(HOSTILE / "baseline-utf16-report.json"), "B")


def test_utf16_text_that_is_no_report_is_refused_as_a_baseline(tmp_path):
    p = tmp_path / "b.json"
    p.write_bytes("INFO hello\n".encode("utf-16"))
    res = run(["gate", "--baseline", str(p), str(KERNEL_LOG)])
    assert res.exit_code == 2 and "UTF-16" in res.stderr


def test_a_policy_with_a_utf8_bom_is_read(tmp_path):
    p = tmp_path / "p.toml"
    p.write_bytes(b"\xef\xbb\xbf" + b'[[rule]]\nkernels = ["Marlin*"]\nlevel = "fail"\nreason = "no marlin"\n')
    res = run(["gate", "--policy", str(p), str(KERNEL_LOG)])
    assert res.exit_code == 1 and f"decided by {p}:1" in res.stdout, (res.stdout, res.stderr)


def test_a_corrupt_nested_state_file_is_ignored_with_one_note(tmp_path):
    from logscan.follow.runner import Follower
    from logscan.packs.loader import default_packs

    state = tmp_path / "state"
    state.write_text('{"version": 1, "streams": ' + "[" * 100_000 + "]" * 100_000 + "}")
    log = tmp_path / "a.log"
    log.write_text("x\n")
    notes = []
    f = Follower([str(log)], default_packs(), open(tmp_path / "out", "w"), state_file=str(state))
    f._note = notes.append  # type: ignore[method-assign]
    assert f._load_state() == {} and notes and "nested too deep" in notes[0]


@pytest.mark.parametrize("digits", ["9" * 5000, "²", "٣", "1" * 19, "0" * 30 + "8"])
def test_numbers_past_a_bound_in_pid_and_config_are_not_given(tmp_path, digits):
    """Class of bigpid / tp-superscript: any digit string in a pid, a tp size, a server arg."""
    p = tmp_path / "n.log"
    p.write_text(f"(EngineCore_0 pid={digits}) INFO 05-01 10:00:00 [core.py:58] Initializing a V1 LLM engine "
                 f"(v0.10.1.1) with config: model='m', quantization=fp8, tensor_parallel_size={digits}\n"
                 f"INFO 05-01 10:00:00 [core.py:58] non-default args: {{'model': 'm', 'tensor_parallel_size': {digits}}}\n"
                 + KERNEL_LOG.read_text(), encoding="utf-8")
    rep = scan_inputs([str(p)])
    assert rep.runs and rep.runs[0].selections  # the kernel lines after it are still read
    assert rep.runs[0].config.tensor_parallel_size in (None, 8)
    check_log(p, tmp_path)


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\ud83d", "\\udc00\\ud800"])
def test_lone_surrogates_in_json_wrappers_become_u_fffd_and_the_line_is_read(tmp_path, escape):
    """Class of surrogate.log, in Docker json-file and JSON-formatter lines."""
    kernel = "(Worker_TP0 pid=1) INFO 01-07 13:43:10 [modelopt.py:916] Using flashinfer-cutlass for NVFP4 GEMM"
    p = tmp_path / "s.log"
    p.write_text('{"log": "%s %s\\n", "stream": "stdout", "time": "2026-01-01T00:00:00Z"}\n' % (kernel, escape)
                 + '{"message": "Using MARLIN %s kernel", "levelname": "INFO", "filename": "a.py", "lineno": 1}\n'
                 % escape, encoding="utf-8")
    rep = scan_inputs([str(p)])
    assert any("\ufffd" in e.message for e in rep.events)
    rep.model_dump_json()  # encodes
    check_log(p, tmp_path)


def test_a_line_that_exhausts_the_budget_is_counted_and_named_and_the_rest_is_read(tmp_path):
    """Class of redos60: long lines that make rules work hard; the kernel lines around them still count."""
    p = tmp_path / "r.log"
    kernel = KERNEL_LOG.read_text()
    p.write_text(kernel + ("ValueError: x requires " * 10000 + "\n") * 2 + kernel, encoding="utf-8")
    rep = scan_inputs([str(p)])
    st = rep.inputs[0]
    n = kernel.count("\n")
    assert st.over_budget_lines == 2 and st.over_budget_at == [n + 1, n + 2]
    assert len(rep.runs) >= 1 and all(r.selections for r in rep.runs)
    res = run(["scan", str(p)])
    assert f"2 line(s) over the per-line matching budget, not every rule tried (line {n + 1}, {n + 2})" in res.stdout


def test_the_budget_can_be_raised_by_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGSCAN_LINE_BUDGET", "30")
    p = tmp_path / "r.log"
    p.write_text("ValueError: x requires " * 2000 + "\n", encoding="utf-8")
    assert scan_inputs([str(p)]).inputs[0].over_budget_lines == 0


def test_closed_stdin_is_an_unreadable_input_exit_2():
    import subprocess
    import sys

    for cmd in (["scan", "-"], ["gate", "-"], ["scan"], ["follow", "-"]):
        r = subprocess.run([sys.executable, "-m", "logscan.cli", *cmd], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60, close_fds=True,
                           preexec_fn=lambda: __import__("os").close(0))
        assert r.returncode == 2 and "Traceback" not in r.stderr, (cmd, r.stderr)
        assert "closed" in r.stderr, (cmd, r.stderr)


def test_gzip_with_trailing_garbage_is_read_with_a_warning_as_gzip_does(tmp_path):
    p = tmp_path / "t.log.gz"
    p.write_bytes(gzip.compress(KERNEL_LOG.read_bytes()) + b"garbage\n")
    rep = scan_inputs([str(p)])
    st = rep.inputs[0]
    assert st.error is None and st.warning and "trailing garbage" in st.warning
    assert rep.runs and rep.runs[0].selections
    res = run(["gate", str(p)])
    assert res.exit_code != 2 and "trailing garbage" not in res.stderr
    res = run(["scan", str(p)])
    assert res.exit_code == 0 and "trailing garbage after the compressed stream ignored" in res.stdout


def test_a_corrupt_gzip_member_is_still_an_error(tmp_path):
    p = tmp_path / "t.log.gz"
    data = bytearray(gzip.compress(KERNEL_LOG.read_bytes()))
    data[-6] ^= 0xFF  # the CRC
    p.write_bytes(bytes(data))
    assert scan_inputs([str(p)]).inputs[0].error


def test_a_path_with_undecodable_bytes_is_reported_not_crashed(tmp_path):
    import os

    p = os.path.join(os.fsencode(tmp_path), b"\xff\xfe.log")
    with open(p, "wb") as fh:
        fh.write(KERNEL_LOG.read_bytes())
    name = os.fsdecode(p)
    for fmt in ("text", "json"):
        res = run(["scan", "--format", fmt, name])
        assert res.exit_code == 0 and "Traceback" not in res.stderr, res.stderr
    json.loads(run(["scan", "--format", "json", name]).stdout)
    check_text(run(["scan", name]).stdout)


def test_the_markdown_summary_says_which_lines_were_not_fully_read(tmp_path):
    p = tmp_path / "r.log"
    p.write_text(KERNEL_LOG.read_text() + "ValueError: x requires " * 10000 + "\n", encoding="utf-8")
    res = run(["gate", "--format", "markdown", str(p)])
    n = KERNEL_LOG.read_text().count("\n") + 1
    # the text report's note, word for word (formats.inputs.input_warnings)
    assert f"1 line(s) over the per-line matching budget, not every rule tried (line {n})" in res.stdout, res.stdout
    clean = run(["gate", "--format", "markdown", str(KERNEL_LOG)])
    assert "not fully read" not in clean.stdout and "**input**" not in clean.stdout


def test_a_json_lines_side_whose_first_line_is_nested_too_deep_is_an_error_not_a_crash(tmp_path):
    p = tmp_path / "b.json"
    p.write_text("[" * 50_000 + "]" * 50_000 + "\n{}\n")
    res = run(["diff", str(p), str(KERNEL_LOG)])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 2 and "nested too deep" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("name", ["surrogate.log", "bigpid.log", "tp-superscript.log"])
def test_follow_reports_the_event_of_a_hostile_line_and_ends_cleanly(name):
    """Issue 13: with a lone surrogate follow checkpointed past the line and never emitted its event;
    with a huge pid it crashed before the checkpoint (a crash loop)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "logscan.cli", "follow", "--metrics-addr", "off", "-"],
                       input=(HOSTILE / name).read_bytes(), capture_output=True, timeout=120)
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr[-2000:]
    events = [json.loads(line) for line in r.stdout.decode("utf-8").splitlines()]
    if name != "tp-superscript.log":  # that one holds only a config line
        assert any(e.get("type") == "selection" for e in events), events


def test_the_gate_warns_on_lines_not_fully_read_and_names_them(tmp_path):
    """Fail closed without a false failure: the kernels still pass as before, the unread lines are a warning."""
    p = tmp_path / "r.log"
    text = KERNEL_LOG.read_text()
    p.write_text(text + "ValueError: x requires " * 10000 + "\n", encoding="utf-8")
    n = text.count("\n") + 1
    res = run(["gate", "--format", "json", str(p)])
    base = run(["gate", "--format", "json", str(KERNEL_LOG)])
    checks = json.loads(res.stdout)["gate"]["checks"]
    unread = [c for c in checks if c["code"] == "LINES_NOT_READ"]
    assert len(unread) == 1 and unread[0]["verdict"] == "warn" and unread[0]["line"] == n
    assert f"(line {n})" in unread[0]["message"]
    assert not any(c["code"] == "LINES_NOT_READ" for c in json.loads(base.stdout)["gate"]["checks"])
    assert res.exit_code == base.exit_code
    check_log(p, tmp_path)


@pytest.mark.parametrize("unit", ["ValueError: x requires ", "RuntimeError: y not supported on ", "Exception: needs "])
def test_rules_a_repeated_exception_line_reaches_stay_far_from_the_budget_alone(unit):
    """Issue 13 audit: at 50k characters sglang.arch.requires-arch took 2 s (the exception name tried at
    every start, then 300 characters scanned for the phrase). Each rule the keyword index hands such a
    line must finish a 50k-character one well inside a second of CPU (a ``regex`` timeout: CPU time)."""
    from logscan.match import Matcher
    from logscan.packs.loader import default_packs

    m = Matcher(default_packs())
    line = unit * (50_000 // len(unit))
    slow = []
    for i in m._keyword_rules(line):
        cr = m.rules[i]
        try:
            cr.regex.compiled().search(line, timeout=1.0)
        except TimeoutError:
            slow.append(cr.rule.id)
    assert not slow, slow


@pytest.mark.parametrize("command", [["scan"], ["scan", "--format", "json"], ["gate"]])
def test_a_report_that_cannot_be_written_is_one_line_and_exit_2(command):
    """stdout on a full disk (/dev/full): no traceback, no gate-failed exit 1 (new-user trial)."""
    import subprocess
    import sys as _sys

    log = str(FIXTURES / "vllm" / "vllm-005.log")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([_sys.executable, "-m", "logscan", *command, log], stdout=full,
                              stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == ["logscan: cannot write the output: No space left on device"]


def test_a_closed_stdout_is_refused_not_a_silent_pass():
    import os
    import subprocess
    import sys as _sys

    log = str(FIXTURES / "vllm" / "vllm-005.log")
    proc = subprocess.run([_sys.executable, "-m", "logscan", "gate", log], stderr=subprocess.PIPE, text=True,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2 and "standard output is closed" in proc.stderr and "Traceback" not in proc.stderr


def test_a_garbage_collection_inside_a_rule_search_does_not_spend_the_lines_budget(tmp_path):
    """A full collection that a match object's allocation triggers inside a timed search took
    longer than the whole budget on a loaded CI run of 600 logs in one process, and put a plain
    line of other-120 "over budget" at random. The collector's time is not the line's."""
    import time

    from logscan import gcpause
    from logscan.match import LINE_BUDGET, Matcher
    from logscan.packs.loader import load_packs

    class CollectingPattern:
        """A pattern whose search spends twice the budget inside a (simulated) collection."""
        def search(self, text, timeout):
            gcpause.gc_seconds()  # hooked
            gcpause._on_gc("start", {})
            end = time.thread_time() + 2 * LINE_BUDGET
            while time.thread_time() < end:
                pass
            gcpause._on_gc("stop", {})
            return None

    m = Matcher(load_packs())
    m._left = m.budget
    assert m._search(CollectingPattern(), "x", "test.rule") is None
    assert m._left > LINE_BUDGET / 2 and m.stats.timeouts == 0
