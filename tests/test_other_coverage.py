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


#: deep coverage reached on the bundled templates (docs/other-engine-coverage.md): a floor, so a
#: rule change that loses a sentence fails here; raise it when coverage grows
#: coverage36: taken with the real shapes (tools/other_shapes.py; LMDeploy read whole again by
#: lmdeploy.config.turbomind-body: the two-line ``turbomind engine config:\n\ndtype=..`` record)
DEEP_FLOOR = {"tgi": (54, 64), "lmdeploy": (43, 46), "mlc-llm": (23, 24)}  # (one log, isolated)


@pytest.mark.parametrize("engine", oc.ENGINES)
def test_deep_coverage_does_not_drop_below_its_floor(engine):
    one_log, isolated = DEEP_FLOOR[engine]
    shared = oc.coverage(engine, deep=True)
    alone = oc.coverage(engine, deep=True, isolated=True)
    assert shared["hit"] >= one_log, "\n".join(shared["misses"])
    assert alone["hit"] >= isolated, "\n".join(alone["misses"])
    # every format names the engine (a lone ValueError line may stay unknown, none names another)
    assert all(f["identified"] for f in shared["formats"].values()), shared["formats"]
    assert all(f["identified"] for f in alone["formats"].values())


def test_the_floor_measures_something():
    """The deep count is below the shallow one: --deep does filter (a bare topic match is not deep)."""
    deep, shallow = oc.coverage("mlc-llm", deep=True), oc.coverage("mlc-llm", deep=False)
    assert deep["hit"] < shallow["hit"] <= shallow["total"] == 30


def test_a_tgi_raise_arrives_inside_the_shard_traceback_record():
    """The real shape (tgi-101 compact, tgi-169 json): the raised message is the last line of an
    ``Error when initializing model`` record, not a line of its own."""
    t = {"template": "Please install EETQ", "level": "raise", "file": "server/text_generation_server/layers/eetq.py",
         "function": "EETQWeight.get_linear", "engine": "tgi"}
    make, fmts = oc.FORMATS["tgi"]
    text = make(t, "Please install EETQ", 0, "compact").splitlines()
    assert "Error when initializing model" in text[0] and text[-1] == "ImportError: Please install EETQ"
    assert "\\n" in make(t, "Please install EETQ", 0, "json") and {"ansi", "json"} <= set(fmts)
