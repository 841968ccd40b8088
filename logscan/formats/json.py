"""JSON report: the ``Report`` dumped as one document by the ``json`` module (schema: ``logscan
schema``); no pydantic import on this path (start-up, issue 18).

With a gate result, the document is a ``GatedReport`` (``logscan schema --gate``): the same report
plus a ``gate`` key, the pydantic ``GateResult``'s JSON dump.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..models import Report

if TYPE_CHECKING:
    from ..packs.loader import PackSet
    from ..gate.evaluate import GateResult


def render(report: Report, gate: "Optional[GateResult]" = None, packs: "Optional[PackSet]" = None) -> str:
    """One JSON document, indented, with ``None`` fields kept so the shape is stable.
    ``packs`` is unused (every format's ``render`` takes the same arguments)."""
    if gate is None:
        return report.model_dump_json(indent=2) + "\n"
    import json

    doc = report.model_dump(mode="json")
    doc["gate"] = gate.model_dump(mode="json")
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
