"""Judge a fallback: each better rung a selection fell below, its needs against the run's known facts.

A selection "fell" below the rungs above it that are better by cost class and that no known
fact refuses (``fell.better_skipped``: ``LadderPosition.above``). Each such rung is judged here
on the facts the run established (``run_machine``: the GPU from ``--gpu`` or the log, the CUDA
runtime from ``--cuda`` or the log, the compiled archs of the build, the environment the log
states, the server arguments the engine dumped), with its gate as ``ladder`` walks it
(``overlay.rung_terms``: the planning overlay's gates and rewrites applied, for every engine):

- every need met by a known fact: the engine skipped a rung it should have taken,
  UNEXPECTED_FALLBACK (a finding, inferred from the ladder);
- a known fact refuses a need: the fallback is explained, and the rung is in neither list;
- otherwise the rung is undecided (``LadderPosition.undecided``, with the needs no known fact
  decides): the text report says the fallback is UNEXPLAINED and the gate's check is
  FALLBACK_UNEXPLAINED (a kind of UNEXPECTED_FALLBACK). Not an error: a fact is missing.

An environment variable or a server option that passes only by the engine's default is not a
known fact (a deployment may set it unlogged): it stays undecided. A release the log does not
print (no era hint either) leaves undecided whether that release holds the rung; so does an
inferred release range whose ladders disagree on the rung (``LadderPosition.elsewhere``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Optional

from ..formats.clip import clip
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..models import UndecidedRung
from ..packs.model import GateTerm, LadderFile, Registry
from .gates import HARDWARE_KINDS, Machine, Verdict, evaluate
from .words import term_words

if TYPE_CHECKING:
    from ..packs.loader import Pack
    from .analyzer import Analyzer
    from .runstate import RunState

#: term kinds whose value a deployment sets (environment, server arguments): passing only by
#: the engine's default is an assumption, never a known fact
_SETTABLE = frozenset({"env", "option"})


@dataclass(frozen=True)
class Met:
    """A better rung every need of which the run's known facts meet."""

    rung: int
    kernel: str
    cost_class: str
    needs: str  #: its gate in words (every term met)


def run_machine(ctx: Analyzer, run: RunState, pack: Pack) -> tuple[Machine, Optional[str]]:
    """The machine a run's rungs are judged on and where its GPU came from (``given``, ``log``,
    or None when neither ``--gpu`` nor the log names one: the platform alone then).

    Known facts only: the CUDA runtime (``--cuda``, else run fact ``torch_cuda``), the
    environment and switches the log states (``config.extra``), the logged server arguments
    (``ServerArgs``; an option term reads ``--flag-name`` from the field its name spells, or
    from the pack's ``option_args``), and the build flags when the build's compiled arch list is
    logged (pack ``[arch_check] build_flags``)."""
    from ..models import ServerArgs
    from .run_checks import judged_machine, set_compiled_builds

    machine, origin = judged_machine(ctx, run)
    if machine is None:
        machine = Machine(platform=run.platform)
    machine.cuda = machine.cuda or run.config.extra.get("torch_cuda")
    machine.env.update({k: v for k, v in run.config.extra.items() if isinstance(v, str)})
    sa = run.config.server_args
    if sa is not None:
        values = {f: getattr(sa, f) for f in ServerArgs.model_fields
                  if f not in ("line", "shape", "truncated", "flags", "other")}
        values.update(sa.other)
        for name, v in values.items():
            if v is not None and str(v) != "None":
                machine.env.setdefault("--" + name.replace("_", "-"), str(v).strip("'\""))
        for flag, name in pack.meta.pack.option_args.items():
            v = values.get(name)
            if v is not None and str(v) != "None":
                machine.env[flag] = str(v).strip("'\"")
    for flag, name in pack.meta.pack.option_args.items():
        v = run.config.extra.get(name)  # no dump states it: a launch command's flag (pack.cli names)
        if isinstance(v, str) and v != "None":
            machine.env.setdefault(flag, v.strip("'\""))
    set_compiled_builds(machine, run, pack)
    machine.lacks = stated_lacks(ctx, run, machine)
    return machine, origin


