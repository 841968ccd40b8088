"""Engine identity from a selected kernel class that only one engine's ladders hold.

A line with no engine prefix, start marker or identity rule (a paste: ``Selected
TritonFp8BlockScaledMMKernel for Fp8LinearMethod``, vllm-project/vllm#43367) still names its
engine when it selects a kernel *class* that the shipped ladders of exactly one engine define
(vLLM's ``_POSSIBLE_FP8_BLOCK_KERNELS`` registry, 0.20.0 ->): the class name is that
engine's own vocabulary, as a package path is. Enum members and free-form backend names
(``MARLIN``, ``DeepGEMM``) are no classes (``LadderIndex.releases_holding_class``) and name
nothing; a class two engines' ladders hold names neither. The engine must be the one whose
rules read the run (``read_with``), so that its rules, ladders and releases agree with it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from .analyzer import Analyzer
    from .runstate import RunState


def class_identity(ctx: Analyzer, run: RunState) -> Optional[str]:
    """Why ``run`` (no line named its engine) is ``run.engine``'s, in prose, or None.

    The first selection line whose kernel class only ``run.engine``'s ladders hold is the evidence.
    """
    from .engine_facts import kernel_of  # engine_facts calls this module

    for ev in run.events:
        cr, _ = ctx.rules[ev.rule]
        if not cr.rule.family:
            continue
        kernel = kernel_of(cr, ev)
        if not kernel:
            continue
        holders = [e for e, idx in ctx.ladders.items() if idx.releases_holding_class(kernel)]
        if holders == [run.engine]:
            title = ctx.packs.packs[run.engine].meta.pack.title or run.engine
            return f"line {ev.line} selects kernel class {kernel}, which only the {title} ladders define"
    return None
