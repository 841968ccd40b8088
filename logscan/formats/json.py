"""JSON report: the pydantic ``Report`` dumped as one document (schema: ``logscan schema``).

With a gate result, the document is a ``GatedReport``: the same report plus a ``gate`` key.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..models import Report

if TYPE_CHECKING:
    from ..gate.evaluate import GateResult


def render(report: Report, gate: "Optional[GateResult]" = None) -> str:
    """One JSON document, indented, with ``None`` fields kept so the shape is stable."""
    if gate is None:
        return report.model_dump_json(indent=2) + "\n"
    from ..gate.evaluate import GatedReport

    return GatedReport(**dict(report), gate=gate).model_dump_json(indent=2) + "\n"
