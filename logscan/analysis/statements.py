"""A line's statement about the GPU checked against ``scan --gpu`` (GPU_CONTRADICTS_LOG).

A rule's ``implies_gpu`` (``packs.model_rules.GpuCeiling``) says what the sentence it reads
implies about the compute capability: vLLM's ``marlin_utils_fp8.py`` "Your GPU does not have
native support for FP8 computation" under ``quantization=fp8`` is a GPU below sm89. A ``--gpu``
at or above that ceiling is contradicted by the log, as a logged kernel whose rung needs a newer
GPU is (``run_checks.contradicted``): the log is the evidence, so what was inferred from ``--gpu``
rests on the wrong machine.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import rxcache

if TYPE_CHECKING:
    from .analyzer import Analyzer
    from .runstate import RunState


def _forced_by(ceiling, machine, run: "RunState") -> list[str]:
    """The ``unless`` facts the run states (``config.extra`` keys, or the server arguments'
    ``--flags`` gathered in ``machine.env``): each forces the path on a capable GPU."""
    return [u for u in ceiling.unless
            if run.config.extra.get(u) not in (None, "", "None") or machine.env.get(u) not in (None, "", "None")]


def ceiling_holds(ceiling, run: "RunState", machine=None) -> bool:
    """Whether a rule's ``implies_gpu`` ceiling applies to ``run``: the run states a quantization
    method the ceiling names (when it names one) and no ``unless`` fact that forces the path on a
    capable GPU (``_forced_by``; ``machine`` adds the server arguments it gathered). Used by the
    GPU contradiction below and by ``fallback.stated_lacks``."""
    quant = (run.config.quantization or "").strip().lower()
    if ceiling.quantization is not None and (not quant or not rxcache.fullmatch(ceiling.quantization, quant)):
        return False
    if machine is None:
        return not any(run.config.extra.get(u) not in (None, "", "None") for u in ceiling.unless)
    return not _forced_by(ceiling, machine, run)


def as_stated_for(rule, run: "RunState"):
    """``rule`` as its line reads for ``run``: under a checkpoint whose own weight-only format the
    line prepares (``rule.checkpoint_own``, ``packs.model_rules.CheckpointOwn``: the run states a
    quantization method its regex fully matches) the rule with that family, registry hint and
    cost class and no finding; else ``rule`` itself (unstated quantization: the sentence's own
    reading stands). The copy is made once per rule."""
    quiet = getattr(rule, "no_finding_when", None)
    if quiet and rule.finding and asked_for(quiet, run):
        got = _ASKED.get(rule.id)
        if got is None or got[0] is not rule:
            got = _ASKED[rule.id] = (rule, rule.model_copy(update=dict(finding=None)))
        return got[1]
    own = getattr(rule, "checkpoint_own", None)
    quant = (run.config.quantization or "").strip().lower()
    if own is None or not quant or not rxcache.fullmatch(own.quantization, quant):
        return rule
    got = _OWN.get(rule.id)
    if got is None or got[0] is not rule:
        got = _OWN[rule.id] = (rule, rule.model_copy(update=dict(
            family=own.family, registry=own.registry, cost_class=own.cost_class, finding=None,
            lacks_native=None, implies_gpu=None, assumes=None)))
    return got[1]


#: rule id -> (rule, its checkpoint-own reading)
_OWN: dict = {}
#: rule id -> (rule, its reading without a finding when the run asked for it)
_ASKED: dict = {}


def asked_for(quiet: dict, run: "RunState") -> bool:
    """Whether ``run`` states one of the facts of ``quiet`` (``Rule.no_finding_when``: fact -> regex) with a
    value the regex fully matches, case-insensitively: the run asked for what the rule's line reports."""
    extra = run.config.extra or {}
    for key, rx in quiet.items():
        value = extra.get(key)
        if isinstance(value, str) and value.strip() and rxcache.fullmatch(rx, value.strip().lower()):
            return True
    return False


def gpu_statements(ctx: "Analyzer", run: "RunState", add_finding, machine, origin) -> None:
    """GPU_CONTRADICTS_LOG for each rule with ``implies_gpu`` whose line the run holds, when
    ``--gpu`` (``origin == "given"``, ``machine`` from ``fallback.run_machine``) is a CUDA GPU at or
    above the statement's ceiling, the run states a quantization method the ceiling names (when it
    names one), and no ``unless`` fact is stated. One finding per rule (its first line). Nothing is claimed when the
    quantization is not stated: a weight-only checkpoint reaches the same sentence on any GPU."""
    if origin != "given" or machine is None or machine.cc is None or machine.platform != "CUDA":
        return
    stated_capability(ctx, run, add_finding, machine)
    seen: set[str] = set()
    for ev in run.events:
        entry = ctx.rules.get(ev.rule)
        rule = entry[0].rule if entry is not None else None
        ceiling = getattr(rule, "implies_gpu", None)
        if ceiling is None or ev.rule in seen or machine.cc < ceiling.below:
            continue
        if not ceiling_holds(ceiling, run, machine):
            continue
        seen.add(ev.rule)
        add_finding("GPU_CONTRADICTS_LOG", ev, ev.rule, kernel=rule.kernel, inferred=True, basis="engine_message",
                    family=rule.family,
                    reasons=[f"line {ev.line} says the GPU lacks a capability: "
                             + (f"under quantization={run.config.quantization} " if ceiling.quantization else "")
                             + f"the engine prints it only on a GPU below "
                             f"sm{ceiling.below} ({ceiling.source}); {machine.gpu} (sm{machine.cc}, from --gpu) "
                             f"is not below it",
                             "the log is the evidence: --gpu is probably not the GPU this log came from, and what "
                             "was inferred from --gpu for this run rests on a machine the log contradicts"
                             + (f"; the log states none of {', '.join(ceiling.unless)}, which force this path on "
                                "a newer GPU" if ceiling.unless else "")],
                    title=f"--gpu {machine.gpu} (sm{machine.cc}) contradicts the log: it states a GPU below "
                          f"sm{ceiling.below}")


def stated_capability(ctx: "Analyzer", run: "RunState", add_finding, machine) -> None:
    """GPU_CONTRADICTS_LOG when a line states the compute capability of the run's GPU (a rule
    that ``sets`` ``compute_capability``: vLLM FlashInfer's ``arch=sm86``, a capability error's
    "current compute capability is 86") and the ``--gpu`` one (``machine``, CUDA) is another:
    the log is the evidence. The first such line is named; a line whose capability logscan
    cannot read claims nothing."""
    from .infer import parse_capability
    from .runstate import fill

    if run.platform not in (None, "CUDA"):  # a HIP device's 'compute capability 9.0' is no CUDA sm
        return
    for ev in run.events:
        entry = ctx.rules.get(ev.rule)
        rule = entry[0].rule if entry is not None else None
        template = (getattr(rule, "sets", None) or {}).get("compute_capability")
        have = parse_capability(fill(template, ev.groups)) if template else None
        if have is None:
            continue
        if have != machine.cc:
            add_finding("GPU_CONTRADICTS_LOG", ev, ev.rule, inferred=True, basis="engine_message",
                        reasons=[f"line {ev.line} states the GPU's compute capability: sm{have}; {machine.gpu} "
                                 f"(sm{machine.cc}, from --gpu) is another GPU",
                                 "the log is the evidence: --gpu is probably not the GPU this log came from, "
                                 "and what was inferred from --gpu for this run rests on a machine the log "
                                 "contradicts"],
                        title=f"--gpu {machine.gpu} (sm{machine.cc}) contradicts the log: it states sm{have}")
        return
