"""Models of ``patterns/<engine>/pack.toml``: line-prefix formats, run markers, the pack's tables.

Beside the prefixes: the ``name_cost`` table, ``[arch_check]``, ``[[walk]]``, platform hints,
opaque and noise line shapes, and the reference templates left ``uncovered`` on purpose.
"""

from typing import Literal, Optional

from dataclasses import field as _field

from ..plain import after_check, spec

from .model_base import _Strict, strict


@strict
class PrefixFormat(_Strict):
    """A line-prefix format of an engine era; named groups: level, timestamp, fileinfo, message."""

    id: str
    pattern: str
    versions: str = ""  #: releases that print this prefix (an era hint)
    #: other engines that print the same shape (Python's ``[time] LEVEL file.py:N:`` logging is
    #: MLC-LLM's and newer SGLang's): such a prefix names no engine, so its lines are read like
    #: unprefixed ones (every pack, the run's engine first), never by this pack alone
    shared_with: list[str] = _field(default_factory=list)
    examples: list[str] = spec(min_length=1)


@strict
class ProcessTag(_Strict):
    """A process tag such as ``(EngineCore_DP0 pid=42)``; groups: process, rank, pid."""

    id: str
    pattern: str
    versions: str = ""
    #: regex searched in a process name with no rank: a name that several live processes of one
    #: start print (vLLM V0's ``VllmWorkerProcess`` per rank, Ray's ``RayWorkerWrapper``), so
    #: another pid under it is no new start (``analysis/newstart.role``; every pack's ``shared``
    #: is tried on the name, since a ``Record`` does not carry its tag format's id)
    shared: str = ""
    #: a wrapper only: keep it when it is the start of an engine's own line prefix (a process tag
    #: or line prefix of some pack matches where it starts, and none where it ends): an outer
    #: timestamp before every line (``kubectl logs --timestamps``, a CI runner's stamp) is stripped,
    #: but TGI's own ``2024-...Z  INFO text_generation_launcher:`` keeps its timestamp and prefix
    unless_own_prefix: bool = False
    #: lines this wrapper must leave as they are (for an ``unless_own_prefix`` wrapper: an engine's
    #: own prefix that begins like the wrapper; the tests check each)
    counter_examples: list[str] = _field(default_factory=list)
    examples: list[str] = spec(min_length=1)


@strict
class CommonWrapper(_Strict):
    """An outer wrapper that is no engine's (``patterns/common-wrappers/*.toml``): a line shape a
    library or host puts before any engine's line (torch.distributed's ``[rank1]: ``). Loaded into
    every pack's wrappers; its examples must match, its counter-examples must not."""

    id: str
    pattern: str
    why: str = ""
    #: as ``ProcessTag.unless_own_prefix``: kept where it starts an engine's own prefix; its
    #: counter-examples are then such prefixes (the regex matches them, the parser keeps them)
    unless_own_prefix: bool = False
    examples: list[str] = spec(min_length=1)
    counter_examples: list[str] = spec(min_length=1)


@strict
class WrapperFile(_Strict):
    """``patterns/common-wrappers/<host>.toml``: wrappers every pack loads after its own."""

    description: str = ""
    wrapper: list[CommonWrapper] = spec(min_length=1)


