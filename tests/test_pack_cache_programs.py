"""A cached pack set carries each rule's compiled regex program: a later process's first use of
a rule loads it instead of parsing the pattern again, and a damaged program falls back."""
import pickle

import pytest
import regex

from logscan.packs import loader, packcache
from logscan.packs.packcache import LazyPattern


@pytest.fixture()
def cached_packs(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGSCAN_CACHE_DIR", str(tmp_path / "cache"))
    loader.load_packs()  # the first load stores the pickle, every program compiled
    assert list((tmp_path / "cache").glob("packset-*.pickle"))
    return loader.load_packs()  # read back from the cache


def test_a_cached_rule_regex_is_loaded_not_compiled(cached_packs, monkeypatch):
    def no_compile(*a, **k):
        raise AssertionError("parsed the pattern again although the cache held its program")

    monkeypatch.setattr(loader, "_compile", no_compile)
    rules = [cr for pack in cached_packs.packs.values() for cr in pack.rules]
    assert len(rules) > 100 and all(cr.regex._blob is not None for cr in rules)
    for cr in rules:
        rx = cr.regex.compiled()
        assert rx.pattern == cr.rule.pattern
        fresh = regex.compile(cr.rule.pattern, cr.regex._flags | regex.V0)
        for ex in cr.rule.examples + cr.rule.counter_examples:  # the program is the pattern's own
            a, b = rx.search(ex), fresh.search(ex)
            assert (a and (a.span(), a.groupdict())) == (b and (b.span(), b.groupdict())), (cr.rule.id, ex)


def test_the_loaded_program_behaves_as_a_fresh_compile():
    lp = LazyPattern(r"(?P<kernel>\w+MarlinLinearKernel) for (?P<layer>\S+)", "x.toml", "r1")
    lp.compiled()
    back = pickle.loads(pickle.dumps(lp))
    assert back._blob is not None and back._compiled is None
    text = "Using MacheteLinearKernel then ConchMarlinLinearKernel for model.layers.0"
    assert back.search(text).groupdict() == lp.search(text).groupdict() == {
        "kernel": "ConchMarlinLinearKernel", "layer": "model.layers.0"}


def test_a_damaged_program_is_compiled_from_the_source():
    lp = LazyPattern(r"marlin", "x.toml", "r1", blob=b"\x80\x05garbage")
    assert lp.search("uses Marlin") is None and lp.search("uses marlin") is not None
    other = pickle.dumps(LazyPattern(r"other", "x.toml", "r2").compiled())
    lp = LazyPattern(r"marlin", "x.toml", "r1", blob=other)  # a program of another pattern: not trusted
    assert lp.compiled().pattern == "marlin"


def test_an_unused_lazy_pattern_pickles_without_a_program():
    lp = LazyPattern(r"kernel", "x.toml", "r1")
    assert pickle.loads(pickle.dumps(lp))._blob is None
    assert packcache.LazyPattern is loader.LazyPattern


def test_the_prefilter_literal_plan_comes_with_the_cached_pack_set(cached_packs, monkeypatch):
    from logscan.sources import prefilter

    fresh = prefilter.Prefilter(*prefilter.pack_keywords(cached_packs)[:1], "python",
                                *prefilter.pack_keywords(cached_packs)[1:])  # planned now, no memo
    assert any(k[0] == "literal-plan" for k in cached_packs.memo)

    def no_plan(*a, **k):
        raise AssertionError("planned the literals again although the cache held the plan")

    monkeypatch.setattr(prefilter, "minimal_literals", no_plan)
    pf = prefilter.make_prefilter(cached_packs, "python")
    assert (pf.literals, pf.sensitive) == (fresh.literals, fresh.sensitive)
    assert [lits for _, lits in pf.gates] == [lits for _, lits in fresh.gates]
