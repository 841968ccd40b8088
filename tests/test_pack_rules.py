"""Every pack rule's examples are recognised by that very rule through the real matcher,
and its counter-examples by none of its own regexes; every prefix format parses its examples."""
from __future__ import annotations

import pytest

from logscan.match import Matcher
from logscan.models import Record
from logscan.packs.loader import default_packs
from logscan.sources.prefix import PrefixParser

_PACKS = default_packs()
_RULES = [cr for p in _PACKS.packs.values() for cr in p.rules]
_ENGINE = {cr.rule.id: p.engine for p in _PACKS.packs.values() for cr in p.rules}
_COMMON = "common-rules"


def _ids(crs):
    return [cr.rule.id for cr in crs]


@pytest.mark.parametrize("cr", _RULES, ids=_ids(_RULES))
def test_examples_match_their_rule(cr):
    for example in cr.rule.examples:
        m = Matcher(_PACKS, context=_ENGINE[cr.rule.id])  # a line of that engine's log
        if cr.rule.prefixed_only:  # examples of prefixed_only rules are whole lines, prefix included
            rec = PrefixParser(_PACKS).parse("t", 1, example)
            assert rec.prefix_format is not None, f"{cr.rule.id}: example {example!r} has no prefix"
        elif cr.rule.quoted_only:  # code a traceback quotes: under a frame header, indented deeper
            alone = Matcher(_PACKS, context=_ENGINE[cr.rule.id])
            read = list(alone.feed(Record(source="t", line=1, message=example))) + list(alone.flush())
            assert cr.rule.id not in {e.rule for e in read}, f"{cr.rule.id}: read {example!r} as a log statement"
            list(m.feed(Record(source="t", line=1, message='  File "/x/vllm/_custom_ops.py", line 1, in f')))
            rec = Record(source="t", line=2, message=example)
        else:
            rec = Record(source="t", line=1, message=example)
        events = list(m.feed(rec)) + list(m.flush())
        if cr.rule.quoted_only:
            events = [e for e in events if e.line == 2]
        if cr.rule.kind != "identity":  # identity rules never take a line: the reading rule follows
            events = [e for e in events if e.kind != "identity"]
        else:  # ... and a sparse ready rule (a state: SGLang's batch statistics) may read it before them
            events = [e for e in events if e.kind == "identity"]
        assert events, f"{cr.rule.id}: no rule recognised example {example!r}"
        if _COMMON in cr.path and events[0].kind == cr.rule.kind and events[0].rule != cr.rule.id:
            # a shared host rule (patterns/common-rules/) comes after the pack's own: the pack's rule
            # of the same kind reading the line first is the design (LMDeploy / MLC-LLM read IPython
            # headers themselves), but it must be that pack's own rule, not another meaning
            assert events[0].rule.split(".")[1:2] == cr.rule.id.split(".")[1:2], (cr.rule.id, events[0].rule)
            continue
        assert events[0].rule == cr.rule.id, (
            f"{cr.rule.id}: example {example!r} was taken by {events[0].rule} (rule order shadows it)")


@pytest.mark.parametrize("cr", _RULES, ids=_ids(_RULES))
def test_counter_examples_do_not_match(cr):
    for example in cr.rule.counter_examples:
        assert cr.regex.search(example) is None, f"{cr.rule.id} matched counter-example {example!r}"


@pytest.mark.parametrize("cr", _RULES, ids=_ids(_RULES))
def test_every_example_holds_a_keyword(cr):
    """The prefilter only lets lines through that contain a keyword: an example without one is dead."""
    for example in cr.rule.examples:
        low = example.lower()
        assert any(k.lower() in low for k in cr.rule.keywords), f"{cr.rule.id}: {example!r} has no keyword"


def test_rule_ids_are_unique_across_packs():
    ids = [cr.rule.id for cr in _RULES]
    assert len(ids) == len(set(ids))


def test_finding_codes_of_rules_exist():
    for cr in _RULES:
        if cr.rule.finding:
            assert cr.rule.finding in _PACKS.findings.code


@pytest.mark.parametrize("engine", sorted(_PACKS.packs))
def test_prefix_examples_parse(engine):
    pack = _PACKS.packs[engine]
    parser = PrefixParser(_PACKS)
    for pf in pack.prefixes:
        for ex in pf.spec.examples:
            rec = parser.parse("t", 1, ex)
            assert rec.prefix_format is not None, f"{pf.spec.id}: {ex!r} not parsed"
    for tag in pack.processes:
        for ex in tag.spec.examples:
            assert parser.parse("t", 1, ex).process, f"{tag.spec.id}: {ex!r} has no process"
    for w in pack.wrappers:
        for ex in w.spec.examples:
            assert w.regex.match(ex), f"wrapper {w.spec.id}: {ex!r}"


_OWN_PREFIX = list({w.spec.id: (p.engine, w) for p in _PACKS.packs.values() for w in p.wrappers
                    if getattr(w.spec, "unless_own_prefix", False)}.values())


def _without(wrapper) -> PrefixParser:
    parser = PrefixParser(_PACKS)
    parser.wrappers = [w for w in parser.wrappers if w.spec.id != wrapper.spec.id]
    parser._wrappers = type(parser._wrappers)(parser.wrappers)
    return parser


@pytest.mark.parametrize("engine,wrapper", _OWN_PREFIX, ids=[w.spec.id for _, w in _OWN_PREFIX])
def test_an_unless_own_prefix_wrapper_keeps_an_engines_own_prefix(engine, wrapper):
    """Its examples parse differently with it than without it (it was stripped); its
    counter-examples, engines' own prefixes that begin like it, parse exactly as they do without
    it and keep their prefix (TGI's leading timestamp is not eaten)."""
    assert wrapper.spec.counter_examples, f"{wrapper.spec.id}: an unless_own_prefix wrapper needs counter-examples"
    parser, bare = PrefixParser(_PACKS), _without(wrapper)
    for ex in wrapper.spec.examples:
        assert bare.parse("t", 1, ex) != parser.parse("t", 1, ex), f"{wrapper.spec.id}: {ex!r} not stripped"
    for ex in wrapper.spec.counter_examples:
        rec = parser.parse("t", 1, ex)
        assert rec == bare.parse("t", 1, ex), f"{wrapper.spec.id}: {ex!r} was stripped"
        assert rec.prefix_format, f"{wrapper.spec.id}: counter-example {ex!r} is no engine's own prefix"
