"""Gates in words a capacity planner reads: ``sm75 or newer, flashinfer installed``.

``gates.describe`` renders the source-shaped expression (``cc>=75 & pkg flashinfer``);
``logscan ladder --gate-source`` prints that one. This module says the same in words, drops
repeated terms and keeps only the strongest of several version floors (``torch>=2.1 & torch>=2.8``
is ``torch 2.8 or newer``).
"""
from __future__ import annotations

from packaging.version import InvalidVersion, Version

from ..packs.model import GateTerm


def _sm(cc: int) -> str:
    return f"sm{cc}"


def term_words(t: GateTerm) -> str:
    """One term in words; ``negate`` reads as "not ..." (``cc_min`` 0 negated: "compute capability unknown")."""
    k, neg = t.kind, t.negate
    if k == "cc_min" and (t.cc or 0) == 0:
        return "compute capability unknown" if neg else "any GPU"
    if k == "platform":
        s = "on " + " or ".join(t.platforms)
    elif k == "cc_min":
        s = f"{_sm(t.cc or 0)} or newer" if not neg else f"older than {_sm(t.cc or 0)}"
        neg = False
    elif k == "cc_eq":
        s = f"exactly {_sm(t.cc or 0)}"
    elif k == "cc_family":
        s = f"an sm{t.major}x GPU (sm{t.major}0-sm{t.major}9)"
    elif k == "cc_range":
        s = f"{_sm(t.lo or 0)} to {_sm((t.hi or 1) - 1)}" if (t.hi or 0) - (t.lo or 0) > 1 else f"exactly {_sm(t.lo or 0)}"
    elif k == "cuda_min":
        s = f"CUDA runtime {t.version} or newer" if not neg else f"CUDA runtime older than {t.version}"
        neg = False
    elif k == "torch_min":
        s = f"torch {t.version} or newer" if not neg else f"torch older than {t.version}"
        neg = False
    elif k == "package":
        s = f"{t.name} {'not ' if neg else ''}installed"
        neg = False
    elif k == "build":
        s = f"built {'without' if neg else 'with'} {t.flag}"
        neg = False
    elif k == "env":
        s = f"{t.name} {'unset/false' if neg else 'set'}" + (f" (default {t.default})" if t.default is not None else "")
        neg = False
    elif k == "option":
        s = f"{t.name} = {' or '.join(t.values)}" + (f" (default {t.default})" if t.default is not None else "")
    elif k in ("dtype", "layer"):
        s = f"{t.field.replace('_', ' ')} {' or '.join(t.values)}"
    elif k == "group_size":
        s = f"group size {' / '.join(t.values)}"
    elif k == "shape":
        s = f"{t.field.replace('_', ' ')} divisible by {t.multiple_of}"
    elif k == "gfx":
        s = "ROCm arch " + " or ".join(f"{v}*" for v in t.values)
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
        s = f"'{t.text or t.source}' (not structured)"
    if t.only_on:
        s += f" (on {'/'.join(t.only_on)})"
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
