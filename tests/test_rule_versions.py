"""A rule's ``versions`` covers every release whose templates it recognises.

``versions`` feeds version inference (the releases that fit a log without a version line
are those every recognised rule allows), so a specifier narrower than the releases that
print the message would rule out the true release. For each reference template
(``shared/reference/vllm/templates.jsonl``, any level), rendered the way the shared
coverage tool renders it, the rule that takes it must allow every release in the
template's ``versions``. Skipped without ``../shared``.
"""
from __future__ import annotations

import importlib.util
import json

import pytest
from packaging.version import Version

from logscan.match import Matcher
from logscan.models import Record
from logscan.packs.loader import default_packs
from tests.conftest import SHARED

TOOL = SHARED / "tools" / "template_coverage.py"
TEMPLATES = SHARED / "reference" / "vllm" / "templates.jsonl"

pytestmark = pytest.mark.skipif(not (TOOL.is_file() and TEMPLATES.is_file()),
                                reason="shared/tools/template_coverage.py or the vLLM templates not found")


def _render():
    spec = importlib.util.spec_from_file_location("template_coverage", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.render


def test_rule_versions_cover_the_releases_of_their_templates():
    render = _render()
    packs = default_packs()
    rules = {cr.rule.id: cr for cr in packs.packs["vllm"].rules}
    problems = []
    for raw in TEMPLATES.read_text().splitlines():
        if not raw.strip():
            continue
        t = json.loads(raw)
        msg = render(t["template"])
        level = {"raise": "ERROR", "exception": "ERROR"}.get(t["level"], t["level"].upper())
        if t["level"] == "raise":
            msg = "ValueError: " + msg
        m = Matcher(packs, context="vllm")
        events = list(m.feed(Record(source="t", line=1, message=msg, level=level))) + list(m.flush())
        if not events or events[0].rule not in rules:
            continue
        cr = rules[events[0].rule]
        if cr.versions is None:
            continue
        outside = [v for v in t["versions"] if Version(v) not in cr.versions]
        if outside:
            problems.append(f"{cr.rule.id} ({cr.rule.versions}) takes {t['template'][:70]!r} printed by {outside}")
    assert not problems, "\n".join(problems)
