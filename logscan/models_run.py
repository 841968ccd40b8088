"""The report classes of one engine start (``Run``) and what its log says of it: the engine and
its release, the configuration (and SGLang's argument dump), a failed start, attention, the KV
cache, the lines not understood.

Split from ``logscan/models.py``, which re-exports every name (``from logscan.models import Run``
keeps working). Plain slotted classes (``logscan.plain``), as there.
"""

from typing import Optional

from dataclasses import field

from .models_kernel import CostClass, Finding, Selection
from .plain import PlainModel, plain


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
    #: where the process raised: the innermost frame of the failure's traceback as CPython printed
    #: it (``path, line N, in f``; the failing process's own frames when ranks interleave) and the
    #: log line of that frame; None when the log kept no frame of it
    raised_in: Optional[str] = None
    raised_in_line: Optional[int] = None


@plain
class Stop(PlainModel):
    """The engine was told to stop: a signal handler's line (vLLM ``[shutdown] EngineCore: trigger
    received signal=SIGTERM``, v1/engine/core.py 0.25 ->; SGLang ``SIGTERM received. signum=15 ...``,
    managers/tokenizer_manager.py; TGI's router ``signal received, starting graceful shutdown``;
    llama-cli ``Interrupted by user``). docs/lifecycle.md "Stopped".

    ``signal``: the signal the line names (None when it names none: vLLM's API server handles
    SIGINT and SIGTERM alike). ``served``: the server was up before the stop (or before the
    teardown failure). ``teardown_line`` / ``teardown``: a failure after the stop of a run that
    was up, reported as the stop's teardown (AsyncLLM's ``EngineDeadError``), not as a failure.
    """

    line: int
    evidence: str
    rule: str
    signal: Optional[str] = None
    process: Optional[str] = None
    served: bool = False
    teardown_line: Optional[int] = None
    teardown: Optional[str] = None


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
    #: ``logged`` (with line), ``reported`` (the reporter's environment block: collect_env, check_env, pip,
    #: an image tag; below a banner, above inference), ``inferred`` (with reason), ``given`` or ``unknown``
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


#: what the text report's ``config`` line shows of a ``RunConfig``, in order, as (label, field); a
#: field of None is the ``config.extra`` key named by the label (the parallel sizes beyond TP,
#: ``analysis.runstate.PARALLEL_FACTS``). A run-fact rule whose ``sets`` key is one of these (the
#: field, else the label) shows the value it names in the report (``analysis.targets.stated_fact``)
CONFIG_SHOWN: tuple[tuple[str, Optional[str]], ...] = (
    ("model", "model"), ("quantization", "quantization"), ("dtype", "dtype"),
    ("kv_cache_dtype", "kv_cache_dtype"), ("tp", "tensor_parallel_size"), ("pp", None), ("dp", None),
    ("ep", None), ("gpu", "gpu"), ("compute_capability", "compute_capability"))


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
class Folded(PlainModel):
    """Later runs of the same input that showed what this run shows, folded into it (a crash loop:
    one start-up failing over and over). ``logscan.fold`` (docs/run-splitting.md "Repeated runs").

    Two runs fold when their reports are the same but for line numbers and the numbers of their log
    text (evidence, reasons, headlines: a memory figure, a time); kernels, cost classes, rungs,
    finding codes, versions, models and every other value must be equal. ``runs``: how many runs
    were folded (not listed in ``runs[]``); ``first_line``: where the first of them begins;
    ``last_first_line`` / ``last_line``: where the last one begins and ends; ``numbers_differ``: of
    them, how many differ from this run in a number of their log text (not only in line numbers);
    ``events``: their recognised lines, left out of the report's ``events[]``.
    """

    runs: int
    first_line: int
    last_first_line: int
    last_line: int
    numbers_differ: int = 0
    events: int = 0


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
    #: a line says the engine was told to stop (a signal): ``Stop``; left out of the JSON when None
    stopped: Optional[Stop] = None
    #: later runs of this input with the same report but for numbers, folded into this one
    #: (``Folded``); left out of the JSON when None (nothing folded)
    folded: Optional[Folded] = None

    _omit_none = ("serving_failure", "stopped", "folded")
