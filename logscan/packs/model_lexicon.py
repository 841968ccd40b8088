"""Models of ``patterns/lexicon.toml``: engine-neutral kernel-name morphology, the packages
whose absence disables a kernel, the kernels as operators name them, which raised exceptions
name a failing kernel, and what an event line names as its chosen kernel.

Split from ``model_rules.py`` (rules and finding codes) to keep each module single-purpose.
"""

from typing import Literal, Optional

from dataclasses import field as _field

from ..plain import spec

from .model_base import _Strict, strict


@strict
class LexiconName(_Strict):
    """One morphology rule of the kernel lexicon (``patterns/lexicon.toml``): a name shape and
    the cost class it implies, optionally only for some schemes (regex over the run's
    quantization and the selection's layer family)."""

    id: str
    pattern: str
    cost_class: Literal["native", "weight_only", "emulated", "dequant_at_load", "portable", "unknown"]
    scheme: str = ""
    why: str = spec(min_length=10)
    examples: list[str] = spec(min_length=1)  #: names (``name (scheme S)`` to give a scheme) it classes
    counter_examples: list[str] = _field(default_factory=list)


@strict
class KernelPackages(_Strict):
    """Packages whose absence disables a kernel or backend (OPTIONAL_PACKAGE_MISSING needs one)."""

    pattern: str
    examples: list[str] = spec(min_length=1)
    counter_examples: list[str] = _field(default_factory=list)


@strict
class LexiconKernel(_Strict):
    """One kernel as an operator names it, and the names that are its own (``patterns/lexicon.toml``
    ``[[kernel]]``): the op and function names of its apply path (``gptq_marlin_gemm`` is Marlin's),
    the shape of any name of it, and the wording of its own errors. A failed start's exception or
    innermost traceback frames that name it make it the failing kernel (``analysis/failhead.py``);
    ``logscan explain`` resolves an alias to it; a traceback frame in one of its ops corroborates a
    selection of it (``analysis/frames.py``)."""

    name: str = spec(min_length=2)  #: as the ladders and reports name it (``Marlin``, ``CUTLASS``)
    pattern: str  #: regex over a kernel, op or function name of it (``(?i)marlin``)
    aliases: list[str] = _field(default_factory=list)  #: op / function names of it, as the engines' sources spell them
    says: str = ""  #: regex over an exception message that is its own wording without naming it
    #: top-level Python packages that are the kernel's own library (``flashinfer``, ``deep_gemm``):
    #: a traceback frame in a file under one of them is in that kernel's code
    modules: list[str] = _field(default_factory=list)
    source: str = spec(min_length=10)  #: where the names come from (engine, file, release)
    examples: list[str] = spec(min_length=1)  #: names ``pattern`` matches
    counter_examples: list[str] = _field(default_factory=list)  #: names it must not match
    says_examples: list[str] = _field(default_factory=list)  #: messages ``says`` matches


@strict
class LexiconFailing(_Strict):
    """Which raised exceptions name the kernel that failed when their message names one
    (``patterns/lexicon.toml`` ``[failing]``): an error a kernel raises about its own inputs
    (``RuntimeError``, ``ValueError``, ``AssertionError``, ``NotImplementedError``), not an
    import error naming a missing package (that is ``OPTIONAL_PACKAGE_MISSING``'s)."""

    exceptions: str  #: regex over the exception's class name, dotted module prefix dropped
    #: top-level Python packages of a kernel JIT compiler (``triton``): a traceback frame in a file
    #: under one compiles or launches the kernel of the frame that called it (vLLM fp8_utils.py
    #: ``per_token_group_quant_fp8`` -> ``triton/runtime/jit.py run`` -> ``triton/compiler/
    #: compiler.py compile`` -> ``make_ir``), so it is not counted among the innermost frames
    jit_modules: list[str] = _field(default_factory=list)
    examples: list[str] = spec(min_length=1)
    counter_examples: list[str] = _field(default_factory=list)
    #: regex over an exception's message saying the op was being traced, not run (torch.compile's
    #: fake-tensor / meta dispatch found no fake impl for it): the op it names did not fail as a
    #: kernel, so no failing kernel is named from it
    traced: str = ""
    traced_examples: list[str] = _field(default_factory=list)
    traced_counter_examples: list[str] = _field(default_factory=list)


@strict
class LexiconTarget(_Strict):
    """What an event line names as its chosen kernel (``patterns/lexicon.toml`` ``[target]``): a
    line that a broad rule reads as an event (a fallback, a backend note) but that names, as the
    kernel it chose or falls back to, a kernel of the engine's vocabulary must place it on a
    ladder or say it was not understood, never pass in silence (``analysis/targets.py``).

    ``vocabulary``: regex of one kernel-name token (Marlin, CUTLASS, ``EmulationMxfp8LinearKernel``);
    ``chosen``: regex over the message, a choice verb (group ``verb``) and the kernel it names as
    its object (group ``kernel``), ``{vocabulary}`` standing for the vocabulary; ``excludes``:
    regex over a message that names no quantized kernel's target (attention, sampling); ``kinds``:
    the event kinds it applies to."""

    vocabulary: str
    chosen: str
    excludes: str = ""
    kinds: list[str] = spec(min_length=1)
    examples: list[str] = spec(min_length=1)  #: messages ``chosen`` reads
    counter_examples: list[str] = _field(default_factory=list)  #: messages it must not read
    to_examples: list[str] = _field(default_factory=list)  #: ``to`` captures the vocabulary holds
    to_counter_examples: list[str] = _field(default_factory=list)  #: ``to`` captures it does not


@strict
class LexiconFile(_Strict):
    """``patterns/lexicon.toml``: engine-neutral kernel-name morphology and kernel packages."""

    name: list[LexiconName] = _field(default_factory=list)
    packages: Optional[KernelPackages] = None
    kernel: list[LexiconKernel] = _field(default_factory=list)
    failing: Optional[LexiconFailing] = None
    target: Optional[LexiconTarget] = None
