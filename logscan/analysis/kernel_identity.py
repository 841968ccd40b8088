"""Engine identity from a selected kernel class that only one engine's ladders hold.

A line with no engine prefix, start marker or identity rule (a paste: ``Selected
TritonFp8BlockScaledMMKernel for Fp8LinearMethod``, vllm-project/vllm#43367) still names its
engine when it selects a kernel *class* that the shipped ladders of exactly one engine define
(vLLM's ``_POSSIBLE_FP8_BLOCK_KERNELS`` registry, 0.20.0 ->): the class name is that
engine's own vocabulary, as a package path is. Enum members and free-form backend names
(``MARLIN``, ``DeepGEMM``) are no classes (``LadderIndex.releases_holding_class``) and name
nothing; a class two engines' ladders hold names neither. An enum member printed with its class
(``Using NvFp4LinearBackend.MARLIN for NVFP4 GEMM``, vllm-376) names the engine whose pack lists that
class in ``enum_classes`` (vLLM's nvfp4_utils.py enum; SGLang's ``Fp4GemmRunnerBackend`` is
SGLang's), when exactly one pack does. The engine must be the one whose
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
        title = ctx.packs.packs[run.engine].meta.pack.title or run.engine
        holders = [e for e, idx in ctx.ladders.items() if idx.releases_holding_class(kernel)]
        if holders == [run.engine]:
            return f"line {ev.line} selects kernel class {kernel}, which only the {title} ladders define"
        enum = enum_class(kernel)
        if enum and [e for e, p in ctx.packs.packs.items() if enum in p.meta.pack.enum_classes] == [run.engine]:
            return f"line {ev.line} selects {kernel}, a member of {enum}, a backend enum only {title}'s code defines"
    return None


def enum_class(kernel: str) -> Optional[str]:
    """``NvFp4LinearBackend`` of ``NvFp4LinearBackend.MARLIN`` (an enum member printed with its
    class, as Python's ``str()`` of an ``Enum`` member is), else None."""
    cls, dot, member = kernel.partition(".")
    return cls if dot and cls.isidentifier() and member.isidentifier() else None
