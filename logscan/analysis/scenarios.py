"""Walk a ladder over every machine the description allows: the set of outcomes, each with its condition.

``predict.walk`` evaluates each rung three-valued; an unknown fact leaves a rung unknown and a
single prediction conditional. This module instead *splits* on the unknown fact: the first
rung whose verdict is unknown is walked twice, once in the world where the fact makes it pass
(the engine stops there) and once where it fails (the walk goes on). Facts are variables with
finite domains, so complementary gates resolve: on sm90 with CUDA unknown, vLLM's FP8 ladder
gives CutlassFP8 if CUDA >= 12.0, else PerTensorTorch for per-tensor scales, else ChannelWise
for the other scale types (``_POSSIBLE_FP8_KERNELS``, vLLM 0.33.0) and never reaches Marlin.

Variables: ``cc`` (the platform's GPUs of ``patterns/gpus.toml`` when no GPU is given), the
CUDA runtime and torch versions (the thresholds the ladder names), each optional package and
build flag (installed or not), an env / server option without default, a checkpoint field
with several allowed values (``scales``: per-tensor / per-channel), ROCm ``gfx`` and, for a
requirement that is not structured, the requirement itself (holds or not). Splitting stops at
``MAX_LEAVES`` worlds; what is left is reported undetermined, never guessed.
"""
from __future__ import annotations

from dataclasses import field
from typing import Callable, Iterable, Optional

from packaging.version import InvalidVersion, Version

from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..packs.model import GateTerm
from .gates import _TRUTHY, Machine, Verdict, describe

MAX_LEAVES = 96
#: the value of a checkpoint field that no gate names (group_size 256 where the gates list -1/64/128)
OTHER = "(other)"
_ZERO = Version("0")

Var = tuple  # ("cc",) ("cuda",) ("torch",) ("pkg", n) ("build", f) ("env", n) ("fact", f) ("prop", key) ("gfx",)


def _v(text: str) -> Optional[Version]:
    try:
        return Version(text)
    except (InvalidVersion, TypeError):
        return None


@dataclass
class World:
    """A partial description: the machine's given facts plus the restricted domains of unknowns."""

    machine: Machine
    facts: dict[str, list[str]]
    initial: dict[Var, frozenset]
    dom: dict[Var, frozenset] = field(default_factory=dict)

    def domain(self, var: Var) -> frozenset:
        d = self.dom.get(var, self.initial.get(var, frozenset({True, False})))
        if var[0] == "pkg":  # a module of a package needs the package: flashinfer.cute_dsl -> flashinfer
            name = var[1]
            if "." in name and self.dom.get(("pkg", name.split(".")[0])) == frozenset({False}):
                return frozenset({False})
            if any(k[0] == "pkg" and k[1].startswith(name + ".") and v == frozenset({True}) for k, v in self.dom.items()):
                return frozenset({True})
        return d

    def restrict(self, var: Var, values: frozenset) -> "World":
        d = dict(self.dom)
        d[var] = frozenset(values)
        return World(self.machine, self.facts, self.initial, d)


@dataclass
class Leaf:
    """One world's end: the rung index that wins (None: every rung refuses) and the world."""

    rung: Optional[int]
    world: World
    refused_by_scheme: bool = False
    undetermined: bool = False


