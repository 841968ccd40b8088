"""A start that ends in an uncaught Python exception: the failed start no engine line names.

Every engine of logscan is a Python process (or, for llama.cpp, driven by one) and dies the
same way when its start raises: ``Traceback (most recent call last):``, ``File "...", line N,
in f`` frames, then ``SomeError: msg``, with or without the engine's line prefix (vLLM's
``ERROR ... [multiproc_executor.py:671]`` on every frame). The packs recognise those lines
with rules of kind ``uncaught`` and the lines saying the server came up (``Application
startup complete``, ``The server is fired up``, ``Uvicorn running on``, TGI ``Connected``,
llama.cpp ``server is listening``, trtllm-build ``Total time of building all engines``) with
rules of kind ``ready`` (``patterns/<engine>/rules/99-uncaught.toml``).

A run with an ``uncaught`` line and no ``ready`` line is a failed start: its traceback was
never recovered from, so none of its kernels served. After a ready (or HTTP 2xx) line of the
same source it is a failure while serving instead (``lifecycle``, ``Run.serving_failure``). A
traceback the engine logs at WARNING level (the pack rules accept only error levels on
prefixed lines), one followed by a ready line, or one after which the same process logged
more of its start (``lifecycle.last_progress``) is no failure.
"""
from __future__ import annotations

from typing import Optional

import regex

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..formats.clip import clip
from ..models import StartFailure
from ..packs.model_rules import FRAME_SHAPE
from .lifecycle import last_progress, recovered_after
from .runstate import RunState

#: a traceback frame line (``packs.model_rules.FRAME_SHAPE``)
_FRAME = rxcache.compile(FRAME_SHAPE)
#: the kinds a frame rule may have (``Rule.frame`` validation)
_FRAME_KINDS = frozenset({"linear_kernel", "moe_kernel", "fallback_warning"})
#: levels of a traceback line that say the process raised (``99-uncaught.toml`` rules' ``levels``)
_ERROR_LEVELS = frozenset({"error", "err", "e", "critical", "crit", "fatal", "f"})
#: event kinds whose line is no raised exception even when it reads like one
_NOT_EXCEPTION = frozenset({"ready", "stop", "progress", "identity", "start_failure", "version", "run_start"})
#: the last line of a Python traceback (``KeyError: 'type'``, ``torch.OutOfMemoryError: ...``)
_EXCEPTION = lazyre.compile(r"^\s{0,8}(?:[A-Za-z_]\w{0,40}\.){0,6}[A-Z]\w{0,60}(?:Error|Exception|Interrupt|Exit)\b:?")


def uncaught_start_failure(run: RunState, fatal: Optional[regex.Pattern] = None) -> Optional[StartFailure]:
    """The failed start an uncaught traceback implies, or None.

    ``line``/``evidence``: the run's first traceback line (its header, or the first frame an
    excerpt kept); ``cause_line``/``cause``: the exception line that ended it, when the log
    kept one. None when every ``uncaught`` event of the run was recovered from (a ``ready``
    event after it) or survived (``lifecycle.last_progress``).

    ``fatal``: the pack's ``fatal_line`` (``PackMeta.fatal_line``), a fatal line of the engine's
    own runtime that is no Python exception: TensorRT-LLM's ``[TensorRT-LLM][ERROR] Assertion
    failed: Unsupported architecture (.../fmhaRunner.cpp:87)`` read by a finding rule. Such a
    line, at an error level or with no level, counts like a traceback's exception line.
    """
    tb = [e for e in run.events if e.kind == "uncaught"]
    # a frame a frame rule read (``File ".../rocm_aiter_fused_moe.py", line N, in
    # rocm_aiter_fused_experts``) is a line of the same traceback: the failure may begin there
    # (logged at an error level, or with no level: a frame at WARNING was recovered from)
    tb = sorted(tb + [e for e in run.events if e.kind in _FRAME_KINDS and _FRAME.match(e.message)
                      and (not e.level or e.level.lower() in _ERROR_LEVELS)], key=lambda e: e.line)
    # an exception line another rule read first (a finding: vLLM's 'ValueError: Failed to find a
    # kernel ...' on a worker, vllm PR #30602), logged at an error level: the process raised, and
    # a window may keep that line and not its traceback's header or frames
    seen = {e.line for e in tb}
    tb = sorted(tb + [e for e in run.events if e.line not in seen and e.kind not in _NOT_EXCEPTION
                      and e.kind != "uncaught" and e.level and e.level.lower() in _ERROR_LEVELS
                      and _EXCEPTION.match(e.message)], key=lambda e: e.line)
    if fatal is not None:  # the engine's own fatal shape, read first by another rule (a finding)
        seen = {e.line for e in tb}
        tb = sorted(tb + [e for e in run.events if e.line not in seen and _is_fatal(e, fatal)],
                    key=lambda e: e.line)
    if not tb:
        return None
    # a traceback followed by a ready line was recovered from; one whose process then went on
    # with its start (a later progress line of the same process and rank, below error level) was
    # survived; the first one that was neither is the failure (``run_parts.outcome`` then tells a
    # failed start from a failure after the server came up, ``lifecycle.up_before``)
    last_ready = recovered_after(run)
    went_on = last_progress(run)
    first = next((e for e in tb if e.line > last_ready and went_on.get((e.process, e.rank), 0) <= e.line), None)
    if first is None:
        return None
    tb = [e for e in tb if e.line >= first.line]
    # ``traceback_line``: the failure is read from the traceback that begins here (``is_uncaught``),
    # also when its first line is a frame a frame rule read (``rule`` is then that rule)
    sf = StartFailure(line=first.line, evidence=clip(first.message, 2000), rule=first.rule, process=first.process,
                      traceback_line=first.line)
    # the exception line: an ``uncaught`` event, or a line another rule read first (a grammar
    # shape took TGI's "NotImplementedError: Sharded Llama requires Flash Attention ...")
    exc = [e for e in run.events if e.line >= first.line
           and ((_EXCEPTION.match(e.message) and (e.kind == "uncaught" or e.kind not in _NOT_EXCEPTION))
                or (fatal is not None and _is_fatal(e, fatal)))]
    if exc:
        sf.cause_line, sf.cause = exc[-1].line, clip(exc[-1].message, 2000)
    return sf


