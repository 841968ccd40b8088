"""Models of the ordered kernel ladders and the schemes that walk them.

``patterns/<engine>/ladders/<release>.toml`` (registries of rungs, each with its gate terms)
and ``patterns/schemes.toml`` (per scheme: each engine's ladder role and gates).
"""

from typing import Literal, Optional

from dataclasses import field as _field


from .model_base import _Strict, strict


GateKind = Literal[
    "platform", "cc_min", "cc_eq", "cc_family", "cc_range", "cuda_min", "package", "build", "env",
    "torch_min", "dtype", "group_size", "shape", "layer", "any_of", "opaque", "option", "gfx",
]


@strict
class GateTerm(_Strict):
    """One requirement of a ladder rung, evaluable for a described machine and checkpoint.

    Machine terms: ``platform`` (``platforms``), ``cc_min`` / ``cc_eq`` (``cc`` as digits, 90 =
    sm90), ``cc_family`` (``major``: 10 = cc 100..109), ``cc_range`` (``lo`` <= cc < ``hi``),
    ``cuda_min`` (``version``, CUDA runtime), ``package`` (``name``: an optional module or extra),
    ``build`` (``flag``: a compile-time macro of the engine build), ``env`` (``name``, truthy
    unless ``negate``; ``default`` is the engine's default), ``option`` (a server argument or
    environment variable ``name`` whose value is in ``values``; ``default`` when unset),
    ``torch_min`` (``version``), ``gfx`` (ROCm arch name starting with one of ``values``:
    ``gfx95`` for vLLM's ``supports_mx()``).
    Checkpoint / layer terms: ``dtype`` (``field`` in ``values``), ``group_size`` (``values``),
    ``shape`` (``field`` a multiple of ``multiple_of``), ``layer`` (``field`` in ``values``).
    ``any_of`` holds alternative conjunctions (``options``); ``opaque`` is a requirement that
    could not be structured (``scope`` machine or layer): it always evaluates to unknown.
    ``only_on`` restricts a term to some platforms; ``negate`` inverts it; ``source`` is the
    clause it was read from.
    """

    kind: GateKind
    platforms: list[str] = _field(default_factory=list)
    cc: Optional[int] = None
    major: Optional[int] = None
    lo: Optional[int] = None
    hi: Optional[int] = None
    version: str = ""
    name: str = ""
    flag: str = ""
    default: Optional[str] = None
    field: str = ""
    values: list[str] = _field(default_factory=list)
    multiple_of: Optional[int] = None
    options: list[list["GateTerm"]] = _field(default_factory=list)
    scope: Literal["machine", "layer"] = "machine"
    only_on: list[str] = _field(default_factory=list)
    negate: bool = False
    text: str = ""  #: for ``opaque``: the requirement as written
    source: str = ""
    why: str = ""  #: the domain fact behind a term added from the seeds (engine, file, version)
    #: a hardware floor of native low-precision compute (``FP8``, ``FP4``, ``MX``: analysis/floors.py),
    #: added to a native rung's gate by logscan, not read from the engine
    floor: str = ""


@strict
class LadderKernel(_Strict):
    """Facts about one rung: cost class, minimum capability, gate (one line) and gate terms."""

    cost_class: Literal["native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown"]
    min_capability: Optional[int] = None
    gate: str = ""
    #: the gate as structured terms (all must hold), generated from ``gate`` plus pack predicates
    gates: list[GateTerm] = _field(default_factory=list)
    activation_scaling: Optional[Literal["per-tensor", "per-token", "block", "none"]] = None
    aliases: list[str] = _field(default_factory=list)  #: other names the log prints for it
    #: ``VLLM_*`` variables the kernel's module reads, with their defaults (reference ``env``):
    #: they can change what the rung costs (e.g. VLLM_MXFP8_EMULATION_DEQUANT_AT_LOAD=True)
    env: dict[str, str] = _field(default_factory=dict)


