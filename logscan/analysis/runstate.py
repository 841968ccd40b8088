"""The state of one run while its lines are read, and the run facts rules set on it.

A rule's ``sets`` table (``sets = { quantization = "{quant}" }``) names a run fact and a
template over the line's groups; ``set_fact`` stores it on the open run (most facts keep
their first value; the platform and the KV-cache dtype in use take the latest line's). ``config`` / ``args`` facts are a
whole ``key=value`` dump (vLLM's "Initializing an LLM engine (v...) with config: ...",
SGLang's ``ServerArgs(...)``), read key by key.
"""
from __future__ import annotations

import functools
from dataclasses import field
from typing import Collection, Optional

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..models import Event, RunConfig, Selection
from ..sources.safe import bounded_int
from ..packs.model_pack import CliSpec
from .cli_args import arguments
from .gpu_source import set_gpu, set_one_of
from .infer import apply_server_args, server_args_config

_KV = lazyre.compile(r"(?P<k>\w+)=(?P<v>'[^']*'|\"[^\"]*\"|[^,]*)")
_DICT_KV = lazyre.compile(r"'(?P<k>\w+)':\s*(?P<v>'[^']*'|\"[^\"]*\"|[^,}]*)")
_FIELD = rxcache.compile(r"\{(\w+)\}")


def kv_same(asked: str, used: str, aliases: Optional[dict[str, str]] = None) -> bool:
    """Whether two KV-cache dtype spellings can be the same storage (``aliases``: the pack's
    ``kv_dtype_aliases``, spelling -> canonical name).

    A bare ``fp8`` matches any FP8 variant: vLLM 0.5.5 -> 0.18.1 prints the fixed text "Using
    fp8 data type to store kv cache" whichever of e4m3 / e5m2 was asked (config/cache.py).
    """
    a, b = kv_norm(asked, aliases), kv_norm(used, aliases)
    if a == b:
        return True
    bare = {x.strip().strip("'\"").lower() for x in (asked, used)}
    return "fp8" in bare and a.startswith("fp8") and b.startswith("fp8")


def kv_norm(dtype: str, aliases: Optional[dict[str, str]] = None) -> str:
    """Canonical KV-cache dtype name through the pack's aliases (vLLM: ``fp8`` -> ``fp8_e4m3``), ``torch.`` dropped."""
    d = dtype.strip().strip("'\"").lower().replace("torch.", "")
    return (aliases or {}).get(d, d)


def fill(template: str, groups: dict[str, str]) -> str:
    """Replace ``{name}`` by the named group's text (empty when the group did not match)."""
    return _FIELD.sub(lambda m: groups.get(m.group(1), ""), template)


