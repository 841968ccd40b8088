"""Walk an engine's ladder for a scheme on a described machine: each rung passes, fails or is unknown.

The engine picks the first rung that passes (vLLM: first match wins over the ordered
registry). ``walk`` marks that rung ``predicted``; unknown rungs above it are ``possible``
(they would win if their unknown facts hold). Nothing is guessed: with an unknown rung above,
the prediction is conditional and says which facts decide. Sources: the shipped ladders
(``patterns/<engine>/ladders``), scheme facts (``patterns/schemes.toml``), GPU names
(``patterns/gpus.toml``).
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterator, Optional

import regex
from packaging.version import Version
from dataclasses import field

from .. import rxcache
from ..plain import PlainModel, plain

from ..packs.loader import PackSet, _read_toml, _validate, patterns_root
from ..packs.model import GateTerm, LadderFile, Registry, Scheme, SchemeEngine, SchemeFile
from .gates import Machine, Verdict, describe, evaluate_terms
from .ladders import parse_version
from .outcomes import Outcome
from .overlay import rung_terms  # noqa: F401 (moved to overlay: fallback judging needs no predict import)
from .words import gate_words, term_words


@plain
class TermOut(PlainModel):
    """One gate term of a rung with its verdict and reason."""

    term: str
    words: str = ""
    kind: str
    verdict: Verdict
    why: str
    source: str = ""


@plain
class RungOut(PlainModel):
    """One rung of a walked ladder (the JSON of ``logscan ladder``)."""

    rung: int
    rungs: int
    kernel: str
    cost_class: str
    gate: str
    verdict: Verdict
    predicted: bool = False
    possible: bool = False  #: unknown rung above the predicted one: it wins if its unknowns hold
    hardware: Verdict = Verdict.unknown  #: verdict of the silicon alone (software assumed present)
    needs: list[str] = field(default_factory=list)  #: server options that would make a failing rung pass
    terms: list[TermOut] = field(default_factory=list)
    overlay: list[str] = field(default_factory=list)  #: planning-overlay facts that rewrote this rung's gate
    words: str = ""  #: the gate in words (``gate`` is the source-shaped expression)


@plain
class Walk(PlainModel):
    """A ladder walked for one scheme on one machine (``logscan ladder --format json``)."""

    engine: str
    ladder_version: Optional[str]
    scheme: str
    scheme_title: str
    registry: Optional[str] = None
    role: Optional[str] = None
    platform: str
    machine: str
    scheme_gate: list[TermOut] = field(default_factory=list)
    scheme_verdict: Verdict = Verdict.passes
    rungs: list[RungOut] = field(default_factory=list)
    predicted: Optional[str] = None  #: kernel the engine picks (if every ``possible`` rung turns out to fail)
    predicted_cost_class: Optional[str] = None
    certain: bool = False  #: no unknown rung above the predicted one
    outcome: str = ""  #: one sentence
    outcomes: list[Outcome] = field(default_factory=list)  #: every possible answer, most capable first
    disagreements: list[dict] = field(default_factory=list)  #: reference vs seed differences touching this walk
    notes: list[str] = field(default_factory=list)  #: what the answer had to assume or substitute
    exhausted: str = ""  #: what the engine says when every rung refuses


class SchemeError(ValueError):
    """An unknown scheme or engine, or no ladder for the pair (message lists what exists)."""


@functools.lru_cache(maxsize=4)
def load_schemes(root: Optional[Path] = None) -> SchemeFile:
    """``patterns/schemes.toml``, validated. Raises ``PackError`` on a broken file."""
    path = (root or patterns_root()) / "schemes.toml"
    return _validate(SchemeFile, _read_toml(path), path, cache=True)


def find_scheme(name: str, schemes: SchemeFile) -> tuple[str, Scheme]:
    """Scheme by id or alias, case-insensitive (``nvfp4`` -> ``NVFP4``). Raises ``SchemeError``."""
    key = name.strip().lower()
    for sid, s in schemes.scheme.items():
        if sid.lower() == key or key in (a.lower() for a in s.aliases):
            return sid, s
    raise SchemeError(f"unknown scheme {name!r} (known: {', '.join(sorted(schemes.scheme))})")


def pick_registry(ladder: LadderFile, role: str, platform: str) -> Optional[tuple[Registry, str, list[str]]]:
    """First registry whose role matches ``role`` and that has a list for ``platform`` (or ``ANY``)."""
    rx = rxcache.compile(role, regex.I)
    regs = [r for r in ladder.registry if r.kind != "attention" and rx.search(r.role)]
    regs.sort(key=lambda r: r.kind == "if_chain")  # an ordered registry before an if/elif chain
    for reg in regs:
        for p in (platform, "ANY"):
            if p in reg.platforms:
                return reg, p, reg.platforms[p]
    return None


def ladder_serves(ladder: LadderFile, se, platform: str) -> bool:
    """Does ``ladder`` hold a registry for the scheme entry ``se`` on ``platform``? A registry kept
    for ``ANY`` platform does not count where ``schemes.toml`` records the engine's own answer for
    exactly this platform (e.g. vLLM on ``HPU``: its Gaudi plugin is not in the ladders)."""
    found = pick_registry(ladder, se.role, platform) if se.role else None
    if found is None:
        return False
    return found[1] != "ANY" or platform.upper() not in {**se.refuses, **se.unknown}


def _terms_out(results) -> list[TermOut]:
    return [TermOut(term=describe(r.term), words=term_words(r.term), kind=r.term.kind, verdict=r.verdict, why=r.why,
                    source=(r.term.why or r.term.source)[:300]) for r in results]


def walk(packs: PackSet, engine: str, scheme_name: str, machine: Machine,
         engine_version: Optional[str] = None, schemes: Optional[SchemeFile] = None) -> Walk:
    """Walk ``engine``'s ladder for ``scheme_name`` on ``machine``.

    ``engine_version`` picks the shipped ladder release (newest not newer); default the newest.
    Raises ``SchemeError`` for an unknown engine or scheme, or a release with no such ladder.
    """
    schemes = schemes or load_schemes()
    sid, scheme = find_scheme(scheme_name, schemes)
    _, extra = _matrix_config()
    if engine not in packs.packs and engine not in extra:
        raise SchemeError(f"unknown engine {engine!r} (known: {', '.join(sorted(set(packs.packs) | set(extra)))})")
    se = scheme.engines.get(engine)
    if se is None:
        raise SchemeError(f"no {engine} ladder is recorded for {sid} (engines: {', '.join(sorted(scheme.engines)) or '-'})")
    want = parse_version(engine_version) if engine_version else None
    if engine_version and want is None:
        raise SchemeError(f"engine version {engine_version!r} is not a release number")
    platform = (machine.platform or "CUDA").upper()
    lf = next((lf for lf in _ladders_for(packs, engine, extra) if ladder_serves(lf, se, platform)
               and (want is None or (parse_version(lf.version) or Version("0")) <= want)), None)
    if lf is None:
        from .overlay import load_overlay, moe_only

        moe = f"{sid}-MOE"
        if moe in schemes.scheme and moe_only(load_overlay(engine), sid, engine_version):
            try:  # no dense registry in this release: the scheme's checkpoints are MoE experts there
                w = walk(packs, engine, moe, machine, engine_version, schemes)
            except SchemeError:
                w = None
            if w is not None:
                w.notes.append(f"{engine} {w.ladder_version} has no dense {sid} registry: {sid} checkpoints "
                               f"run as MoE experts there, so this is the {moe} ladder (--moe)")
                return w
        recorded = se.verdict_for(platform)
        if recorded is not None:
            return _recorded_walk(engine, sid, scheme, platform, machine, *recorded)
        raise SchemeError(f"no shipped {engine} ladder for {sid} on {platform}"
                          + (f" at or before {engine_version}" if engine_version else ""))
    return walk_ladder(lf, sid, scheme, se, machine)


def _recorded_walk(engine: str, sid: str, scheme: Scheme, platform: str, machine: Machine,
                   basis: str, why: str) -> Walk:
    """A walk with no ladder: the engine's refusal or the unknown recorded in ``schemes.toml``."""
    verdict = Verdict.fails if basis == "refused" else Verdict.unknown
    lead = f"the engine refuses {sid} on {platform}" if basis == "refused" else f"unknown how the engine serves {sid} on {platform}"
    return Walk(engine=engine, ladder_version=None, scheme=sid, scheme_title=scheme.title, platform=platform,
                machine=machine.describe(), scheme_verdict=verdict, outcome=f"{lead}: {why}")


