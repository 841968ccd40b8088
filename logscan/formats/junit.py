"""JUnit XML: one test case per kernel selection, per finding and per baseline comparison.

The shape GitHub (test-reporter actions), GitLab (``artifacts:reports:junit``) and Jenkins
(JUnit plugin) read: ``<testsuites>`` > one ``<testsuite>`` per input > ``<testcase>``, with a
``<failure>`` for each check the gate fails. A warning or an allowed check passes, its note in
``<system-out>``. ``time`` is always 0 (no wall clock: the output is deterministic). Built with ``xml.etree.ElementTree`` (escaping by the library), log text
cleaned of the characters XML 1.0 cannot hold.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Optional

from ..models import Report
from ._ci import one_line, reasons_text, xml_safe

if TYPE_CHECKING:
    from ..packs.loader import PackSet
    from ..gate.evaluate import GateResult


def render(report: Report, gate: "Optional[GateResult]" = None, packs: "Optional[PackSet]" = None) -> str:
    """JUnit XML for ``gate`` (a gate result is needed: without one every input is one empty suite).
    ``packs`` is unused (every format's ``render`` takes the same arguments)."""
    from ..gate.evaluate import Verdict

    checks = gate.checks if gate is not None else []
    sources = [s.source for s in report.inputs] or ["-"]
    for c in checks:
        if c.source not in sources:
            sources.append(c.source)
    root = ET.Element("testsuites", name="logscan gate")
    total = fails = 0
    for src in sources:
        mine = [c for c in checks if c.source == src]
        suite = ET.SubElement(root, "testsuite", name=xml_safe(f"logscan {src}"), tests=str(len(mine)),
                              failures=str(sum(c.verdict == Verdict.fail for c in mine)), errors="0", skipped="0",
                              time="0")
        err = next((s.error for s in report.inputs if s.source == src and s.error), None)
        if err:
            ET.SubElement(suite, "system-err").text = xml_safe(err)
        for c in mine:
            classname = f"logscan.run{c.run}" if c.run else "logscan.input"
            if c.kind == "baseline":
                classname = "logscan.baseline"
            case = ET.SubElement(suite, "testcase", name=xml_safe(one_line(f"{c.kind} {c.name}", 200)),
                                 classname=classname, file=xml_safe(src), time="0")
            if c.line:
                case.set("line", str(c.line))
            detail = [c.message, f"decided by: {c.decided_by}"]
            if c.evidence:
                detail.append(f"evidence (line {c.line}): {c.evidence}")
            if c.reasons:
                detail.append(reasons_text(c.reasons, lines=True))
            body = xml_safe("\n".join(detail))
            if c.verdict == Verdict.fail:
                fails += 1
                fail = ET.SubElement(case, "failure", message=xml_safe(one_line(" ".join(
                    x for x in (c.message, reasons_text(c.reasons)) if x), 2000)), type=c.code or "")
                fail.text = body
            elif c.verdict == Verdict.warn or c.allowance is not None:
                ET.SubElement(case, "system-out").text = body
        total += len(mine)
    root.set("tests", str(total))
    root.set("failures", str(fails))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
