"""The report classes of everything logscan reports: records, events, selections, findings, runs.

Plain slotted classes (``logscan.plain``): a scan never imports pydantic (start-up, issue 18).
The JSON report (``logscan scan --format json``) is ``Report.model_dump_json()`` (the ``json``
module); its JSON schema is ``Report.model_json_schema()`` (``logscan schema``), from the pydantic
model ``logscan.validate`` generates from these classes, which also validates a ``--baseline``
report (``Report.model_validate``). Field names are part of the
public interface: ``kernel`` and ``cost_class`` on every selection, ``code`` on every finding,
``line`` and ``rule`` on every event.
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
class Record(PlainModel):
    """One logical log line after unwrapping (CRI, Docker JSON) and prefix parsing.

    ``line`` is the 1-based line number in the input file where the record starts
    (a CRI record joined from ``P`` partial lines keeps the number of its first part).
    """

    source: str
    line: int
    message: str
    level: Optional[str] = None
    timestamp: Optional[str] = None
    fileinfo: Optional[str] = None  #: ``file.py:123`` as the engine printed it
    process: Optional[str] = None  #: e.g. ``EngineCore_DP0``, ``Worker_TP1``, ``VllmWorkerProcess``
    rank: Optional[str] = None  #: ``TP1``, ``1``, ``DP0``: what tells ranks apart
    pid: Optional[int] = None
    prefix_format: Optional[str] = None  #: id of the line-prefix format that parsed the line
    truncated: bool = False  #: the physical line was longer than the reader's limit and was cut


@plain(eq=False)
class Event(PlainModel):
    """A line recognised by a pack rule: the rule id, the line, the named groups it captured."""

    line: int
    rule: str
    kind: str
    source: str
    message: str
    groups: dict[str, str] = field(default_factory=dict)
    items: list[str] = field(default_factory=list)  #: continuation lines gathered (e.g. per-kernel reasons)
    process: Optional[str] = None
    rank: Optional[str] = None
    level: Optional[str] = None
    #: the process id of the line's process tag (``(APIServer pid=N)``): tells two starts apart
    #: (``analysis.newstart``); kept out of the report, carried by follow's checkpoint
    pid: Optional[int] = field(default=None, metadata={"exclude": True})
    #: the line prefix's timestamp as printed (``03-17 15:05:45``): a clock going back is another start
    timestamp: Optional[str] = field(default=None, metadata={"exclude": True})
    #: line of the last continuation line gathered into ``items`` (None when none): the run the
    #: event is in spans it too (a KERNEL_NOT_FOUND's reason lines, vllm PR #30602)
    end_line: Optional[int] = field(default=None, metadata={"exclude": True})

    def __eq__(self, other: object) -> bool:
        """Equal when the report shows the same event (``pid`` and ``timestamp`` are read from the
        same line, and a report read back from JSON has neither)."""
        if not isinstance(other, Event):
            return NotImplemented
        return self.model_dump() == other.model_dump()


@plain
class RungElsewhere(PlainModel):
    """The kernel's rung in other releases of the inferred range, when they disagree."""

    releases: str  #: release range, e.g. ``0.26.0–0.29.0``
    rung: int
    rungs: int
    registry: str


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


@plain
class StartFailure(PlainModel):
    """The engine's own line saying its start failed (a pack rule of kind ``start_failure``).

    e.g. vLLM ``EngineCore failed to start.`` (v1/engine/core.py, 0.8 ->), ``WorkerProc failed
    to start.`` (v1/executor/multiproc_executor.py); SGLang ``Scheduler hit an exception``.
    ``cause_line``/``cause``: the raised exception the log gives for it, when one is recognised.
    The rest says why, in the engine's words: ``analysis/failhead.describe`` (docs/lifecycle.md).
    """

    line: int
    evidence: str
    rule: str
    process: Optional[str] = None
    cause_line: Optional[int] = None
    cause: Optional[str] = None
    headline: str = ""
    exception_type: Optional[str] = None
    traceback_line: Optional[int] = None
    failing_kernel: Optional[str] = None
    failing_kernel_line: Optional[int] = None
    failing_kernel_why: Optional[str] = None


