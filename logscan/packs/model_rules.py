"""Models of what recognises a line and what it may report: rules and finding codes.

``patterns/<engine>/rules/*.toml`` (the recognisers), ``patterns/findings.toml`` (every
finding code); ``patterns/lexicon.toml`` (engine-neutral kernel-name morphology) is
``model_lexicon.py``'s.
"""

from typing import Literal, Optional

from dataclasses import field as _field

from ..plain import after_check, field_check, spec

from .model_base import _Strict, strict


RuleKind = Literal[
    "linear_kernel", "moe_kernel", "fallback_warning", "kernel_not_found", "backend_override",
    "quant_method", "kv_cache", "attention_backend", "config", "version", "platform",
    "failure", "optional_package", "gpu", "run_start", "start_failure", "identity",
    # ``uncaught``: a line of a Python traceback (header, frame, exception); ``ready``: a line
    # saying the server / engine came up. A run with an uncaught traceback and no ready line
    # is a failed start (analysis/uncaught.py, docs/fail-closed.md)
    "uncaught", "ready",
    # ``progress``: a step of the start (weights loaded, KV cache sized): the process that logs it
    # went on, so a traceback it printed before was survived (analysis/lifecycle.py)
    "progress",
    # ``stop``: the engine was told to stop (a signal handler's line: vLLM '[shutdown] EngineCore: trigger
    # received signal=SIGTERM'); a failure after it, once the server was up, is the stop's teardown, no
    # failure (analysis/lifecycle.py, docs/lifecycle.md "Stopped")
    "stop",
    # ``unread``: a sentence that names a kernel or backend in a choice's words that no other rule
    # read (patterns/common-rules/95-unread-kernel.toml): tried after every other rule, it only
    # lists the line as not understood (analysis/trust.py), never a selection, finding or fact
    "unread",
    # ``machine``: a line that names the machine's GPU but is no engine's (a tool's output, a wrapper
    # script's echo; patterns/common-rules/60-machine-lines.toml): it never opens, names or splits a
    # run, its facts go to the open or next run of its input (analysis/machine_lines.py)
    "machine",
]


@strict
class Continuation(_Strict):
    """How a multi-line message goes on after the line a rule matched.

    vLLM's ``NewLineFormatter`` repeats the line prefix on every continuation line; a
    continuation record is one from the same process and ``file:line`` whose message
    matches ``item`` (its ``item`` group, or the whole match, is kept as one reason).
    """

    item: str = r"(?P<item>.+)"
    max_lines: int = spec(default=64, ge=1, le=4096)
    same_source_line: bool = True  #: continuation lines must repeat the file:line of the first
    #: run facts an item states, filled from the item match's named groups (``Rule.sets`` syntax):
    #: vLLM's 'MacheteLinearKernel requires capability 90, current compute capability is 75'
    #: inside a KERNEL_NOT_FOUND block states the device's capability (``compute_capability``)
    sets: dict[str, str] = _field(default_factory=dict)
    #: a line-continuation marker (regex searched at the end of the last gathered line): when set,
    #: a line continues the message only while the line before it ended with the marker (a shell
    #: command wrapped with ``\``), a prefixed log line always ends it, and the items are joined
    #: with spaces and matched once by ``item``, each group after the first line's group of the
    #: same name, before ``sets`` is filled (one command, not one per line)
    joined_by: Optional[str] = None


