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

from ..formats.clip import clip
from ..models import StartFailure
from .lifecycle import last_progress, recovered_after
from .runstate import RunState

#: the last line of a Python traceback (``KeyError: 'type'``, ``torch.OutOfMemoryError: ...``)
_EXCEPTION = regex.compile(r"^\s{0,8}(?:[A-Za-z_]\w{0,40}\.){0,6}[A-Z]\w{0,60}(?:Error|Exception|Interrupt|Exit)\b:?")


def uncaught_start_failure(run: RunState) -> Optional[StartFailure]:
    """The failed start an uncaught traceback implies, or None.

    ``line``/``evidence``: the run's first traceback line (its header, or the first frame an
    excerpt kept); ``cause_line``/``cause``: the exception line that ended it, when the log
    kept one. None when every ``uncaught`` event of the run was recovered from (a ``ready``
    event after it) or survived (``lifecycle.last_progress``).
    """
    tb = [e for e in run.events if e.kind == "uncaught"]
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
    sf = StartFailure(line=first.line, evidence=clip(first.message, 2000), rule=first.rule,
                      process=first.process)
    exc = [e for e in tb if _EXCEPTION.match(e.message)]
    if exc:
        sf.cause_line, sf.cause = exc[-1].line, clip(exc[-1].message, 2000)
    return sf


def is_uncaught(sf: StartFailure) -> bool:
    """Whether ``sf`` was read from an uncaught traceback (a rule ``<engine>.uncaught.*``), not
    from an engine line saying its start failed."""
    return ".uncaught." in sf.rule


#: rule-id segment of a rule that reads a traceback frame in a kernel's apply path as a selection
#: (``patterns/<engine>/rules/25-frames.toml``, docs/traceback-frames.md)
FRAME = ".frame."
#: ``Selection.reasoning`` prefix of a selection read from such a frame (``formats/text.py`` marks it)
TRACEBACK = "traceback:"


def seen_in_traceback(selections: list) -> None:
    """Mark each selection first read from a traceback frame (a rule ``<engine>.frame.*``).

    A frame ``File "...", line N, in apply_fp8_marlin_linear`` says the function ran: the
    process raised inside it. Such a selection is evidence the kernel executed, not only that
    it was chosen, so a failed start leaves it confirmed (``run_parts.unconfirmed`` skips it).
    """
    for s in selections:
        if FRAME in s.rule and not (s.reasoning or "").startswith(TRACEBACK):
            why = f"{TRACEBACK} its apply path is a frame of a traceback (line {s.line}): the kernel ran, the process raised inside it"
            s.reasoning = why + (f"; {s.reasoning}" if s.reasoning else "")
