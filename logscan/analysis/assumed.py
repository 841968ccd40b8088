"""A sentence whose cost class assumes an activation scheme the log may never state (rule ``assumes``).

vLLM's FP4 Marlin sentence ("Your GPU does not have native support for FP4 computation ...
Weight-only FP4 compression will be used leveraging the Marlin kernel"; vLLM 0.9.0 -> 0.33.0,
model_executor/layers/quantization/utils/marlin_utils_fp4.py, nvfp4_utils.py, nvfp4/marlin.py)
is printed wherever the FP4 Marlin path is prepared: for a W4A4 NVFP4 checkpoint served by
weight-only Marlin (a substitution), and for a W4A16 NVFP4 checkpoint (NVFP4A16, ModelOpt
W4A16_NVFP4 layers), whose native kernel Marlin is, even on FP4-capable Blackwell GPUs
(vllm-project/vllm#27471, PR #31346, PR #56603). The rule's ``AssumedScheme``
(``packs.model_rules``) says which scheme its reading assumes and how the log may settle it:

- ``native`` found (model name or a read line) and ``stated`` not: the checkpoint's own path
  (cost class ``native``, no finding);
- ``stated`` found in another read line: the assumed scheme is the log's (reading kept, the
  line named);
- neither, on a CUDA GPU known (``--gpu`` or the log) to be at or above the ``floor``: the
  sentence contradicts the GPU, so the build lacks the kernels or the checkpoint is the
  alternative: cost class ``unknown``, the finding lowered to info with both readings;
- neither, GPU unknown or below the floor: the reading stands, but as an assumption: the
  scheme says "assumed" and the finding's reasons name the alternative.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from .. import rxcache
from ..models import Severity

if TYPE_CHECKING:
    from .runstate import RunState


@dataclass
class Reading:
    """How a rule with ``assumes`` reads in one run. ``kind``: ``native`` | ``stated`` |
    ``contradicted`` | ``assumed``; ``rule``: the rule to read the line with (a copy with the
    cost class / finding the reading gives); ``scheme``: a selection's scheme text from the
    ladder's (``scheme_of``); ``reasons``: for the finding and the selection's reasoning;
    ``severity``: the finding's, when lowered."""

    kind: str
    rule: object
    assumed: str
    reasons: list[str] = field(default_factory=list)
    severity: Optional[Severity] = None
    title: Optional[str] = None
    alternative: str = ""  #: the alternative's scheme (``NVFP4 W4A16``), for a ``native`` reading
    placed: bool = True  #: False: the line is placed on no ladder (a ``native`` reading without one)
    where: str = ""  #: what stated the alternative (``the model name``, ``line 3``)

    def scheme_of(self, ladder_scheme: Optional[str]) -> Optional[str]:
        """``NVFP4 W4A4`` -> ``NVFP4 (W4A4 assumed)`` unless a line stated it."""
        if self.kind == "native":
            return f"{self.alternative} (stated by {self.where})"
        if self.kind == "stated" or not ladder_scheme:
            return ladder_scheme
        base = ladder_scheme.replace(self.assumed, "").strip()
        return f"{base} ({self.assumed}{ASSUMED_MARK}" if base else f"({self.assumed}{ASSUMED_MARK}"


#: the end of a selection's scheme whose activation part a rule assumed (``Reading.scheme_of``)
ASSUMED_MARK = " assumed)"


def is_assumed(scheme: Optional[str]) -> bool:
    """Whether a selection's ``scheme`` is an assumption (``Reading.scheme_of``), not the log's."""
    return bool(scheme) and scheme.endswith(ASSUMED_MARK)


def _first(rx: Optional[str], texts: list[tuple[str, str]]) -> Optional[tuple[str, str]]:
    if not rx:
        return None
    for where, text in texts:
        m = rxcache.search(rx, text or "")
        if m:
            return where, f"'{m.group(0)}'"
    return None


#: (rule id, kind) -> (rule, its copy for that reading)
_COPIES: dict = {}


def _copy(rule, kind: str, **update):
    got = _COPIES.get((rule.id, kind))
    if got is None or got[0] is not rule:
        got = _COPIES[(rule.id, kind)] = (rule, rule.model_copy(update=update))
    return got[1]


def read(rule, run: "RunState", machine) -> Optional[Reading]:
    """The reading of ``rule`` (``rule.assumes``) in ``run`` on ``machine`` (``gates.Machine``
    from ``fallback.run_machine``; None: unknown), or None for a rule without ``assumes``. The
    texts searched are the run's model name and the messages of its read lines other than
    ``rule``'s own. Raises ``regex.error`` on a malformed pattern (the pack tests compile them)."""
    a = getattr(rule, "assumes", None)
    if a is None:
        return None
    texts = [("the model name", run.config.model or "")]
    texts += [(f"line {ev.line}", ev.message) for ev in run.events if ev.rule != rule.id]
    native, stated = _first(a.native, texts), _first(a.stated, texts[1:])
    if stated is None and a.stated_sites:
        site = next(((ev.line, f) for ev in run.events if ev.rule == rule.id
                     for f in [(ev.fileinfo or "").rsplit(":", 1)[0]] if f and rxcache.fullmatch(a.stated_sites, f)), None)
        if site is not None:
            stated = (f"line {site[0]}", f"printed from {site[1]}, which only the {a.scheme} path reaches")
    if native is not None and stated is None:
        return Reading("native", _copy(rule, "native", cost_class="native", finding=None, assumes=None,
                                       registry=a.alternative_registry),
                       a.scheme, [f"{native[0]} states it ({native[1]}): {a.alternative}"],
                       alternative=a.alternative_scheme, where=native[0], placed=a.alternative_registry is not None)
    if stated is not None:
        return Reading("stated", rule, a.scheme,
                       [f"{stated[0]} states the {a.scheme} scheme ({stated[1]}), so the sentence is a "
                        f"{a.scheme} layer's substitution"])
    from .floors import load_floors

    floor = load_floors().get(a.floor) if a.floor else None
    cc = getattr(machine, "cc", None)
    why = (f"{a.scheme} assumed: the log never states whether the checkpoint quantizes activations; "
           f"{a.alternative}")
    if floor and cc is not None and getattr(machine, "platform", None) == "CUDA" and cc >= floor["cuda_cc"]:
        gpu = getattr(machine, "gpu", None) or f"sm{cc}"
        return Reading("contradicted", _copy(rule, "contradicted", cost_class="unknown"), a.scheme, [
            f"the sentence contradicts the GPU: {gpu} (sm{cc}) has native {a.floor} compute ({floor['what']}, "
            f"sm{floor['cuda_cc']} or newer), so either the build lacks the {a.floor} kernels (a real "
            f"substitution for a {a.scheme} checkpoint) or the checkpoint is not {a.scheme}",
            why, "cost class unknown: no line of the log decides between them"],
            severity=Severity.info, title=f"{rule.kernel or 'the kernel'} on a GPU with native {a.floor}: a substitution "
                                          f"only for a {a.scheme} checkpoint, which the log does not state")
    return Reading("assumed", rule, a.scheme, [why],
                   title=f"weight-only kernel substituted for a {a.scheme} path ({a.scheme} assumed)")
