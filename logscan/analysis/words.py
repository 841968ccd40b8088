"""Gates in words a capacity planner reads: ``sm75 or newer, flashinfer installed``.

``gates.describe`` renders the source-shaped expression (``cc>=75 & pkg flashinfer``);
``logscan ladder --gate-source`` prints that one. This module says the same in words (both
come from one table of per-kind forms, ``term_forms.TERM_FORMS``), drops repeated terms and
keeps only the strongest of several version floors (``torch>=2.1 & torch>=2.8`` is ``torch 2.8
or newer``).
"""
from __future__ import annotations

from packaging.version import InvalidVersion, Version

from ..packs.model import GateTerm
from .term_forms import term_form


def _sm(cc: int) -> str:
    return f"sm{cc}"


def term_words(t: GateTerm) -> str:
    """One term in words; ``negate`` reads as "not ..." (``cc_min`` 0 negated: "compute capability unknown").

    The per-kind forms are ``term_forms.TERM_FORMS`` (shared with ``gates.describe``)."""
    k, neg = t.kind, t.negate
    if k == "cc_min" and (t.cc or 0) == 0:
        return "compute capability unknown" if neg else "any GPU"
    if k == "cc_range" and (t.hi or 0) - (t.lo or 0) <= 1:
        s = f"exactly {_sm(t.lo or 0)}"
    elif k == "any_of":
        opts: list[list[GateTerm]] = []
        for opt in t.options:  # (a | (b | c)) reads as one choice of three
            if len(opt) == 1 and opt[0].kind == "any_of" and not opt[0].negate:
                opts += opt[0].options
            else:
                opts.append(opt)
        alts = [gate_words(opt, sep=" and ") for opt in opts]
        s = "either " + " or ".join(f"({a})" if " and " in a else a for a in alts)
    else:
        s, said = term_form(t, words=True)
        neg = neg and not said
    if t.only_on:
        s += f" (on {'/'.join(t.only_on)})"
    if t.floor:
        s += f" [{t.floor} hardware floor]"
    return f"not {s}" if neg else s


def _strongest(terms: list[GateTerm]) -> list[GateTerm]:
    """Drop repeats and weaker version floors of the same kind (a conjunction keeps the highest)."""
    best: dict[str, Version] = {}
    for t in terms:
        if t.kind in ("cuda_min", "torch_min", "cc_min") and not t.negate:
            try:
                v = Version(t.version) if t.kind != "cc_min" else Version(str(t.cc or 0))
            except InvalidVersion:
                continue
            best[t.kind] = max(best.get(t.kind, v), v)
    out, seen = [], set()
    for t in terms:
        if t.kind in best and not t.negate:
            v = Version(t.version) if t.kind != "cc_min" else Version(str(t.cc or 0))
            if v != best[t.kind]:
                continue
        w = term_words(t)
        if w in seen:
            continue
        seen.add(w)
        out.append(t)
    return out


#: (ids of the terms, sep) -> (the terms, the words): terms are frozen models, so the words of
#: the same objects never change; the objects are kept so that their ids stay theirs
_WORDS: dict[tuple, tuple] = {}


def gate_words(terms: list[GateTerm], sep: str = ", ") -> str:
    """A conjunction in words; ``always available`` for no terms.

    Memoised per term objects: a run's placement words the same rungs' gates again and again."""
    key = (tuple(map(id, terms)), sep)
    hit = _WORDS.get(key)
    if hit is None:
        if len(_WORDS) > 20_000:
            _WORDS.clear()
        ts = _strongest(list(terms))
        hit = _WORDS[key] = (tuple(terms), sep.join(term_words(t) for t in ts) or "always available")
    return hit[1]
