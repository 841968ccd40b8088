"""A well-formed report is read back without pydantic (``logscan.plaincheck.exact``), into the very
object pydantic's validation gives; anything else is left to pydantic, whose errors are unchanged.

Checked on the JSON reports of real logs (every sixth bundled fixture and the logs of
tests/test_plain_models.py), and on gate JSON reports (the report plus a ``gate`` key, which a
``--baseline`` may be).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from logscan.gate.baseline import SideError, _report_from_json
from logscan.models import Event, Report
from logscan.pipeline import scan_inputs
from logscan.plaincheck import exact
from logscan.validate import to_plain, validator

FIX = Path(__file__).resolve().parent.parent / "fixtures"
LOGS = sorted(str(p.relative_to(FIX)) for p in FIX.glob("*/*.log"))[::6] + [
    "sglang/sglang-111.log", "sglang/sglang-110.log", "vllm/vllm-022.log", "tgi/tgi-101.log"]


def _by_pydantic(doc: dict) -> Report:
    return to_plain(validator(Report).model_validate(doc), Report)


@pytest.mark.parametrize("rel", LOGS)
def test_a_saved_report_reads_back_as_pydantic_reads_it(rel):
    doc = json.loads(scan_inputs([str(FIX / rel)]).model_dump_json())
    fast = exact(Report, doc)
    assert fast is not None, rel  # a report logscan wrote is well-formed: no pydantic needed
    slow = _by_pydantic(doc)
    assert fast == slow
    assert fast.model_dump_json(indent=2) == slow.model_dump_json(indent=2)
    assert Report.model_validate(doc) == slow


def test_a_gate_report_is_a_report_with_its_gate_key_ignored():
    from datetime import date

    from logscan.gate import default_policy_path
    from logscan.gate.evaluate import evaluate
    from logscan.gate.policy import load_policy
    from logscan.formats.json import render
    from logscan.packs.loader import default_packs

    packs = default_packs()
    report = scan_inputs([str(FIX / "vllm" / "vllm-005.log")], packs)
    policy = load_policy(None, set(packs.findings.code), default_policy_path())
    doc = json.loads(render(report, evaluate(report, policy, packs.findings, date(2026, 12, 1))))
    assert "gate" in doc
    assert exact(Report, doc) == _by_pydantic(doc) == report


def _doc() -> dict:
    return json.loads(scan_inputs([str(FIX / "vllm" / "vllm-005.log")]).model_dump_json())


@pytest.mark.parametrize("damage", [
    lambda d: d["runs"][0].__setitem__("index", "0"),  # pydantic converts "0": it decides, not exact
    lambda d: d["runs"][0].__setitem__("index", True),  # a bool is not an int here
    lambda d: d["runs"][0]["selections"][0].__setitem__("cost_class", "fastest"),  # no such enum value
    lambda d: d["runs"][0]["selections"][0].pop("kernel"),  # a required field missing
    lambda d: d.__setitem__("runs", {"0": {}}),  # a dict for a list
    lambda d: d["runs"][0].__setitem__("selections", [None]),
])
def test_anything_not_exactly_well_formed_is_left_to_pydantic(damage):
    doc = _doc()
    damage(doc)
    assert exact(Report, doc) is None
    try:
        want = _by_pydantic(doc)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as got:
            Report.model_validate(doc)
        assert got.value.errors() == exc.errors()
    else:
        assert Report.model_validate(doc) == want  # what pydantic converts, it still converts


def test_a_damaged_baseline_still_gets_pydantics_message():
    doc = _doc()
    doc["runs"][0]["selections"][0].pop("kernel")
    with pytest.raises(SideError, match=r"not a valid logscan JSON report: runs\.0\.selections\.0\.kernel: Field required"):
        _report_from_json("good.json", json.dumps(doc).encode())


def test_an_event_checkpoint_reads_back_without_pydantic():
    ev = scan_inputs([str(FIX / "vllm" / "vllm-005.log")]).events[0]
    doc = json.loads(ev.model_dump_json())
    assert exact(Event, doc) == to_plain(validator(Event).model_validate(doc), Event) == ev