@plain
class EngineInfo(PlainModel):
    """What the log says of the engine: name, release, and how the release was known."""

    #: the engine the log's own lines name, or ``unknown`` when only generic lines (Python
    #: tracebacks, cmake output) are present: never another engine's name by default
    name: str
    #: why ``name``: the first line naming the engine (a line prefix, a start line, an
    #: ``identity`` rule such as a ``site-packages/vllm/`` path), or why none did
    identified_by: Optional[str] = None
    #: the pack whose rules and ladders read the run (equal to ``name`` unless ``unknown``)
    read_with: Optional[str] = None
    version: Optional[str] = None
    #: ``logged`` (with line), ``inferred`` (with reason), ``given`` (``--engine-version``) or ``unknown``
    version_source: str = "unknown"
    version_evidence: Optional[str] = None
    ladder_version: Optional[str] = None  #: the shipped ladder release used for rung positions
    platform: Optional[str] = None
    #: ``logged`` (a platform line or the config's device), ``inferred`` (from platform-only
    #: kernel or backend names, see ``platform_evidence``) or ``unknown`` (CUDA ladders assumed)
    platform_source: str = "unknown"
    platform_evidence: Optional[str] = None
    #: ``version_source == "inferred"``: the oldest and newest shipped releases that fit the log
    #: (the real release lies between them); the gate judges ``versions`` rules over this range
    release_range: Optional[list[str]] = None


@plain
class AttentionChoice(PlainModel):
    """An attention backend the run selected (vLLM ``platforms/*.py``, ``attention/selector.py``).

    Kept apart from ``selections``: attention is not a quantized GEMM, and its name is not a
    ``kernel`` (JSON consumers count ``kernel`` objects as quantized-kernel selections).
    """

    backend: str  #: the name as the log prints it, e.g. ``FLASH_ATTN``, ``Flash Attention``
    candidates: list[str] = field(default_factory=list)  #: "out of potential backends: [...]"
    ranks: list[str] = field(default_factory=list)
    line: int
    evidence: str
    rule: str


@plain
class KvCache(PlainModel):
    """KV-cache dtype asked for (config ``kv_cache_dtype``) versus the one a line says is in effect."""

    requested: Optional[str] = None  #: from the config line / non-default args (``auto`` = model dtype)
    requested_line: Optional[int] = None
    in_effect: Optional[str] = None  #: from a line that states the dtype used (e.g. a cast, a scale line)
    in_effect_line: Optional[int] = None
    evidence: Optional[str] = None  #: the line stating ``in_effect``


@plain
class ServerArgs(PlainModel):
    """The engine's own dump of its arguments (SGLang ``server_args=...``), read without eval.

    Typed fields are the ones that choose kernels (names as SGLang spells them, 0.3 ->
    0.5.23: ``sglang/srt/server_args.py``); every other field is kept in ``other`` as the
    text the log printed. ``truncated``: the dump was cut before its end (fields after the
    cut are unknown, not defaults).
    """

    line: int  #: line of the dump in the input
    shape: str  #: ``dataclass`` (``ServerArgs(...)``, <= 0.5.16) or ``dict`` (0.5.23 resolved dict)
    truncated: bool = False
    model_path: Optional[str] = None
    quantization: Optional[str] = None
    dtype: Optional[str] = None
    kv_cache_dtype: Optional[str] = None
    moe_runner_backend: Optional[str] = None
    moe_a2a_backend: Optional[str] = None
    fp4_gemm_runner_backend: Optional[str] = None  #: ``--fp4-gemm-backend`` (0.5.10+)
    fp8_gemm_runner_backend: Optional[str] = None  #: ``--fp8-gemm-backend`` (0.5.10+)
    attention_backend: Optional[str] = None
    prefill_attention_backend: Optional[str] = None
    decode_attention_backend: Optional[str] = None
    device: Optional[str] = None
    tp_size: Optional[int] = None
    dp_size: Optional[int] = None
    ep_size: Optional[int] = None
    pp_size: Optional[int] = None
    #: boolean MoE switches of 0.4.x (``enable_ep_moe``, ``enable_deepep_moe``, ...) that are set
    flags: list[str] = field(default_factory=list)
    other: dict[str, str] = field(default_factory=dict)  #: every other field, as printed


