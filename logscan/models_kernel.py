"""The report classes of what a run chose and what is wrong with it: cost classes and
severities, kernel selections placed on their ladders, findings.

Split from ``logscan/models.py``, which re-exports every name (``from logscan.models import
Selection`` keeps working). Plain slotted classes (``logscan.plain``), as there.
"""

from enum import Enum
from typing import Optional

from dataclasses import field

from .plain import PlainModel, plain


class CostClass(str, Enum):
    """What a kernel costs relative to what the checkpoint's scheme asked for.

    Source: the ``compute`` classification of ``shared/reference/vllm/README.md``
    (vLLM 0.5.5 -> 0.33.0 kernel registries), named as the corpus labels name them.
    """

    native = "native"  #: computes in the checkpoint's own format (W4A4 FP4 for NVFP4, W8A8 for FP8, W4A16 for GPTQ/AWQ)
    weight_only = "weight_only"  #: an A16 kernel stands in for a W8A8/W4A4 checkpoint: memory kept, compute saving lost
    #: weights kept, activations quantized wider than asked (8-bit for a W4A4 checkpoint: llama.cpp's
    #: MMQ ampere config runs FP4 weights x Q8_1 activations): part of the compute saving lost
    activation_upcast = "activation_upcast"
    emulated = "emulated"  #: dequantize and multiply in high precision at every step
    dequant_at_load = "dequant_at_load"  #: weights turned into BF16 at load: memory saving lost too
    portable = "portable"  #: a generic Triton/torch kernel in the right format
    unknown = "unknown"  #: the log does not let one decide


#: Worst first; used to order selections and to pick the worst class of a run.
COST_ORDER = [CostClass.dequant_at_load, CostClass.emulated, CostClass.weight_only,
              CostClass.activation_upcast, CostClass.portable, CostClass.unknown, CostClass.native]


class Severity(str, Enum):
    """How bad a finding is; ``error`` findings usually mean the engine did not start."""

    error = "error"
    warning = "warning"
    info = "info"


@plain
class RungElsewhere(PlainModel):
    """The kernel's rung in other releases of the inferred range, when they disagree."""

    releases: str  #: release range, e.g. ``0.26.0–0.29.0``
    rung: int
    rungs: int
    registry: str


@plain
class UndecidedRung(PlainModel):
    """A better rung the selection fell below whose needs the run's known facts do not decide
    (``LadderPosition.undecided``): the fallback is UNEXPLAINED, not an error. ``needs`` are the
    rung's gate terms (``overlay.rung_terms``: the planning overlay applied) that no known fact
    passes or fails, in words, each with why it is undecided (``deep_gemm installed (not in the
    log)``, ``SGLANG_ENABLE_JIT_DEEPGEMM set (default 1, the log does not set it)``)."""

    rung: int  #: 1-based position of the skipped rung
    kernel: str  #: its class (or enum member) on the ladder
    cost_class: str
    needs: list[str] = field(default_factory=list)


@plain
class LadderPosition(PlainModel):
    """Where a kernel sits on the ordered fallback ladder (registry) of its engine release."""

    registry: str  #: registry name in the engine source, e.g. ``_POSSIBLE_NVFP4_KERNELS``
    role: str  #: what the registry serves, e.g. ``nvfp4 linear``
    platform: str  #: CUDA, ROCM, XPU, CPU, TPU or ANY
    ladder_version: str  #: the engine release the ladder was taken from
    rung: int  #: 1-based position of the kernel
    rungs: int  #: number of rungs of the ladder
    fell: int  #: skipped rungs above the selected one that are better by cost class and could have passed
    kernel_class: str  #: the class (or enum member) on the ladder
    above: list[str] = field(default_factory=list)  #: those skipped rungs, in ladder order
    stopped_by: dict[str, str] = field(default_factory=dict)  #: skipped rung -> its gate in words
    min_capability: Optional[int] = None
    gate: Optional[str] = None
    #: the releases in which this list (registry, platform) is the one placed on, e.g. ``0.30.0–0.33.0``
    holds_in: Optional[str] = None
    #: other placements where releases of an inferred version range disagree (same fields)
    elsewhere: list[RungElsewhere] = field(default_factory=list)
    #: with ``elsewhere``: the releases of the inferred range no shipped ladder of which holds the
    #: kernel, e.g. ``0.10.2–0.18.0`` (spans joined by ", "): the range fits them, no rung is known there
    unplaced_in: Optional[str] = None
    #: of ``above``, the rungs whose needs the run's known facts leave undecided (the fallback is
    #: UNEXPLAINED; the gate's FALLBACK_UNEXPLAINED). A rung every need of which known facts meet
    #: is UNEXPECTED_FALLBACK instead; one a known fact refuses is explained and in neither.
    undecided: list[UndecidedRung] = field(default_factory=list)
    #: of ``above``, the rungs the log's own line refuses (``rung 1 FlashInferCuteDslNvFp4LinearKernel``):
    #: it states the GPU lacks the native compute their hardware floor needs (``analysis/floors.py``)
    stated_refused: list[str] = field(default_factory=list)
    #: that line's statement: ``line 16 states the GPU lacks native FP4 compute (FP4 hardware floor)``
    stated_by: Optional[str] = None
    #: the run's own candidate list, when a line logs it ('out of potential backends: [...]'):
    #: its rungs in the logged order (as the ladder spells them), which ``rung``, ``rungs`` and
    #: ``above`` count on instead of the shipped list (``logged_ladder.on_logged_list``)
    logged_list: Optional[list[str]] = None
    #: the line that logs it
    logged_line: Optional[int] = None
    #: rungs above, better by cost class, that the known GPU refuses (not fallen below, so not in
    #: ``above``): rung -> the failing needs with what the GPU has (``fell.better_skipped``);
    #: None when there are none or the GPU is unknown
    refused_on_gpu: Optional[dict[str, str]] = None
    _omit_none = ("logged_list", "logged_line", "unplaced_in", "refused_on_gpu")


