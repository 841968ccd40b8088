"""Planning facts kept beside the shipped ladders: term rewrites, MoE backend gates, disagreements.

The ladders under ``patterns/<engine>/ladders`` are generated from the reference (vLLM: ``ast``
over each wheel) and keep some requirements as unstructured text (``supports_mx()``,
``K % MXFP8_BLOCK_SIZE == 0``) or in a form that reads the wrong field (B12x's
``cfg.input_dtype`` is the unquantized input, not the FP8 activation). ``patterns/planning/
<engine>.toml`` holds, as data with the source of each fact:

- ``[[term]]``: a gate term whose ``source`` (or opaque ``text``) fully matches ``match`` is
  replaced by ``terms`` (an empty list drops a requirement the scheme always meets);
- ``[[moe]]``: per-backend gates of a MoE oracle priority list (``registry``: regex over the
  registry name; ``releases``: PEP 440 specifier), read from the oracle and experts classes;
- ``[[add]]``: terms a rung needs in some releases only (``releases``), beyond the Python gate
  the ladders are generated from: a compiled kernel's arch guard read in the release's C++ source;
- ``[[disagree]]``: where the shipped reference and the seeds differ; the release's source
  wins and the answer names both;
- ``[scheme.<ID>]``: ``holds`` lists requirements a checkpoint of the scheme meets by
  construction (MXFP8's K is a multiple of its 32-wide scale block).

Applied only by ``logscan ladder / matrix / explain``; ``scan`` places logged names as before.
"""

import functools
from pathlib import Path
from typing import Optional

import regex
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version
from dataclasses import field

from .. import rxcache
from ..plain import PlainModel, plain

from ..packs.loader import _read_toml, _validate, patterns_root
from ..packs.model import GateTerm


class _M(PlainModel):
    __slots__ = ()


@plain(strict=True)
class TermRewrite(_M):
    """Replace a term matching ``match`` (regex, full match on ``source`` or ``text``) by ``terms``."""

    match: str
    terms: list[GateTerm] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)  #: restrict to these rungs (empty: any)
    why: str


@plain(strict=True)
class TermAdd(_M):
    """Terms a rung needs in some releases beyond its Python gate (``kernels``; ``releases``: PEP 440
    specifier over the ladder's release): a compiled kernel's own arch guard, read in the release's
    C++ source (vLLM csrc/cutlass_extensions/common.hpp ``enable_sm100f_only``)."""

    kernels: list[str]
    releases: str = ""
    terms: list[GateTerm] = field(default_factory=list)
    why: str


@plain(strict=True)
class MoeGates(_M):
    """Gates of the backends of one MoE priority list (``registry`` regex over its name)."""

    registry: str
    releases: str = ""
    gates: dict[str, list[GateTerm]]
    cost: dict[str, str] = field(default_factory=dict)
    why: str
    exhausted: str = ""


@plain(strict=True)
class Disagreement(_M):
    """A fact on which the shipped reference and the seeds differ, and what the source says."""

    kernel: str
    releases: str = ""
    schemes: list[str] = field(default_factory=list)  #: the schemes it concerns (empty: every scheme)
    reference: str
    seed: str
    source: str  #: what the release's own code says (it wins)


@plain(strict=True)
class Exhausted(_M):
    """What the engine raises when every rung of a registry refuses (``registry``: regex over its name)."""

    registry: str
    message: str


@plain(strict=True)
class SchemeFacts(_M):
    """Per-scheme planning facts: requirements met by construction, cost classes for this scheme."""

    holds: list[str] = field(default_factory=list)
    cost: dict[str, str] = field(default_factory=dict)  #: rung -> cost class when serving this scheme
    #: releases (PEP 440 specifier) in which checkpoints of this dense scheme exist only as MoE
    #: experts (vLLM before 0.22: quantization=mxfp4 is gpt-oss, linear layers stay unquantized)
    moe_only: str = ""
    why: str = ""


@plain(strict=True)
class Overlay(_M):
    """``patterns/planning/<engine>.toml``."""

    engine: str
    term: list[TermRewrite] = field(default_factory=list)
    add: list[TermAdd] = field(default_factory=list)
    moe: list[MoeGates] = field(default_factory=list)
    disagree: list[Disagreement] = field(default_factory=list)
    exhausted: list[Exhausted] = field(default_factory=list)
    scheme: dict[str, SchemeFacts] = field(default_factory=dict)