@plain
class RunConfig(PlainModel):
    """The engine configuration of a run, as far as the log prints it."""

    model: Optional[str] = None
    quantization: Optional[str] = None
    dtype: Optional[str] = None
    kv_cache_dtype: Optional[str] = None
    tensor_parallel_size: Optional[int] = None
    gpu: Optional[str] = None
    compute_capability: Optional[str] = None
    extra: dict[str, str] = field(default_factory=dict)
    server_args: Optional[ServerArgs] = None  #: the engine's argument dump, when it logs one


@plain
class Unexplained(PlainModel):
    """A kernel-relevant line logscan noticed but could not turn into a selection or a finding.

    ``why`` says what was missing: a topic rule saw what the line speaks of (a backend, MoE,
    a fallback) but no rule states its choice; or a finding it states was not trusted (a
    rule of another engine, a package unrelated to kernels). Input for writing rules.
    """

    line: int
    rule: str
    kind: str
    message: str
    why: str


@plain
class Run(PlainModel):
    """One engine start found in the input (a restart or a second server is another run)."""

    index: int
    source: str
    first_line: int
    last_line: int
    engine: EngineInfo
    config: RunConfig = field(default_factory=RunConfig)
    selections: list[Selection] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    worst_cost_class: Optional[CostClass] = None
    attention: list[AttentionChoice] = field(default_factory=list)  #: attention backends chosen
    kv_cache: Optional[KvCache] = None  #: KV-cache dtype asked for and in effect, when the log says
    start_failure: Optional[StartFailure] = None  #: a line says the engine did not start
    #: kernel-relevant lines noticed but not understood (no selection, no finding), in line order
    unexplained: list[Unexplained] = field(default_factory=list)
    #: the server of this source was up (a ready or HTTP 2xx line, no start since), then a line says
    #: it failed: a crash while serving, not a failed start (``analysis/lifecycle.py``); left out of
    #: the JSON when None
    serving_failure: Optional[StartFailure] = None

    _omit_none = ("serving_failure",)


@plain
class InputStats(PlainModel):
    """What was read: per input, lines, bytes, and what the reader had to repair."""

    source: str
    lines: int = 0
    bytes: int = 0
    truncated_lines: int = 0
    decode_errors: int = 0  #: physical lines that were not valid UTF-8 (bad bytes replaced)
    nul_bytes: int = 0  #: NUL bytes removed (a file pre-allocated and never fully written, binary junk)
    #: lines that could not be parsed or analysed (a value past an internal bound): counted, not read
    skipped_lines: int = 0
    #: lines whose rule matching ran out of the per-line budget (``match.LINE_BUDGET``): not every rule was tried
    over_budget_lines: int = 0
    #: the first line numbers of those (at most ``match.MAX_NAMED``)
    over_budget_at: list[int] = field(default_factory=list)
    #: something the reader read past without losing a line (trailing garbage after a gzip stream, as gzip(1) warns)
    warning: Optional[str] = None
    error: Optional[str] = None
    #: every note the text report's ``!`` line gives this input, one string each: repairs (invalid
    #: UTF-8 replaced, over-long lines cut, NUL bytes removed), skipped and over-budget lines, the
    #: reader's ``warning``, an early end (``error``), "empty input: 0 lines read"; None (left out
    #: of the JSON, as ``Run.serving_failure``) when clean and for an input that could not be opened
    #: (``error`` says why). ``formats.inputs.input_warnings``
    warnings: Optional[list[str]] = None

    _omit_none = ("warnings",)


@plain
class Summary(PlainModel):
    """Counts over every run of a report (``Report.summary``)."""

    runs: int = 0
    selections: int = 0
    findings: int = 0
    unexplained: int = 0  #: kernel-relevant lines noticed but not understood (``Run.unexplained``)


@plain
class Report(PlainModel):
    """The whole answer for a set of inputs: runs, the recognised events, reader stats."""

    logscan_version: str
    runs: list[Run] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    inputs: list[InputStats] = field(default_factory=list)
    summary: Summary = field(default_factory=Summary)

    def summarise(self) -> "Report":
        """Fill ``summary`` from the runs (call once the runs are final); returns self."""
        self.summary = Summary(runs=len(self.runs), selections=sum(len(r.selections) for r in self.runs),
                               findings=sum(len(r.findings) for r in self.runs),
                               unexplained=sum(len(r.unexplained) for r in self.runs))
        return self