def stated_lacks(ctx: Analyzer, run: RunState, machine=None) -> dict[str, str]:
    """The hardware floors the run's own lines state the GPU lacks (rule ``lacks_native``):
    floor id -> ``line N``, the first line saying so. A floor term fails on them when the run's
    GPU is unknown (``gates.evaluate``): the engine's own word explains the fallback."""
    out: dict[str, str] = {}
    for ev in run.events:
        entry = ctx.rules.get(ev.rule)
        rule = entry[0].rule if entry is not None else None
        fid = getattr(rule, "lacks_native", None)
        if fid and fid not in out and _states_lack(rule, run, machine):
            out[fid] = f"line {ev.line}"
    return out


def _states_lack(rule, run: RunState, machine=None) -> bool:
    """Whether ``rule``'s line says the GPU lacks the format *in this run*: a rule that also has
    ``implies_gpu`` (vLLM's and SGLang's FP8 Marlin sentence) does so only under the quantization
    its ceiling names, stated by the run, and with none of its ``unless`` facts (a forced Marlin, a
    disabled kernel) stated; otherwise the same sentence reaches a capable GPU and explains nothing
    (fail closed: the fallback stays undecided). A rule without ``implies_gpu`` states the lack in
    its own words ('NVFP4 w4a4 requires compute capability >= 10.0; serving ... via FP4 Marlin')."""
    from .statements import ceiling_holds

    ceiling = getattr(rule, "implies_gpu", None)
    return ceiling is None or ceiling_holds(ceiling, run, machine)


#: the one need a run with no known GPU gets for every hardware term (compute capability, arch)
GPU_NEED = "the GPU it ran on (the log names none logscan knows; scan --gpu tells it)"


def _term(t: GateTerm, m: Machine, facts: dict[str, list[str]]) -> tuple[Verdict, list[str]]:
    """One term on the known facts: its verdict and, when undecided, the need in words (a
    hardware term undecided for want of a GPU is ``GPU_NEED``, said once)."""
    if t.kind == "any_of" and not t.negate and not (t.only_on and m.platform and m.platform not in t.only_on):
        judged = [_all(opt, m, facts) for opt in t.options]
        if any(v == Verdict.passes for v, _ in judged):
            return Verdict.passes, []
        if all(v == Verdict.fails for v, _ in judged):
            return Verdict.fails, []
        inner = list(dict.fromkeys(n for v, ns in judged if v == Verdict.unknown for n in ns))
        if inner == [GPU_NEED]:
            return Verdict.unknown, inner
        return Verdict.unknown, [f"{term_words(t)} (undecided: {clip('; '.join(inner), 300)})"]
    r = evaluate(t, m, facts)
    if r.verdict == Verdict.unknown and t.kind in HARDWARE_KINDS and m.cc is None and not m.gfx:
        return Verdict.unknown, [GPU_NEED]
    if r.verdict == Verdict.passes and t.kind in _SETTABLE and t.name not in m.env and not t.negate:
        return Verdict.unknown, [f"{term_words(t)}: the log does not set it"]
    if r.verdict == Verdict.unknown:
        why = r.why.replace(" is not given", " is not in the log").replace(" not given", " not in the log")
        return Verdict.unknown, [f"{term_words(t)} ({why})"]
    return r.verdict, []


def _all(terms: list[GateTerm], m: Machine, facts: dict[str, list[str]]) -> tuple[Verdict, list[str]]:
    """A conjunction on the known facts: fails if a term fails, passes if all pass, else unknown
    with every undecided need."""
    needs: list[str] = []
    out = Verdict.passes
    for t in terms:
        v, ns = _term(t, m, facts)
        if v == Verdict.fails:
            return Verdict.fails, []
        if v == Verdict.unknown:
            out = Verdict.unknown
            needs += [n for n in ns if n not in needs]
    return out, needs


