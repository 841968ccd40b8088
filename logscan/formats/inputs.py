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


#: lines an input must hold before ``input_warnings`` judges it not text (a short paste with one
#: bad byte a line is still a log)
NOT_TEXT_MIN_LINES = 8


def input_warnings(st) -> list[str]:
    """What the reader had to repair in one input (``models.InputStats``), or why it stopped, one
    string each, in the order the text report's ``!`` line joins them; [] when clean, and for an
    input that could not be opened at all (its ``error`` and the one stderr line say why).

    The single source of these words: the text report's line (``formats.text.input_note``), the
    JSON's ``inputs[].warnings`` (filled by ``pipeline.scan_inputs``), Markdown and HTML all print these.
    """
    if unopened(st):
        return []
    repairs = [f"{n} {what}" for n, what in (
        (st.decode_errors, "line(s) of invalid UTF-8 (bytes replaced by U+FFFD)"),
        (st.truncated_lines, "over-long line(s) cut to the reader's limit"),
        (st.nul_bytes, "NUL byte(s) removed")) if n]
    parts = []
    if repairs:
        parts.append(f"read {st.lines} line(s) with repairs: " + ", ".join(repairs))
    if st.lines >= NOT_TEXT_MIN_LINES and st.decode_errors * 2 > st.lines:
        # random bytes cut at their 0x0a bytes: logscan reads them as lines and finds nothing, which
        # alone reads like a log with no kernel line (a new-user trial: urandom reported as a log)
        parts.append("most lines are not UTF-8 text: this input does not look like a log (a binary, "
                     "an image, or a compression other than gzip?)")
    if st.skipped_lines:
        parts.append(f"{st.skipped_lines} line(s) skipped: a value past a parser bound")
    if st.over_budget_lines:
        named = ", ".join(map(str, st.over_budget_at)) + (" ..." if st.over_budget_lines > len(st.over_budget_at) else "")
        parts.append(f"{st.over_budget_lines} line(s) over the per-line matching budget, not every rule tried "
                     f"(line {named})")
    if st.rejoined_lines:
        parts.append(f"{st.rejoined_lines} line(s) rejoined to the line before: a terminal hard-wrapped "
                     f"it at {st.wrap_width} columns")
    if st.warning:
        parts.append(st.warning)
    if st.error:
        err = st.error[len(st.source) + 2:] if st.error.startswith(st.source + ": ") else st.error
        parts.append(("input ended early: " if st.lines else "") + err)
    elif st.lines == 0:  # say so: "nothing recognised" alone would not tell an empty input apart
        parts.append("empty input: 0 lines read")
    return parts
