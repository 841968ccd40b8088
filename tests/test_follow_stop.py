"""``logscan follow --state-file`` stopped by SIGINT / SIGTERM and started again: every record printed
exactly once in total, and a crash loop's count goes on across the restart.

Real processes: a writer appends a real failing log (fixtures/vllm/vllm-020.log: a tagged traceback
whose exception line gathers one reason line per kernel) to a file, ``logscan follow`` runs as a
subprocess, the test sends the signal and starts follow again on the same state file. Every wait is
for a condition the state file or the output shows, with a generous bound (a loaded 2-core machine).

Before: a failed start read from an uncaught traceback waits for a poll with no new line; a signal
while lines still came kept it in the state file (``held_failure``) unprinted, and only the restarted
follower printed it (never, had it not been restarted). And a crash loop's representatives were not
in the state file: after a restart the next repeat was printed in full and the count began again.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers.waiting import wait_until

FIX = ROOT / "fixtures"
WAIT = 90.0  # seconds at most for each condition; met in well under a second on an idle machine

#: appends the file argv[2] to argv[1], then a line of other output every 50 ms until argv[3] exists
_WRITER = """
import os, sys, time
log, src, stop = sys.argv[1:4]
with open(log, "ab") as fh:
    fh.write(open(src, "rb").read())
    fh.flush()
    n = 0
    while not os.path.exists(stop):
        n += 1
        fh.write(b"-- %d --\\n" % n)
        fh.flush()
        time.sleep(0.05)