def raised(e) -> bool:
    """Whether event ``e``'s line is a raised exception's (``SomeError: msg``: the last line of a
    traceback, or a finding rule's such line, vLLM's ``ValueError: Failed to find a kernel ...``) at
    an error level or with no level (a WARNING-level traceback was logged and went on): its Python
    process died, unless it caught the exception. Read line by line (``newstart.note_start``); the
    run's failure itself is ``uncaught_start_failure``'s."""
    return (e.kind not in _NOT_EXCEPTION and (not e.level or e.level.lower() in _ERROR_LEVELS)
            and _EXCEPTION.match(e.message) is not None)


def _is_fatal(e, fatal: regex.Pattern) -> bool:
    """Whether event ``e`` is a line of the pack's fatal shape that ended the process: not a
    ready / progress / identity line, at an error level or with no level (a WARNING-level
    ``Assertion failed`` was logged and went on)."""
    return (e.kind not in _NOT_EXCEPTION and e.kind != "uncaught"
            and (not e.level or e.level.lower() in _ERROR_LEVELS) and fatal.search(e.message) is not None)


def is_uncaught(sf: StartFailure) -> bool:
    """Whether ``sf`` was read from an uncaught traceback (a rule ``<engine>.uncaught.*``, or a
    traceback that begins at its own line: ``uncaught_start_failure`` sets ``traceback_line``), not
    from an engine line saying its start failed."""
    return ".uncaught." in sf.rule or (sf.traceback_line is not None and sf.traceback_line == sf.line)


#: ``Selection.reasoning`` prefix of a selection read from a traceback frame, or corroborated by one
#: (``formats/text.py`` marks it)
TRACEBACK = "traceback:"


def seen_in_traceback(selections: list, rules: Optional[dict] = None) -> None:
    """Mark each selection first read from a traceback frame (a rule with ``frame = true``,
    ``frames.is_frame_rule``).

    A frame ``File "...", line N, in apply_fp8_marlin_linear`` says the function ran: the
    process raised inside it. Such a selection is evidence the kernel executed, not only that
    it was chosen, so a failed start leaves it confirmed (``run_parts.unconfirmed`` skips it).
    ``rules``: rule id -> ``(CompiledRule, Pack)``; without it only the deprecated ``.frame.``
    id segment tells a frame rule.
    """
    from .frames import FRAME_ID, is_frame_rule

    for s in selections:
        cr = (rules or {}).get(s.rule)
        frame = is_frame_rule(cr[0].rule) if cr is not None else FRAME_ID in s.rule
        if frame and not (s.reasoning or "").startswith(TRACEBACK):
            why = f"{TRACEBACK} its apply path is a frame of a traceback (line {s.line}): the kernel ran, the process raised inside it"
            s.reasoning = why + (f"; {s.reasoning}" if s.reasoning else "")
