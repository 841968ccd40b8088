"""follow is truthful about --state-file (trial 2, item 3): it used to say "cannot write state file
... (positions are not saved)", keep running, then print "stopped, state saved" and exit 0.
Now a directory that cannot be written at start is exit 2 before anything is read, and a last
write that fails says "state NOT saved" with exit 1."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES, ROOT
from tests.helpers.waiting import wait_until

LOG = FIXTURES / "vllm" / "vllm-005.log"  # real


def test_a_state_file_in_a_missing_directory_refuses_to_start(tmp_path):
    state = tmp_path / "no" / "such" / "state.json"
    r = CliRunner().invoke(cli, ["follow", str(LOG), "--metrics-addr", "off", "--state-file", str(state)])
    assert r.exit_code == 2 and "--state-file" in r.output and str(tmp_path / "no" / "such") in r.output
    assert "Traceback" not in r.output and '"type"' not in r.output  # nothing was read


def test_a_state_file_under_a_regular_file_refuses_to_start(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    r = CliRunner().invoke(cli, ["follow", str(LOG), "--metrics-addr", "off",
                                 "--state-file", str(blocker / "state.json")])
    assert r.exit_code == 2 and "cannot write in" in r.output




def test_a_failed_last_write_says_state_not_saved_and_exits_1(tmp_path):
    lines = LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    log = tmp_path / "engine.log"
    log.write_text("".join(lines[:5]))
    sdir = tmp_path / "state"
    sdir.mkdir()
    state = sdir / "state.json"
    p = subprocess.Popen([sys.executable, "-m", "logscan.cli", "follow", str(log), "--metrics-addr", "off",
                          "--poll-interval", "0.05", "--state-file", str(state)],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_until(state.exists), "the first state was never written"
        shutil.rmtree(sdir)  # the directory goes away while follow runs
        with open(log, "a", encoding="utf-8") as fh:
            fh.write("".join(lines[5:]))
        size = os.path.getsize(log)
        assert size > 0
        time.sleep(1.5)  # the new lines are read (poll 0.05 s): the state to save has moved
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = err.decode()
    assert p.returncode == 1, text
    assert "state NOT saved" in text and "stopped, state saved" not in text