"""


def _wait(cond, timeout: float = WAIT) -> bool:
    return wait_until(cond, timeout)


class _Follow:
    """``logscan follow LOG --state-file STATE`` as a subprocess, stdout and stderr to files."""

    def __init__(self, tmp: Path, n: int, log: Path, state: Path, poll: float):
        self.log, self.state = log, state
        self.out, self.err = tmp / f"out-{n}.jsonl", tmp / f"err-{n}.txt"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "logscan.cli", "follow", str(log), "--state-file", str(state),
             "--metrics-addr", "off", "--poll-interval", str(poll)],
            stdout=self.out.open("w"), stderr=self.err.open("w"), cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)})

    def stream_state(self) -> dict:
        try:
            return json.loads(self.state.read_text())["streams"].get(str(self.log), {})
        except (OSError, ValueError):
            return {}  # not written yet (it is renamed into place whole)

    def stop(self, sig: int = signal.SIGINT) -> list[dict]:
        self.proc.send_signal(sig)
        assert self.proc.wait(timeout=WAIT) == 0, self.err.read_text()
        assert "stopped, state saved" in self.err.read_text()
        return [json.loads(ln) for ln in self.out.read_text().splitlines()]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _lines(log: Path) -> int:
    return log.read_bytes().count(b"\n")


def _records(out: list[dict], kind: str) -> list[dict]:
    return [r for r in out if r["type"] == kind]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_failure_held_at_the_signal_is_printed_then_and_not_after_the_restart(tmp_path, sig):
    log, state, stop = tmp_path / "engine.log", tmp_path / "state.json", tmp_path / "stop-writer"
    log.write_bytes(b"")
    # a long poll against a writer that never pauses 50 ms: no poll without a new line, so the
    # traceback's failure stays held (not a sleep of a guessed length: the state file says it)
    first = _Follow(tmp_path, 1, log, state, poll=1.0)
    writer = None
    try:
        assert _wait(state.exists), first.err.read_text()  # the follower polls
        writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(log), str(FIX / "vllm" / "vllm-020.log"), str(stop)])
        # (or printed already: a writer stalled a whole poll on a loaded machine, a quiet poll came)
        assert _wait(lambda: first.stream_state().get("held_failure") is True
                     or '"start_failure"' in first.out.read_text()), first.stream_state()
        out1 = first.stop(sig)
        stop.touch()
        assert writer.wait(timeout=WAIT) == 0
        assert "held_failure" not in first.stream_state()
        total = _lines(log)
        second = _Follow(tmp_path, 2, log, state, poll=0.05)
        try:
            # caught up with the writer's last line, and nothing held
            assert _wait(lambda: second.stream_state().get("line") == total and "held_failure" not in second.stream_state())
            out2 = second.stop(sig)
        finally:
            second.kill()
    finally:
        first.kill()
        stop.touch()
        if writer is not None:
            writer.wait(timeout=WAIT)
    fails = _records(out1, "start_failure") + _records(out2, "start_failure")
    assert len(fails) == 1 and _records(out1, "start_failure"), (out1, out2)
    # printed at the signal, the exception line complete (its reasons gathered): as scan says it
    assert fails[0]["start_failure"]["cause"].startswith("ValueError: Failed to find a kernel")
    codes = [r["finding"]["code"] for r in _records(out1, "finding") + _records(out2, "finding")]
    assert codes == ["KERNEL_NOT_FOUND"]


def test_a_crash_loops_count_goes_on_across_a_restart(tmp_path):
    """vllm-020 catted 5 times, follow stopped, 5 more copies, follow started again: the run's records
    once, and one count of its repeats that only grows: 8 (the first run and the open tenth are not
    counted), every repeat exact (byte-identical copies)."""
    log, state = tmp_path / "engine.log", tmp_path / "state.json"
    copy = (FIX / "vllm" / "vllm-020.log").read_bytes()
    log.write_bytes(copy * 5)
    first = _Follow(tmp_path, 1, log, state, poll=0.05)
    try:
        assert _wait(lambda: first.stream_state().get("line") == _lines(log)
                     and any('"repeated"' in ln for ln in first.out.read_text().splitlines())), first.err.read_text()
        out1 = first.stop()
    finally:
        first.kill()
    with log.open("ab") as fh:
        fh.write(copy * 5)
    second = _Follow(tmp_path, 2, log, state, poll=0.05)
    try:
        assert _wait(lambda: second.stream_state().get("line") == _lines(log)), second.err.read_text()
        out2 = second.stop()
    finally:
        second.kill()
    out = out1 + out2
    assert len(_records(out, "start_failure")) == 1, out2
    assert [r["finding"]["code"] for r in _records(out, "finding")] == ["KERNEL_NOT_FOUND"]
    counts = [r["folded"] for r in _records(out, "repeated")]
    assert [c["runs"] for c in counts] == sorted({c["runs"] for c in counts})  # grows, none said twice
    assert counts[-1]["runs"] == 8 and counts[-1]["first_line"] == 12 and counts[-1]["last_first_line"] == 89
    assert all(c["numbers_differ"] == 0 for c in counts)
    assert {r["run_line"] for r in out} == {1}


def test_a_malformed_crash_loop_count_in_the_state_costs_only_the_count(packs, tmp_path):
    """A state file whose ``repeats`` entry is not what follow writes: said on stderr, the count starts
    again, and the position is kept (nothing read again, nothing printed twice)."""
    import io

    from logscan.follow.runner import Follower

    log, state = tmp_path / "engine.log", tmp_path / "state.json"
    log.write_bytes((FIX / "vllm" / "vllm-020.log").read_bytes() * 3)
    f = Follower([str(log)], packs, io.StringIO(), state_file=str(state), idle_flush=0.0)
    for _ in range(3):
        f.poll_once()
    f.save_state()
    data = json.loads(state.read_text())
    assert data["streams"][str(log)]["repeats"][0]["folded"]["runs"] == 1
    data["streams"][str(log)]["repeats"] = [{"key": "not hex"}]
    state.write_text(json.dumps(data))
    out, err = io.StringIO(), io.StringIO()
    g = Follower([str(log)], packs, out, state_file=str(state), idle_flush=0.0, err=err)
    for _ in range(3):
        g.poll_once()
    assert "crash-loop counts of" in err.getvalue() and "ignored" in err.getvalue()
    assert "reading it from the start" not in err.getvalue()
    assert out.getvalue() == ""