@strict
class PackMeta(_Strict):
    """The ``[pack]`` table of ``pack.toml``: the engine's name and title, the facts of how it
    logs (rank in process names, the exception line, unlogged quantization) and which releases
    the pack was written from."""

    engine: str
    title: str = ""  #: how reports name the engine (``vLLM``, ``TensorRT-LLM``); default ``engine``
    #: KV-cache dtype spellings (lower case, ``torch.`` dropped) -> the canonical name they store as;
    #: a request and an in-effect dtype with the same canonical name are no fallback
    kv_dtype_aliases: dict[str, str] = _field(default_factory=dict)
    description: str = ""
    schema_version: int = 1
    #: regex over a process name whose ``rank`` group names the rank (``Worker_TP1`` -> ``TP1``)
    rank_from_process: str = r"_(?P<rank>(?:[A-Z]+\d+_?)+)$"
    #: releases whose sources the pack was written from, oldest first: the candidates of
    #: version inference when the log prints no version (empty: the releases of the shipped ladders)
    releases: list[str] = _field(default_factory=list)
    #: quantization methods whose linear layers ask for dynamic per-token FP8 activation scales
    #: when the GPU allows it: a per-tensor rung under them is FP8_PER_TENSOR_FALLBACK
    per_token_fp8_methods: list[str] = _field(default_factory=list)
    #: the last line of a raised exception (``RuntimeError: ...``): a finding whose line matches
    #: it, in a run whose start failed (a ``start_failure`` rule), is reported as the fatal cause
    exception_line: Optional[str] = None
    #: a fatal line of the engine's own runtime that is no Python exception (TensorRT-LLM's
    #: ``TllmException`` text ``Assertion failed: ...``, cpp/tensorrt_llm/common/assert.h): read by
    #: any rule (a finding rule first), logged at an error level or with no level, it ends the start
    #: like the exception line of an uncaught traceback (``analysis/uncaught.py``) unless a ready
    #: line or later progress of the same process follows
    fatal_line: Optional[str] = None
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
    #: the engine seldom logs its release (TGI 2.x-3.x print no version line): a run whose
    #: release is neither logged, given nor inferred says so and names the ladder it was read
    #: against (the newest shipped), with this text saying why (``engine_facts.engine_info``)
    release_unlogged: str = ""
    #: engines whose libraries this engine imports, so that their loggers print lines in this
    #: engine's process (SGLang 0.3-0.4 imports vLLM: ``INFO ... Automatically detected platform
    #: cuda.`` precedes its own lines). A run of such lines holding only library chatter (no
    #: version, args, selection or finding) is read as this engine's (``analysis/imports.py``)
    imports: list[str] = _field(default_factory=list)
    #: a ladder gate's ``option`` term name (a command-line flag) -> the field of the engine's
    #: logged argument dump that holds its value, where the two names differ (SGLang's
    #: ``--fp8-gemm-backend`` is ``ServerArgs.fp8_gemm_runner_backend``); any other flag is read
    #: from the field its name spells (``--moe-runner-backend`` -> ``moe_runner_backend``)
    option_args: dict[str, str] = _field(default_factory=dict)
    #: how the engine's launch command line parses (a pasted ``vllm serve ...`` command's flags)
    cli: "CliSpec" = _field(default_factory=lambda: CliSpec())
    #: logger file names (the prefix's ``file.py`` of ``[file.py:N]``) that only one platform's code
    #: logs under (vLLM's ``platforms/cuda.py``, ``rocm.py``, ...) -> that platform: the weakest
    #: platform evidence, used when no line states the platform and no kernel name implies one
    platform_files: dict[str, Literal["CUDA", "ROCM", "XPU", "CPU", "TPU"]] = _field(default_factory=dict)
    #: backend enum classes this engine's own code defines and prints as ``Class.MEMBER``
    #: (``Using NvFp4LinearBackend.MARLIN for NVFP4 GEMM``): a selection naming a class that only
    #: one engine's pack lists names that engine, as a kernel class of only its ladders does
    #: (``analysis/kernel_identity.py``); a class no pack lists names nothing
    enum_classes: list[str] = _field(default_factory=list)


