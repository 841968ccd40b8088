"""Evaluate ladder gates for a described machine and checkpoint: passes, fails or unknown.

A rung's gate is a list of ``GateTerm`` (``logscan.packs.model``), all of which must hold.
Each term is evaluated three-valued against a ``Machine`` (platform, compute capability,
CUDA runtime, optional packages, build flags, environment, torch) and the checkpoint facts of
the scheme (activation dtype, group size, ...). A fact the description does not give stays
unknown: an unknown term never passes or fails by guess. Conjunction: any ``fails`` fails,
all ``passes`` pass, otherwise unknown; ``any_of`` is the dual; ``negate`` swaps passes/fails.
"""
from __future__ import annotations

import enum
from dataclasses import field
from typing import Iterable, Optional

from packaging.version import InvalidVersion, Version

from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..packs.model import GateTerm
from .term_forms import term_form


class Verdict(str, enum.Enum):
    """Three-valued outcome of a gate term or a whole rung."""

    passes = "passes"
    fails = "fails"
    unknown = "unknown"


def _and(vs: Iterable[Verdict]) -> Verdict:
    vs = list(vs)
    if Verdict.fails in vs:
        return Verdict.fails
    return Verdict.passes if all(v == Verdict.passes for v in vs) else Verdict.unknown


def _or(vs: Iterable[Verdict]) -> Verdict:
    vs = list(vs)
    if Verdict.passes in vs:
        return Verdict.passes
    return Verdict.fails if vs and all(v == Verdict.fails for v in vs) else Verdict.unknown


_TRUTHY = {"1", "true", "yes", "on"}


@dataclass
class Machine:
    """What is known about the machine a ladder is walked on; ``None`` means unknown.

    ``cc`` is the compute capability as digits (90 = sm90, 120 = sm120). ``packages`` is the
    closed set of optional packages installed when given (anything else is absent), unknown
    when None. ``builds`` likewise for compile-time flags of the engine build. ``env`` holds
    explicit environment values; an unset variable takes the engine's default from the ladder.
    """

    platform: Optional[str] = "CUDA"
    cc: Optional[int] = None
    gpu: Optional[str] = None
    cuda: Optional[str] = None
    torch: Optional[str] = None
    packages: Optional[frozenset[str]] = None
    builds: Optional[frozenset[str]] = None
    env: dict[str, str] = field(default_factory=dict)
    gfx: Optional[str] = None  #: ROCm arch (gfx942, gfx950); None when unknown or not ROCm
    #: checkpoint facts the user gave (``scales``: per-tensor, ``group_size``: 128, ``in_features``: K)
    checkpoint: dict[str, list[str]] = field(default_factory=dict)
    #: hardware floors (``FP8``, ``FP4``) a log line states the GPU lacks (rule ``lacks_native``),
    #: with that line: a floor term fails on them when the GPU itself is unknown
    lacks: dict[str, str] = field(default_factory=dict)
    #: planning only (``ladder`` / ``matrix --gpu`` without ``--cuda``): the lowest CUDA runtime the
    #: GPU's arch runs under (``gpus.min_cuda``); a ``cuda_min`` it meets passes. ``scan`` leaves it
    #: None: a log's runtime is what the log says, never inferred from the GPU
    cuda_floor: Optional[str] = None

    def describe(self) -> str:
        """One line: ``CUDA sm90 (H100), CUDA runtime unknown, packages unknown``; on ROCm the arch
        first, ``ROCM gfx942 (MI300X), device capability 9.4, ...`` ("sm94" names no AMD GPU: the
        engines' gates read ROCm's (major, minor) as a capability, which the ladders compare)."""
        gpu = f" ({self.gpu})" if self.gpu else ""
        if self.gfx and self.cc is not None:
            arch = f"{self.gfx}{gpu}, device capability {self.cc // 10}.{self.cc % 10}"
        elif self.gfx:
            arch = f"{self.gfx}{gpu}"
        else:
            arch = f"sm{self.cc}{gpu}" if self.cc is not None else "compute capability unknown"
        parts = [f"{self.platform or 'platform unknown'}", arch,
                 f"CUDA runtime {self.cuda}" if self.cuda else "CUDA runtime unknown",
                 ("packages " + (",".join(sorted(self.packages)) or "none")) if self.packages is not None else "optional packages unknown"]
        if self.builds is not None:
            parts.append("build flags " + (",".join(sorted(self.builds)) or "none"))
        if self.env:
            parts.append(" ".join(f"{k}={v}" for k, v in sorted(self.env.items())))
        return ", ".join(parts)