def _atom(t: GateTerm, w: World) -> Optional[tuple[Var, Callable[[object], bool]]]:
    """The variable a term reads and its predicate over values; None if the term is fixed by what is given."""
    m, k = w.machine, t.kind
    if k in ("cc_min", "cc_eq", "cc_family", "cc_range"):
        if m.cc is not None:
            return None
        f = {"cc_min": lambda c: c >= (t.cc or 0), "cc_eq": lambda c: c == t.cc,
             "cc_family": lambda c: c // 10 == t.major,
             "cc_range": lambda c: (t.lo or 0) <= c < (t.hi or 10_000)}[k]
        return ("cc",), f
    if k in ("cuda_min", "torch_min"):
        if (m.cuda if k == "cuda_min" else m.torch):
            return None
        need = _v(t.version) or _ZERO
        return (("cuda",) if k == "cuda_min" else ("torch",)), (lambda have: have >= need)
    if k == "package":
        return None if m.packages is not None else (("pkg", t.name), bool)
    if k == "build":
        return None if m.builds is not None else (("build", t.flag), bool)
    if k == "env":
        if t.name in m.env or t.default is not None:
            return None
        return ("env", t.name), bool
    if k == "option":
        if t.name in m.env or t.default is not None:
            return None
        return ("opt", t.name, "|".join(sorted(t.values))), bool  # holds: the option is one of ``values``
    if k in ("dtype", "layer", "group_size"):
        name = "group_size" if k == "group_size" else t.field
        if (name in w.facts and w.facts[name]) or ("fact", name) in w.initial:
            # one variable per checkpoint field, its domain the values the gates name plus OTHER:
            # "group_size in {-1}" and "group_size in {-1, 64, 128}" are then one fact, never
            # two independent ones (which made impossible worlds and unreadable conditions)
            return ("fact", name), (lambda v: v in t.values)
        return ("prop", describe(t.model_copy(update={"negate": False, "only_on": []}))), bool
    if k == "shape":
        if w.facts.get(t.field):
            return None
        return ("prop", f"{t.field} % {t.multiple_of} == 0"), bool
    if k == "gfx":
        if getattr(m, "gfx", None):
            return None
        return ("gfx",), (lambda g: any(str(g).startswith(p) for p in t.values))
    if k == "opaque":
        return ("prop", t.text or t.source), bool
    return None


def eval_term(t: GateTerm, w: World) -> tuple[Verdict, Optional[tuple[Var, frozenset, frozenset]]]:
    """Verdict of a term in a world; when unknown, the split ``(var, values that pass, values that fail)``."""
    from .gates import evaluate

    m = w.machine
    if t.only_on:
        if m.platform not in t.only_on:
            return Verdict.passes, None
    if t.kind == "any_of":
        split, verdicts = None, []
        for opt in t.options:
            v, s = eval_terms(opt, w)
            verdicts.append(v)
            split = split or s
        v = (Verdict.passes if Verdict.passes in verdicts else
             Verdict.fails if all(x == Verdict.fails for x in verdicts) else Verdict.unknown)
        if t.negate and v != Verdict.unknown:
            v = Verdict.fails if v == Verdict.passes else Verdict.passes
        return v, (split if v == Verdict.unknown else None)
    atom = _atom(t, w)
    if atom is None:
        bare = t.model_copy(update={"only_on": []})
        v = evaluate(bare, m, w.facts).verdict
        return v, None
    var, pred = atom
    dom = w.domain(var)
    yes = frozenset(x for x in dom if pred(x))
    no = dom - yes
    if t.negate:
        yes, no = no, yes
    if not no:
        return Verdict.passes, None
    if not yes:
        return Verdict.fails, None
    return Verdict.unknown, (var, yes, no)


def eval_terms(terms: Iterable[GateTerm], w: World) -> tuple[Verdict, Optional[tuple[Var, frozenset, frozenset]]]:
    """Conjunction in a world; a failing term decides before any split is proposed."""
    split, unknown = None, False
    for t in terms:
        v, s = eval_term(t, w)
        if v == Verdict.fails:
            return Verdict.fails, None
        if v == Verdict.unknown:
            unknown = True
            split = split or s
    return (Verdict.unknown, split) if unknown else (Verdict.passes, None)


def _collect(terms: Iterable[GateTerm], out: dict[str, set]) -> None:
    for t in terms:
        if t.kind == "any_of":
            for opt in t.options:
                _collect(opt, out)
        elif t.kind in ("cuda_min", "torch_min"):
            v = _v(t.version)
            if v is not None:
                out.setdefault(t.kind, set()).add(v)
        elif t.kind in ("cc_min", "cc_eq", "cc_family", "cc_range"):
            out.setdefault("cc_terms", set()).add(1)
        elif t.kind in ("dtype", "layer", "group_size") and t.values:
            name = "group_size" if t.kind == "group_size" else t.field
            if name:
                out.setdefault(("values", name), set()).update(str(v) for v in t.values)