def _unquote(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


@dataclass
class SelectionGroup:
    """One selection of a run and the lines (at most 8 kept), ranks and printers that named it."""
    selection: Selection
    ranks: set[str] = field(default_factory=set)
    #: the explicit ranks that printed it, or ``main`` for a line without one
    printers: set[str] = field(default_factory=set)
    events: list[Event] = field(default_factory=list)


@dataclass
class RunState:
    """What the lines of one open run said so far (``Analyzer`` builds a ``Run`` from it when it closes)."""
    index: int
    source: str
    first_line: int
    last_line: int
    engine: str
    version: Optional[str] = None
    version_line: Optional[int] = None
    #: a release the reporter's environment states (collect_env / check_env, pip freeze, a docker
    #: image tag, an issue template's bullet; ``sets.version_reported``): below a logged banner
    version_reported: Optional[str] = None
    version_reported_line: Optional[int] = None
    reported_evidence: Optional[str] = None  #: set by ``engine_facts.reported_release``
    config: RunConfig = field(default_factory=RunConfig)
    platform: Optional[str] = None
    platform_line: Optional[int] = None
    #: the platform came from a ``platform_fallback`` fact (the GPU backend disabled itself, so the
    #: run is on the CPU): a later line naming the build's backend (compiled archs) does not undo it
    platform_fallback: bool = False
    era: list[str] = field(default_factory=list)  #: releases an inferred version ranges over
    kv_requested_line: Optional[int] = None
    kv_used: Optional[tuple[str, Event]] = None
    attention: list[tuple[str, Event]] = field(default_factory=list)
    rules_seen: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    #: a bare Triton CompilationError header just before the run's first line (it joined no run):
    #: it names the kernel of the error that opened the run (``analysis/triton_def.py``)
    jit_heads: list[Event] = field(default_factory=list)
    #: ``unread`` events (a kernel sentence no rule read): kept apart from ``events`` so they change no
    #: selection, finding, failure or run split, only the run's "not understood" list (at most 256)
    unread: list[Event] = field(default_factory=list)
    started: bool = False
    #: line of the run's first start marker: what came before it (an import-time warning) is no
    #: reason to split the run at the next marker of the same start sequence
    start_line: Optional[int] = None
    engine_sure: bool = False  #: a line of the run named its engine (prefix, start marker, identity rule)
    #: line of the last sign, before the run opened, that its source's server was up (a ready or
    #: HTTP 2xx line in an earlier run or in no run) with no start marker after it (``lifecycle``)
    up_line: Optional[int] = None
    #: lines of the run's start markers (at most 256 kept): a failure after one is a start's again
    start_lines: list[int] = field(default_factory=list)
    identified_by: Optional[str] = None  #: the first line that named the engine, in prose
    #: the engine was named only by a ``library`` identity rule (ggml's own lines): a ``disowns``
    #: line of another program built on that library takes the name back
    library_identity: bool = False
    #: process role (``Worker_TP0#TP0``) -> the first pid heard in it (``newstart``: another pid is another start)
    pids: dict[str, int] = field(default_factory=dict)
    #: every pid heard in the run (shared names too) -> its process name without the rank (at most 64):
    #: what ties a process the run did not hear from to it after its failure (``newstart.unseen_process``)
    procs: dict[int, str] = field(default_factory=dict)
    #: per process stream (``newstart.stream``: process tag, rank, pid; '' for untagged lines) the
    #: latest prefix clock of its lines, ``newstart.clock``: (has a year, seconds)
    clocks: dict[str, tuple[bool, int]] = field(default_factory=dict)
    #: line of the run's first line saying its process failed (a ``start_failure`` line or a raised
    #: exception's, ``uncaught.raised``): a start line the run already had, heard again after it, is
    #: a restart's (``newstart.repeated_start``); ``raised_line``: the first raised exception's line
    failed_line: Optional[int] = None
    raised_line: Optional[int] = None
    #: what the run's start lines (``newstart.START_KINDS``, start markers) and its first line
    #: printed before ``failed_line`` (``newstart.signature`` -> line; at most 256)
    start_sigs: dict[tuple, int] = field(default_factory=dict)
    #: ``newstart.signature`` of the run's first recognised line, when that line carries a pid or a clock
    first_sig: Optional[tuple] = None
    #: process streams (``newstart.stream``) that went on with their start after ``raised_line``
    #: (``lifecycle.is_progress``): they survived the exception (at most 64)
    went_on: set[str] = field(default_factory=set)


#: what ends a logged version token: U+FFFD (bytes that were not UTF-8), a control character
#: (C0, DEL, C1) or a zero-width / bidi format character; none is part of any release string
_VERSION_END = lazyre.compile(r"[\ufffd\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def version_token(value: str) -> str:
    """The logged version ``value`` (a rule's captured text) cut at the first character no
    release string holds: U+FFFD, which the reader puts for undecodable bytes, or a control /
    format character. ``'0.5.0\ufffd\ufffd'`` -> ``'0.5.0'`` (the trial log of a vLLM 0.5.0 API
    server line followed by two invalid bytes was read as a source build). Returns ``''`` when the
    token starts with one (nothing is set then)."""
    m = _VERSION_END.search(value)
    return value[: m.start()] if m else value


#: parallelism an engine's config line or argument dump states beyond TP (vLLM's config line
#: ``pipeline_parallel_size=2, data_parallel_size=2``, its non-default args ``'enable_expert_parallel':
#: True``; vllm/config/parallel.py, 0.5 -> 0.33) -> the ``config.extra`` key the reports show (``pp``,
#: ``dp``, ``ep``). Only a value that is not the default is kept (a size above 1, a switch on).
PARALLEL_FACTS = {"pipeline_parallel_size": "pp", "data_parallel_size": "dp", "expert_parallel_size": "ep",
                  "enable_expert_parallel": "ep"}


def parallel_fact(config, key: str, value: str) -> None:
    """Keep a non-default parallelism (``PARALLEL_FACTS``) in ``config.extra`` (first value wins):
    ``'2'`` for a size above 1 (at most 6 digits), ``'on'`` for a switch given as True."""
    short = PARALLEL_FACTS.get(key)
    if short is None or short in config.extra:
        return
    n = bounded_int(value, 6)
    if key.startswith("enable_"):
        if value in ("True", "true"):  # an argument dump's True, a command's switch (cli_args: "true")
            config.extra[short] = "on"
    elif n is not None and n > 1:
        config.extra[short] = str(n)


#: the ``sets`` keys whose value ``set_fact`` may store as the run's model (``config.model``): a
#: line setting one of them names the model (``newstart.named_model``); tests/test_enginedata.py
#: checks this against ``set_fact`` itself
MODEL_FACTS = ("model", "config", "args", "server_args")


@functools.lru_cache(maxsize=None)
def _fields(template: str) -> tuple[str, ...]:
    """The ``{group}`` names of a rule's ``sets`` template, parsed once per template (the
    templates are the packs' own, a bounded set; ``set_facts`` runs on every event)."""
    return tuple(_FIELD.findall(template))


def set_facts(run: RunState, sets: dict[str, str], groups: dict[str, str], ev: Event,
              cli: Optional[CliSpec] = None, lists: Collection[str] = ()) -> None:
    """Every fact of a rule's ``sets`` (key -> template) filled from ``groups`` (``set_fact``); a key
    the rule ``lists`` (``Rule.lists``: one line per device) is added to (``listed_fact``) instead.

    A template that names groups states its fact only when one of them matched: with every
    named group empty it sets nothing, so a rule with optional parts (a pasted command's
    ``--quantize``) can say ``quantization_source = "logged ({flag} ...)"`` without claiming it
    on a line that lacks the flag. A template without groups is a constant and always set."""
    for key, tmpl in sets.items():
        if key == "gpu_source":
            continue  # said with ``gpu`` (``gpu_source.set_gpu``)
        names = _fields(tmpl)
        if names and not any(groups.get(n) for n in names):
            continue
        if key in lists:
            value = fill(tmpl, groups)
            if value:
                listed_fact(run.config.extra, key, value)
        elif key == "gpu":
            value = fill(tmpl, groups)
            if value:
                set_gpu(run, value, sets.get("gpu_source"), ev)
        else:
            set_fact(run, key, fill(tmpl, groups), ev, cli)


def set_fact(run: RunState, key: str, value: str, ev: Event, cli: Optional[CliSpec] = None) -> None:
    """Store run fact ``key`` (a rule's ``sets`` key) with ``value`` (its filled template) from ``ev``.

    An empty value sets nothing. Unknown keys go to ``config.extra`` (first value wins).
    ``config`` (``k=v, ...``), ``args`` (``{'k': v, ...}``) and ``cli`` (a launch command's
    ``--flag value`` list, read by ``cli_args.arguments`` with the engine's ``cli`` spec: its
    boolean flags and short aliases) are split into their known keys: model, quantization,
    dtype, kv_cache_dtype, tensor_parallel_size and the parallel sizes, device, backends."""
    if key.endswith("version"):
        value = version_token(value)
    if not value:
        return
    c = run.config
    if key == "version":
        if run.version is None:
            run.version, run.version_line = value, ev.line
    elif key == "version_reported":
        if run.version_reported is None:
            run.version_reported, run.version_reported_line = value, ev.line
    elif key == "platform_fallback":
        run.platform, run.platform_line, run.platform_fallback = value.upper(), ev.line, True
    elif key == "platform_first":
        # a device probe's list (MLC-LLM auto_device: 'Found device: rocm:0' for every device it
        # finds, in its own priority order, the first found being the one 'auto' uses): the first
        # one names the platform until a line states the choice (``platform``)
        if run.platform is None:
            run.platform, run.platform_line = value.upper(), ev.line
    elif key == "platform":
        if not run.platform_fallback:
            run.platform = value.upper()
            run.platform_line = ev.line
    elif key == "kv_cache_dtype_used":
        run.kv_used = (value, ev)
    elif key == "attention_backend":
        if len(run.attention) < 256:
            run.attention.append((value, ev))
    elif key == "model":
        c.model = c.model or value
    elif key == "quantization":
        c.quantization = c.quantization or value
    elif key == "kv_cache_dtype":
        if not c.kv_cache_dtype:
            c.kv_cache_dtype, run.kv_requested_line = value, ev.line
    elif key == "compute_capability":
        if run.platform == "ROCM" and value.isdigit():
            # a HIP device's major.minor as ggml's device line prints it (gfx900 -> "compute
            # capability 9.0", gfx1100 -> 11.0; llamacpp-188): no CUDA sm, so never a Hopper or
            # Blackwell gate's input; kept as a fact of its own
            c.extra.setdefault("hip_compute_capability", value)
        else:
            c.compute_capability = c.compute_capability or value
    elif key == "gpu":
        set_gpu(run, value, None, ev)  # a fact set without its rule's sets: the engine's word
    elif key == "gpu_one_of":
        set_one_of(run, value, ev)
    elif key == "server_args":
        if c.server_args is None:
            c.server_args = server_args_config(value, ev.line)
            apply_server_args(c, run, c.server_args)
    elif key in ("config", "args", "cli"):
        if key == "cli":
            pairs = arguments(value, cli)
        else:
            pat = _KV if key == "config" else _DICT_KV
            pairs = ((m.group("k"), _unquote(m.group("v"))) for m in pat.finditer(value))
        for k, v in pairs:
            if k == "model" and v:
                c.model = c.model or v
            elif k == "quantization" and v and v != "None":
                c.quantization = c.quantization or v
            elif k == "dtype" and v != "auto":  # an argument dump's 'auto' is no dtype: the config line's is
                c.dtype = c.dtype or v.replace("torch.", "")
            elif k == "kv_cache_dtype":
                if not c.kv_cache_dtype and v:
                    c.kv_cache_dtype, run.kv_requested_line = v, ev.line
            elif k == "tensor_parallel_size" and bounded_int(v, 6):
                c.tensor_parallel_size = c.tensor_parallel_size or bounded_int(v, 6)
            elif k in ("device", "device_config") and rxcache.fullmatch(r"[A-Za-z]{2,10}", v or "") and v != "auto":
                if not run.platform:
                    run.platform, run.platform_line = v.upper(), ev.line
            elif k in PARALLEL_FACTS:
                parallel_fact(c, k, v)
            elif k in ("moe_backend", "linear_backend", "attention_backend", "enforce_eager", "max_model_len") \
                    or (key == "cli" and cli is not None and k in cli.names.values()):
                c.extra.setdefault(k, v)  # a backend asked for; a pack-named flag's field (pack.cli names)
    else:
        c.extra.setdefault(key, value)


def listed_fact(extra: dict, key: str, value: str) -> None:
    """Add ``value`` to the list fact ``key`` (a rule's ``lists``: "; "-joined, in log order, a repeat
    once, at most 64); a ``device_arch`` list of more than one arch sets ``devices_mixed`` (the
    archs): the first device's GPU then does not stand for all."""
    have = [v for v in (extra.get(key) or "").split("; ") if v]
    if value in have or len(have) >= 64:
        return
    have.append(value)
    extra[key] = "; ".join(have)
    if key == "device_arch" and len(have) > 1:
        extra["devices_mixed"] = ", ".join(have)


def continuation_facts(run: RunState, cr, ev: Event, cli: Optional[CliSpec] = None) -> None:
    """The facts ``ev``'s continuation lines state (``Continuation.sets`` of ``cr``'s rule, read by
    its ``item_regex``): a wrapped command's lines read together, as one command after the first
    line's group of the same name (``Continuation.joined_by``); else each item on its own (a
    reason's device capability, a device row of a tool's table)."""
    r = cr.rule
    if not (ev.items and r.continuation is not None and r.continuation.sets and cr.item_regex is not None):
        return
    if r.continuation.joined_by is not None:
        m = cr.item_regex.match(" ".join(ev.items))
        if m:
            got = {k: " ".join(x for x in (ev.groups.get(k), v) if x)
                   for k, v in m.groupdict().items() if v is not None}
            set_facts(run, r.continuation.sets, got, ev, cli)
        return
    # the groups the matcher kept for each item, else (an event read back from a report) the
    # item's text again
    kept = ev.item_groups if len(ev.item_groups) == len(ev.items) else None
    for i, item in enumerate(ev.items):
        if kept is not None:
            got = kept[i]
        else:
            m = cr.item_regex.match(item)
            got = {k: v for k, v in m.groupdict().items() if v is not None} if m else None
        if got is not None:
            set_facts(run, r.continuation.sets, got, ev, cli)