@dataclass(frozen=True)
class TermResult:
    """A term's verdict and a short reason: ``cc>=75: sm90`` / ``flashinfer: not given``."""

    term: GateTerm
    verdict: Verdict
    why: str


def _ver(text: Optional[str]) -> Optional[Version]:
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def lowest_capability(t: GateTerm) -> Optional[int]:
    """The lowest compute capability (digits, ``90`` = sm90) a capability term lets through, or
    None: ``cc_min`` / ``cc_eq`` its ``cc``, ``cc_range`` its ``lo``, ``cc_family`` its ``major`` x 10;
    None for a negated term, other kinds, and alternatives (``any_of``: callers that look inside
    them, ``floors._min_cc``, do so themselves)."""
    if t.negate:
        return None
    if t.kind in ("cc_min", "cc_eq"):
        return t.cc
    if t.kind == "cc_range":
        return t.lo
    if t.kind == "cc_family" and t.major is not None:
        return t.major * 10
    return None


def describe(t: GateTerm) -> str:
    """Compact rendering of a term, e.g. ``cc>=75``, ``CUDA>=12.8``, ``pkg flashinfer``, ``group_size in {-1,128}``.

    The per-kind forms are ``term_forms.TERM_FORMS`` (shared with ``words.term_words``)."""
    if t.kind == "any_of":
        s = "(" + " | ".join(" & ".join(describe(x) for x in opt) for opt in t.options) + ")"
    else:
        s = term_form(t)[0]
    if t.only_on:
        s += f" [on {'/'.join(t.only_on)}]"
    if t.floor:
        s += f" [{t.floor} floor]"
    return ("NOT " if t.negate else "") + s


#: Term kinds that describe the software install rather than the silicon.
SOFT_KINDS = frozenset({"cuda_min", "torch_min", "package", "build", "env", "opaque", "option"})
HARDWARE_KINDS = frozenset({"platform", "cc_min", "cc_eq", "cc_family", "cc_range", "gfx"})


def evaluate(t: GateTerm, m: Machine, facts: dict[str, list[str]], optimistic: bool = False,
             assume: frozenset[str] = frozenset()) -> TermResult:
    """Evaluate one term. ``facts`` maps checkpoint fields (``act_type``, ``group_size``, ...) to the
    set of values the scheme allows; a missing field is unknown. Never raises.

    ``optimistic`` answers "could this hardware take the rung with the right software?": software
    terms (CUDA runtime, packages, build flags, env, unstructured) pass and unknowns pass; only a
    known hardware or checkpoint mismatch fails. ``assume`` names term kinds taken as passing
    (e.g. ``{"option"}``: "would it run with the right server option?").
    """
    if (optimistic and t.kind in SOFT_KINDS) or t.kind in assume:
        return TermResult(t, Verdict.passes, "assumed")
    if t.only_on:
        if m.platform is None:
            return TermResult(t, Verdict.unknown, "platform unknown")
        if m.platform not in t.only_on:
            return TermResult(t, Verdict.passes, f"not applicable on {m.platform}")
    if t.floor and m.cc is None and not m.gfx and t.floor in m.lacks:
        return TermResult(t, Verdict.fails, f"the log states the GPU lacks native {t.floor} compute ({m.lacks[t.floor]})")
    v, why = _eval(t, m, facts, optimistic, assume)
    if t.floor and v == Verdict.fails:
        why = f"below the {t.floor} hardware floor: {why}"
    if t.negate and v != Verdict.unknown:
        v = Verdict.passes if v == Verdict.fails else Verdict.fails
    if optimistic and v == Verdict.unknown:
        v = Verdict.passes
    return TermResult(t, v, why)


