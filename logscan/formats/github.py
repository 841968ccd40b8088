"""GitHub Actions workflow commands: ``::error file=..,line=..,title=..::message`` per check.

A log line is untrusted text. Every value is escaped as the runner's command parser requires
(actions/toolkit ``command.ts``: data ``%``->``%25``, ``\\r``->``%0D``, ``\\n``->``%0A``;
properties also ``:``->``%3A``, ``,``->``%2C``), so a hostile line cannot end the command
early, start a new one (``\\n::set-output``), or smuggle ``%0A`` that the runner would decode
into a line break. Every output line is a workflow command: no line of log text is printed raw.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..models import Report
from ._ci import one_line, reasons_text

if TYPE_CHECKING:
    from ..packs.loader import PackSet
    from ..gate.evaluate import Check, GateResult


def escape_data(value: str) -> str:
    """Escape a command's message (``%`` first, so an escape already in the text stays literal)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value (``file``, ``title``): data escapes plus ``:`` and ``,``."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: object) -> str:
    """One workflow command line, e.g. ``command('error', 'msg', file='a.log', line=3)``."""
    ps = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{name}{' ' + ps if ps else ''}::{escape_data(message)}"


def title(check: "Check") -> str:
    """``logscan CODE: name``, the code said once (a finding's name starts with its code, a baseline
    check's ends with it: ``KERNEL_NOT_FOUND line 2`` gives ``logscan KERNEL_NOT_FOUND: line 2``)."""
    code = check.code or check.kind
    rest = check.name
    if rest.startswith(code):
        rest = rest[len(code):].lstrip(" :")
    elif rest.endswith(" " + code):
        rest = rest[: -len(code) - 1]
    return f"logscan {code}: {rest}" if rest else f"logscan {code}"


def render(report: Report, gate: "Optional[GateResult]" = None, packs: "Optional[PackSet]" = None) -> str:
    """Annotations for failing (``error``), warning (``warning``) and allow-listed (``notice``) checks,
    then one ``notice`` (or ``error``) line with the gate's verdict.
    ``packs`` is unused (every format's ``render`` takes the same arguments)."""
    from ..gate.evaluate import VERDICT_ORDER, Verdict

    out = []
    for st in report.inputs:
        if st.error:
            out.append(command("error", f"logscan: {st.error}", title="logscan: unreadable input"))
    checks = gate.checks if gate else []
    for c in sorted(checks, key=lambda c: VERDICT_ORDER[c.verdict]):
        if c.verdict == Verdict.passed and c.allowance is None:
            continue
        name = {Verdict.fail: "error", Verdict.warn: "warning"}.get(c.verdict, "notice")
        msg = (c.message + (f"\nevidence: {c.evidence}" if c.evidence else "")
               + (f"\n{reasons_text(c.reasons, lines=True)}" if c.reasons else "")
               + f"\ndecided by: {c.decided_by}")
        out.append(command(name, msg, file=c.source, line=c.line,
                           title=one_line(title(c), 200)))
    if gate is not None:
        summary = (f"logscan gate: {gate.verdict.value.upper()} ("
                   + ", ".join(f"{n} {v}" for v, n in gate.counts.items()) + f"; policy {gate.policy})")
        out.append(command("error" if gate.verdict == Verdict.fail else "notice", summary, title="logscan gate"))
    return "".join(line + "\n" for line in out)
