"""Exit status of a closed standard output and of inputs that cannot be opened (task cli12).

A reader that closes stdout early (``logscan scan LOG | head -0``) is status 141 with nothing on
stderr (click turned EPIPE into a silent 1, the status of a ``--fail-on`` hit); an input that
cannot be opened is refused before any output (``scan --unexplained nosuch.log`` printed "no
kernel-relevant line left unexplained (0 run(s) read)" first).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES

LOG = FIXTURES / "vllm" / "vllm-005.log"


def _closed_stdout(*args):
    """Run ``logscan ARGS`` with a stdout pipe whose read end is already closed: every write is EPIPE."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "logscan.cli", *args], stdout=w, stderr=subprocess.PIPE,
                           text=True, timeout=300)
    finally:
        os.close(w)
    return p


@pytest.mark.parametrize("args", [("scan", str(LOG)), ("scan", "--format", "json", str(LOG)),
                                  ("scan", "--fail-on", "weight_only", str(LOG)), ("gate", str(LOG)),
                                  ("codes",)])
def test_closed_stdout_is_141_and_quiet(args):
    p = _closed_stdout(*args)
    assert p.returncode == 141, p.stderr
    assert p.stderr == ""


def test_unexplained_with_a_missing_input_prints_only_the_error():
    p = subprocess.run([sys.executable, "-m", "logscan.cli", "scan", "--unexplained", "nosuch.log"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr == "logscan: nosuch.log: No such file or directory\n"


@pytest.mark.parametrize("flag", [(), ("--unexplained",)])  # json / html print the report (test_misc37)
def test_a_bad_input_among_good_ones_is_refused_before_any_output(flag, tmp_path):
    p = subprocess.run([sys.executable, "-m", "logscan.cli", "scan", *flag, str(LOG), "nosuch.log", str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.splitlines() == ["logscan: nosuch.log: No such file or directory",
                                     f"logscan: {tmp_path}: is a directory"]


def test_unopenable_names_each_bad_input_and_passes_stdin_and_fifos(tmp_path):
    from logscan.commands.common import _unopenable

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it would block: looked up only
    locked = tmp_path / "locked.log"
    locked.write_text("x\n")
    locked.chmod(0)
    bad = _unopenable(["-", str(LOG), str(fifo), "", str(tmp_path / "gone.log"), str(locked)])
    assert bad[:2] == ["'': an empty path (an unset variable in the command line?)",
                       f"{tmp_path / 'gone.log'}: No such file or directory"]
    if os.geteuid() != 0:  # root opens a mode-0 file
        assert bad[2:] == [f"{locked}: Permission denied"]