def walk_ladder(ladder: LadderFile, sid: str, scheme: Scheme, se: SchemeEngine, machine: Machine) -> Walk:
    """Walk one ladder file for a scheme (``se``: the scheme's entry for the ladder's engine).

    Gates are the ladder's, with the planning overlay applied (``overlay.py``: term rewrites,
    MoE backend gates); ``outcomes`` is the set of kernels the engine can pick on ``machine``,
    each with its condition (``scenarios.py``)."""
    from .floors import shown
    from .overlay import disagreements, holds, load_overlay, moe_gates, rewrite, scheme_cost

    engine, release = ladder.engine, ladder.version
    platform = (machine.platform or "CUDA").upper()
    found = pick_registry(ladder, se.role, platform)
    out = Walk(engine=engine, ladder_version=release, scheme=sid, scheme_title=scheme.title,
               platform=platform, machine=machine.describe())
    facts = scheme_facts(scheme, machine)
    sv, sres = evaluate_terms(se.gates, machine, facts)
    out.scheme_gate, out.scheme_verdict = _terms_out(sres), sv
    if found is None:
        out.outcome = f"{engine} {release} has no {sid} ladder for {platform}"
        return out
    reg, plat, rungs = found
    out.registry, out.role = reg.name, reg.role
    ov = load_overlay(engine)
    mg = moe_gates(ov, reg.name, release) if reg.kind in ("moe", "if_chain") else None
    from .switches import disabled_term, env_disabled, unread

    off = env_disabled(engine, machine.env)  # --env VLLM_DISABLED_KERNELS=...: scan's reading
    walked: list[tuple[str, str, list[GateTerm]]] = []
    for i, name in enumerate(rungs):
        k = ladder.kernel.get(name)
        terms, recorded, used = rung_terms(ladder, reg, name, ov, mg)
        if not recorded:
            # a rung with no recorded facts is never guessed: it stays unknown, named as such
            terms = [GateTerm(kind="opaque", text=f"{name} gate not recorded" + (f" ({k.gate[:160]})" if k and k.gate else ""))]
        if name in off:
            terms = [disabled_term(name, off[name], machine.env[off[name]]), *terms]
        v, res = evaluate_terms(terms, machine, facts)
        hv, _ = evaluate_terms(terms, machine, facts, optimistic=True)
        ov_v, _ = evaluate_terms(terms, machine, facts, assume=frozenset({"option"}))
        seen = shown(terms, platform)  # a floor term the rung's own gate implies is not repeated
        gate = " & ".join(describe(t) for t in seen) or "(none: always available)"
        cost = scheme_cost(ov, sid, name) or reg.cost.get(name) or (mg.cost.get(name) if mg else None) or (k.cost_class if k else "unknown")
        rung = RungOut(rung=i + 1, rungs=len(rungs), kernel=name, cost_class=cost, gate=gate,
                       verdict=v, hardware=hv, terms=_terms_out([r for r in res if any(r.term is t for t in seen)]),
                       overlay=used, words=gate_words(seen))
        if v == Verdict.fails and ov_v == Verdict.passes:
            rung.needs = _option_needs(terms, machine, facts)
        out.rungs.append(rung)
        walked.append((name, cost, terms))
    for n in unread(machine.env, engine, [t for _, _, ts in walked for t in ts] + list(se.gates),
                    [v for r in rungs for v in (ladder.kernel[r].env if r in ladder.kernel else {})]):
        out.notes.append(f"--env {n}: not read by any rung of {reg.name} ({engine} {release}) nor by the "
                         f"scheme's gate: it does not change this answer")
    _predict(out, reg)
    _floor_note(out, walked, machine, facts)
    from .overlay import exhausted_message

    out.exhausted = reg.exhausted or (mg.exhausted if mg else "") or exhausted_message(ov, reg.name)
    _outcomes(out, walked, se, machine, facts, holds(ov, sid), out.exhausted)
    out.disagreements = [d.model_dump() for d in disagreements(ov, [r.kernel for r in out.rungs], release, sid)]
    return out