def judge_above(ladder: LadderFile, reg: Registry, pos, machine: Machine, origin: Optional[str],
                disabled: dict[str, str], release_need: Optional[str],
                dtype: Optional[str] = None) -> tuple[list[Met], list[UndecidedRung]]:
    """Judge each rung of ``pos.above`` (a ``LadderPosition``) on ``machine``: ``(met, undecided)``.

    ``dtype``: the model dtype the log states (a layer's input and output dtype); else
    bfloat16 or float16, as ``ladder`` walks assume (``predict.scheme_facts``).

    A rung the log's own switch disabled (``disabled``) or a known fact refuses is explained
    and in neither; one refused by the log's own statement that the GPU lacks its hardware floor
    (``machine.lacks``) is also named in ``pos.stated_refused``. ``origin`` None (no GPU known) and ``release_need`` (the run's release does
    not decide the rung) keep a rung whose gate passes undecided, with that need."""
    from .overlay import rung_terms

    dt = [dtype] if dtype in ("bfloat16", "float16") else ["bfloat16", "float16"]
    facts = {"input_dtype": dt, "out_dtype": dt}
    from .floors import shown
    from .words import gate_words

    from .logged_ladder import rung_names

    names = rung_names(reg, pos)  # the run's logged candidate list, when a line logs it
    if machine.platform is None and pos.platform != "ANY":  # the list it was placed on: CUDA ladders assumed
        machine = replace(machine, platform=pos.platform)
    met: list[Met] = []
    undecided: list[UndecidedRung] = []
    for i, name in enumerate(names[: max(pos.rung - 1, 0)]):
        if name not in pos.above or name in disabled:
            continue
        terms, recorded, _ = rung_terms(ladder, reg, name)
        if recorded:
            v, needs = _all(terms, machine, facts)
        else:
            v, needs = Verdict.unknown, [f"its gate (not recorded for {name})"]
        if v == Verdict.fails:
            said = _stated(terms, machine)
            if said:
                pos.stated_refused.append(f"rung {i + 1} {name}")
                pos.stated_by = pos.stated_by or said
            continue
        if origin is None and GPU_NEED not in needs:
            needs.append(GPU_NEED)
            v = Verdict.unknown
        if release_need:
            needs.append(release_need)
            v = Verdict.unknown
        k = ladder.kernel.get(name)
        cost = reg.cost.get(name) or (k.cost_class if k else "unknown")
        if v == Verdict.passes:
            met.append(Met(rung=i + 1, kernel=name, cost_class=cost,
                           needs=gate_words(shown(terms, machine.platform)) if terms else "always available"))
        else:
            undecided.append(UndecidedRung(rung=i + 1, kernel=name, cost_class=cost,
                                           needs=[clip(n, 400) for n in needs[:12]]))
    return met, undecided


def _stated(terms: list[GateTerm], m: Machine) -> str:
    """Why a refused rung is refused by the log's own statement, or "": a hardware floor term
    (``floor``) the GPU is stated to lack while the GPU itself is unknown."""
    if m.cc is not None or m.gfx:
        return ""
    for t in terms:
        if t.floor and t.floor in m.lacks and (not t.only_on or m.platform in t.only_on):
            return f"{m.lacks[t.floor]} states the GPU lacks native {t.floor} compute ({t.floor} hardware floor)"
    return ""


def release_need(info, pos) -> Optional[str]:
    """Why the run's release leaves a skipped rung undecided, or None: no release logged, given
    or inferred (the newest ladder assumed), or an inferred range whose ladders disagree on the
    selection's rung (``pos.elsewhere``)."""
    if info.version_source in ("logged", "given", "reported"):
        return None
    if info.version_source == "inferred":
        if pos.elsewhere:
            return ("that the run's release holds the rung above it (the inferred releases disagree "
                    "on this ladder: ladder.elsewhere)")
        return None
    return (f"that the run's release holds the rung (the log prints no release: the "
            f"{pos.ladder_version} ladder is assumed)")
