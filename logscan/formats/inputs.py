"""The one stderr line for an input not read to its end (every subcommand, docs/fail-closed.md).

Kept apart from ``formats.text`` so that ``scan --format json`` need not import the text report.
"""
from __future__ import annotations

from typing import Optional


def input_error(st) -> Optional[str]:
    """``PATH: why`` for an input (``models.InputStats``) that could not be read to its end
    (None when it was): the one stderr line every subcommand prints for it (exit status 2)."""
    if not st.error:
        return None
    return st.error if st.error.startswith(st.source + ": ") else f"{st.source}: {st.error}"


def unopened(st) -> bool:
    """True for an input that could not be opened at all (missing, a directory, no permission);
    False for one interrupted before its first byte (a slow pipe and Ctrl-C: its report, empty
    and marked interrupted, is still printed, as ``scan --help`` promises)."""
    from ..sources.interrupt import NOTE_TAIL

    return bool(st.error) and st.lines == 0 and st.bytes == 0 and not st.error.endswith(NOTE_TAIL)
