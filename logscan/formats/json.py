"""JSON report: the pydantic ``Report`` dumped as one document (schema: ``logscan schema``)."""
from __future__ import annotations

from ..models import Report


def render(report: Report) -> str:
    """One JSON document, indented, with ``None`` fields kept so the shape is stable."""
    return report.model_dump_json(indent=2) + "\n"
