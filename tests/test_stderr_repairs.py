"""Every repair or doubt about an input reaches stderr, whatever --format (trial 35: urandom's
'does not look like a log' and invalid UTF-8 reached stdout only, the over-long-line count both)."""
from __future__ import annotations

import random
import subprocess
import sys


def _scan(path, *args):
    return subprocess.run([sys.executable, "-m", "logscan.cli", "scan", str(path), *args],
                          capture_output=True, text=True, timeout=120)


def test_binary_junk_is_said_on_stderr_under_json(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(random.Random(7).randbytes(200_000))
    r = _scan(junk, "--format", "json")
    assert r.returncode == 0, r.stderr
    assert "does not look like a log" in r.stderr and "invalid UTF-8" in r.stderr
    assert r.stdout.lstrip().startswith("{")  # stdout stays one JSON document


def test_a_clean_log_says_nothing_on_stderr(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text("INFO 05-01 10:00:00 [loader.py:1] Loading weights took 1.00 seconds\n")
    r = _scan(log, "--format", "json")
    assert "repairs" not in r.stderr and "does not look like a log" not in r.stderr
