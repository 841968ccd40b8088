"""The ``logscan`` console script: Ctrl-C at any moment of the start-up is a clean exit 130.

``logscan.cli`` imports click and the command modules (~0.1 s) before ``sources.interrupt``
installs the SIGINT / SIGTERM handlers that turn a signal into a partial report. Before that a
Ctrl-C (a cancelled CI step, an operator's early ^C) would print a ``KeyboardInterrupt``
traceback from an import, or reach click as ``Abort`` (``logscan: aborted``, exit 2, which the
exit-status table reserves for usage and input errors). This module imports nothing heavy: the
command line is loaded under a SIGINT handler of its own (and a ``KeyboardInterrupt`` guard), so every
early SIGINT ends with one line on stderr, no empty line before it, and status 130 (128 + SIGINT), as a
SIGINT during a read does. A SIGTERM that
arrives before the handlers are installed keeps its default action (the process ends by the
signal: status 143 to a shell), which prints nothing either.
"""
from __future__ import annotations

import importlib
import os
import signal
import sys

#: the status of a start-up interrupted by SIGINT (the shells' 128 + signal number)
EXIT_SIGINT = 128 + signal.SIGINT


def interrupted_early() -> None:
    """Say that SIGINT stopped logscan before it read any input, and leave with status 130.

    ``os._exit`` after flushing: the interpreter's shutdown is not run (a second Ctrl-C during it
    would print a traceback of its own)."""
    try:
        sys.stderr.write("logscan: interrupted by SIGINT before any input was read\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    os._exit(EXIT_SIGINT)


def _early_sigint(_signum, _frame) -> None:
    """SIGINT before a command installed its own handlers (``sources.interrupt.install``, follow's
    ``request_stop``): the one line and 130 at once. Raised as KeyboardInterrupt instead, it reached
    click's ``main``, which answers it with ``echo(file=sys.stderr)`` (a bare newline) before its
    ``Abort``: a trial saw that empty stderr line before this one (tests/test_interrupt_moments.py)."""
    interrupted_early()


def main() -> None:
    """Console-script entry point: ``logscan.cli.main`` under a SIGINT handler of its own until a
    command installs its handlers (``_early_sigint``), and a ``KeyboardInterrupt`` guard."""
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not ignored (nohup, &)
            signal.signal(signal.SIGINT, _early_sigint)
    except (ValueError, OSError):  # not the main thread (an embedding): the guard below stays
        pass
    try:
        cli = importlib.import_module("logscan.cli")
        cli.main()
    except KeyboardInterrupt:
        interrupted_early()


if __name__ == "__main__":
    main()