def _eval(t: GateTerm, m: Machine, facts: dict[str, list[str]], optimistic: bool,
          assume: frozenset[str]) -> tuple[Verdict, str]:
    k = t.kind
    ok = lambda b: Verdict.passes if b else Verdict.fails  # noqa: E731
    if k == "platform":
        if m.platform is None:
            return Verdict.unknown, "platform unknown"
        return ok(m.platform in t.platforms), m.platform
    if k in ("cc_min", "cc_eq", "cc_family", "cc_range"):
        if m.cc is None:
            return Verdict.unknown, "compute capability unknown"
        cc = m.cc
        if k == "cc_min":
            return ok(cc >= (t.cc or 0)), f"sm{cc}"
        if k == "cc_eq":
            return ok(cc == t.cc), f"sm{cc}"
        if k == "cc_family":
            return ok(cc // 10 == t.major), f"sm{cc}"
        return ok((t.lo or 0) <= cc < (t.hi or 10_000)), f"sm{cc}"
    if k in ("cuda_min", "torch_min"):
        have = _ver(m.cuda if k == "cuda_min" else m.torch)
        if have is None and k == "cuda_min" and m.cuda_floor:
            floor, need = _ver(m.cuda_floor), _ver(t.version)  # the GPU's arch needs this runtime at least
            if floor is not None and need is not None and floor >= need:
                return Verdict.passes, f"CUDA runtime not given; sm{m.cc} needs {floor} or newer"
        if have is None:
            return Verdict.unknown, ("CUDA runtime" if k == "cuda_min" else "torch") + " version not given"
        need = _ver(t.version)
        return ok(need is None or have >= need), str(have)
    if k == "package":
        if m.packages is None:
            return Verdict.unknown, f"whether {t.name} is installed is not given"
        present = t.name in m.packages
        return ok(present), "installed" if present else "not installed"
    if k == "build":
        if m.builds is None:
            return Verdict.unknown, f"whether the build compiled {t.flag} is not given"
        return ok(t.flag in m.builds), "compiled" if t.flag in m.builds else "not compiled"
    if k == "env":
        val = m.env.get(t.name, t.default)
        if val is None:
            return Verdict.unknown, f"{t.name} not given and no default known"
        src = "set" if t.name in m.env else "default"
        return ok(str(val).strip().lower() in _TRUTHY), f"{t.name}={val} ({src})"
    if k == "option":
        val = m.env.get(t.name, t.default)
        if val is None:
            return Verdict.unknown, f"{t.name} not given and no default known"
        src = "set" if t.name in m.env else "default"
        why = (f'{t.name} unset ("{val}")' if src == "default" and str(val).strip().lower() == "default"
               else f"{t.name}={val} ({src})")  # not "=default (default)" (TRT-LLM allowed_backends)
        return ok(str(val).strip().lower() in {v.lower() for v in t.values}), why
    if k in ("dtype", "layer", "group_size"):
        name = "group_size" if k == "group_size" else t.field
        have = facts.get(name)
        if not have:
            return Verdict.unknown, f"{name} not given"
        inside = [h for h in have if h in t.values]
        if len(inside) == len(have):
            return Verdict.passes, f"{name}={','.join(have)}"
        return (Verdict.fails if not inside else Verdict.unknown), f"{name}={','.join(have)}"
    if k == "shape":
        have = facts.get(t.field)
        if not have:
            return Verdict.unknown, f"{t.field} not given"
        try:
            res = [int(h) % (t.multiple_of or 1) == 0 for h in have]
        except ValueError:
            return Verdict.unknown, f"{t.field} unreadable"
        return (_and(ok(r) for r in res)), f"{t.field}={','.join(have)}"
    if k == "gfx":
        if not m.gfx:
            return Verdict.unknown, "ROCm arch (gfx) not given"
        return ok(any(m.gfx.startswith(p) for p in t.values)), m.gfx
    if k == "any_of":
        v = _or(_and(evaluate(x, m, facts, optimistic, assume).verdict for x in opt) for opt in t.options)
        return v, "alternatives"
    return Verdict.unknown, "logscan does not model it"  # the term's words quote it (term_forms)


def evaluate_terms(terms: Iterable[GateTerm], m: Machine, facts: dict[str, list[str]],
                   optimistic: bool = False, assume: frozenset[str] = frozenset()) -> tuple[Verdict, list[TermResult]]:
    """Verdict of a conjunction of terms, with each term's result (in order)."""
    results = [evaluate(t, m, facts, optimistic, assume) for t in terms]
    return _and(r.verdict for r in results), results
