"""Ctrl-C before logscan has read anything: one line on stderr and status 130, never a traceback
or the usage status 2 (``logscan/entry.py``; a new-user trial got both by sending SIGINT in the
first ~0.1 s, while click and the command modules were still being imported)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import logscan.entry as entry

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "fixtures" / "vllm" / "vllm-005.log"


class _Exit(Exception):
    def __init__(self, code):
        self.code = code


@pytest.fixture
def no_exit(monkeypatch):
    def fake_exit(code):
        raise _Exit(code)
    monkeypatch.setattr(entry.os, "_exit", fake_exit)


def test_sigint_while_the_command_line_is_imported_is_status_130(monkeypatch, capsys, no_exit):
    def interrupted(name):
        raise KeyboardInterrupt
    monkeypatch.setattr(entry.importlib, "import_module", interrupted)
    with pytest.raises(_Exit) as got:
        entry.main()
    assert got.value.code == 130
    err = capsys.readouterr().err
    assert "interrupted by SIGINT before any input was read" in err and "Traceback" not in err


def test_sigint_that_click_turns_into_abort_is_status_130_not_usage(monkeypatch, capsys, no_exit):
    import logscan.cli as cli
    import logscan.commands.scan as scan_cmd

    def interrupted(*a, **k):
        raise KeyboardInterrupt  # where the command loads its packs, before the handlers exist
    monkeypatch.setattr(scan_cmd, "packs_for", interrupted)
    with pytest.raises(_Exit) as got:
        cli.cli.main(["scan", str(LOG)])
    assert got.value.code == 130
    assert "aborted" not in capsys.readouterr().err


def test_an_abort_that_is_no_interrupt_stays_a_usage_error(monkeypatch, capsys):
    import click

    import logscan.cli as cli
    import logscan.commands.scan as scan_cmd

    def aborted(*a, **k):
        raise click.exceptions.Abort()
    monkeypatch.setattr(scan_cmd, "packs_for", aborted)
    with pytest.raises(SystemExit) as got:
        cli.cli.main(["scan", str(LOG)])
    assert got.value.code == 2
    assert "logscan: aborted" in capsys.readouterr().err


def test_the_console_script_and_python_m_go_through_the_guard():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'logscan = "logscan.entry:main"' in text
    assert "from logscan.entry import main" in (ROOT / "logscan" / "__main__.py").read_text()
    out = subprocess.run([sys.executable, "-m", "logscan", "--version"], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 0 and "logscan" in out.stdout
