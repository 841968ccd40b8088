"""The Triton kernel a ``CompilationError`` excerpt names, given to the finding the excerpt states.

Triton's ``CompilationError`` (triton/compiler/errors.py ``_format_message``, Triton 2.x-3.x) prints
``at <line>:<col>:``, then the @triton.jit function's source from up to four lines above the failing
line, a caret and the error (``ValueError("type fp8e4nv not supported in this architecture ...")``).
When the failing line is among the function's first lines the excerpt begins at its ``def <name>(``:
the kernel that failed to compile (vLLM / SGLang JIT their fused MoE and block-FP8 GEMMs:
``fused_moe_kernel``, ``_w8a8_triton_block_scaled_mm``; inductor its ``triton_poi_*`` kernels).

The header is the rule ``<engine>.uncaught.triton-compile-error`` (common-rules/98-uncaught.toml);
its continuation takes the def line only as the line right after the header, so a ``def`` line
elsewhere (a traceback's quoted code, a pasted script) names no kernel.
"""
from __future__ import annotations

from typing import Iterable, Optional

from ..models import Event, Finding

#: how many lines below the excerpt's def line the error it heads may be (the def, up to three more
#: source lines, the caret line, the error: Triton prints at most four source lines)
SPAN = 6


def jit_heads_before(head: Optional[Event], line: int) -> list[Event]:
    """``[head]`` when that bare CompilationError header (one that joined no run) ends within
    ``SPAN`` lines above ``line``, the first line of the run it then belongs to; else ``[]``."""
    return [head] if head is not None and 0 < line - (head.end_line or head.line) <= SPAN else []


def jit_kernels(events: Iterable[Event]) -> list[tuple[int, int, str]]:
    """``(header line, def line, kernel name)`` of each CompilationError header whose excerpt
    begins at a ``def <name>(`` line (its continuation item's ``jit_kernel`` group)."""
    out = []
    for ev in events:
        if not ev.rule.endswith(".uncaught.triton-compile-error") or not ev.item_groups:
            continue
        name = ev.item_groups[0].get("jit_kernel")
        if name:
            out.append((ev.line, ev.end_line or ev.line + 1, name))
    return out


def name_jit_kernels(events: Iterable[Event], findings: dict) -> None:
    """Give each finding that names no kernel and is stated within ``SPAN`` lines below an excerpt's
    def line that Triton kernel (in place; ``findings``: key -> ``Finding``), with the reason."""
    heads = jit_kernels(events)
    if not heads:
        return
    for key, f in list(findings.items()):
        if f.kernel or f.inferred:
            continue
        hit = next(((h, d, n) for h, d, n in heads if d < f.line <= d + SPAN), None)
        if hit is None:
            continue
        h, d, n = hit
        why = (f"the Triton kernel {n}: line {h}'s CompilationError excerpt begins at its "
               f"`def {n}(` (line {d}); the error at line {f.line} is its compilation's")
        findings[key] = f.model_copy(update={"kernel": n, "reasons": [*f.reasons, why]})


def jit_failing_kernel(sf, events: Iterable[Event]) -> None:
    """A failed start whose cause is a CompilationError header naming its kernel, and whose failing
    kernel nothing else named: that Triton kernel (``sf``: a ``StartFailure``, filled in place)."""
    if sf.failing_kernel or sf.cause_line is None:
        return
    hit = next(((h, d, n) for h, d, n in jit_kernels(events) if h == sf.cause_line), None)
    if hit is not None:
        h, d, n = hit
        sf.failing_kernel, sf.failing_kernel_line = n, d
        sf.failing_kernel_why = f"the CompilationError excerpt at line {h} begins at the Triton kernel's `def {n}(` (line {d})"
