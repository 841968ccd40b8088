"""A selection refused by the run's own failure: a reason of that failure names its kernel.

vLLM's ``choose_mp_linear_kernel`` / ``choose_scaled_mm_linear_kernel``
(``model_executor/layers/quantization/kernels/*/__init__.py``, 0.6.6 -> 0.33) raise
``Failed to find a kernel that can implement the WNA16 linear layer. Reasons:`` followed by one
line per candidate, each led by the kernel class it refuses (``MarlinLinearKernel cannot
implement due to: ...``, ``MacheteLinearKernel requires capability 90, ...``). A run can log
``Using MarlinLinearKernel for ...`` for the layers that fit and then fail on a layer Marlin
refuses: the selection is real, but the run's own failure refuses that kernel, and a report that
shows it as a plain selection (a gate's quiet ``[pass]``) hides the failure it belongs to.

Which finding codes' reasons are refusals is data (``patterns/findings.toml`` ``reasons_refuse``);
the match is general: a reason whose leading name is the selection's kernel, its ladder class
or one of that class's aliases (case and punctuation ignored), within the finding's layer family
when it has one.
"""
from __future__ import annotations

from typing import Optional

from .. import rxcache
from ..formats.clip import clip
from ..models import Finding, Refusal, Selection
from ..packs.model import FindingsFile, LadderFile
from .ladders import norm

#: the name a refusal leads with: after list marks and quotes, an identifier (``MarlinLinearKernel``,
#: ``vllm.kernels.Machete``, ``FLASHINFER_CUTLASS``), up to the first space, colon or bracket
_LEAD = rxcache.compile(r"^[\s\-*•>'\"`]{0,8}([A-Za-z_][\w.]{1,80})")


def _names(sel: Selection, ladder: Optional[LadderFile]) -> set[str]:
    """Normalised names the selection's kernel goes by: as logged, its ladder class, the class's aliases."""
    names = {norm(sel.kernel)}
    if sel.ladder is not None:
        names.add(norm(sel.ladder.kernel_class))
        k = ladder.kernel.get(sel.ladder.kernel_class) if ladder is not None else None
        if k is not None:
            names.update(norm(a) for a in k.aliases)
    names.discard("")
    return names


def mark_refused(selections: list[Selection], findings: list[Finding], codes: FindingsFile,
                 ladders: dict) -> None:
    """Set ``Selection.refused`` for each selection a refusing finding's reason names (first
    such reason wins). ``ladders``: the pack's ladders by release (for a class's aliases).
    Mutates the selections; raises nothing."""
    refusing = [f for f in findings if f.reasons and any(
        getattr(codes.code.get(c), "reasons_refuse", False) for c in codes.lineage(f.code))]
    if not refusing:
        return
    for sel in selections:
        if sel.refused is not None:
            continue
        ladder = ladders.get(sel.ladder.ladder_version) if sel.ladder is not None else None
        names = _names(sel, ladder)
        for f in refusing:
            if f.family is not None and f.family != sel.family:
                continue
            hit = next((r for r in f.reasons if (m := _LEAD.match(r)) and
                        (norm(m.group(1)) in names or norm(m.group(1).rsplit(".", 1)[-1]) in names)), None)
            if hit is not None:
                sel.refused = Refusal(line=f.line, code=f.code, reason=clip(hit.strip(), 400))
                break
