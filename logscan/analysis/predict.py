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
from typing import Optional

import regex
from packaging.version import Version
from pydantic import BaseModel, Field

from ..packs.loader import PackSet, _read_toml, _validate, patterns_root
from ..packs.model import GateTerm, LadderFile, Registry, Scheme, SchemeEngine, SchemeFile
from .gates import Machine, Verdict, describe, evaluate_terms
from .ladders import LadderIndex, parse_version


class TermOut(BaseModel):
    """One gate term of a rung with its verdict and reason."""

    term: str
    kind: str
    verdict: Verdict
    why: str
    source: str = ""


class RungOut(BaseModel):
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
    needs: list[str] = Field(default_factory=list)  #: server options that would make a failing rung pass
    terms: list[TermOut] = Field(default_factory=list)


class Walk(BaseModel):
    """A ladder walked for one scheme on one machine (``logscan ladder --format json``)."""

    engine: str
    ladder_version: Optional[str]
    scheme: str
    scheme_title: str
    registry: Optional[str] = None
    role: Optional[str] = None
    platform: str
    machine: str
    scheme_gate: list[TermOut] = Field(default_factory=list)
    scheme_verdict: Verdict = Verdict.passes
    rungs: list[RungOut] = Field(default_factory=list)
    predicted: Optional[str] = None  #: kernel the engine picks (if every ``possible`` rung turns out to fail)
    predicted_cost_class: Optional[str] = None
    certain: bool = False  #: no unknown rung above the predicted one
    outcome: str = ""  #: one sentence


class SchemeError(ValueError):
    """An unknown scheme or engine, or no ladder for the pair (message lists what exists)."""


@functools.lru_cache(maxsize=4)
def load_schemes(root: Optional[Path] = None) -> SchemeFile:
    """``patterns/schemes.toml``, validated. Raises ``PackError`` on a broken file."""
    path = (root or patterns_root()) / "schemes.toml"
    return _validate(SchemeFile, _read_toml(path), path)


def find_scheme(name: str, schemes: SchemeFile) -> tuple[str, Scheme]:
    """Scheme by id or alias, case-insensitive (``nvfp4`` -> ``NVFP4``). Raises ``SchemeError``."""
    key = name.strip().lower()
    for sid, s in schemes.scheme.items():
        if sid.lower() == key or key in (a.lower() for a in s.aliases):
            return sid, s
    raise SchemeError(f"unknown scheme {name!r} (known: {', '.join(sorted(schemes.scheme))})")


def pick_registry(ladder: LadderFile, role: str, platform: str) -> Optional[tuple[Registry, str, list[str]]]:
    """First registry whose role matches ``role`` and that has a list for ``platform`` (or ``ANY``)."""
    rx = regex.compile(role, regex.I)
    regs = [r for r in ladder.registry if r.kind != "attention" and rx.search(r.role)]
    regs.sort(key=lambda r: r.kind == "if_chain")  # an ordered registry before an if/elif chain
    for reg in regs:
        for p in (platform, "ANY"):
            if p in reg.platforms:
                return reg, p, reg.platforms[p]
    return None


