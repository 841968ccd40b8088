"""Models of ``patterns/<engine>/infer.toml`` (what a log does not say, inferred) and the matrix.

Arch predicates, auto-selection chains, inferred layer families and their outcomes, and
``patterns/matrix/matrix.toml`` (the engine rows of ``logscan matrix``).
"""

from typing import Literal, Optional

from dataclasses import field as _field

from ..plain import spec

from .model_base import _Strict, strict


@strict
class Predicate(_Strict):
    """An engine's arch predicate as data: capability window AND a CUDA-version floor.

    Source: SGLang ``sglang/srt/utils/common.py`` ``_check_cuda_device_version`` (0.5.10 ->):
    ``is_blackwell`` = SM major in {10, 11, 12} AND torch.version.cuda >= 12.8. ``majors``
    tests the SM major only; ``min_cc`` / ``below_cc`` bound the capability as an integer
    (``90`` = 9.0); ``exact_cc`` lists exact capabilities; ``min_cuda`` is the CUDA floor.
    """

    name: str
    versions: str = ""  #: engine releases this definition holds for (PEP 440); empty = all
    majors: list[int] = _field(default_factory=list)
    min_cc: Optional[int] = None
    below_cc: Optional[int] = None
    exact_cc: list[int] = _field(default_factory=list)
    min_cuda: Optional[str] = None
    source: str = ""


@strict
class ChainStep(_Strict):
    """One branch of an if/elif auto ladder: the first step whose predicates all hold wins."""

    when: list[str] = _field(default_factory=list)  #: predicate names; ``!name`` negates; empty = else
    then: str


@strict
class Chain(_Strict):
    """An auto ladder resolving a server argument left at ``auto`` (e.g. ``fp4_gemm_runner_backend``)."""

    arg: str
    auto: list[str] = _field(default_factory=lambda: ["auto", ""])  #: values that mean "let the chain decide"
    quantization: str = ""  #: regex over the run's quantization; empty = any
    versions: str = ""
    source: str = ""
    steps: list[ChainStep] = spec(min_length=1)


@strict
class Outcome(_Strict):
    """What a resolved backend value means for a layer family: the kernel and its cost class."""

    kernel: str
    cost_class: Literal["native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown"]
    requires: list[str] = _field(default_factory=list)  #: predicates that must hold, else the engine raises
    note: str = ""


@strict
class InferSpec(_Strict):
    """A layer family whose kernel the engine does not log: infer it from server args + GPU."""

    id: str
    family: str
    quantization: str  #: regex over the run's quantization that makes the family exist
    arg: str  #: the server argument (resolved by a chain when left at auto)
    registry: Optional[str] = None  #: ladder role hint for rung placement
    versions: str = ""
    needs_event_kind: list[str] = _field(default_factory=list)  #: e.g. ``moe_kernel``: MoE layers seen
    #: or server args that prove the layers exist (arg -> regex over its printed value), e.g. ep_size > 1
    or_args: dict[str, str] = _field(default_factory=dict)
    skip_if_family: str = ""  #: regex: an observed selection of such a family makes the inference moot
    outcomes: dict[str, Outcome]
    source: str = ""


@strict
class Tell(_Strict):
    """A run fact that only some GPUs produce: the capabilities it leaves possible.

    E.g. SGLang 0.5.x defaults attention to ``fa3`` only when ``is_hopper_with_cuda_12_3``
    (``arg_groups/model_override_base.py``), so a logged fa3 default means sm90.
    """

    fact: str  #: key in ``RunConfig.extra`` set by a rule (``sets``)
    value: str  #: regex over the fact's value
    ccs: list[int] = spec(min_length=1)
    why: str


@strict
class InferFile(_Strict):
    """``patterns/<engine>/infer.toml``: arch predicates, auto ladders, inferred families."""

    tell: list[Tell] = _field(default_factory=list)
    predicate: list[Predicate] = _field(default_factory=list)
    chain: list[Chain] = _field(default_factory=list)
    infer: list[InferSpec] = _field(default_factory=list)
    #: CUDA version assumed when neither the log nor ``--cuda`` gives one (said in the reasoning)
    assumed_cuda: str = "12.8"


@strict
class MatrixFile(_Strict):
    """``patterns/matrix/matrix.toml``: engine rows of ``logscan matrix`` and extra ladder files."""

    engines: list[str]
    ladders: dict[str, list[str]] = _field(default_factory=dict)
