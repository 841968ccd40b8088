"""The pack's ``[[uncovered]]`` list stays honest: each entry is really left unrecognised.

An entry names a reference template that no rule should recognise, with the reason. If a
rule starts to match it, either the rule is too broad or the entry is obsolete: both must
be decided by a person, so the test fails. With ``../shared`` present the template must also
be one of the reference's (same text, same level), so a typo cannot hide a real template.
"""
from __future__ import annotations

import json

import pytest

from logscan.match import Matcher
from logscan.models import Record
from logscan.packs.loader import default_packs
from logscan.packs.model import PackFile, Uncovered
from tests.conftest import SHARED

_PACKS = default_packs()
_ENTRIES = [(name, u) for name, p in sorted(_PACKS.packs.items()) for u in p.meta.uncovered]


def _events(pack_engine: str, line: str):
    m = Matcher(_PACKS, context=pack_engine)
    rec = Record(source="t", line=1, message=line, level="ERROR")
    # an uncaught-traceback event (rules/99-uncaught.toml) reads no engine fact from the
    # template: it only says an exception was raised, whatever its message
    return [e for e in list(m.feed(rec)) + list(m.flush()) if e.kind != "uncaught"]


def test_vllm_pack_lists_its_uncovered_templates():
    assert any(name == "vllm" for name, _ in _ENTRIES)


@pytest.mark.parametrize(("engine", "entry"), _ENTRIES, ids=[u.template[:40] for _, u in _ENTRIES])
def test_uncovered_example_is_not_recognised(engine, entry):
    got = _events(engine, entry.example)
    assert not got, f"rule {got[0].rule} recognises the 'uncovered' template {entry.template!r}: drop the entry or narrow the rule"


@pytest.mark.skipif(not (SHARED / "reference").is_dir(), reason="shared/reference not found")
@pytest.mark.parametrize(("engine", "entry"), _ENTRIES, ids=[u.template[:40] for _, u in _ENTRIES])
def test_uncovered_template_is_in_the_reference(engine, entry):
    path = SHARED / "reference" / engine / "templates.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert any(r["template"] == entry.template and r["level"] == entry.level for r in rows), entry.template


def test_model_refuses_an_example_that_does_not_render_its_template():
    with pytest.raises(ValueError, match="not a rendering"):
        Uncovered(template="Using %s for %s MoE", level="info", reason="x" * 20,
                  example="Selected MarlinLinearKernel for CompressedTensorsWNA16")


def test_model_refuses_an_entry_without_a_reason():
    with pytest.raises(ValueError):
        PackFile.model_validate({"pack": {"engine": "x"}, "uncovered": [
            {"template": "a %s", "level": "info", "reason": "", "example": "a b"}]})