@strict
class GpuCeiling(_Strict):
    """What a line's statement about the GPU implies about its compute capability: a ceiling
    (``below``, digits: 89 = sm89) that ``scan --gpu`` is checked against (GPU_CONTRADICTS_LOG,
    ``analysis/statements.py``). Only where the engine's source prints the sentence on a GPU
    below that capability alone: ``quantization`` (a regex the run's stated quantization method
    must match; when set and unstated, nothing is claimed) keeps out checkpoints that reach the
    same code by design (a W8A16 FP8 checkpoint logs "no native FP8" on an H100); None where the
    source tests the capability itself (Marlin's "bf16 on GPUs before SM90": ``major < 9``), and ``unless`` names run
    facts (``config.extra`` keys or ``--flags`` of the server arguments) whose presence forces the
    path on a capable GPU (a test switch, disabled kernels, a forced MoE backend). ``source``: the
    engine's file, function and releases that state the condition."""

    below: int = spec(ge=30, le=200)
    quantization: Optional[str] = None
    source: str = spec(min_length=10)
    unless: list[str] = _field(default_factory=list)


@strict
class CheckpointOwn(_Strict):
    """A degradation sentence the engine also prints while preparing a checkpoint's OWN
    weight-only format: under a run whose stated quantization method matches ``quantization``
    (a regex; unstated: the rule's own reading stands), the line names the ``family`` /
    ``registry`` hint given here at ``cost_class`` and states no finding (vLLM's FP4 Marlin
    sentence is printed by prepare_moe_fp4_layer_for_marlin for gpt-oss's MXFP4 experts,
    whose activations are BF16: Marlin is their native path). ``source``: the engine's file,
    function and releases that print the sentence for that checkpoint."""

    quantization: str = spec(min_length=2)
    family: str = spec(min_length=2)
    registry: Optional[str] = None
    cost_class: Literal["native", "weight_only", "portable", "unknown"] = "native"
    source: str = spec(min_length=10)


@strict
class AssumedScheme(_Strict):
    """The activation scheme a rule's cost class and finding assume when its sentence does not
    state it: vLLM's FP4 Marlin sentence ("Weight-only FP4 compression will be used leveraging
    the Marlin kernel") is printed wherever the FP4 Marlin path is prepared, for a W4A4 NVFP4
    checkpoint (a substitution) and for a W4A16 NVFP4 one (NVFP4A16, ModelOpt W4A16_NVFP4
    layers: Marlin is its native kernel) alike (``analysis/assumed.py``).

    ``scheme``: the assumed activation scheme (``W4A4``); ``alternative``: the reading under
    which the line states no substitution, named in the finding's reasons; ``floor``: the
    ``patterns/hardware-floors.toml`` id whose native compute the sentence denies: on a CUDA
    GPU known to be at or above it the sentence contradicts the GPU, so the cost class is
    ``unknown`` and the finding is lowered to info with the caveat, unless a line states the
    assumed scheme. ``stated``: a regex searched in the run's other read lines that states the
    assumed scheme (vLLM's NvFp4 MoE oracle, 'CompressedTensorsW4A4Nvfp4'); ``native``: a regex
    searched in the run's model name and read lines that states the alternative
    ('...-NVFP4A16', 'CompressedTensorsW4A16Fp4', 'W4A16_NVFP4'): the line is then the
    checkpoint's own path, cost class ``native``, no finding. ``native_examples`` /
    ``stated_examples``: texts each regex must find (checked by tests/test_assumed_scheme.py),
    ``counter_examples``: texts neither may find. ``source``: the engine's files and releases."""

    scheme: str = spec(min_length=2)
    alternative: str = spec(min_length=10)
    #: the alternative's scheme (``NVFP4 W4A16``): a selection's scheme when a line states it
    alternative_scheme: str = spec(min_length=2)
    #: the ladder role (regex) of the alternative's registry; None: no ladder holds it, so a line
    #: stating the alternative is placed on none (the assumed scheme's ladder is not its own)
    alternative_registry: Optional[str] = None
    floor: Optional[str] = None
    stated: Optional[str] = None
    #: a regex fully matching the source file of the rule's own line (``file.py`` of the logger
    #: prefix) printed only on the assumed scheme's path (vLLM's nvfp4_utils.py: the W4A4 linear
    #: backend selector and its weight conversion, which needs the activation global scale)
    stated_sites: Optional[str] = None
    native: Optional[str] = None
    stated_examples: list[str] = _field(default_factory=list)
    native_examples: list[str] = _field(default_factory=list)
    counter_examples: list[str] = _field(default_factory=list)
    source: str = spec(min_length=10)