def scheme_facts(scheme: Scheme, machine: Machine) -> dict[str, list[str]]:
    """The checkpoint facts a walk reads: the scheme's, overridden by what the user gave
    (``--scales``, ``--group-size``, ``--n`` / ``--k``); the layer input is the model dtype."""
    facts = {k: list(v) for k, v in scheme.facts.items()}
    facts.setdefault("input_dtype", ["bfloat16", "float16"])
    facts.setdefault("out_dtype", ["bfloat16", "float16"])
    facts.update({k: list(v) for k, v in (machine.checkpoint or {}).items()})
    return facts


def _outcomes(out: Walk, walked, se: SchemeEngine, machine: Machine, facts, holds_: list[str], exhausted: str) -> None:
    from .gpus import gpu_file
    from .outcomes import outcomes, summary

    platform = out.platform
    ccs = sorted({e.cc for e in gpu_file().gpu.values() if e.cc is not None and e.platform == platform})
    outs = outcomes(walked, list(se.gates), machine, facts, holds_, ccs)
    if not exhausted and out.registry and out.rungs and _hand_kept(out):
        for o in outs:  # a hand-kept chain without a recorded end: no rung passing is not a refusal
            if o.refused:
                o.refused, o.undetermined = False, True
    out.outcomes = outs
    kernels = [o for o in outs if o.kernel]
    if len(outs) == 1 and kernels and not kernels[0].undetermined:
        out.predicted, out.predicted_cost_class, out.certain = kernels[0].kernel, kernels[0].cost_class, True
    else:
        out.certain = False
        last = outs[-1] if outs else None
        out.predicted = last.kernel if last is not None and last.kernel else None
        out.predicted_cost_class = last.cost_class if last is not None and last.kernel else None
    for r in out.rungs:
        r.predicted = r.kernel == out.predicted
        r.possible = any(o.kernel == r.kernel for o in outs) and not r.predicted
    if out.scheme_verdict == Verdict.fails:
        refused = "; ".join(t.term for t in out.scheme_gate if t.verdict == Verdict.fails)
        out.outcome = f"the engine refuses {out.scheme} on this machine before any rung: {refused}"
        out.predicted, out.certain = None, True
        return
    out.outcome = summary(outs, exhausted)
    opt = next((r for r in out.rungs if r.needs), None)
    if opt is not None and all(o.refused for o in outs):
        out.outcome += f"; with {', '.join(opt.needs)}: {opt.kernel} ({opt.cost_class})"