@plain
class Refusal(PlainModel):
    """The run's own failure refuses the selected kernel (``Selection.refused``): a reason of a
    finding whose code refuses the kernels its reasons name (``findings.toml``
    ``reasons_refuse``: KERNEL_NOT_FOUND) begins with this kernel's name or ladder class."""

    line: int  #: the line of that finding
    code: str  #: its code
    reason: str  #: the reason naming the kernel, as the engine logged it


@plain
class Selection(PlainModel):
    """One quantized layer family and the kernel that executes it, for one run.

    ``observed`` is True when a log line names the kernel; False when it is inferred
    (``reasoning`` then says from what).
    """

    family: str  #: layer family, e.g. ``linear (NVFP4 GEMM)``, ``MoE (NvFp4)``, ``linear (WNA16)``
    kernel: str  #: the name as the log prints it (class name, backend enum value, ...)
    cost_class: CostClass
    scheme: Optional[str] = None  #: the scheme the ladder serves, e.g. ``NVFP4 W4A4``
    ladder: Optional[LadderPosition] = None
    observed: bool = True
    reasoning: Optional[str] = None
    ranks: list[str] = field(default_factory=list)
    line: int
    evidence: str
    rule: str
    #: the run's own failure refuses this kernel (a KERNEL_NOT_FOUND reason names it): marked
    #: ``(refused)``, and the gate folds the selection into that failing check
    refused: Optional[Refusal] = None


#: What an inferred finding was inferred from (``Finding.inferred_from``), in prose.
INFERRED_FROM = {"ladder": "the ladder rung", "kernel_name": "the kernel name",
                 "engine_message": "the engine's message", "compiled_archs": "the compiled architectures",
                 "config": "the config and engine defaults"}


@plain
class Finding(PlainModel):
    """A degradation or failure, with its evidence line and the rule or ladder that raised it."""

    code: str
    severity: Severity
    title: str
    line: int
    evidence: str
    rule: Optional[str] = None
    kernel: Optional[str] = None
    #: the layer family it is about (None: the whole run); a finding is one per (run, family, code)
    family: Optional[str] = None
    #: the cost class of ``kernel`` when the finding's line also selects it (the selection's class)
    cost_class: Optional[CostClass] = None
    reasons: list[str] = field(default_factory=list)  #: e.g. every kernel's reason for KERNEL_NOT_FOUND
    remedy: Optional[str] = None
    inferred: bool = False  #: True when no line states it and it follows from the ladder
    #: how an inferred finding was inferred: ``ladder`` (the kernel's rung) or ``kernel_name``
    #: (the pack's ``name_cost`` table), ``config`` (the engine's defaults for the config); None if observed
    inferred_from: Optional[str] = None
    #: the finding's line is the raised exception that failed the start (``Run.start_failure``)
    fatal: bool = False

    def inferred_tag(self) -> str:
        """`` (inferred from the ladder rung)`` etc. for an inferred finding, else the empty string."""
        if not self.inferred:
            return ""
        return f" (inferred from {INFERRED_FROM.get(self.inferred_from or '', 'the log')})"