def _cuda_floor(machine: Machine) -> Optional[Version]:
    """The lowest CUDA runtime the given GPU runs under (``Machine.cuda_floor``, planning only, from
    ``gpus.min_cuda``), None when not set (CUDA runtime given: it is no variable then)."""
    if machine.cuda or not machine.cuda_floor:
        return None
    return _v(machine.cuda_floor)


def initial_domains(gates: list[list[GateTerm]], machine: Machine, facts: dict[str, list[str]],
                    ccs: Iterable[int]) -> dict[Var, frozenset]:
    """Domains of the unknown variables: version points are the thresholds the gates name plus 0."""
    seen: dict[str, set] = {}
    for g in gates:
        _collect(g, seen)
    cudas = frozenset({_ZERO, *seen.get("cuda_min", ())})
    floor = _cuda_floor(machine)
    if floor is not None:  # a runtime older than the GPU's arch cannot be (gpus.toml min_cuda)
        cudas = frozenset({floor, *(v for v in cudas if v > floor)})
    init: dict[Var, frozenset] = {("cc",): frozenset(ccs),
                                  ("cuda",): cudas,
                                  ("torch",): frozenset({_ZERO, *seen.get("torch_min", ())})}
    for name, vals in facts.items():
        if vals:
            init[("fact", name)] = frozenset(vals)
    for key, vals in seen.items():
        if isinstance(key, tuple) and key[0] == "values" and ("fact", key[1]) not in init:
            init[("fact", key[1])] = frozenset(vals | {OTHER})
    # one target of each AMD family a ladder gates on: CDNA2/3/4, RDNA1 (gfx101x), RDNA2 (gfx103x), RDNA3 (gfx110x),
    # RDNA3.5 (gfx115x), RDNA4 (gfx12xx) and gfx1250 (llama.cpp ggml-cuda common.cuh GGML_CUDA_CC_IS_RDNA*)
    init[("gfx",)] = frozenset({"gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1030", "gfx1100", "gfx1151",
                               "gfx1201", "gfx1250"})
    return init


def explore(rungs: list[list[GateTerm]], scheme_gate: list[GateTerm], world: World) -> list[Leaf]:
    """Every world's winning rung (first that passes), splitting on the first unknown fact met."""
    leaves: list[Leaf] = []

    def go(w: World, start: int, scheme_done: bool) -> None:
        if len(leaves) >= MAX_LEAVES:
            leaves.append(Leaf(None, w, undetermined=True))
            return
        if not scheme_done:
            v, s = eval_terms(scheme_gate, w)
            if v == Verdict.fails:
                leaves.append(Leaf(None, w, refused_by_scheme=True))
                return
            if v == Verdict.unknown:
                if s is None:
                    leaves.append(Leaf(None, w, undetermined=True))
                    return
                go(w.restrict(s[0], s[1]), start, False)
                go(w.restrict(s[0], s[2]), start, False)
                return
        for i in range(start, len(rungs)):
            v, s = eval_terms(rungs[i], w)
            if v == Verdict.passes:
                leaves.append(Leaf(i, w))
                return
            if v == Verdict.fails:
                continue
            if s is None:  # unknown with nothing to split on (should not happen): say so
                leaves.append(Leaf(i, w, undetermined=True))
                return
            go(w.restrict(s[0], s[1]), i, True)
            go(w.restrict(s[0], s[2]), i, True)
            return
        leaves.append(Leaf(None, w))

    go(world, 0, not scheme_gate)
    return leaves