def _hand_kept(out: Walk) -> bool:
    return out.engine != "vllm"


def _option_needs(terms: list[GateTerm], machine: Machine, facts: dict[str, list[str]]) -> list[str]:
    """``name=value`` settings of the failing option terms of a rung (inside alternatives too)."""
    from .gates import evaluate

    needs: list[str] = []
    for t in terms:
        if evaluate(t, machine, facts).verdict != Verdict.fails:
            continue
        if t.kind == "option" and not t.negate:
            needs.append(f"{t.name}={'|'.join(t.values)}")
        elif t.kind == "any_of":
            for opt in t.options:
                if evaluate_terms(opt, machine, facts, assume=frozenset({"option"}))[0] == Verdict.passes:
                    needs += _option_needs(opt, machine, facts)
                    break
    return needs


def _floor_note(out: Walk, walked, machine: Machine, facts) -> None:
    """A note when the first rung the engine's own gates let through is refused only by the
    hardware floor (``floors.py``): the engine would select it and fail at its first GEMM."""
    from .floors import floor_note

    for r, (name, _, terms) in zip(out.rungs, walked):
        if r.predicted or r.possible:
            return
        own = [t for t in terms if not t.floor]
        if len(own) < len(terms) and evaluate_terms(own, machine, facts)[0] == Verdict.passes:
            out.notes.append(floor_note(r.rung, name, next(t.floor for t in terms if t.floor), machine))
            return