@strict
class Rule(_Strict):
    """One recogniser: a regex over the message of a record and what a match means.

    Templates in ``family``, ``kernel``, ``sets`` and ``remedy`` take ``{group}`` fields
    from the match. ``versions`` is a PEP 440 specifier of the engine releases whose source
    holds the template (used to infer the release when the log prints none).
    """

    id: str
    kind: RuleKind
    pattern: str
    keywords: list[str] = spec(min_length=1)  #: literal strings, one of which every match contains
    description: str = ""
    versions: str = ""  #: PEP 440 specifier set, e.g. ``>=0.22.1``; empty = any
    levels: list[str] = _field(default_factory=list)  #: accept only these levels (when the line has one)
    family: Optional[str] = None  #: layer family of a selection, e.g. ``linear ({layer})``
    kernel: Optional[str] = None  #: kernel name template; default ``{kernel}``
    registry: Optional[str] = None  #: registry role hint (regex over ladder roles), e.g. ``nvfp4``
    cost_class: Optional[str] = None  #: stated by the line itself (e.g. the Marlin weight-only warning)
    finding: Optional[str] = None  #: finding code the line states
    remedy: Optional[str] = None
    sets: dict[str, str] = _field(default_factory=dict)  #: run facts: version, quantization, platform, gpu...
    #: ``sets`` keys every matching line adds to (``runstate.listed_fact``), not set once: one line per
    #: device (llama.cpp ggml_cuda_init 'Device N: ...': ``devices``, ``device_arch``)
    lists: list[str] = _field(default_factory=list)
    starts_run: bool = False  #: an engine start marker (version line, config line, logo)
    #: a process prints the line once as it starts, though it is no start marker (several processes
    #: of one start each print it: vLLM's 'Automatically detected platform cuda.'): printed again in
    #: the same process stream after the run's failure, it begins the next start, even with the same
    #: pid and clock (``analysis/newstart.repeated_start``, docs/run-splitting.md rule 5)
    once_per_start: bool = False
    #: the line names its engine without starting a run (an engine's launch command: a command
    #: pasted after its own start's lines stays in that run, but another engine's command is no
    #: line of the open run, so it opens its own: its config never lands on another engine's run)
    names_engine: bool = False
    continuation: Optional[Continuation] = None
    #: the line states the GPU lacks a capability (``GpuCeiling``): checked against ``scan --gpu``
    implies_gpu: Optional[GpuCeiling] = None
    #: the line states the GPU lacks native compute of a format: the id of its hardware floor in
    #: ``patterns/hardware-floors.toml`` (``FP8``, ``FP4``). With no GPU known, scan judges the
    #: native rungs behind that floor refused by the log itself (``analysis/floors.py``)
    lacks_native: Optional[str] = None
    #: the line under a checkpoint whose own weight-only format it prepares (``CheckpointOwn``)
    checkpoint_own: Optional[CheckpointOwn] = None
    #: run fact -> regex: when the run states that fact and its value fully matches (case-insensitive),
    #: the line keeps its event and facts but raises no finding: the user asked for what the line says
    #: happened (LMDeploy's 'Fallback to pytorch engine because ... not supported by turbomind engine'
    #: under 'lmdeploy serve ... --backend pytorch', lmdeploy-176; ``analysis/statements.as_stated_for``)
    no_finding_when: dict[str, str] = _field(default_factory=dict)
    #: the activation scheme the rule's cost class assumes where its sentence does not say (``AssumedScheme``)
    assumes: Optional[AssumedScheme] = None
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
    #: a state, not an event (an HTTP 2xx access line: the server is up): only the first such line
    #: after each start marker counts, and the prefilter passes only the first one after each of
    #: its hits (``sources/sparse.py``), so millions of access lines cost no per-line work
    sparse: bool = False
    #: the message is printed by a tool every engine runs (Triton, ptxas, the CUDA runtime), not
    #: by this pack's engine: its finding may be raised on any engine's run (analysis/trust.py)
    generic: bool = False
    #: a bare line that names no engine (the shell's 'Segmentation fault (core dumped)'): it joins
    #: an open run of its source, as a bare traceback line does, and alone opens none (analyzer.py)
    open_run_only: bool = False
    examples: list[str] = spec(min_length=1)
    counter_examples: list[str] = _field(default_factory=list)
    #: whole lines as the engine prints them (an era's prefix, ANSI colour codes, a multi-line
    #: message continued after ``\r\n``): read through the real reader, prefix parser and
    #: matcher, each must yield an event of this rule
    line_examples: list[str] = _field(default_factory=list)
    #: the line is a frame of a Python traceback (``File "...", line N, in f``) in a kernel's
    #: apply path or op: that kernel ran, the process raised inside it (docs/traceback-frames.md).
    #: With ``family`` and ``kernel`` it is a selection seen in a traceback; without ``family``
    #: it is kernel-relevant evidence of the kernel ``kernel`` names (or, unset, the kernel the
    #: lexicon's ``[[kernel]]`` aliases give the frame's function): corroboration of a selection
    #: of that kernel, else "not understood". The former id convention (a ``.frame.`` segment) is
    #: read as ``frame = true`` only as a deprecated fallback (``analysis/frames.is_frame_rule``)
    frame: bool = False
    #: the frame's function names its format and path (the rule's ``kernel``, e.g. vLLM's
    #: ``apply_w8a8_block_fp8_linear``: the W8A8 block-scaled FP8 path), though not the GEMM kernel
    #: inside, so no selection: when it gives a failed start's failing kernel, the failure reads it
    #: and it is no "not understood" line (``analysis/close.py``). Needs ``frame``, ``kernel``, no
    #: ``family``
    names_path: bool = False
    #: the rule reads a traceback's quoted source line (the code under a frame header, e.g. the
    #: serving loop's ``engine_core.run_busy_loop()``); every other rule skips such lines, which
    #: are no log statements (``sources/quoted.py``, docs/traceback-frames.md)
    source_line: bool = False
    #: with ``source_line``: the rule reads ONLY a quoted source line, never a log statement (an op
    #: call ``torch.ops._C.cutlass_scaled_mm(...)`` is code the frame ran; the same words in a
    #: logged sentence are none: ``common-rules/97-quoted-op-calls.toml``)
    quoted_only: bool = False
    #: the line is a C++ runtime's abort banner (libstdc++'s "terminate called after throwing an
    #: instance of '...'"), no line of a Python traceback: a failed start it heads has its cause in
    #: the ``what():`` line after it, cut when the log ends there (``analysis/failhead.py``)
    cxx_abort: bool = False
    #: identity rules only: a regex for the part of the rule's text that is the engine's LIBRARY's
    #: own (ggml's functions, backend tags and source files), which other programs embed too
    #: (whisper.cpp, stable-diffusion.cpp): a line the rule matches only through such text names
    #: the engine only in a source where no ``disowns`` line of the pack was read
    library: Optional[str] = None
    #: identity rules only: the line is another program's that is built on the engine's library
    #: ('whisper_model_load:', 'stable-diffusion.cpp:157  - '): it names no engine, and in its
    #: source the pack's ``library`` identity rules name the engine no more (an open run they
    #: named goes back to ``unknown``; analysis/analyzer.py, docs/corpus.md negative10-2)
    disowns: bool = False
    #: stop rules only: the signal the line implies when its text names none (llama-cli's
    #: sigint_handler prints 'Interrupted by user' on SIGINT alone). A stop rule's named groups
    #: ``signal`` (``SIGTERM``) or ``signum`` (``15``) name it from the line; a group ``up`` says the
    #: line is logged only by a server that was up (vLLM launcher.py's handler, registered once the
    #: HTTP server serves): evidence of serving like a ``ready`` line
    stop_signal: Optional[str] = None

    @after_check
    def _stop_shape(self) -> "Rule":
        if self.stop_signal and self.kind != "stop":
            raise ValueError(f"rule {self.id}: stop_signal is for stop rules only")
        return self

    @after_check
    def _library_shape(self) -> "Rule":
        if (self.library or self.disowns) and self.kind != "identity":
            raise ValueError(f"rule {self.id}: library / disowns are for identity rules only")
        if self.library and self.disowns:
            raise ValueError(f"rule {self.id}: a rule is the library's or another program's, not both")
        return self

    @after_check
    def _quoted_shape(self) -> "Rule":
        if self.quoted_only and not self.source_line:
            raise ValueError(f"rule {self.id}: quoted_only needs source_line = true")
        return self

    @after_check
    def _lists_shape(self) -> "Rule":
        if set(self.lists) - set(self.sets):  # a typo would leave the list silently empty
            raise ValueError(f"rule {self.id}: lists names facts its sets lack: {sorted(set(self.lists) - set(self.sets))}")
        return self

    @after_check
    def _frame_shape(self) -> "Rule":
        if self.names_path and (not self.frame or not self.kernel or self.family):
            raise ValueError(f"rule {self.id}: names_path needs frame = true, a kernel and no family")
        if not self.frame:
            return self
        import re

        if self.kind not in ("linear_kernel", "moe_kernel", "fallback_warning"):
            raise ValueError(f"rule {self.id}: a frame rule must be of a kernel kind (linear_kernel, moe_kernel, "
                             f"fallback_warning), not {self.kind!r}")
        if bool(self.family) != bool(self.kernel) and self.family:
            raise ValueError(f"rule {self.id}: a frame rule with a family must name its kernel")
        for ex in self.examples:
            if not re.match(FRAME_SHAPE, ex):
                raise ValueError(f"rule {self.id}: frame example {ex!r} is no traceback frame "
                                 "('File \"...\", line N, in f' or 'File \"...\", in f')")
        return self

    @field_check("id")
    def _id_shape(cls, v: str) -> str:
        import re

        if not re.fullmatch(r"[a-z0-9]+(?:[.-][a-z0-9_]+)+", v):
            raise ValueError(f"rule id {v!r} must look like 'engine.family.name' (lowercase)")
        return v


