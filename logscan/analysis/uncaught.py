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
never recovered from, so none of its kernels served. A traceback the engine logs at WARNING
level (the pack rules accept only error levels on prefixed lines) or one followed (or
preceded) by a ready line is not.
"""
from __future__ import annotations

from typing import Optional

import regex

from ..formats.clip import clip
from ..models import StartFailure
from .runstate import RunState

#: the last line of a Python traceback (``KeyError: 'type'``, ``torch.OutOfMemoryError: ...``)
_EXCEPTION = regex.compile(r"^\s{0,8}(?:[A-Za-z_]\w{0,40}\.){0,6}[A-Z]\w{0,60}(?:Error|Exception|Interrupt|Exit)\b:?")


def uncaught_start_failure(run: RunState) -> Optional[StartFailure]:
    """The failed start an uncaught traceback implies, or None.

    ``line``/``evidence``: the run's first traceback line (its header, or the first frame an
    excerpt kept); ``cause_line``/``cause``: the exception line that ended it, when the log
    kept one. None when the run has no ``uncaught`` event or has a ``ready`` event.
    """
    tb = [e for e in run.events if e.kind == "uncaught"]
    if not tb or any(e.kind == "ready" for e in run.events):
        return None
    first = tb[0]
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
