"""Which line named a run's GPU: the engine's own, a tool's output or a wrapper's echo.

A rule that sets ``gpu`` may say the kind of line it reads (``sets.gpu_source``: ``tool``,
``wrapper``; ``engine`` when it says none). ``patterns/gpus.toml`` ``[source.<kind>]`` ranks the
kinds: the engine's statement of the GPU is what it ran on; nvidia-smi's table (TGI's ``--env``
block, ``launcher/src/env_runtime.rs``), ``nvidia-smi --query-gpu ... --format=csv`` rows or
``sglang.check_env`` name the machine's devices; a wrapper script's echo ('✅ NVIDIA GPU: NVIDIA
GB10', vllm-358) is another program's word. A stronger line replaces a weaker one's GPU; a
weaker one never replaces a stronger (the first of one rank stays, as before). A GPU kept from a
weaker line is said (run fact ``gpu_evidence``), and two weaker lines naming GPUs of different
compute capability leave the run unjudged on either (``gpu_weak_mixed``, fail closed).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..models import Event

if TYPE_CHECKING:
    from .runstate import RunState

#: run facts (``config.extra``) this module keeps
SOURCE, EVIDENCE, OTHER, MIXED = "gpu_source", "gpu_evidence", "gpu_other", "gpu_weak_mixed"


def _cc(name: Optional[str]) -> object:
    """What two GPU names are compared by: the compute capability ``name`` resolves to (off CUDA,
    the table entry's name), else the name itself, lowercased."""
    from .gpus import resolve_logged_gpu

    g = resolve_logged_gpu(name)
    if g is None:
        return (name or "").strip().lower()
    return g.cc if g.cc is not None else g.name


def set_gpu(run: "RunState", value: str, source: Optional[str], ev: Event) -> None:
    """Run fact ``gpu`` = ``value`` from ``ev``'s line of kind ``source`` (``gpus.toml``
    ``[source.*]``, None = ``engine``): set when none is known or the known one came from a
    weaker kind of line; a weaker or equal line leaves it (an equal weak line naming a GPU of
    another capability marks the weak GPU mixed)."""
    from .gpus import ENGINE_SOURCE, source_rank, source_words

    c, extra = run.config, run.config.extra
    kind = source or ENGINE_SOURCE
    have = extra.get(SOURCE) or ENGINE_SOURCE
    if c.gpu is not None:
        new, old = source_rank(kind), source_rank(have)
        if new < old:
            return
        if new == old:
            if kind != ENGINE_SOURCE and _cc(value) != _cc(c.gpu) and MIXED not in extra:
                extra[MIXED] = (f"lines that are not the engine's name GPUs of different kinds ({c.gpu}; "
                                f"{value} at line {ev.line}): the run is not judged on either")
            return
        if _cc(value) != _cc(c.gpu):
            said = extra.get(EVIDENCE, "").split(": ", 1)[0] or f"{c.gpu}, named by a weaker line,"
            extra[OTHER] = f"{said} is not taken: {value} is named by {source_words(kind)} at line {ev.line}"
        for k in (SOURCE, EVIDENCE, MIXED):
            extra.pop(k, None)
    c.gpu = value
    if kind != ENGINE_SOURCE:
        extra[SOURCE] = kind
        extra[EVIDENCE] = f"{value} named at line {ev.line}: {source_words(kind)}"


#: run facts of ``set_one_of``: the devices named, and the one capability they share
ONE_OF, ONE_OF_CC = "gpu_one_of", "gpu_one_of_cc"


def set_one_of(run: "RunState", value: str, ev: Event) -> None:
    """Run fact ``gpu_one_of``: the engine names every device of the system, not the one it runs
    on (vLLM's platform warning 'Detected different devices in the system: A, B', ``platforms/
    cuda.py`` ``log_warnings``: NVML's device order, which CUDA's may not follow). ``value``: one or
    more names, ``, ``-joined (a later line adds to them; the first line naming them is said). When every name resolves and all share
    one compute capability, the run's GPU has it (``gpu_one_of_cc``, judged on by
    ``run_checks.judged_machine``); otherwise the run's GPU is not known from them, and a GPU only a
    tool or wrapper names is not taken either (``weak_blocked``)."""
    from .gpus import resolve_logged_gpu

    extra = run.config.extra
    # a report's or wrapper's bullet naming two GPUs (common-rules machine.wrapper-gpus) is no engine's device list
    said = ("names the GPUs the run may have been on" if ".machine." in ev.rule
            else "names the system's devices")
    took = "it" if ".machine." in ev.rule else "the engine"
    names = [n for n in (extra.get(ONE_OF) or "").split(", ") if n]
    before = len(names)
    for n in (x.strip() for x in value.split(", ")):
        if n and n not in names and len(names) < 64:
            names.append(n)
    if len(names) == before:
        return  # the same warning again (each process prints it): the first line stays the one named
    extra[ONE_OF] = ", ".join(names)
    gpus = [resolve_logged_gpu(n) for n in names]
    ccs = {g.cc for g in gpus if g is not None}
    if all(g is not None for g in gpus) and len(ccs) == 1 and None not in ccs:
        cc = ccs.pop()
        extra[ONE_OF_CC] = str(cc)
        extra["gpu_one_of_note"] = (f"line {ev.line} {said} ({extra[ONE_OF]}), not the one "
                                    f"{took} took: all are sm{cc}, so the run is judged on sm{cc}")
    else:
        extra.pop(ONE_OF_CC, None)
        extra["gpu_one_of_note"] = (f"line {ev.line} {said} ({extra[ONE_OF]}), not the one "
                                    f"{took} took: they are not all of one known compute capability, so the "
                                    "run's GPU is not known from them (nor from a tool's or wrapper's line)")


def weak_blocked(extra: dict) -> bool:
    """A GPU only a tool's or wrapper's line names is not the run's machine: such lines name GPUs of
    different kinds (``gpu_weak_mixed``), or the engine names the system's devices and they are not
    all of one capability (``gpu_one_of`` without ``gpu_one_of_cc``)."""
    return bool(extra.get(MIXED)) or (bool(extra.get(ONE_OF)) and not extra.get(ONE_OF_CC))
