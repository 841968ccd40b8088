"""A run's outcome: a failed start, a crash while serving, or neither (docs/lifecycle.md).

A line saying the engine failed (vLLM ``EngineCore failed to start.`` / ``EngineCore encountered
a fatal error.``, SGLang ``Scheduler hit an exception``, an uncaught traceback) means two different
things. Before the server came up, the start failed (``Run.start_failure``, START_FAILED): none of
the kernels it chose ever served. After it came up, the server crashed while serving
(``Run.crashed_while_serving``): its kernels did serve, and a gate must not call that a failed start.

"Up" is remembered per source (``Analyzer.up_seen``), not per run: a ready line (``Application
startup complete``, ``Uvicorn running on``, ``The server is fired up``, TGI ``Connected``, llama.cpp
``server is listening``) or an HTTP 2xx access line (uvicorn / LMDeploy ``"GET /v1/models
HTTP/1.1" 200 OK``, llama-server ``request: POST /completion 127.0.0.1 200``, TGI ``Success``)
may sit in an earlier run, or in no run at all (an excerpt that starts with access lines), and
still says the process serving this source was up. A start marker (a banner, version or args
line: ``RunState.start_lines``) after it is a restart, whose own start can fail again.
"""
from __future__ import annotations

from typing import Optional

from ..models import Event
from .runstate import RunState

#: rule-id suffix of a ``ready`` rule that reads a traceback frame of the serving loop (SGLang
#: ``scheduler.event_loop_overlap()``, vLLM ``engine_core.run_busy_loop()``): the traceback it
#: is in was raised while serving, so it is no recovery from that traceback
LOOP_FRAME = ".run.loop-frame"
#: levels of a logged line that say something went wrong (not progress)
_BAD_LEVELS = frozenset({"error", "err", "e", "critical", "crit", "fatal", "f"})
#: event kinds that are no sign of the process going on with its start
_NOT_PROGRESS = frozenset({"uncaught", "start_failure", "identity", "ready", "stop"})
#: POSIX signal numbers a stop line may give instead of a name (TGI's shard: 'Exiting gracefully: Signal 15')
_SIGNUM = {"1": "SIGHUP", "2": "SIGINT", "3": "SIGQUIT", "9": "SIGKILL", "15": "SIGTERM"}


def up_before(run: RunState, line: int) -> Optional[int]:
    """The line of the last sign before ``line`` that this source's server was up (a ``ready``
    event of the run, or ``run.up_line`` remembered from earlier lines of the source), provided
    no start marker of the run came between it and ``line``; None otherwise.

    ``line``: a 1-based line number of the run's source.
    """
    ups = [e.line for e in run.events if says_up(e) and e.line < line]
    if run.up_line is not None and run.up_line < line:
        ups.append(run.up_line)
    if not ups:
        return None
    up = max(ups)
    starts = [s for s in run.start_lines if s < line]
    if starts and max(starts) > up:
        return None  # a new start (banner, version, args) after it: this is a restart's start
    return up


def last_progress(run: RunState) -> dict[tuple[Optional[str], Optional[str]], int]:
    """(process, rank) -> line of that process's last startup-progress event: one logged at a
    level below error that is neither a traceback line nor a failure nor a ready line (vLLM
    ``Loading weights took``, SGLang ``Load weight end``, a kernel or attention choice).

    A traceback line ``tb`` was survived when its process has a progress line after it
    (``last.get((tb.process, tb.rank), 0) > tb.line``). A traceback an excerpt ends on, or one
    followed only by other processes' lines, has no such evidence, and the caller fails closed.
    """
    last: dict[tuple[Optional[str], Optional[str]], int] = {}
    for e in run.events:
        if is_progress(e):
            key = (e.process, e.rank)
            last[key] = max(last.get(key, 0), e.line)
    return last


def is_progress(e: Event) -> bool:
    """Whether event ``e`` is its process going on with its start: logged at a level below error, and
    neither a traceback line nor a failure nor a ready line (``last_progress``)."""
    return e.kind not in _NOT_PROGRESS and bool(e.level) and e.level.lower() not in _BAD_LEVELS


def in_serving_loop(run: RunState, line: int) -> bool:
    """Whether a traceback frame of the serving loop (``LOOP_FRAME`` rules) comes after ``line``
    in the run: the failure at ``line`` was raised by the loop that serves requests, which
    SGLang's scheduler and vLLM's engine core enter only once their start is done."""
    return any(e.kind == "ready" and e.rule.endswith(LOOP_FRAME) and e.line > line for e in run.events)


def recovered_after(run: RunState) -> int:
    """Line of the run's last ready line that is not a serving-loop frame (0 when none): a
    traceback before it was recovered from."""
    return max((e.line for e in run.events if e.kind == "ready" and not e.rule.endswith(LOOP_FRAME)), default=0)


def says_up(e: Event) -> bool:
    """Whether event ``e`` says its source's server was up: a ``ready`` line, or a ``stop`` line whose
    rule's ``up`` group matched (vLLM launcher.py ``[shutdown] API server: shutdown triggered``: its
    signal handler is registered once the HTTP server serves)."""
    return e.kind == "ready" or (e.kind == "stop" and bool(e.groups.get("up")))


def stop_line(run: RunState, before: Optional[int] = None) -> Optional[Event]:
    """The run's first ``stop`` event (a signal handler's line) after its last start marker, and
    before line ``before`` when given; None when there is none."""
    limit = before if before is not None else run.last_line + 1
    starts = [s for s in run.start_lines if s < limit]
    since = max(starts) if starts else 0
    return next((e for e in run.events if e.kind == "stop" and since <= e.line < limit), None)


def signal_of(e: Event, default: Optional[str] = None) -> Optional[str]:
    """The signal a stop line names: its ``signal`` group (``SIGTERM``), its ``signum`` group mapped
    to a name (``15``: ``SIGTERM``), else the rule's ``stop_signal`` (``default``), else None."""
    name = e.groups.get("signal")
    if name:
        return name.upper()
    num = e.groups.get("signum")
    if num:
        return _SIGNUM.get(num.strip(), f"signal {num.strip()}")
    return default


def torn_down(run: RunState, line: int) -> bool:
    """Whether a failure at ``line`` is the teardown of a stop: a stop line came before it (no start
    marker between) and the server was up before it (``up_before``, or the failure's traceback runs
    through the serving loop). A stop during a start that never came up leaves the failure a failed
    start (fail closed: vLLM's EngineCore handles SIGTERM during its start too)."""
    return stop_line(run, line) is not None and (up_before(run, line) is not None or in_serving_loop(run, line))
