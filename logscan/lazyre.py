"""``compile``: a module-level ``regex`` pattern compiled on first use (start-up, issue 18).

``regex`` compiles in Python, 0.1-0.6 ms a pattern; a module that keeps patterns for lines a
given log may never hold (a traceback's exception line, a ``server_args`` dump, an attention
candidate list) paid that at every start. ``compile(pattern, flags)`` returns a stand-in that
compiles on the first attribute asked of it (``search``, ``match``, ``sub``, ``findall``,
``finditer``, ``pattern``, ...) and keeps what it returned as its own attribute, so later calls
cost what calls on the compiled pattern cost. It is not a ``regex.Pattern``: give it only to
code that calls its methods (not ``isinstance`` checks, not ``regex.sub(PATTERN, ...)``). Two
threads asking at once may both compile: the same pattern, either is kept.
"""
from __future__ import annotations

from typing import Any

from . import rxcache


class LazyRegex:
    """``regex.compile(pattern, flags)`` made on first use; see the module docstring."""

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # called only for what the instance does not hold yet
        if name.startswith("__"):
            raise AttributeError(name)
        rx = self.__dict__.get("_rx")
        if rx is None:
            rx = self.__dict__["_rx"] = rxcache.compile(*self._args)
        value = getattr(rx, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"LazyRegex({self._args[0]!r}, {self._args[1]!r})"


def compile(pattern: str, flags: int = 0) -> LazyRegex:  # noqa: A001 - regex.compile's name, on purpose
    """A ``LazyRegex`` of ``pattern`` (``regex`` syntax and flags)."""
    return LazyRegex(pattern, flags)
