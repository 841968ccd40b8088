"""KERNEL_LINE_UNREAD: a run with a kernel sentence no rule reads (the vocabulary sweep).

A line that names a quantized kernel or kernel backend in a choice's words, that no rule read,
is in its run's ``unexplained`` list with kind ``unread`` (``patterns/common-rules/
95-unread-kernel.toml``, ``analysis/trust.unread_lines``). The gate does not let it pass in
silence (docs/ci-gate.md, docs/fail-closed.md "Unread kernel sentences"):

- a run with kernel selections gets one ``KERNEL_LINE_UNREAD`` check naming the first such line
  and how many there are (the default policy warns: the kernels it names may not be all it chose);
- a run with none is already ``NO_KERNEL_SEEN`` (the default policy fails it): its message names
  the line instead, so it does not read as "a log without kernels" (one problem, one check).
"""
from __future__ import annotations

from datetime import date
from typing import Optional

from ..models import Run, Unexplained
from .judge import _judge
from .policy import Policy, Subject
from .releases import Release
from .result import Check, Verdict

KERNEL_LINE_UNREAD = "KERNEL_LINE_UNREAD"  #: a run's kernel sentence that no rule reads


def unread_of(run: Run) -> list[Unexplained]:
    """The run's "not understood" entries that are kernel sentences no rule reads (kind ``unread``)."""
    return [u for u in run.unexplained if u.kind == "unread"]


def _said(unread: list[Unexplained]) -> str:
    u = unread[0]
    more = f" (and {len(unread) - 1} more such line(s))" if len(unread) > 1 else ""
    return f"line {u.line} {u.why}{more}"


def no_kernel_note(run: Run) -> str:
    """What ``NO_KERNEL_SEEN`` of ``run`` adds when a line of it names a kernel no rule reads
    (``""`` when none does): the run's kernel may be in a sentence logscan did not understand."""
    unread = unread_of(run)
    if not unread:
        return ""
    return (f"; but {_said(unread)}: a kernel line logscan did not understand (a reworded or folded "
            "line?), not a log without kernels")


def unread_check(run: Run, n: int, rel: Release, policy: Policy, cmap: dict[str, str],
                 today: date) -> Optional[Check]:
    """The ``KERNEL_LINE_UNREAD`` check of a run (``n``: its 1-based number) that chose kernels and
    has kernel sentences no rule reads; None when it has none or chose no kernel (then its
    ``NO_KERNEL_SEEN`` names them, ``no_kernel_note``). Judged by the policy (``judge._judge``)."""
    unread = unread_of(run)
    if not unread or not run.selections:
        return None
    eng = run.engine.name
    c = Check(kind="unread", code=KERNEL_LINE_UNREAD, name=f"{KERNEL_LINE_UNREAD} run {n}",
              message=(f"run {n}: {_said(unread)}: the kernels it names may not be all it chose"),
              verdict=Verdict.passed, decided_by="", source=run.source, line=unread[0].line, run=n,
              engine=eng, evidence=unread[0].message[:300], reasons=[u.message[:300] for u in unread[1:8]])
    return _judge(c, Subject(eng, rel.exact, None, None, code=KERNEL_LINE_UNREAD), policy, cmap, today, rel)