@functools.lru_cache(maxsize=8)
def load_overlay(engine: str, root: Optional[Path] = None) -> Optional[Overlay]:
    """The engine's planning overlay, or None when it has none. Raises ``PackError`` when broken."""
    path = (root or patterns_root()) / "planning" / f"{engine}.toml"
    if not path.is_file():
        return None
    return _validate(Overlay, _read_toml(path), path, cache=True)


def _in(release: Optional[str], spec: str) -> bool:
    if not spec:
        return True
    try:
        return release is not None and Version(release) in SpecifierSet(spec)
    except (InvalidSpecifier, ValueError):
        return False


@functools.lru_cache(maxsize=256)
def _rx(pattern: str) -> regex.Pattern:
    return rxcache.compile(pattern)


#: characters that make a pattern more than a literal (outside a backslash escape)
_META = frozenset(".^$*+?{}[]()|\\")


def literal_alternatives(pattern: str) -> Optional[frozenset[str]]:
    """The texts ``pattern`` fully matches when it is only literals joined by ``|`` (each
    metacharacter escaped, as the overlay's ``match`` patterns are: ``cfg\\.act_type in X``);
    None for any other pattern (a class, a quantifier, an escape such as ``\\d``)."""
    alts, cur, i = [], [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1].isalnum() or pattern[i + 1] == "_":
                return None  # \d, \b, \1, a trailing backslash: not a literal
            cur.append(pattern[i + 1])
            i += 2
            continue
        if c == "|":
            alts.append("".join(cur))
            cur = []
        elif c in _META or c.isspace() and c != " ":
            return None
        else:
            cur.append(c)
        i += 1
    alts.append("".join(cur))
    return frozenset(alts)


@functools.lru_cache(maxsize=512)
def _fullmatch(pattern: str):
    """``text -> bool``: whether ``pattern`` matches the whole text; a set look-up for a pattern
    of literals (no regex compiled: ~1.5 ms each with ``regex``, ~50 of them per start-up)."""
    lits = literal_alternatives(pattern)
    if lits is not None:
        return lits.__contains__
    rx = _rx(pattern)
    return lambda text: rx.fullmatch(text) is not None


#: (id(overlay), kernel, ids of the terms) -> (overlay, terms, result): the objects are kept so
#: that their ids stay theirs; overlays and terms are frozen models, shared read-only
_REWRITTEN: dict[tuple, tuple] = {}


def rewrite(ov: Optional[Overlay], kernel: str, terms: list[GateTerm]) -> tuple[list[GateTerm], list[str]]:
    """Apply the overlay's term rewrites to one rung's gate; returns the terms and the reasons used.

    Memoised per (overlay, kernel, terms): a run's placement asks for the same rungs again and
    again (fresh lists are returned; the terms in them are frozen and shared)."""
    if ov is None or not ov.term:
        return terms, []
    key = (id(ov), kernel, tuple(map(id, terms)))
    hit = _REWRITTEN.get(key)
    if hit is None:
        if len(_REWRITTEN) > 20_000:
            _REWRITTEN.clear()
        hit = _REWRITTEN[key] = (ov, tuple(terms), _rewrite(ov, kernel, terms))
    out, used = hit[2]
    return list(out), list(used)


def _rewrite(ov: Overlay, kernel: str, terms: list[GateTerm]) -> tuple[list[GateTerm], list[str]]:
    used: list[str] = []

    def one(t: GateTerm) -> list[GateTerm]:
        for rw in ov.term:
            if rw.kernels and kernel not in rw.kernels:
                continue
            for text in (t.source, t.text):
                if text and _fullmatch(rw.match)(text):
                    used.append(rw.why)
                    # a replacement keeps where the original applied (only_on: ROCm-only clauses)
                    new = [x.model_copy(update={"source": x.source or t.source, "only_on": x.only_on or t.only_on})
                           for x in rw.terms]
                    if t.negate and new:
                        return [_negated(new, t)]
                    return new
        if t.kind == "any_of":
            return [t.model_copy(update={"options": [[y for x in opt for y in one(x)] for opt in t.options]})]
        return [t]

    out = [y for t in terms for y in one(t)]
    return out, used