#: a CPython traceback frame (``traceback.format_list``: ``  File "<path>", line <n>, in <function>``),
#: with the optional prefix a log window keeps before it; ``path`` and ``function`` are its parts.
#: ``line <n>, `` may be missing: a pasted log can show a frame header without its line number
#: (sglang-105, an edited paste: ``File ".../pdmux_context.py", in get_arch_constraints``); the
#: frame still names the function that ran (docs/traceback-frames.md)
FRAME_SHAPE = r'^.{0,300}?\bFile "(?P<path>[^"]{1,500})",(?: line \d{1,7},)? in (?P<function>[^\s(]{1,160})'


@strict
class RuleFile(_Strict):
    """One ``rules/*.toml`` file: a list of ``[[rule]]`` tables."""

    rule: list[Rule] = _field(default_factory=list)


@strict
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
    #: the finding's reasons are the engine's refusals, each led by the kernel it refuses
    #: (vLLM's KERNEL_NOT_FOUND: ``MarlinLinearKernel cannot implement due to: ...``): a selection
    #: of the same run whose kernel such a reason names is refused by the run's own failure
    reasons_refuse: bool = False


@strict
class FindingsFile(_Strict):
    """``patterns/findings.toml``: every finding code logscan may report."""

    code: dict[str, CodeInfo]
    #: cost class of a selected kernel -> finding code it implies
    cost_class_finding: dict[str, str] = _field(default_factory=dict)

    @after_check
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