def _unknowns(r: RungOut) -> str:
    return ", ".join(t.term for t in r.terms if t.verdict == Verdict.unknown)


def _predict(out: Walk, reg: Registry) -> None:
    if out.scheme_verdict == Verdict.fails:
        refused = "; ".join(t.term for t in out.scheme_gate if t.verdict == Verdict.fails)
        out.outcome = f"the engine refuses {out.scheme} on this machine before any rung: {refused}"
        return
    possible = []
    for r in out.rungs:
        if r.verdict == Verdict.passes:
            r.predicted = True
            out.predicted, out.predicted_cost_class = r.kernel, r.cost_class
            out.certain = not possible and out.scheme_verdict == Verdict.passes
            break
        if r.verdict == Verdict.unknown:
            possible.append(r)
    for r in possible:
        r.possible = True
    names = ", ".join(r.kernel for r in possible)
    if out.predicted:
        out.outcome = (f"{out.predicted} ({out.predicted_cost_class})" +
                       ("" if out.certain else f", unless an unknown rung above passes: {names}"))
    elif possible:
        out.outcome = "undetermined: " + "; else ".join(f"{r.kernel} ({r.cost_class}) if {_unknowns(r)}" for r in possible)
        out.outcome += "; else every rung refuses" + (f" ({reg.exhausted})" if reg.exhausted else "")
    else:
        out.outcome = "every rung refuses: the layer fails to load" + (f" ({reg.exhausted})" if reg.exhausted else "")
        opt = next((r for r in out.rungs if r.needs), None)
        if opt is not None:
            out.outcome += f"; with {', '.join(opt.needs)}: {opt.kernel} ({opt.cost_class})"
    if out.scheme_verdict == Verdict.unknown:
        out.outcome += " (if the engine accepts the scheme on this machine: " + "; ".join(
            t.term for t in out.scheme_gate if t.verdict == Verdict.unknown) + ")"


@functools.lru_cache(maxsize=4)
def _matrix_config(root: Optional[Path] = None) -> tuple[list[str], dict[str, list[LadderFile]]]:
    from ..packs.model import MatrixFile

    base = (root or patterns_root()) / "matrix"
    cfg = _validate(MatrixFile, _read_toml(base / "matrix.toml"), base / "matrix.toml", cache=True)
    extra: dict[str, list[LadderFile]] = {}
    for eng, files in cfg.ladders.items():
        extra[eng] = [_validate(LadderFile, _read_toml(base / f), base / f, cache=True) for f in files]
    return list(cfg.engines), extra


def _ladders_for(packs: PackSet, engine: str, extra: dict[str, list[LadderFile]]) -> Iterator[LadderFile]:
    """Every ladder file of an engine, newest release first (pack ladders before matrix-kept ones
    of the same release), each composed from the history only when reached: the callers take
    the first that serves (``matrix`` composed all ~50 vLLM releases to walk one)."""
    ladders = packs.packs[engine].ladders if engine in packs.packs else {}
    snaps = getattr(ladders, "snapshots", ladders)  # a composed ladder's ``version`` is its release
    items = [(r if r not in snaps else ladders[r].version, ladders, r) for r in ladders]
    items += [(lf.version, None, lf) for lf in extra.get(engine, [])]
    for _, src, key in sorted(items, key=lambda it: parse_version(it[0]) or Version("0"), reverse=True):
        yield src[key] if src is not None else key


# moved to their own modules; re-exported for callers of logscan.analysis.predict, on first use
# (an import here would be circular: explain and matrix import this module)
_MOVED = {"explain": "explain", "Matrix": "matrix", "MatrixRow": "matrix", "matrix": "matrix"}


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"{__package__}.{_MOVED[name]}"), name)
    raise AttributeError(name)
