"""The template history compiles a template's regex only for a message starting with its literal
head (start-up, issue 18); the answers must be those of trying every regex."""
from __future__ import annotations

import re

import pytest

from logscan.analysis.template_era import FIELD, literal_head, load, specific_enough, template_regex
from logscan.packs.loader import _read_toml
from tests.conftest import FIXTURES, ROOT

ENGINES = ["vllm", "sglang"]


def _brute(th, message: str, min_ratio: float = 0.5):
    text = message.strip()
    hits = [(lc, t, held, template_regex(t).match(text)) for t, _, lc, held in th.templates]
    hits = [h for h in hits if h[3]]
    if not hits:
        return None
    top = max(lc for lc, _, _, _ in hits)
    best = [(t, held) for lc, t, held, m in hits if lc == top and specific_enough(lc, m, min_ratio)]
    if not best:
        return None
    return best[0][0], frozenset().union(*(h for _, h in best))


def _filled(template: str) -> str:
    """The template with every field given a value (what a log line of it looks like)."""
    return FIELD.sub(lambda m: "%" if m.group(0) == "%%" else "Xy1", template).replace("{{", "{").replace("}}", "}")


@pytest.mark.parametrize("engine", ENGINES)
def test_every_template_still_matches_its_own_line(engine):
    th = load(ROOT / "patterns" / engine, _read_toml)
    assert th is not None and len(th.templates) > 50
    for t, head, _, _ in th.templates:
        msg = _filled(t).strip()
        if template_regex(t).match(msg):
            assert msg.startswith(head), (t, head)
            assert th.best(msg, 0.0) is not None


@pytest.mark.parametrize("engine", ENGINES)
def test_best_equals_trying_every_regex_on_real_lines(engine):
    th = load(ROOT / "patterns" / engine, _read_toml)
    messages = []
    for path in sorted((FIXTURES / engine).glob("*.log"))[:40]:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            messages.append(re.sub(r"^.*?\] ", "", line))  # drop a bracketed prefix when there is one
    messages += [_filled(t) for t, _, _, _ in th.templates]
    found = 0
    for msg in messages:
        got = th.best(msg)
        assert got == _brute(th, msg), msg
        found += got is not None
    assert found > 20


def test_literal_head_is_the_text_before_the_first_field():
    assert literal_head("Using %s for %s") == "Using"
    assert literal_head("{} kernels") == ""
    assert literal_head("100%% of %s") == "100"
    assert literal_head("No fields here ") == "No fields here"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_message_a_regex_matches_holds_the_literal_parts_in_order(engine):
    """``could_produce`` (the literal parts in order) is necessary for a regex match, so ruling a
    template out by it changes no answer; and it does rule out templates whose head fits."""
    th = load(ROOT / "patterns" / engine, _read_toml)
    messages = [_filled(t).strip() for t, _, _, _ in th.templates]
    for path in sorted((FIXTURES / engine).glob("*.log"))[:40]:
        messages += [re.sub(r"^.*?\] ", "", ln).strip()
                     for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    spared = 0
    for msg in messages:
        for t, head, _, _ in th.templates:
            if not msg.startswith(head):
                continue
            if template_regex(t).match(msg):
                assert th.could_produce(t, msg), (t, msg)
            elif not th.could_produce(t, msg):
                spared += 1
    assert spared > 100


def test_the_cached_pack_set_holds_each_template_history_built(packs):
    """``memo_templates`` keeps the history ``load`` builds from the TOML (pickled with the pack
    set, so a warm start does not rebuild it); ``template_hints`` reads it from there."""
    import pickle

    from logscan.analysis.template_era import _memo_key, memo_templates
    from logscan.packs.loader import PackSet

    fresh = PackSet(packs.root, packs.packs, packs.findings)
    memo_templates(fresh)
    for engine in ENGINES:
        kept = pickle.loads(fresh.memo[_memo_key(engine)])
        built = load(ROOT / "patterns" / engine, _read_toml)
        assert kept.templates == built.templates and kept.releases == built.releases


def test_the_memo_of_best_answers_as_the_search_does_also_for_an_old_pickle():
    """``best`` keeps its answers per message (a crash loop closes the same messages again and again);
    a history pickled before the memo existed (no ``_best`` attribute) still answers."""
    import pickle

    th = load(ROOT / "patterns" / "vllm", _read_toml)
    msgs = [line.split("] ", 1)[-1] for line in (FIXTURES / "vllm" / "vllm-005.log").read_text().splitlines()]
    first = [th.best(m) for m in msgs]
    assert any(first)
    assert [th.best(m) for m in msgs] == first == [_brute(th, m) for m in msgs]
    old = pickle.loads(pickle.dumps(th))
    del old.__dict__["_best"]
    assert [old.best(m) for m in msgs] == first
