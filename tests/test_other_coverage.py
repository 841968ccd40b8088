"""tools/other_coverage.py: TGI / LMDeploy / MLC-LLM templates rendered in each engine's own line
formats (docs/other-engine-coverage.md), from the bundled templates (no ../shared needed)."""
from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT

sys.path.append(str(ROOT / "tools"))
from _common import tool  # noqa: E402

oc = tool("other_coverage")


def test_the_bundled_templates_are_the_three_engines():
    rows = oc.load()
    assert len(rows) == 142 and {t["engine"] for t in rows} == set(oc.ENGINES)


@pytest.mark.parametrize("engine,fmt,line", [
    ("tgi", "compact", "2024-08-09T12:44:01.179450Z  INFO text_generation_launcher: Using exllama kernels v2"),
    ("lmdeploy", "python", "2024-11-21 17:46:01,971 - lmdeploy - INFO - gptq.py:41 - Using exllama kernels v2"),
    ("mlc-llm", "python", "[2025-02-08 12:57:01] INFO gptq.py:71: Using exllama kernels v2"),
])
def test_each_engine_renders_its_own_prefix(engine, fmt, line):
    t = {"template": "Using exllama kernels v{HAS_EXLLAMA}", "level": "info", "file": "x/gptq.py", "engine": engine}
    make, _ = oc.FORMATS[engine]
    assert make(t, oc.render(t["template"]), 1, fmt) == line


def test_tgi_json_mode_is_a_tracing_json_record():
    t = {"template": "Using cutlass w8a8 kernels", "level": "info", "file": "fp8.py"}
    import json
    rec = json.loads(oc.tgi_line(t, t["template"], 0, "json"))
    assert rec["fields"]["message"] == "Using cutlass w8a8 kernels" and rec["level"] == "INFO"


def test_placeholders_are_filled():
    assert oc.render("Using {loader} for target '{target}' %s") .count("{") == 0
    assert oc.render("Default `max_batch_prefill_tokens` to {value}").endswith("to 4096")
