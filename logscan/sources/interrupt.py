"""SIGINT / SIGTERM while ``scan`` or ``gate`` reads: stop the read, keep what was read.

``vllm serve ... | logscan scan -`` is read until the writer closes the pipe; Ctrl-C (SIGINT)
or a ``kill`` (SIGTERM) must end it with the report of what was read, marked interrupted,
and the conventional status 128 + signal number (130 for SIGINT, 143 for SIGTERM).

Python runs signal handlers in the main thread, between bytecodes, and retries a system call
that a signal interrupted (PEP 475), so a flag alone would not wake a main thread blocked in
``read`` on a pipe or waiting for the read-ahead thread. The handler therefore records the
signal and raises ``Interrupted`` only while the main thread is inside a ``blocking()`` block
(a wait that holds no half-done work); elsewhere the reader polls ``requested()`` between
chunks. The read-ahead thread may stay blocked in ``read`` on stdin, holding its buffer's
lock: the CLI leaves with ``os._exit`` after flushing its output (``exit_now``), so the
interpreter's shutdown never waits on that lock ("Fatal Python error: _enter_buffered_busy").
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, Optional


class Interrupted(Exception):
    """Raised in the main thread when SIGINT or SIGTERM arrived during a blocking read."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


_state: dict = {"signum": None, "blocking": 0, "installed": False}


def _handler(signum, _frame) -> None:
    first = _state["signum"] is None
    _state["signum"] = _state["signum"] or signum
    if _state["blocking"] > 0 or not first:  # a second signal: stop whatever is going on
        raise Interrupted(_state["signum"])


def install() -> None:
    """Handle SIGINT and SIGTERM as described above (main thread only; idempotent)."""
    if threading.current_thread() is not threading.main_thread() or _state["installed"]:
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _handler)
    _state["installed"] = True


def requested() -> Optional[int]:
    """The signal number received, or None."""
    return _state["signum"]


def check() -> None:
    """Raise ``Interrupted`` when a signal was received (call between units of work)."""
    if _state["signum"] is not None:
        raise Interrupted(_state["signum"])


@contextmanager
def blocking() -> Iterator[None]:
    """Mark a wait of the main thread that a signal may break (other threads: no effect)."""
    if threading.current_thread() is not threading.main_thread() or not _state["installed"]:
        yield
        return
    check()
    _state["blocking"] += 1
    try:
        yield
    finally:
        _state["blocking"] -= 1


def status() -> Optional[int]:
    """The exit status for the received signal (128 + its number), or None."""
    s = _state["signum"]
    return None if s is None else 128 + s


#: the end of every ``note``: how an ``InputStats.error`` says the input was interrupted, not unreadable
NOTE_TAIL = ": the report covers only what was read"


def note(line: int) -> str:
    """The text that marks an input as interrupted (``InputStats.error``)."""
    name = signal.Signals(_state["signum"]).name if _state["signum"] else "a signal"
    return f"interrupted by {name} after line {line}{NOTE_TAIL}"


def exit_now(code: int) -> None:
    """Flush stdout and stderr and leave at once (no interpreter shutdown: see the module docstring)."""
    for fh in (sys.stdout, sys.stderr):
        try:
            fh.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def reset() -> None:
    """Forget a received signal and the handlers (tests)."""
    _state.update(signum=None, blocking=0)