def _negated(terms: list[GateTerm], orig: GateTerm) -> GateTerm:
    """``NOT (a & b)`` as a term: one negated term, or an ``any_of`` of the negated parts."""
    if len(terms) == 1:
        return terms[0].model_copy(update={"negate": not terms[0].negate, "source": orig.source})
    return GateTerm(kind="any_of", options=[[t.model_copy(update={"negate": not t.negate, "only_on": []})] for t in terms],
                    source=orig.source, only_on=orig.only_on)


def moe_gates(ov: Optional[Overlay], registry: str, release: Optional[str]) -> Optional[MoeGates]:
    """The MoE backend gates recorded for a registry of a release, if any."""
    if ov is None:
        return None
    for mg in ov.moe:
        if _rx(mg.registry).search(registry) and _in(release, mg.releases):
            return mg
    return None


def disagreements(ov: Optional[Overlay], kernels: list[str], release: Optional[str],
                  scheme: Optional[str] = None) -> list[Disagreement]:
    """Recorded reference-vs-seed differences touching any of ``kernels`` in ``release`` (for ``scheme``)."""
    if ov is None:
        return []
    return [d for d in ov.disagree if d.kernel in kernels and _in(release, d.releases)
            and (not d.schemes or scheme in d.schemes)]


def holds(ov: Optional[Overlay], scheme: str) -> list[str]:
    """Requirements a checkpoint of ``scheme`` meets by construction (prop keys of ``scenarios``)."""
    if ov is None or scheme not in ov.scheme:
        return []
    return list(ov.scheme[scheme].holds)


def scheme_cost(ov: Optional[Overlay], scheme: str, rung: str) -> Optional[str]:
    """The cost class of ``rung`` when it serves ``scheme``, if the overlay records one."""
    if ov is None or scheme not in ov.scheme:
        return None
    return ov.scheme[scheme].cost.get(rung)


def moe_only(ov: Optional[Overlay], scheme: str, release: Optional[str]) -> bool:
    """Whether ``scheme``'s checkpoints are MoE-only in ``release`` (then the MoE ladder answers)."""
    if ov is None or scheme not in ov.scheme or not ov.scheme[scheme].moe_only:
        return False
    return _in(release, ov.scheme[scheme].moe_only)


def exhausted_message(ov: Optional[Overlay], registry: str) -> str:
    """The engine's error when every rung of ``registry`` refuses, if recorded."""
    if ov is None:
        return ""
    return next((e.message for e in ov.exhausted if _rx(e.registry).search(registry)), "")


def rung_terms(ladder, reg, name: str, ov=None, mg=None) -> tuple[list[GateTerm], bool, list[str]]:
    """``(terms, recorded, overlay reasons used)``: the gate terms of rung ``name`` of registry
    ``reg`` as ``ladder`` / ``matrix`` / ``explain`` walk it: the planning overlay's MoE / if-chain
    backend gates (``ov``, ``mg``: ``overlay.load_overlay`` / ``moe_gates``, looked up when not
    given), else the registry's or the kernel's own terms, then the overlay's term rewrites.
    ``recorded`` False: no terms and none expected (a hand-kept chain whose rung was not recorded)."""
    if ov is None:
        ov = load_overlay(ladder.engine)
        mg = moe_gates(ov, reg.name, ladder.version) if reg.kind in ("moe", "if_chain") else None
    k = ladder.kernel.get(name)
    if mg is not None and name in mg.gates and name not in reg.own_gates:
        terms, recorded = list(mg.gates[name]), True
    elif reg.gates.get(name) or (k is not None and k.gates):
        terms, recorded = list(reg.gates.get(name) or k.gates), True
    else:  # no terms: always available on a generated registry; unrecorded on a hand-kept chain or MoE list
        terms, recorded = [], k is not None and (reg.kind == "linear" or k.gate.lower().startswith("always"))
    terms, used = rewrite(ov, name, terms)
    for a in (ov.add if ov is not None and recorded else ()):  # release-scoped needs (compiled arch guards)
        if name in a.kernels and _in(ladder.version, a.releases):
            terms, used = terms + list(a.terms), used + [a.why]
    if recorded:  # the hardware floor of native low-precision compute (analysis/floors.py)
        from .floors import floor_terms

        cost = reg.cost.get(name) or (mg.cost.get(name) if mg is not None else None) or (k.cost_class if k else None)
        plats = {p for p, names in reg.platforms.items() if name in names}
        terms = terms + floor_terms(reg.role, cost, terms, plats)
    return terms, recorded, used
