"""The hand-kept data of the ladder generator (tools/ladder_*.toml) points at real rungs.

A typo in a registry or member name would silently drop an alias, a cost correction or a
quantization preference: every entry must land in at least one shipped ladder.
"""
from __future__ import annotations

import sys

import regex

from tests.conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TOOLS = ROOT / "tools"


def _load(name):
    return tomllib.loads((TOOLS / name).read_text())


def test_every_alias_reaches_a_shipped_rung(packs):
    ladders = packs.packs["vllm"].ladders
    for reg_name, labels in _load("ladder_aliases.toml").items():
        regs = [r for lf in ladders.values() for r in lf.registry if r.name == reg_name]
        assert regs, f"no shipped registry {reg_name}"
        for label, member in labels.items():
            assert any(r.aliases.get(label) == member for r in regs), f"{reg_name}: {label} -> {member} not shipped"


def test_every_cost_override_is_in_effect(packs):
    from packaging.specifiers import SpecifierSet

    for o in _load("ladder_costs.toml")["override"]:
        hits = [(v, r) for v, lf in packs.packs["vllm"].ladders.items() for r in lf.registry
                if r.name == o["registry"] and v in SpecifierSet(o["versions"]) and o["rung"] in r.cost]
        assert hits, o
        for v, r in hits:
            assert r.cost[o["rung"]] == o["cost_class"], (v, o)
        assert o["why"].strip()


def test_every_quantization_preference_lands(packs):
    ladder = packs.packs["vllm"].ladders["0.33.0"]
    for q in _load("ladder_roles.toml")["quantization"]:
        regs = [r for r in ladder.registry if regex.search(q["role"], r.role)]
        assert regs and all(r.quantization == q["pattern"] for r in regs), q