@strict
class CliSpec(_Strict):
    """The shape of an engine's command line, as its argument parser defines it.

    ``booleans``: the flags that take no value (``argparse`` ``store_true`` /
    ``BooleanOptionalAction``, dash spelling without ``--``): after one, the next word is the
    next argument (the positional model of ``vllm serve --enforce-eager <model>``), unless it is
    one of ``bool_words`` (``StoreBoolean``'s optional ``true``/``false``). ``short``: the short
    aliases (``-tp``) -> the argument name (``tensor_parallel_size``). ``positional``: the fact a
    positional argument states (``model``: ``vllm serve <model_tag>``), empty for none;
    ``not_positional``: words that are never it (an image's entrypoint ``vllm serve``).
    ``names``: long flags (dash spelling) -> the argument name they set, where that is not the
    flag's own spelling with underscores: SGLang's ``--model-path`` (and its ``--model`` alias)
    states the model, ``--tp-size`` / ``--tensor-parallel-size`` the ``tensor_parallel_size``
    (sglang/srt/server_args.py: a field's flag is its name, ``aliases`` add the long names).
    """

    booleans: list[str] = _field(default_factory=list)
    negation: str = "no-"  #: ``BooleanOptionalAction``'s negated spelling prefix
    bool_words: list[str] = _field(default_factory=lambda: ["true", "false"])
    short: dict[str, str] = _field(default_factory=dict)
    positional: str = ""
    not_positional: list[str] = _field(default_factory=list)
    names: dict[str, str] = _field(default_factory=dict)
    #: boolean flags (dash spelling) that stand for another argument's value, ``"fact=value"``:
    #: SGLang's deprecated ``--enable-flashinfer-cutlass-moe`` is ``moe_runner_backend =
    #: flashinfer_cutlass`` (server_args.py maps it and warns), read as ``moe_backend=flashinfer_cutlass``
    switches: dict[str, str] = _field(default_factory=dict)


@strict
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


@strict
class FasterMethod(_Strict):
    """A quantization method the engine can replace by a faster one (``SLOW_QUANT_METHOD`` on a
    line that names no faster method needs an entry), e.g. vLLM ``gptq`` -> ``gptq_marlin``."""

    method: str
    faster: str
    since: str = ""  #: the first release that has ``faster``; empty = every release of the pack
    why: str = ""


@strict
class ArchCheck(_Strict):
    """Compare the device's compute capability with the architectures the binary was compiled for.

    Engines that pick kernels by a compile-time ``__CUDA_ARCH__`` (llama.cpp) run the highest
    compiled arch not above the device's; a build without the device's family runs an older
    family's code (or none). Both facts are run facts set by rules.
    """

    device_fact: str = "compute_capability"  #: run fact holding the cc as digits, e.g. ``90``, ``120``
    compiled_fact: str = "compiled_archs"  #: run fact holding the compiled list, e.g. ``750,900,1200``
    compiled_scale: int = spec(default=10, ge=1)  #: compiled value = cc digits x this
    finding: str = "ARCH_NOT_COMPILED"
    #: the code when the device's family is missing but an older arch is compiled: CUDA runs no
    #: older major's device code, yet a build that embedded that arch's PTX JIT-compiles it (ggml's
    #: default non-native list carries 75/80/90-virtual), so such a build may well work, on the older
    #: arch's code path. Empty: ``finding`` for both cases.
    older_family_finding: str = ""
    #: build flags (ladder ``build`` terms) that hold when a compiled arch (cc digits) is in [lo, hi)
    build_flags: dict[str, list[int]] = _field(default_factory=dict)


@strict
class WalkInfer(_Strict):
    """Infer the kernel of a layer family the engine never logs by walking a ladder for the run's GPU.

    When the run's quantization matches ``quantization`` and the GPU is known (log or
    ``--gpu``), the scheme's ladder is walked; only a certain prediction becomes a selection
    (``observed=False``, with the reasoning).
    """

    quantization: str  #: regex over the run's quantization (e.g. the GGUF file type)
    scheme: str  #: scheme id in ``patterns/schemes.toml``
    family: str  #: layer family of the inferred selection
    #: walk only when the log itself names the run's platform (a device line, a backend's own
    #: lines): for an engine whose build, not the GPU, decides the backend (llama.cpp: a CPU, Metal
    #: or Vulkan build on a machine with an RTX 4090), ``--gpu`` alone proves no GPU kernel ran
    needs_logged_platform: bool = False
    #: run facts (``config.extra`` keys) whose presence makes the walk uncertain -> why, said in
    #: the run's ``walk_skipped`` note: a line dating a build older than the shipped ladder's
    #: dispatch (llama.cpp's ``CUDA_USE_TENSOR_CORES``: cuBLAS above a batch of 32, not MMQ)
    unless_facts: dict[str, str] = _field(default_factory=dict)


