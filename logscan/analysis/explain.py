"""`logscan explain KERNEL`: every shipped ladder holding a kernel name, matched as `scan` places it."""
from __future__ import annotations

import re

from packaging.version import Version

from ..packs.loader import PackSet
from .gates import describe
from .ladders import LadderIndex, parse_version
from .predict import _matrix_config
from .words import gate_words


def _shipped_ladders(packs: PackSet) -> list:
    """Every ladder file ``explain`` searches: the packs' own and the matrix's extra ones."""
    _, extra = _matrix_config()
    return ([lf for pack in packs.packs.values() for lf in pack.ladders.values()]
            + [lf for lfs in extra.values() for lf in lfs])


def _scheme_roles(kernel: str) -> dict[str, str]:
    """``{engine: role regex}`` of the scheme ``kernel`` names (patterns/schemes.toml, by id or
    alias, e.g. ``FP8`` -> vLLM ``^fp8 linear$``), ``{}`` when it names no scheme or the scheme has no
    walkable ladder on any engine."""
    from .predict import SchemeError, find_scheme, load_schemes

    try:
        _, scheme = find_scheme(kernel, load_schemes())
    except SchemeError:
        return {}
    return {eng: e.role for eng, e in scheme.engines.items() if e.role}


def explain(packs: PackSet, kernel: str) -> list[dict]:
    """Every shipped ladder holding ``kernel``: engine, release, registry, platform, rung k/n, cost
    class and gate (words and source expression). The name is matched as ``scan`` places a logged
    name (``LadderIndex._find``: class, logged alias, registry alias, enum member, then the
    least-qualified rung holding a short label), so every name ``scan`` prints is found.
    A scheme's name (``FP8``, ``NVFP4``: patterns/schemes.toml, by id or alias) gives every rung of the
    registries of its role on each engine (``[scheme.X.engines.E] role``), as ``ladder E X`` walks
    them, even where a rung label holds the name.
    Sorted by engine, release, registry."""
    rows: list[dict] = []
    # a scheme's name (NVFP4, MXFP4, FP8 ...) is walked as a scheme even where a rung label holds it: a
    # label match picks one rung per ladder ('NVFP4' inside MarlinNvFp4LinearKernel on one release,
    # B12xNvFp4LinearKernel on another), which reads as the scheme's rung (trial 37)
    roles = _scheme_roles(kernel) or None
    for lf in sorted(_shipped_ladders(packs), key=lambda x: (x.engine, parse_version(x.version) or Version("0"))):
        rows.extend(_rows(lf, kernel, roles))
    return rows


def _rows(lf, kernel: str, roles: "dict[str, str] | None") -> list[dict]:
    """The rows of one ladder file: the rung ``place`` puts ``kernel`` on in each registry, or,
    with ``roles`` (a scheme's ``{engine: role regex}``), every rung of the registries of that role."""
    from .floors import floor_terms, shown
    from .overlay import load_overlay, rewrite

    rows = []
    eng, rel = lf.engine, lf.version
    ov = load_overlay(eng)
    role_rx = re.compile(roles[eng], re.I) if roles and eng in roles else None
    if roles is not None and role_rx is None:
        return rows
    for reg in lf.registry:
        if reg.kind == "attention" or (role_rx is not None and not role_rx.search(reg.role)):
            continue
        for plat, rungs in reg.platforms.items():
            if reg.releases and any(  # a dispatch list that only mirrors a registry's
                    not r.releases and r.platforms.get(plat) == rungs for r in lf.registry):
                continue
            found = range(len(rungs)) if role_rx is not None else [LadderIndex._find(rungs, reg, lf, kernel)]
            for i in found:
                if i is None:
                    continue
                name = rungs[i]
                k = lf.kernel.get(name)
                terms, _ = rewrite(ov, name, list(reg.gates.get(name) or (k.gates if k else [])))
                cost = reg.cost.get(name) or (k.cost_class if k else "unknown")
                if terms:  # the hardware floor of native low-precision compute, as ladder walks it
                    terms = shown(terms + floor_terms(reg.role, cost, terms, {plat}))
                rows.append({
                    "engine": eng, "ladder_version": rel, "registry": reg.name, "role": reg.role,
                    "platform": plat, "rung": i + 1, "rungs": len(rungs), "kernel": name,
                    "cost_class": cost,
                    "gate": " & ".join(describe(t) for t in terms) if terms else (k.gate if k else ""),
                    "words": gate_words(terms) if terms else (k.gate if k and k.gate else ""),
                    "above": rungs[:i],
                })
    return rows


def close_names(packs: PackSet, kernel: str, n: int = 5) -> list[str]:
    """Up to ``n`` names of shipped rungs closest to ``kernel`` (``difflib`` ratio >= 0.6, case
    folded): what ``explain`` suggests for a name no ladder holds (a typo such as ``Marlni``)."""
    import difflib

    names: dict[str, str] = {}
    for lf in _shipped_ladders(packs):
        for reg in lf.registry:
            for rungs in reg.platforms.values():
                for name in rungs:
                    names.setdefault(name.lower(), name)
    # the class-name suffixes every rung shares ('...LinearKernel', '...MoEMethod') are left out
    # of the likeness: 'NoSuchKernel' is not close to 'ConchLinearKernel' because both end in 'Kernel'
    # (a typo in the suffix itself still finds its name: the whole names are then nearly equal)
    full = kernel.strip().lower()
    want = _STEM.sub("", full) or full
    scored = []
    for k in names:
        stem = difflib.SequenceMatcher(None, want, _STEM.sub("", k) or k).ratio()
        whole = difflib.SequenceMatcher(None, full, k).ratio()
        if stem >= 0.6 or whole >= 0.85:
            scored.append((max(stem, whole), k))
    scored.sort(key=lambda t: -t[0])
    return [names[k] for _, k in scored[:n]]


#: the suffixes of kernel class names, folded (``MarlinLinearKernel``, ``CutlassFP8ScaledMMLinearKernel``,
#: ``Fp8MoEMethod``), removed before names are compared
_STEM = re.compile(r"(?:scaledmm)?(?:linear)?(?:kernel|method|backend)$")
