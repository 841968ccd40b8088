"""Ctrl-C / SIGTERM on a live pipe (issue 12, case 7): ``vllm serve ... | logscan scan -``.

The writer keeps the pipe open (as a running engine does). Before, SIGINT was ignored while the
writer held the pipe, then the process died with ``Fatal Python error: _enter_buffered_busy``
(exit 134). Now the read stops, the report of what was read is printed, marked interrupted,
and the exit status is 128 + the signal number.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import FIXTURES

LOG = (FIXTURES / "vllm" / "vllm-005.log").read_bytes()


def _start(args):
    p = subprocess.Popen([sys.executable, "-m", "logscan.cli", *args], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(LOG)
    p.stdin.flush()  # the writer keeps the pipe open: no end of input
    return p


def _wait_read(p, timeout=30.0):
    """Give the reader time to take in what was written (start-up included), then return."""
    time.sleep(min(timeout, 3.0))


def _signal_after_read(p, sig):
    """Send ``sig`` once the reader had time to read, then collect (stdout, stderr) as text;
    the process is killed if it does not end (the test then fails on its status)."""
    try:
        _wait_read(p)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return out.decode(), err.decode()


@pytest.mark.parametrize("cmd,sig,status", [(["scan", "-"], signal.SIGINT, 130),
                                            (["scan", "--format", "json", "-"], signal.SIGTERM, 143),
                                            (["gate", "-"], signal.SIGINT, 130)])
def test_signal_on_a_live_pipe_prints_the_report_marked_interrupted(cmd, sig, status):
    p = _start(cmd)
    out, err = _signal_after_read(p, sig)
    assert p.returncode == status, (p.returncode, err)
    assert "Fatal Python error" not in err and "Traceback" not in err
    name = sig.name
    assert f"interrupted by {name}" in err
    if "json" in cmd:
        doc = json.loads(out)
        assert doc["inputs"][0]["error"].startswith(f"interrupted by {name}")
        assert doc["runs"] and doc["runs"][0]["selections"][0]["kernel"] == "Marlin"
    else:
        assert f"interrupted by {name}" in out  # the report says it is partial
        assert "Marlin" in out  # what was read before the signal is reported
    if cmd[0] == "gate":
        assert "INPUT_INCOMPLETE" in out and "Gate: FAIL" in out


def test_a_signal_before_the_first_byte_still_prints_the_text_report_marked_interrupted():
    # a slow pipe, `(sleep 3; cat log) | logscan scan -`, stopped before anything arrived: the
    # text report printed nothing at all (the input counted as one that could not be opened)
    p = subprocess.Popen([sys.executable, "-m", "logscan.cli", "scan", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = _signal_after_read(p, signal.SIGINT)
    assert p.returncode == 130, err
    assert "interrupted by SIGINT after line 0" in out
    assert "No engine log line" in out


def test_an_empty_input_is_named_empty(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    r = subprocess.run([sys.executable, "-m", "logscan.cli", "scan", str(empty)], capture_output=True, text=True)
    assert r.returncode == 0 and f"{empty}: empty input: 0 lines read" in r.stdout
