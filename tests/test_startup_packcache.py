"""The pickled pack set writes equal gate terms once (``packcache._dumps_shared``): a warm start
unpickles ~2,900 fewer objects (issue 18), and what it reads equals what the TOML files give."""
from __future__ import annotations

from logscan.packs import loader, packcache
from logscan.packs.model_ladders import GateTerm
from logscan.plain import PlainModel


def _terms(obj, out: list) -> list:
    """Every gate term reachable from ``obj``, once per place it holds one (the packs hold no cycle)."""
    if isinstance(obj, GateTerm):
        out.append(obj)
    if isinstance(obj, PlainModel):
        for name in obj.model_fields:
            _terms(getattr(obj, name), out)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _terms(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _terms(x, out)
    return out


def test_a_warm_pack_set_shares_equal_gate_terms_and_equals_the_cold_one(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGSCAN_CACHE_DIR", str(tmp_path))
    root = loader.patterns_root()
    cold = loader.load_packs(root)  # validated from the TOML files, then pickled
    warm = packcache._cached_packset(packcache._packset_key(root, None))
    assert warm is not None and warm is not cold
    assert sorted(warm.packs) == sorted(cold.packs)
    for engine, pack in cold.packs.items():
        snaps = pack.ladders.snapshots
        assert warm.packs[engine].ladders.snapshots == snaps, engine
        assert [r.rule for r in warm.packs[engine].rules] == [r.rule for r in pack.rules], engine
    cold_terms = _terms([p.ladders.snapshots for p in cold.packs.values()], [])
    warm_terms = _terms([p.ladders.snapshots for p in warm.packs.values()], [])
    assert len(warm_terms) == len(cold_terms) > 1000
    assert len({id(t) for t in cold_terms}) == len(cold_terms)  # the TOML gives one object per term
    shared = len({id(t) for t in warm_terms})
    assert shared < len(warm_terms) / 3, (shared, len(warm_terms))  # equal terms read once
    by_id = {}
    for t in warm_terms:  # a shared object stands only for terms equal to it
        assert by_id.setdefault(id(t), t.model_dump()) == t.model_dump()