@strict
class Registry(_Strict):
    """An ordered registry (ladder): first match wins, per platform."""

    name: str
    kind: Literal["linear", "moe", "if_chain", "attention"]
    role: str
    scheme: str = ""  #: what the checkpoint asks for, e.g. ``NVFP4 W4A4``
    file: str = ""
    platforms: dict[str, list[str]]
    #: per-registry cost classes (MoE experts serve several schemes; Marlin is native for WNA16)
    cost: dict[str, Literal["native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown"]] = _field(default_factory=dict)
    aliases: dict[str, str] = _field(default_factory=dict)  #: logged name -> rung name
    #: regex over the run's quantization method that reaches this registry, when one line
    #: format serves several (gpt-oss ``mxfp4`` vs W4A4 MXFP4 from compressed-tensors / quark)
    quantization: str = ""
    #: what the engine does when every rung refuses (e.g. SGLang raises with a hint)
    exhausted: str = ""
    #: per-rung gate terms of this registry (if/elif chains: the step condition of each outcome);
    #: they take precedence over the kernel's own ``gates``
    gates: dict[str, list[GateTerm]] = _field(default_factory=dict)
    #: rungs whose ``gates`` were read from this release's own source (``packs/history.py``):
    #: they take precedence over planning-overlay gates written for another release's code
    own_gates: list[str] = _field(default_factory=list)
    #: a hand-kept dispatch registry (``patterns/<engine>/dispatch.toml``): the releases whose
    #: code it describes (PEP 440 specifier) and where that was read (engine file, release)
    releases: str = ""
    note: str = ""


@strict
class DispatchRegistry(_Strict):
    """A kernel choice made by code, not by a registry list (``patterns/<engine>/dispatch.toml``).

    vLLM 0.5.5 .. 0.18.1 picks the FP8 dense GEMM in ``Fp8LinearMethod`` (``use_marlin``, then
    ``apply_fp8_linear`` / ``Fp8LinearOp``), which the ``_POSSIBLE_*KERNELS`` lists the
    ladders are derived from do not hold. Each entry holds for the releases of ``releases``;
    entries of one ``name`` cover disjoint ranges. ``requires`` is prepended to every rung's
    gate (the method's ``get_min_capability()``); ``gates`` are the rungs' own terms. With
    ``then`` set, the named registry's list of the same release and platform follows the
    entry's own rungs (the method tests Marlin, then asks the registry). ``place`` puts the
    registry before (``first``) or after (``last``) the release's own registries.
    """

    name: str
    releases: str
    role: str
    scheme: str = ""
    file: str = ""
    note: str = ""
    quantization: str = ""
    exhausted: str = ""
    then: str = ""
    place: Literal["first", "last"] = "first"
    platforms: dict[str, list[str]] = _field(default_factory=dict)
    cost: dict[str, Literal["native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown"]] = _field(default_factory=dict)
    aliases: dict[str, str] = _field(default_factory=dict)
    requires: list[GateTerm] = _field(default_factory=list)
    gates: dict[str, list[GateTerm]] = _field(default_factory=dict)


@strict
class DispatchFile(_Strict):
    """``patterns/<engine>/dispatch.toml``: hand-kept dispatch registries and their rungs' facts."""

    engine: str
    source: str = ""
    dispatch: list[DispatchRegistry] = _field(default_factory=list)
    kernel: dict[str, LadderKernel] = _field(default_factory=dict)


@strict
class LadderFile(_Strict):
    """``patterns/<engine>/ladders/<release>.toml``."""

    engine: str
    version: str
    source: str = ""
    registry: list[Registry]
    kernel: dict[str, LadderKernel] = _field(default_factory=dict)


@strict
class SchemeEngine(_Strict):
    """How one engine serves a scheme: the ladder role (regex) and scheme-level gates.

    Where no ladder can be walked, the engine's answer is still data: ``refuses`` maps a
    platform (``CUDA``, ``ROCM``, ... or ``ANY``) to why the engine's source rejects the scheme
    there (no quantization value, no kernel for the platform), ``unknown`` to why the dispatch
    there is not known (not read from source). ``role`` may be empty when no ladder exists.
    """

    role: str = ""
    gates: list[GateTerm] = _field(default_factory=list)
    note: str = ""
    refuses: dict[str, str] = _field(default_factory=dict)
    unknown: dict[str, str] = _field(default_factory=dict)

    def verdict_for(self, platform: str) -> Optional[tuple[str, str]]:
        """``("refused" | "unknown", why)`` recorded for ``platform`` (or ``ANY``), else None."""
        for basis, table in (("refused", self.refuses), ("unknown", self.unknown)):
            why = table.get(platform.upper()) or table.get("ANY")
            if why:
                return basis, why
        return None


@strict
class Scheme(_Strict):
    """A checkpoint scheme (``patterns/schemes.toml``): checkpoint facts and the ladder per engine."""

    title: str
    aliases: list[str] = _field(default_factory=list)
    facts: dict[str, list[str]] = _field(default_factory=dict)
    engines: dict[str, SchemeEngine] = _field(default_factory=dict)


@strict
class SchemeFile(_Strict):
    """``patterns/schemes.toml``."""

    scheme: dict[str, Scheme]
