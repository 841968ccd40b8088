"""The report classes are plain dataclasses (logscan.plain); pydantic is used only where validation
or the schema is the point (logscan.validate). Checked here on real logs: the JSON the ``json``
module writes is byte-identical to what pydantic's serializer writes for the same report, it
validates against ``logscan schema``, and it reads back into an equal report.
"""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from logscan.models import CostClass, Event, Finding, Report, Run, Selection, StartFailure
from logscan.pipeline import scan_inputs
from logscan.validate import validator

FIX = Path(__file__).resolve().parent.parent / "fixtures"
#: a failure while serving (serving_failure kept), a ladder with other releases' rungs
#: (``elsewhere``), an SGLang server_args dump, non-ASCII text, a failed start, and one log per
#: other engine
LOGS = ["sglang/sglang-111.log", "sglang/sglang-004.log", "sglang/sglang-110.log", "sglang/sglang-001.log",
        "vllm/vllm-001.log", "vllm/vllm-022.log", "trtllm/trtllm-001.log", "llamacpp/llamacpp-001.log",
        "tgi/tgi-101.log", "lmdeploy/lmdeploy-101.log", "mlc-llm/mlc-llm-101.log"]


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return {rel: scan_inputs([str(FIX / rel)]) for rel in LOGS}


@pytest.fixture(scope="module")
def schema() -> dict:
    return Report.model_json_schema()


@pytest.mark.parametrize("rel", LOGS)
def test_json_equals_pydantic_serializer(reports, rel):
    report = reports[rel]
    ours = report.model_dump_json(indent=2)
    theirs = validator(Report).model_validate(json.loads(ours)).model_dump_json(indent=2)
    assert ours == theirs
    assert report.model_dump_json() == validator(Report).model_validate_json(ours).model_dump_json()


@pytest.mark.parametrize("rel", LOGS)
def test_json_validates_against_schema_and_round_trips(reports, schema, rel):
    report = reports[rel]
    doc = json.loads(report.model_dump_json(indent=2))
    jsonschema.validate(doc, schema)
    again = Report.model_validate_json(report.model_dump_json())
    assert type(again) is Report and type(again.runs[0]) is Run
    assert again == report
    assert again.model_dump_json(indent=2) == report.model_dump_json(indent=2)


def test_the_sample_covers_what_the_dump_special_cases(reports):
    docs = [json.loads(r.model_dump_json()) for r in reports.values()]
    runs = [run for d in docs for run in d["runs"]]
    assert any("serving_failure" in run for run in runs)  # kept when set
    assert any("serving_failure" not in run for run in runs)  # left out when None
    assert any(s["ladder"] and s["ladder"]["elsewhere"] for run in runs for s in run["selections"])
    assert any(run["config"]["server_args"] for run in runs)
    assert any(any(ord(c) > 127 for c in json.dumps(d, ensure_ascii=False)) for d in docs)


def test_construction_copies_containers_and_converts_enums():
    reasons = ["a"]
    f = Finding(code="X", severity="error", title="t", line=1, evidence="e", reasons=reasons, cost_class="emulated")
    reasons.append("b")
    assert f.reasons == ["a"]  # the model never shares the caller's list (as pydantic)
    assert f.severity is f.severity.error and f.cost_class is CostClass.emulated
    with pytest.raises(ValueError):
        Selection(family="f", kernel="k", cost_class="fast", line=1, evidence="e", rule="r")


def test_event_equality_and_dump_leave_out_pid_and_timestamp():
    a = Event(line=1, rule="r", kind="k", source="s", message="m", pid=7, timestamp="03-17 15:05:45")
    b = Event(line=1, rule="r", kind="k", source="s", message="m")
    assert a == b and "pid" not in a.model_dump() and "timestamp" not in json.loads(a.model_dump_json())
    assert a != Event(line=2, rule="r", kind="k", source="s", message="m")
    restored = Event.model_validate({**a.model_dump(mode="json"), "pid": 7, "timestamp": a.timestamp})
    assert restored.pid == 7 and restored.timestamp == a.timestamp


def test_model_copy_is_shallow_and_updates():
    sf = StartFailure(line=3, evidence="EngineCore failed to start.", rule="vllm.start.failed")
    c = sf.model_copy(update={"cause_line": 2})
    assert (c.cause_line, sf.cause_line, c.line) == (2, None, 3)


def test_model_validate_refuses_a_bad_report():
    with pytest.raises(ValidationError):
        Report.model_validate({"logscan_version": "x", "runs": [{"index": "not a number"}]})