def _terms_out(results) -> list[TermOut]:
    return [TermOut(term=describe(r.term), kind=r.term.kind, verdict=r.verdict, why=r.why,
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
    lfs = [lf for lf in _ladders_for(packs, engine, extra) if se.role and pick_registry(lf, se.role, platform)]
    if want is not None:
        lfs = [lf for lf in lfs if (parse_version(lf.version) or Version("0")) <= want]
    if not lfs:
        recorded = se.verdict_for(platform)
        if recorded is not None:
            return _recorded_walk(engine, sid, scheme, platform, machine, *recorded)
        raise SchemeError(f"no shipped {engine} ladder for {sid} on {platform}"
                          + (f" at or before {engine_version}" if engine_version else ""))
    return walk_ladder(lfs[0], sid, scheme, se, machine)


def _recorded_walk(engine: str, sid: str, scheme: Scheme, platform: str, machine: Machine,
                   basis: str, why: str) -> Walk:
    """A walk with no ladder: the engine's refusal or the unknown recorded in ``schemes.toml``."""
    verdict = Verdict.fails if basis == "refused" else Verdict.unknown
    lead = f"the engine refuses {sid} on {platform}" if basis == "refused" else f"unknown how the engine serves {sid} on {platform}"
    return Walk(engine=engine, ladder_version=None, scheme=sid, scheme_title=scheme.title, platform=platform,
                machine=machine.describe(), scheme_verdict=verdict, outcome=f"{lead}: {why}")


def walk_ladder(ladder: LadderFile, sid: str, scheme: Scheme, se: SchemeEngine, machine: Machine) -> Walk:
    """Walk one ladder file for a scheme (``se``: the scheme's entry for the ladder's engine)."""
    engine, release = ladder.engine, ladder.version
    platform = (machine.platform or "CUDA").upper()
    found = pick_registry(ladder, se.role, platform)
    out = Walk(engine=engine, ladder_version=release, scheme=sid, scheme_title=scheme.title,
               platform=platform, machine=machine.describe())
    sv, sres = evaluate_terms(se.gates, machine, scheme.facts)
    out.scheme_gate, out.scheme_verdict = _terms_out(sres), sv
    if found is None:
        out.outcome = f"{engine} {release} has no {sid} ladder for {platform}"
        return out
    reg, plat, rungs = found
    out.registry, out.role = reg.name, reg.role
    for i, name in enumerate(rungs):
        k = ladder.kernel.get(name)
        terms: list[GateTerm] = list(reg.gates.get(name) or (k.gates if k else []))
        v, res = evaluate_terms(terms, machine, scheme.facts)
        hv, _ = evaluate_terms(terms, machine, scheme.facts, optimistic=True)
        ov, _ = evaluate_terms(terms, machine, scheme.facts, assume=frozenset({"option"}))
        gate = " & ".join(describe(t) for t in terms) or "(none: always available)"
        if k is None and name not in reg.gates:  # a rung with no recorded facts: never guessed
            v, hv, ov, gate = Verdict.unknown, Verdict.unknown, Verdict.unknown, "(no gate recorded)"
        cost = reg.cost.get(name) or (k.cost_class if k else "unknown")
        rung = RungOut(rung=i + 1, rungs=len(rungs), kernel=name, cost_class=cost, gate=gate,
                       verdict=v, hardware=hv, terms=_terms_out(res))
        if v == Verdict.fails and ov == Verdict.passes:
            rung.needs = _option_needs(terms, machine, scheme.facts)
        out.rungs.append(rung)
    _predict(out, reg)
    return out


def _option_needs(terms: list[GateTerm], machine: Machine, facts: dict[str, list[str]]) -> list[str]:
    """``name=value`` settings of the failing option terms of a rung (inside alternatives too)."""
    from .gates import evaluate

    needs: list[str] = []
    for t in terms:
        if evaluate(t, machine, facts).verdict != Verdict.fails:
            continue
        if t.kind == "option":
            needs.append(f"{t.name}={'|'.join(t.values)}")
        elif t.kind == "any_of":
            for opt in t.options:
                if evaluate_terms(opt, machine, facts, assume=frozenset({"option"}))[0] == Verdict.passes:
                    needs += _option_needs(opt, machine, facts)
                    break
    return needs


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


def explain(packs: PackSet, kernel: str) -> list[dict]:
    """Every shipped ladder holding ``kernel`` (exact or normalised name): engine, release,
    registry, platform, rung k/n, cost class and gate. Sorted by engine, release, registry."""
    from .ladders import norm

    want = norm(kernel)
    rows = []
    _, extra = _matrix_config()
    ladders = [lf for pack in packs.packs.values() for lf in pack.ladders.values()]
    ladders += [lf for lfs in extra.values() for lf in lfs]
    for lf in sorted(ladders, key=lambda x: (x.engine, parse_version(x.version) or Version("0"))):
        eng, rel = lf.engine, lf.version
        for reg in lf.registry:
            if reg.kind == "attention":
                continue
            for plat, rungs in reg.platforms.items():
                for i, name in enumerate(rungs):
                    k = lf.kernel.get(name)
                    names = [name] + (k.aliases if k else [])
                    if not any(norm(n) == want for n in names):
                        continue
                    rows.append({
                        "engine": eng, "ladder_version": rel, "registry": reg.name, "role": reg.role,
                        "platform": plat, "rung": i + 1, "rungs": len(rungs), "kernel": name,
                        "cost_class": reg.cost.get(name) or (k.cost_class if k else "unknown"),
                        "gate": " & ".join(describe(t) for t in k.gates) if k and k.gates else (k.gate if k else ""),
                        "above": rungs[:i],
                    })
    return rows


class MatrixRow(BaseModel):
    """One engine's answer in ``logscan matrix``: what would execute and how sure."""

    engine: str
    ladder_version: Optional[str] = None
    registry: Optional[str] = None
    executes: Optional[str] = None
    cost_class: Optional[str] = None
    basis: str = ""  #: certain / conditional / refused / undetermined / unknown / no ladder
    note: str = ""


class Matrix(BaseModel):
    """``logscan matrix --format json``: one row per engine, plus each engine's full walk."""

    scheme: str
    scheme_title: str
    machine: str
    rows: list[MatrixRow]
    walks: list[Walk] = Field(default_factory=list)


@functools.lru_cache(maxsize=4)
def _matrix_config(root: Optional[Path] = None) -> tuple[list[str], dict[str, list[LadderFile]]]:
    from ..packs.model import MatrixFile

    base = (root or patterns_root()) / "matrix"
    cfg = _validate(MatrixFile, _read_toml(base / "matrix.toml"), base / "matrix.toml")
    extra: dict[str, list[LadderFile]] = {}
    for eng, files in cfg.ladders.items():
        extra[eng] = [_validate(LadderFile, _read_toml(base / f), base / f) for f in files]
    return list(cfg.engines), extra


def _ladders_for(packs: PackSet, engine: str, extra: dict[str, list[LadderFile]]) -> list[LadderFile]:
    """Every ladder file of an engine, newest release first (pack ladders before matrix-kept ones)."""
    lfs = list(packs.packs[engine].ladders.values()) if engine in packs.packs else []
    lfs += extra.get(engine, [])
    return sorted(lfs, key=lambda lf: parse_version(lf.version) or Version("0"), reverse=True)


def matrix(packs: PackSet, scheme_name: str, machine: Machine, schemes: Optional[SchemeFile] = None) -> Matrix:
    """One row per engine (``patterns/matrix/matrix.toml``): the newest ladder of the scheme's role,
    walked on ``machine``. Raises ``SchemeError`` for an unknown scheme."""
    schemes = schemes or load_schemes()
    sid, scheme = find_scheme(scheme_name, schemes)
    engines, extra = _matrix_config()
    out = Matrix(scheme=sid, scheme_title=scheme.title, machine=machine.describe(), rows=[])
    platform = (machine.platform or "CUDA").upper()
    for eng in engines:
        se = scheme.engines.get(eng)
        lf = None
        if se is not None and se.role:
            lf = next((x for x in _ladders_for(packs, eng, extra) if pick_registry(x, se.role, platform)), None)
        recorded = se.verdict_for(platform) if se is not None and lf is None else None
        if recorded is not None:  # no ladder, but the engine's answer is recorded (refuses / unknown, why)
            basis, why = recorded
            out.rows.append(MatrixRow(engine=eng, basis=basis, executes="refuses to load" if basis == "refused" else None,
                                      note=why))
            continue
        if se is None or lf is None:
            out.rows.append(MatrixRow(engine=eng, basis="no ladder",
                                      note=f"no {eng} ladder for {sid} on {platform} is recorded"))
            continue
        w = walk_ladder(lf, sid, scheme, se, machine)
        out.walks.append(w)
        row = MatrixRow(engine=eng, ladder_version=w.ladder_version, registry=w.registry)
        if w.predicted:
            row.executes, row.cost_class = w.predicted, w.predicted_cost_class
            row.basis = "certain" if w.certain else "conditional"
            if not w.certain:
                row.note = "unless earlier: " + "; ".join(f"{r.kernel} if {_unknowns(r)}" for r in w.rungs if r.possible)
        elif w.scheme_verdict == Verdict.fails or not any(r.verdict != Verdict.fails for r in w.rungs):
            row.basis, row.executes, row.note = "refused", "refuses to load", w.outcome
        else:
            row.basis, row.note = "undetermined", w.outcome
        out.rows.append(row)
    return out
