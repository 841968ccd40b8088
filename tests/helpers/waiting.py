"""Waiting for a condition in tests that drive real processes (follow's end-to-end tests)."""
from __future__ import annotations

import time
from typing import Callable


def wait_until(cond: Callable[[], bool], timeout: float = 60.0, step: float = 0.05) -> bool:
    """Poll ``cond`` every ``step`` seconds until it is true (True) or ``timeout`` seconds passed
    (False); the assertions after a call say what is missing. Generous timeouts keep tests steady
    on a loaded 2-core machine: a condition met early returns at once."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True