@strict
class PlatformHint(_Strict):
    """A kernel or attention-backend name that only one platform prints (e.g. ``AITER`` -> ROCm).

    Used to infer the platform of a run that has no "Automatically detected platform" line;
    the ladders themselves are the other source (a class on one platform's list only).
    """

    pattern: str  #: regex over the kernel / backend name
    platform: Literal["CUDA", "ROCM", "XPU", "CPU", "TPU"]
    why: str = ""


@strict
class OpaqueLine(_Strict):
    """A message shape that carries user content (a prompt, a generated output): never matched.

    Request logs quote the user's prompt verbatim, and a prompt may hold any sentence an
    engine prints ("requires SM90", "Using Marlin ..."). A record whose message matches
    ``pattern`` (anchored at the message start) is skipped by every rule of the pack.
    """

    id: str
    pattern: str
    why: str = ""
    examples: list[str] = spec(min_length=1)


@strict
class NoiseLine(_Strict):
    """A high-volume message shape of the engine's own that states no engine fact (per-step
    scheduler statistics): skipped before keyword matching, so its words ("prefill",
    "decode", "token usage") never reach the broad rules and a long run stays cheap.
    ``pattern`` is anchored at the message start; only lines with the pack's own prefix.
    """

    id: str
    pattern: str
    why: str = ""
    examples: list[str] = spec(min_length=1)


@strict
class Uncovered(_Strict):
    """A reference log template the pack deliberately does not recognise, and why.

    ``template`` is the engine's format string as the reference lists it
    (``shared/reference/<engine>/templates.jsonl``: ``%s`` / ``{expr}`` placeholders kept);
    ``example`` is that template rendered with plausible values. The model checks that the
    example is a rendering of the template (placeholders stand for up to 200 characters);
    the test suite checks that no rule of the shipped packs recognises the example, so the
    list cannot go stale silently.
    """

    template: str = spec(min_length=1)
    level: Literal["debug", "info", "warning", "error", "exception", "raise"]
    versions: str = ""  #: PEP 440 specifier of the releases that print it (from the reference)
    reason: str = spec(min_length=20)  #: why a careful reader would not want an event from it
    example: str = spec(min_length=1)

    @after_check
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


@strict
class PackFile(_Strict):
    """``patterns/<engine>/pack.toml``."""

    pack: PackMeta
    arch_check: Optional[ArchCheck] = None
    walk: list[WalkInfer] = _field(default_factory=list)
    #: run facts (``config.extra`` keys) that decide a kernel path without being a selection (a
    #: build switch, a process-wide kernel version) -> the label the text and HTML reports show
    #: them under, in this order (their ``switches`` line)
    kernel_facts: dict[str, str] = _field(default_factory=dict)
    name_cost: list[NameCost] = _field(default_factory=list)
    faster_method: list[FasterMethod] = _field(default_factory=list)
    platform_hint: list[PlatformHint] = _field(default_factory=list)
    wrapper: list[ProcessTag] = _field(default_factory=list)  #: outer junk: compose prefixes, markdown
    process: list[ProcessTag] = _field(default_factory=list)
    prefix: list[PrefixFormat] = _field(default_factory=list)
    #: message shapes quoting user content (request logs): no rule of the pack sees them
    opaque: list[OpaqueLine] = _field(default_factory=list)
    noise: list[NoiseLine] = _field(default_factory=list)
    #: reference templates left unrecognised on purpose, each with its reason
    uncovered: list[Uncovered] = _field(default_factory=list)
