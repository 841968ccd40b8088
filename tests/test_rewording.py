"""The vLLM rules survive plausible rewordings of the messages (unseen releases reword).

``tools/rewording_coverage.py`` renders every reference template, applies one rewording to
all of them ('falling back' -> 'fell back', 'is not supported' -> 'is unsupported',
'Using' -> 'Selected', a '[rank0] ' tag before the message, a lower-case first letter, ...)
and counts the lines the real prefix parser and matcher still recognise. Each rewording
must keep at least 90% of the logged templates and of the raised errors. Skipped without
``../shared``.
"""
from __future__ import annotations

import pytest

from tests.conftest import SHARED, load_tool

TOOL = SHARED / "tools" / "template_coverage.py"
TEMPLATES = SHARED / "reference" / "vllm" / "templates.jsonl"

pytestmark = pytest.mark.skipif(not (TOOL.is_file() and TEMPLATES.is_file()),
                                reason="shared/tools/template_coverage.py or the vLLM templates not found")


def _measure(levels):
    return load_tool("rewording_coverage").measure(TEMPLATES, TOOL, levels)


@pytest.mark.parametrize("levels", [("info", "warning", "error"), ("raise",)], ids=["logged", "raised"])
def test_every_rewording_keeps_ninety_percent(levels):
    res = _measure(levels)
    assert res["as-printed"][0] >= 0.97 * res["as-printed"][1]
    low = {name: f"{hit}/{total}" for name, (hit, total, _) in res.items() if hit < 0.90 * total}
    assert not low, f"rewordings below 90%: {low}"