def restricted(w: World) -> dict:
    """The variables a world narrowed beyond the description (var -> values)."""
    out = {}
    for var in w.dom:
        vals = w.domain(var)
        if vals != w.initial.get(var, frozenset({True, False})):
            out[var] = vals
    return out


def merge(alts: list[dict], initial: dict) -> list[dict]:
    """Merge alternatives that differ in one variable only (union its values; drop it when whole)."""
    alts = [dict(a) for a in alts]
    changed = True
    while changed:
        changed = False
        for i in range(len(alts)):
            for j in range(i + 1, len(alts)):
                a, b = alts[i], alts[j]
                if a.keys() != b.keys():
                    continue
                diff = [v for v in a if a[v] != b[v]]
                if len(diff) > 1:
                    continue
                m = dict(a)
                if diff:
                    v = diff[0]
                    m[v] = a[v] | b[v]
                    if m[v] == initial.get(v, frozenset({True, False})):
                        del m[v]
                alts[i] = m
                del alts[j]
                changed = True
                break
            if changed:
                break
    # an alternative that is a subset of another's facts makes the other redundant
    alts = [a for a in alts if not any(b is not a and b.items() <= a.items() and b != a for b in alts)]
    return alts


def condition(w: World, facts: Optional[dict] = None) -> list[str]:
    """The facts a world fixed beyond the description, in words: ``CUDA runtime >= 12.0``, ``flashinfer installed``."""
    out = []
    for var, vals in (facts if facts is not None else restricted(w)).items():
        full = w.initial.get(var, frozenset({True, False}))
        kind = var[0]
        if kind in ("cuda", "torch"):
            label = "CUDA runtime" if kind == "cuda" else "torch"
            pts = sorted(full)
            lo, hi = min(vals), max(vals)
            nxt = next((p for p in pts if p > hi), None)
            if lo > _ZERO and nxt is not None:
                out.append(f"{lo} <= {label} < {nxt}")
            elif lo > _ZERO:
                out.append(f"{label} >= {lo}")
            elif nxt is not None:
                out.append(f"{label} < {nxt}")
        elif kind == "cc":
            out.append("GPU in " + ", ".join(f"sm{c}" for c in sorted(vals)))
        elif kind == "pkg":
            out.append(f"{var[1]} {'installed' if True in vals else 'not installed'}")
        elif kind == "build":
            out.append(f"built {'with' if True in vals else 'without'} {var[1]}")
        elif kind in ("env", "opt"):
            out.append(f"{var[1]} {'set' if True in vals else 'not set'}" if kind == "env"
                       else f"{var[1]} {'=' if True in vals else 'not'} {var[2]}")
        elif kind == "fact" and OTHER in full:
            out.append(_field_words(var[1], vals, full))
        elif kind == "fact":
            out.append(f"{var[1]} {'/'.join(sorted(vals))}")
        elif kind == "gfx":
            out.append("ROCm arch " + "/".join(sorted(vals)))
        else:
            out.append(f"{var[1]}" + (" holds" if True in vals else " does not hold"))
    return sorted(out)


def _field_words(name: str, vals: frozenset, full: frozenset) -> str:
    """A checkpoint field narrowed to some of the values the gates name: ``group_size in {-1, 128}``,
    ``group_size = 64``, or by what it is not when the rest (OTHER) is among them."""
    def sort(xs):
        return sorted(xs, key=lambda x: (0, int(x), "") if str(x).lstrip("-").isdigit() else (1, 0, str(x)))

    if OTHER in vals:
        excluded = sort(full - vals)
        return f"{name} not in {{{', '.join(excluded)}}}" if len(excluded) > 1 else f"{name} != {excluded[0]}"
    named = sort(vals)
    return f"{name} = {named[0]}" if len(named) == 1 else f"{name} in {{{', '.join(named)}}}"


def truthy(value: Optional[str]) -> bool:
    """An environment value read as vLLM reads a flag (``1``, ``true``, ``yes``, ``on``)."""
    return str(value or "").strip().lower() in _TRUTHY
