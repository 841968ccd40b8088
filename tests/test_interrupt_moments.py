"""Ctrl-C at several moments of ``logscan scan -`` (a real process, a real SIGINT; not timed: the process
says it reached a moment by creating a file, the test polls for it, then signals). A trial saw an empty
stderr line before 'logscan: interrupted by SIGINT before any input was read': click's ``main`` answers a
KeyboardInterrupt with ``echo(file=sys.stderr)`` (a bare newline) before its ``Abort``, which
``logscan/cli.py`` turned into the one line. ``logscan/entry.py`` now handles SIGINT itself until a command
installs its own handlers, so no KeyboardInterrupt reaches click. Every moment prints its words once, and
no empty line, on a pipe and on a terminal (a pty)."""
from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.helpers.waiting import wait_until

LOG = (FIXTURES / "vllm" / "vllm-005.log").read_bytes()  # real
EARLY = "logscan: interrupted by SIGINT before any input was read"

#: runs ``logscan scan -`` through the console script's guard (``logscan.entry.main``), holding at a
#: moment (argv[2]) after creating the file argv[1] (the hold is a sleep the signal breaks); for
#: ``read``, once the reader took in argv[3] bytes (the whole log) and waits for more
_WRAPPER = r"""
import importlib, os, sys, time
ready, moment, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.argv = ["logscan", "scan", "-"]

def here():
    open(ready, "w").close()

def hold():
    here()
    while True:
        time.sleep(0.05)

import logscan.entry as entry
if moment == "import":  # the command line not yet imported
    real_import = importlib.import_module
    class _Slow:
        @staticmethod
        def import_module(name, *a):
            hold()
    entry.importlib = _Slow
elif moment == "command":  # click parsed the command line; the command loads its packs, no handler yet
    import logscan.commands.scan as scan_cmd
    real_packs = scan_cmd.packs_for
    def packs_for(*a, **k):
        hold()
    scan_cmd.packs_for = packs_for
elif moment == "read":  # the whole log was read; the reader waits on the pipe kept open for more
    from logscan.sources.reader import LineReader
    got = [0]
    real_read = LineReader._read
    def _read(self):
        if got[0] >= want - 64:  # the input's opening may take its first bytes (a gzip sniff)
            here()
        b = real_read(self)
        got[0] += len(b)
        return b
    LineReader._read = _read
entry.main()
"""


def _run(tmp_path, moment: str, terminal: bool) -> tuple[int, str, str]:
    """Start the wrapper at ``moment``, SIGINT it once it is there; ``(status, stdout, stderr)``.
    ``terminal``: stderr is a pty (a user's terminal), else a pipe."""
    ready = tmp_path / f"{moment}.ready"
    master = slave = None
    if terminal:
        master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-c", _WRAPPER, str(ready), moment, str(len(LOG))], cwd=ROOT,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=slave if terminal else subprocess.PIPE)
    if slave is not None:
        os.close(slave)
    try:
        p.stdin.write(LOG)
        p.stdin.flush()  # the writer keeps the pipe open, as a running engine does
        assert wait_until(ready.exists, timeout=60), f"never reached {moment}"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        if terminal:
            chunks = []
            while True:
                try:
                    b = os.read(master, 65536)
                except OSError:  # EIO: the child closed its end
                    break
                if not b:
                    break
                chunks.append(b)
            err = b"".join(chunks).replace(b"\r\n", b"\n")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if master is not None:
            os.close(master)
    return p.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "pty"])
@pytest.mark.parametrize("moment", ["import", "command"])
def test_sigint_before_the_read_is_one_line_and_130(tmp_path, moment, terminal):
    status, out, err = _run(tmp_path, moment, terminal)
    assert status == 130, err
    assert err.split("\n") == [EARLY, ""], repr(err)  # the one line, no empty line before it
    assert out == ""


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "pty"])
def test_sigint_during_the_read_is_the_report_and_one_line(tmp_path, terminal):
    status, out, err = _run(tmp_path, "read", terminal)
    assert status == 130, err
    lines = err.split("\n")
    assert lines[-1] == "" and "" not in lines[:-1], repr(err)
    assert [x for x in lines if "interrupted by SIGINT" in x] == [lines[0]] and len(lines) == 2, repr(err)
    assert "interrupted by SIGINT after line" in out and "Marlin" in out
