"""Pydantic models of the pattern-pack files under ``patterns/`` (rules, prefixes, ladders, codes).

A pack is a folder ``patterns/<engine>/`` holding ``pack.toml`` (line-prefix formats, run
markers), ``rules/*.toml`` (the recognisers) and ``ladders/<release>.toml`` (ordered kernel
registries). ``patterns/findings.toml`` names every finding code. Unknown keys are errors
(``extra="forbid"``) so that a typo in a pack never silently disables a rule.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

RuleKind = Literal[
    "linear_kernel", "moe_kernel", "fallback_warning", "kernel_not_found", "backend_override",
    "quant_method", "kv_cache", "attention_backend", "config", "version", "platform",
    "failure", "optional_package", "gpu", "run_start", "start_failure", "identity",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Continuation(_Strict):
    """How a multi-line message goes on after the line a rule matched.

    vLLM's ``NewLineFormatter`` repeats the line prefix on every continuation line; a
    continuation record is one from the same process and ``file:line`` whose message
    matches ``item`` (its ``item`` group, or the whole match, is kept as one reason).
    """

    item: str = r"(?P<item>.+)"
    max_lines: int = Field(default=64, ge=1, le=4096)
    same_source_line: bool = True  #: continuation lines must repeat the file:line of the first


class Rule(_Strict):
    """One recogniser: a regex over the message of a record and what a match means.

    Templates in ``family``, ``kernel``, ``sets`` and ``remedy`` take ``{group}`` fields
    from the match. ``versions`` is a PEP 440 specifier of the engine releases whose source
    holds the template (used to infer the release when the log prints none).
    """

    id: str
    kind: RuleKind
    pattern: str
    keywords: list[str] = Field(min_length=1)  #: literal strings, one of which every match contains
    description: str = ""
    versions: str = ""  #: PEP 440 specifier set, e.g. ``>=0.22.1``; empty = any
    levels: list[str] = Field(default_factory=list)  #: accept only these levels (when the line has one)
    family: Optional[str] = None  #: layer family of a selection, e.g. ``linear ({layer})``
    kernel: Optional[str] = None  #: kernel name template; default ``{kernel}``
    registry: Optional[str] = None  #: registry role hint (regex over ladder roles), e.g. ``nvfp4``
    cost_class: Optional[str] = None  #: stated by the line itself (e.g. the Marlin weight-only warning)
    finding: Optional[str] = None  #: finding code the line states
    remedy: Optional[str] = None
    sets: dict[str, str] = Field(default_factory=dict)  #: run facts: version, quantization, platform, gpu...
    starts_run: bool = False  #: an engine start marker (version line, config line, logo)
    continuation: Optional[Continuation] = None
    #: a selection-grammar shape (``rules/85-grammar.toml``): how an engine states a choice in
    #: any wording (select, enabled, fallback, override, unsupported, missing, deprecated, set).
    #: A shape's ``family`` gives a selection only for a name a ladder or the kernel lexicon
    #: knows; otherwise the event keeps the parts it captured (docs/grammar.md)
    shape: Optional[Literal["select", "enabled", "fallback", "override", "unsupported", "missing",
                            "deprecated", "set"]] = None
    ignore_case: bool = False
    #: match the keywords case-sensitively (a case-sensitive pattern whose lower-case keyword
    #: is common prose: ``Selected `` vs "the selected item"); default ASCII case-insensitive
    case_sensitive_keywords: bool = False
    #: fire only on lines whose prefix is one of this pack's line formats (broad, generic rules)
    prefixed_only: bool = False
    #: the message is printed by a tool every engine runs (Triton, ptxas, the CUDA runtime), not
    #: by this pack's engine: its finding may be raised on any engine's run (analysis/trust.py)
    generic: bool = False
    examples: list[str] = Field(min_length=1)
    counter_examples: list[str] = Field(default_factory=list)
    #: whole lines as the engine prints them (an era's prefix, ANSI colour codes, a multi-line
    #: message continued after ``\r\n``): read through the real reader, prefix parser and
    #: matcher, each must yield an event of this rule
    line_examples: list[str] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        import re

        if not re.fullmatch(r"[a-z0-9]+(?:[.-][a-z0-9_]+)+", v):
            raise ValueError(f"rule id {v!r} must look like 'engine.family.name' (lowercase)")
        return v


class RuleFile(_Strict):
    """One ``rules/*.toml`` file: a list of ``[[rule]]`` tables."""

    rule: list[Rule] = Field(default_factory=list)


class PrefixFormat(_Strict):
    """A line-prefix format of an engine era; named groups: level, timestamp, fileinfo, message."""

    id: str
    pattern: str
    versions: str = ""  #: releases that print this prefix (an era hint)
    #: other engines that print the same shape (Python's ``[time] LEVEL file.py:N:`` logging is
    #: MLC-LLM's and newer SGLang's): such a prefix names no engine, so its lines are read like
    #: unprefixed ones (every pack, the run's engine first), never by this pack alone
    shared_with: list[str] = Field(default_factory=list)
    examples: list[str] = Field(min_length=1)


class ProcessTag(_Strict):
    """A process tag such as ``(EngineCore_DP0 pid=42)``; groups: process, rank, pid."""

    id: str
    pattern: str
    versions: str = ""
    examples: list[str] = Field(min_length=1)


class PackMeta(_Strict):
    engine: str
    title: str = ""  #: how reports name the engine (``vLLM``, ``TensorRT-LLM``); default ``engine``
    #: KV-cache dtype spellings (lower case, ``torch.`` dropped) -> the canonical name they store as;
    #: a request and an in-effect dtype with the same canonical name are no fallback
    kv_dtype_aliases: dict[str, str] = Field(default_factory=dict)
    description: str = ""
    schema_version: int = 1
    #: regex over a process name whose ``rank`` group names the rank (``Worker_TP1`` -> ``TP1``)
    rank_from_process: str = r"_(?P<rank>(?:[A-Z]+\d+_?)+)$"
    #: releases whose sources the pack was written from, oldest first: the candidates of
    #: version inference when the log prints no version (empty: the releases of the shipped ladders)
    releases: list[str] = Field(default_factory=list)
    #: quantization methods whose linear layers ask for dynamic per-token FP8 activation scales
    #: when the GPU allows it: a per-tensor rung under them is FP8_PER_TENSOR_FALLBACK
    per_token_fp8_methods: list[str] = Field(default_factory=list)
    #: the last line of a raised exception (``RuntimeError: ...``): a finding whose line matches
    #: it, in a run whose start failed (a ``start_failure`` rule), is reported as the fatal cause
    exception_line: Optional[str] = None
    #: order in which packs try a line that carries no engine prefix and follows no prefixed
    #: line (lower first): a pack of broad rules yields to one of exact messages
    unprefixed_priority: int = 0
    #: a line with this pack's prefix that none of its rules takes is tried against the other
    #: packs' rules (not their ``prefixed_only`` ones): for engines that share messages with
    #: another (SGLang reuses vLLM's Marlin/Triton utilities); the event stays this engine's
    borrow_rules: bool = False
    #: the engine does not log the quantization it applies (TGI takes config.json's quant_method
    #: silently): reports state this in ``config.extra["quantization_source"]``, with what a line
    #: let logscan infer, unless a rule set a source starting with ``logged``
    quantization_unlogged: str = ""


class NameCost(_Strict):
    """Cost class of a kernel name that is on no shipped ladder (older releases, free-form names).

    The first entry whose ``pattern`` matches the name (and ``family``, when given, the
    selection's layer family) decides.
    """

    pattern: str
    cost_class: Literal["native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown"]
    family: str = ""
    #: regex over the run's quantization (``RunConfig.quantization``); empty = any
    quantization: str = ""
    why: str = ""


class FasterMethod(_Strict):
    """A quantization method the engine can replace by a faster one (``SLOW_QUANT_METHOD`` on a
    line that names no faster method needs an entry), e.g. vLLM ``gptq`` -> ``gptq_marlin``."""

    method: str
    faster: str
    since: str = ""  #: the first release that has ``faster``; empty = every release of the pack
    why: str = ""


class ArchCheck(_Strict):
    """Compare the device's compute capability with the architectures the binary was compiled for.

    Engines that pick kernels by a compile-time ``__CUDA_ARCH__`` (llama.cpp) run the highest
    compiled arch not above the device's; a build without the device's family runs an older
    family's code (or none). Both facts are run facts set by rules.
    """

    device_fact: str = "compute_capability"  #: run fact holding the cc as digits, e.g. ``90``, ``120``
    compiled_fact: str = "compiled_archs"  #: run fact holding the compiled list, e.g. ``750,900,1200``
    compiled_scale: int = Field(default=10, ge=1)  #: compiled value = cc digits x this
    finding: str = "ARCH_NOT_COMPILED"
    #: build flags (ladder ``build`` terms) that hold when a compiled arch (cc digits) is in [lo, hi)
    build_flags: dict[str, list[int]] = Field(default_factory=dict)


class WalkInfer(_Strict):
    """Infer the kernel of a layer family the engine never logs by walking a ladder for the run's GPU.

    When the run's quantization matches ``quantization`` and the GPU is known (log or
    ``--gpu``), the scheme's ladder is walked; only a certain prediction becomes a selection
    (``observed=False``, with the reasoning).
    """

    quantization: str  #: regex over the run's quantization (e.g. the GGUF file type)
    scheme: str  #: scheme id in ``patterns/schemes.toml``
    family: str  #: layer family of the inferred selection


class PlatformHint(_Strict):
    """A kernel or attention-backend name that only one platform prints (e.g. ``AITER`` -> ROCm).

    Used to infer the platform of a run that has no "Automatically detected platform" line;
    the ladders themselves are the other source (a class on one platform's list only).
    """

    pattern: str  #: regex over the kernel / backend name
    platform: Literal["CUDA", "ROCM", "XPU", "CPU", "TPU"]
    why: str = ""


class OpaqueLine(_Strict):
    """A message shape that carries user content (a prompt, a generated output): never matched.

    Request logs quote the user's prompt verbatim, and a prompt may hold any sentence an
    engine prints ("requires SM90", "Using Marlin ..."). A record whose message matches
    ``pattern`` (anchored at the message start) is skipped by every rule of the pack.
    """

    id: str
    pattern: str
    why: str = ""
    examples: list[str] = Field(min_length=1)


class NoiseLine(_Strict):
    """A high-volume message shape of the engine's own that states no engine fact (per-step
    scheduler statistics): skipped before keyword matching, so its words ("prefill",
    "decode", "token usage") never reach the broad rules and a long run stays cheap.
    ``pattern`` is anchored at the message start; only lines with the pack's own prefix.
    """

    id: str
    pattern: str
    why: str = ""
    examples: list[str] = Field(min_length=1)


class Uncovered(_Strict):
    """A reference log template the pack deliberately does not recognise, and why.

    ``template`` is the engine's format string as the reference lists it
    (``shared/reference/<engine>/templates.jsonl``: ``%s`` / ``{expr}`` placeholders kept);
    ``example`` is that template rendered with plausible values. The model checks that the
    example is a rendering of the template (placeholders stand for up to 200 characters);
    the test suite checks that no rule of the shipped packs recognises the example, so the
    list cannot go stale silently.
    """

    template: str = Field(min_length=1)
    level: Literal["debug", "info", "warning", "error", "exception", "raise"]
    versions: str = ""  #: PEP 440 specifier of the releases that print it (from the reference)
    reason: str = Field(min_length=20)  #: why a careful reader would not want an event from it
    example: str = Field(min_length=1)

    @model_validator(mode="after")
    def _example_renders_template(self) -> "Uncovered":
        import re

        placeholder = re.compile(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrfiegx]|\{[^{}]*\}")
        parts, pos = [], 0
        for m in placeholder.finditer(self.template):
            parts.append(re.escape(self.template[pos:m.start()]))
            parts.append(".{0,200}?")
            pos = m.end()
        parts.append(re.escape(self.template[pos:]))
        if not re.search("".join(parts), self.example):
            raise ValueError(f"example {self.example!r} is not a rendering of template {self.template!r}")
        return self


class PackFile(_Strict):
    """``patterns/<engine>/pack.toml``."""

    pack: PackMeta
    arch_check: Optional[ArchCheck] = None
    walk: list[WalkInfer] = Field(default_factory=list)
    name_cost: list[NameCost] = Field(default_factory=list)
    faster_method: list[FasterMethod] = Field(default_factory=list)
    platform_hint: list[PlatformHint] = Field(default_factory=list)
    wrapper: list[ProcessTag] = Field(default_factory=list)  #: outer junk: compose prefixes, markdown
    process: list[ProcessTag] = Field(default_factory=list)
    prefix: list[PrefixFormat] = Field(default_factory=list)
    #: message shapes quoting user content (request logs): no rule of the pack sees them
    opaque: list[OpaqueLine] = Field(default_factory=list)
    noise: list[NoiseLine] = Field(default_factory=list)
    #: reference templates left unrecognised on purpose, each with its reason
    uncovered: list[Uncovered] = Field(default_factory=list)


GateKind = Literal[
    "platform", "cc_min", "cc_eq", "cc_family", "cc_range", "cuda_min", "package", "build", "env",
    "torch_min", "dtype", "group_size", "shape", "layer", "any_of", "opaque", "option", "gfx",
]


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
    platforms: list[str] = Field(default_factory=list)
    cc: Optional[int] = None
    major: Optional[int] = None
    lo: Optional[int] = None
    hi: Optional[int] = None
    version: str = ""
    name: str = ""
    flag: str = ""
    default: Optional[str] = None
    field: str = ""
    values: list[str] = Field(default_factory=list)
    multiple_of: Optional[int] = None
    options: list[list["GateTerm"]] = Field(default_factory=list)
    scope: Literal["machine", "layer"] = "machine"
    only_on: list[str] = Field(default_factory=list)
    negate: bool = False
    text: str = ""  #: for ``opaque``: the requirement as written
    source: str = ""
    why: str = ""  #: the domain fact behind a term added from the seeds (engine, file, version)


class LadderKernel(_Strict):
    """Facts about one rung: cost class, minimum capability, gate (one line) and gate terms."""

    cost_class: Literal["native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown"]
    min_capability: Optional[int] = None
    gate: str = ""
    #: the gate as structured terms (all must hold), generated from ``gate`` plus pack predicates
    gates: list[GateTerm] = Field(default_factory=list)
    activation_scaling: Optional[Literal["per-tensor", "per-token", "block", "none"]] = None
    aliases: list[str] = Field(default_factory=list)  #: other names the log prints for it
    #: ``VLLM_*`` variables the kernel's module reads, with their defaults (reference ``env``):
    #: they can change what the rung costs (e.g. VLLM_MXFP8_EMULATION_DEQUANT_AT_LOAD=True)
    env: dict[str, str] = Field(default_factory=dict)


class Registry(_Strict):
    """An ordered registry (ladder): first match wins, per platform."""

    name: str
    kind: Literal["linear", "moe", "if_chain", "attention"]
    role: str
    scheme: str = ""  #: what the checkpoint asks for, e.g. ``NVFP4 W4A4``
    file: str = ""
    platforms: dict[str, list[str]]
    #: per-registry cost classes (MoE experts serve several schemes; Marlin is native for WNA16)
    cost: dict[str, Literal["native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown"]] = Field(default_factory=dict)
    aliases: dict[str, str] = Field(default_factory=dict)  #: logged name -> rung name
    #: regex over the run's quantization method that reaches this registry, when one line
    #: format serves several (gpt-oss ``mxfp4`` vs W4A4 MXFP4 from compressed-tensors / quark)
    quantization: str = ""
    #: what the engine does when every rung refuses (e.g. SGLang raises with a hint)
    exhausted: str = ""
    #: per-rung gate terms of this registry (if/elif chains: the step condition of each outcome);
    #: they take precedence over the kernel's own ``gates``
    gates: dict[str, list[GateTerm]] = Field(default_factory=dict)


class LadderFile(_Strict):
    """``patterns/<engine>/ladders/<release>.toml``."""

    engine: str
    version: str
    source: str = ""
    registry: list[Registry]
    kernel: dict[str, LadderKernel] = Field(default_factory=dict)


class CodeInfo(_Strict):
    """One finding code: severity, title, explanation (documented in README).

    ``parent``: a broader code this one refines (``ARCH_NOT_COMPILED`` is a kind of
    ``UNSUPPORTED_ON_ARCH``): a filter on the parent (``--fail-on``, a gate policy's
    ``codes``) also takes the child.
    """

    severity: Literal["error", "warning", "info"]
    title: str
    explanation: str
    #: ``gate``: only ``logscan gate`` raises it (it needs a policy or a baseline), so
    #: ``scan --fail-on`` refuses it; ``scan``: scan reports it (or ``--fail-on`` tests for it)
    raised_by: Literal["scan", "gate"] = "scan"
    parent: Optional[str] = None


class FindingsFile(_Strict):
    """``patterns/findings.toml``: every finding code logscan may report."""

    code: dict[str, CodeInfo]
    #: cost class of a selected kernel -> finding code it implies
    cost_class_finding: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _parents_exist(self) -> "FindingsFile":
        for name, info in self.code.items():
            seen = {name}
            p = info.parent
            while p is not None:
                if p not in self.code:
                    raise ValueError(f"code {name}: parent {p!r} is not a finding code")
                if p in seen:
                    raise ValueError(f"code {name}: parent chain loops at {p}")
                seen.add(p)
                p = self.code[p].parent
        return self

    def lineage(self, code: str) -> tuple[str, ...]:
        """``code`` then its parents, nearest first (``ARCH_NOT_COMPILED``, ``UNSUPPORTED_ON_ARCH``)."""
        out = [code]
        while code in self.code and self.code[code].parent:
            code = self.code[code].parent  # type: ignore[assignment]
            out.append(code)
        return tuple(out)

    def covers(self, wanted: str, code: str) -> bool:
        """True when a filter naming ``wanted`` takes a finding ``code`` (itself or a child of it)."""
        return wanted in self.lineage(code)


class SchemeEngine(_Strict):
    """How one engine serves a scheme: the ladder role (regex) and scheme-level gates.

    Where no ladder can be walked, the engine's answer is still data: ``refuses`` maps a
    platform (``CUDA``, ``ROCM``, ... or ``ANY``) to why the engine's source rejects the scheme
    there (no quantization value, no kernel for the platform), ``unknown`` to why the dispatch
    there is not known (not read from source). ``role`` may be empty when no ladder exists.
    """

    role: str = ""
    gates: list[GateTerm] = Field(default_factory=list)
    note: str = ""
    refuses: dict[str, str] = Field(default_factory=dict)
    unknown: dict[str, str] = Field(default_factory=dict)

    def verdict_for(self, platform: str) -> Optional[tuple[str, str]]:
        """``("refused" | "unknown", why)`` recorded for ``platform`` (or ``ANY``), else None."""
        for basis, table in (("refused", self.refuses), ("unknown", self.unknown)):
            why = table.get(platform.upper()) or table.get("ANY")
            if why:
                return basis, why
        return None


class Scheme(_Strict):
    """A checkpoint scheme (``patterns/schemes.toml``): checkpoint facts and the ladder per engine."""

    title: str
    aliases: list[str] = Field(default_factory=list)
    facts: dict[str, list[str]] = Field(default_factory=dict)
    engines: dict[str, SchemeEngine] = Field(default_factory=dict)


class SchemeFile(_Strict):
    """``patterns/schemes.toml``."""

    scheme: dict[str, Scheme]


class Predicate(_Strict):
    """An engine's arch predicate as data: capability window AND a CUDA-version floor.

    Source: SGLang ``sglang/srt/utils/common.py`` ``_check_cuda_device_version`` (0.5.10 ->):
    ``is_blackwell`` = SM major in {10, 11, 12} AND torch.version.cuda >= 12.8. ``majors``
    tests the SM major only; ``min_cc`` / ``below_cc`` bound the capability as an integer
    (``90`` = 9.0); ``exact_cc`` lists exact capabilities; ``min_cuda`` is the CUDA floor.
    """

    name: str
    versions: str = ""  #: engine releases this definition holds for (PEP 440); empty = all
    majors: list[int] = Field(default_factory=list)
    min_cc: Optional[int] = None
    below_cc: Optional[int] = None
    exact_cc: list[int] = Field(default_factory=list)
    min_cuda: Optional[str] = None
    source: str = ""


class ChainStep(_Strict):
    """One branch of an if/elif auto ladder: the first step whose predicates all hold wins."""

    when: list[str] = Field(default_factory=list)  #: predicate names; ``!name`` negates; empty = else
    then: str


class Chain(_Strict):
    """An auto ladder resolving a server argument left at ``auto`` (e.g. ``fp4_gemm_runner_backend``)."""

    arg: str
    auto: list[str] = Field(default_factory=lambda: ["auto", ""])  #: values that mean "let the chain decide"
    quantization: str = ""  #: regex over the run's quantization; empty = any
    versions: str = ""
    source: str = ""
    steps: list[ChainStep] = Field(min_length=1)


class Outcome(_Strict):
    """What a resolved backend value means for a layer family: the kernel and its cost class."""

    kernel: str
    cost_class: Literal["native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown"]
    requires: list[str] = Field(default_factory=list)  #: predicates that must hold, else the engine raises
    note: str = ""


class InferSpec(_Strict):
    """A layer family whose kernel the engine does not log: infer it from server args + GPU."""

    id: str
    family: str
    quantization: str  #: regex over the run's quantization that makes the family exist
    arg: str  #: the server argument (resolved by a chain when left at auto)
    registry: Optional[str] = None  #: ladder role hint for rung placement
    versions: str = ""
    needs_event_kind: list[str] = Field(default_factory=list)  #: e.g. ``moe_kernel``: MoE layers seen
    #: or server args that prove the layers exist (arg -> regex over its printed value), e.g. ep_size > 1
    or_args: dict[str, str] = Field(default_factory=dict)
    skip_if_family: str = ""  #: regex: an observed selection of such a family makes the inference moot
    outcomes: dict[str, Outcome]
    source: str = ""


class Tell(_Strict):
    """A run fact that only some GPUs produce: the capabilities it leaves possible.

    E.g. SGLang 0.5.x defaults attention to ``fa3`` only when ``is_hopper_with_cuda_12_3``
    (``arg_groups/model_override_base.py``), so a logged fa3 default means sm90.
    """

    fact: str  #: key in ``RunConfig.extra`` set by a rule (``sets``)
    value: str  #: regex over the fact's value
    ccs: list[int] = Field(min_length=1)
    why: str


class InferFile(_Strict):
    """``patterns/<engine>/infer.toml``: arch predicates, auto ladders, inferred families."""

    tell: list[Tell] = Field(default_factory=list)
    predicate: list[Predicate] = Field(default_factory=list)
    chain: list[Chain] = Field(default_factory=list)
    infer: list[InferSpec] = Field(default_factory=list)
    #: CUDA version assumed when neither the log nor ``--cuda`` gives one (said in the reasoning)
    assumed_cuda: str = "12.8"


class MatrixFile(_Strict):
    """``patterns/matrix/matrix.toml``: engine rows of ``logscan matrix`` and extra ladder files."""

    engines: list[str]
    ladders: dict[str, list[str]] = Field(default_factory=dict)


class LexiconName(_Strict):
    """One morphology rule of the kernel lexicon (``patterns/lexicon.toml``): a name shape and
    the cost class it implies, optionally only for some schemes (regex over the run's
    quantization and the selection's layer family)."""

    id: str
    pattern: str
    cost_class: Literal["native", "weight_only", "emulated", "dequant_at_load", "portable", "unknown"]
    scheme: str = ""
    why: str = Field(min_length=10)
    examples: list[str] = Field(min_length=1)  #: names (``name (scheme S)`` to give a scheme) it classes
    counter_examples: list[str] = Field(default_factory=list)


class KernelPackages(_Strict):
    """Packages whose absence disables a kernel or backend (OPTIONAL_PACKAGE_MISSING needs one)."""

    pattern: str
    examples: list[str] = Field(min_length=1)
    counter_examples: list[str] = Field(default_factory=list)


class LexiconFile(_Strict):
    """``patterns/lexicon.toml``: engine-neutral kernel-name morphology and kernel packages."""

    name: list[LexiconName] = Field(default_factory=list)
    packages: Optional[KernelPackages] = None
