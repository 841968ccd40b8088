"""Evidence that a line comes from a NEW engine process, though no start marker says so.

Two starts of an engine in one stream (``cat a.log b.log``, a rename rotation read by ``logscan
follow``, an excerpt cut before the second banner) are two runs. A start marker (banner, args
line) after the open run said something splits them already (``boundary.has_substance``); this
module finds the two other signs that a process which is not the open run's now speaks:

- **another process in the same role**: a process tag with a pid (vLLM ``(APIServer pid=N)``,
  ``(EngineCore_DP0 pid=N)``, ``(Worker_TP1 pid=N)``) whose role the open run already heard
  from under another pid. A role is the tag's process name with its rank: ``Worker_TP0`` and
  ``Worker_TP1`` are two roles of one start (different pids per rank are one run). Names that
  several live processes of one start share carry no rank (vLLM V0's ``VllmWorkerProcess`` per
  rank, vllm/executor/multiproc_worker_utils.py; Ray's ``RayWorkerWrapper``): they are no role.
  Which names those are is pack data: the ``shared`` regex of the packs' ``[[process]]`` formats.
- **another model**: a line that names the model (a rule's ``model`` fact, a config / args /
  ServerArgs dump, vLLM's ``Starting to load model X...`` progress line) naming a different
  model than the one the open run already named. Spellings of one model (an HF id and the local
  path it was downloaded to, a trailing ``/``) compare by their last path component, case-blind;
  a V1 EngineCore's config line after the API server's args line names the same model (one run).

Either one closes the open run only once it holds more than start lines (``Analyzer.feed``).

A third sign needs no new pid nor clock: **the start sequence again after a failure**. A process
that failed its start logs nothing more of that start, so a line of the run's own start sequence
(a start marker, or a line a process prints once as it starts: a rule with ``once_per_start``,
vLLM's 'Automatically detected platform cuda.'; or the run's first recognised line when it carries a
pid or a clock, after a raised exception) printed again in the same process stream with the same text, after a
line saying the process failed (``uncaught.raised``), is the next start's: a crash loop that
restarts the same command (``for i in $(seq 300); do cat vllm-020.log; done`` repeats even pids
and clocks). ``repeated_start``; docs/run-splitting.md rule 5.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import regex

from .. import rxcache
from ..models import Event
from .runstate import MODEL_FACTS, RunState, fill, set_fact
from .lifecycle import is_progress
from .uncaught import raised

if TYPE_CHECKING:
    from ..packs.loader import PackSet

#: ``role``'s default: the shipped packs' shared process names
_DEFAULT = object()


def shared_names(packs: "PackSet") -> Optional[regex.Pattern]:
    """The union of the packs' ``[[process]] shared`` regexes (process names several processes of
    one start print, e.g. vLLM's ``VllmWorkerProcess``), compiled once per pack set (``derived``);
    None when no pack declares one. Raises ``regex.error`` on a broken pattern."""
    key = "newstart.shared"
    if key not in packs.derived:
        parts = [p.shared for pack in packs.packs.values() for p in pack.meta.process if p.shared]
        packs.derived[key] = rxcache.compile("|".join(f"(?:{p})" for p in parts)) if parts else None
    return packs.derived[key]


def _shared(shared) -> Optional[regex.Pattern]:
    if shared is _DEFAULT:
        from ..packs.loader import default_packs

        return shared_names(default_packs())
    return shared


def role(ev: Event, shared=_DEFAULT) -> Optional[str]:
    """The role of the event's process tag (``Worker_TP0``, ``APIServer``), or None when the line
    has no tag with a pid or its rankless name is shared by several processes of one start
    (``shared``: ``shared_names(packs)``; default the shipped packs')."""
    if ev.pid is None or not ev.process:
        return None
    rx = _shared(shared)
    if ev.rank is None and rx is not None and rx.search(ev.process):
        return None
    return f"{ev.process}#{ev.rank or ''}"


def model_key(model: Optional[str]) -> str:
    """``/data/models/Qwen3-8B/`` and ``Qwen/Qwen3-8B`` -> ``qwen3-8b``; '' for nothing."""
    m = (model or "").strip().strip("'\"").rstrip(".").rstrip("/\\")
    return m.replace("\\", "/").rsplit("/", 1)[-1].lower()


def named_model(sets: dict[str, str], ev: Event) -> str:
    """The model that the event's line names through its rule's ``sets`` (or a ``model``
    group of a progress line), '' when it names none."""
    if "model" in ev.groups and not sets:
        return ev.groups["model"].strip().rstrip(".")
    keys = [k for k in sets if k in MODEL_FACTS]
    if not keys:
        return ""
    scratch = RunState(index=-1, source=ev.source, first_line=ev.line, last_line=ev.line, engine="")
    for k in keys:
        set_fact(scratch, k, fill(sets[k], ev.groups), ev)
    return scratch.config.model or ""


#: ``[YYYY-]MM-DD[T ]HH:MM:SS``: vLLM's ``03-17 15:05:45``, SGLang's ``2025-01-07 13:43:10``, ISO
_CLOCK = rxcache.compile(r"(?:(\d{4})-)?(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)")
#: how far one start's lines may go back in time (ranks' buffered output interleaves out of order)
_BACK_S = 600
#: a clock without a year that goes back further went past new year (12-31 -> 01-01), not back
_WRAP_S = 180 * 86400


def clock(ts: Optional[str]) -> Optional[tuple[bool, int]]:
    """``(has a year, seconds)`` of a prefix timestamp (a month counted as 31 days), or None."""
    m = _CLOCK.search(ts or "")
    if not m:
        return None
    y, mo, d, h, mi, sec = (int(g) if g else 0 for g in m.groups())
    return m.group(1) is not None, ((((y * 12 + mo) * 31 + d) * 24 + h) * 60 + mi) * 60 + sec


def stream(ev: Event) -> str:
    """The process stream of the event's line: its process tag, rank and pid ('' for an untagged
    line). Clocks are compared within one stream only: one process's clock does not go back, but
    two processes may run on hosts whose clocks or time zones differ (a Ray worker node's lines
    relayed into the head's log), which is no new start."""
    if not ev.process and ev.pid is None and ev.rank is None:
        return ""
    return f"{ev.process or ''}#{ev.rank or ''}#{ev.pid if ev.pid is not None else ''}"


def went_back(run: RunState, ev: Event) -> Optional[str]:
    """Why the event's clock says it was logged before the latest line of the same process stream
    in the run (prose), or None."""
    c = clock(ev.timestamp)
    last = run.clocks.get(stream(ev))
    if c is None or last is None or c[0] != last[0]:
        return None
    back = last[1] - c[1]
    if back > _BACK_S and (c[0] or back < _WRAP_S):
        return (f"line {ev.line} was logged at {ev.timestamp}, {back // 60} min before the latest line "
                f"of the same process in the run")
    return None


def other_process(run: RunState, sets: dict[str, str], ev: Event, shared=_DEFAULT) -> Optional[str]:
    """Why ``ev`` comes from another process than the open ``run`` (prose), or None.
    ``shared``: as for ``role``."""
    back = went_back(run, ev)
    if back:
        return back
    who = role(ev, shared)
    if who is not None:
        seen = run.pids.get(who)
        if seen is not None and seen != ev.pid:
            return f"line {ev.line}: {ev.process} pid={ev.pid}, the run's {ev.process} was pid={seen}"
    unseen = unseen_process(run, ev) or distant_process(run, ev)
    if unseen:
        return unseen
    named = named_model(sets, ev)
    if named and run.config.model and not same_model(named, run.config.model):
        return f"line {ev.line} names model {named}, the run's is {model_key(run.config.model)}"
    return None


def same_model(a: str, b: str) -> bool:
    """Whether two model spellings can name one model: equal last path components, or one's last
    component inside the other's whole text (the HF cache path ``.../models--org--Name/snapshots/
    <hash>`` of ``org/Name``)."""
    ka, kb = model_key(a), model_key(b)
    return ka == kb or ka in b.lower() or kb in a.lower()


def note(run: RunState, ev: Event, shared=_DEFAULT) -> None:
    """Remember on the run the pid of the event's role (first pid wins; at most 64 roles) and the
    latest clock of the event's process stream (at most 64 streams). ``shared``: as for ``role``."""
    c = clock(ev.timestamp)
    key = stream(ev)
    last = run.clocks.get(key)
    if c is not None and (last is None or (c[0] == last[0] and c[1] > last[1])):
        if last is not None or len(run.clocks) < 64:
            run.clocks[key] = c
    who = role(ev, shared)
    if who is not None and who not in run.pids and len(run.pids) < 64:
        run.pids[who] = ev.pid  # type: ignore[assignment]
    if ev.pid is not None and ev.pid not in run.procs and len(run.procs) < 64:
        run.procs[ev.pid] = process_name(ev)


def process_name(ev: Event) -> str:
    """The event's process name without its rank (``Worker_TP1_EP1`` -> ``Worker``, ``APIServer``)."""
    name = ev.process or ""
    if ev.rank and name.endswith(ev.rank):
        name = name[: -len(ev.rank)].rstrip("_")
    return name


#: how far apart the pids of one start's processes may lie: its launcher forks them within seconds and
#: Linux hands pids out in increasing order, so they differ by the processes forked meanwhile (258
#: in vllm-213, Ray's worker and the API server; at most 438 in the bundled multi-process runs)
_PID_NEAR = 4096


def _stranger(run: RunState, ev: Event) -> bool:
    """``ev`` carries a pid, the run heard pids, and none of them is ``ev``'s or within ``_PID_NEAR``
    of it (the pid test ``unseen_process`` and ``distant_process`` share)."""
    return (ev.pid is not None and bool(run.procs) and ev.pid not in run.procs
            and not any(abs(ev.pid - p) <= _PID_NEAR for p in run.procs))


def unseen_process(run: RunState, ev: Event) -> Optional[str]:
    """Why ``ev`` comes from a process of another start (prose), or None: after the run's failure line
    (``failed_line``), a process tag with a pid the run never heard from, when nothing ties it to the
    run: not a process name the run heard from (another rank of a name it heard is its start's:
    Worker_TP1 after Worker_TP0's traceback, vllm-240 / 272 / 281), no clock within ``_BACK_S`` of one
    of the run's, no pid within ``_PID_NEAR`` of one of the run's (vllm-213's API server, no clock on
    its traceback line). A run that heard no pid has nothing to compare: None (a raw traceback may be
    any process's)."""
    if run.failed_line is None or ev.line <= run.failed_line or not _stranger(run, ev):
        return None
    if process_name(ev) in run.procs.values():
        return None
    c = clock(ev.timestamp)
    if c is not None and any(c[0] == v[0] and abs(c[1] - v[1]) <= _BACK_S for v in run.clocks.values()):
        return None
    return (f"line {ev.line}: {ev.process} pid={ev.pid}, a process the run did not hear from, after its "
            f"failure at line {run.failed_line}")


#: how far in time one start's lines lie from each other at most: a start (download, load, compile,
#: CUDA graphs) takes minutes, an hour or two for a large download; half a day is another start's
_GAP_S = 12 * 3600


def distant_process(run: RunState, ev: Event) -> Optional[str]:
    """Why ``ev`` comes from another start (prose), or None, whether or not the run failed: a process
    tag with a pid the run never heard from, none of the run's pids near it (``_PID_NEAR``), whose
    clock lies more than ``_GAP_S`` from every clock of the run (the same clock kind: with or without
    a year). A second log catted after a first one cut before its end (no failure, no ready line:
    vllm-005 then a vLLM 0.20.1 excerpt two months later, whose ``Worker_TP0_EP0`` shares the name
    ``Worker`` with the first run's ``Worker_TP0``, so ``unseen_process``'s name tie kept it) is two
    starts. A process the run heard from (a server's API process logging for days) never splits."""
    if not _stranger(run, ev):
        return None
    c = clock(ev.timestamp)
    if c is None:
        return None
    same = [v for v in run.clocks.values() if v[0] == c[0]]
    if not same or any(abs(c[1] - v[1]) <= _GAP_S for v in same):
        return None
    hours = min(abs(c[1] - v[1]) for v in same) // 3600
    return (f"line {ev.line}: {ev.process} pid={ev.pid}, a process the run did not hear from, logged "
            f"{hours} h from every line of the run")


def once_per_start(rule) -> bool:
    """Whether a process prints the rule's line once per start: a start marker (``starts_run``) or a
    rule marked ``once_per_start`` in its pack (platform detection, a version line)."""
    return rule.starts_run or rule.once_per_start


#: at most this many start lines remembered per run
_MAX_SIGS = 256


def signature(ev: Event) -> tuple:
    """What makes two lines one line printed again: rule, process stream (``stream``), level and
    text (the clock left out: a restart prints the same line later)."""
    return ev.rule, stream(ev), (ev.level or "").lower(), ev.message


def failure_line(ev: Event) -> bool:
    """The event's line says its process failed (``note_start``'s ``failed_line``): a raised
    exception (``uncaught.raised``) or an engine's ``start_failure`` line."""
    return bool(raised(ev)) or ev.kind == "start_failure"


def note_start(run: RunState, ev: Event, once: bool) -> None:
    """Remember, until the run's first failure line (a ``start_failure`` line or a raised exception,
    ``uncaught.raised``: ``failed_line``, ``raised_line``), the signatures of its start lines
    (``once``: ``once_per_start(rule)`` of the event's rule) and of its first recognised line when that
    line has a pid or a clock (an untagged raw line may be another rank's copy or a traceback printed
    twice). Call after the event joined ``run``."""
    if ev.line < run.first_line:
        return
    exc = raised(ev)
    if exc and run.raised_line is None:
        run.raised_line = ev.line
    elif run.raised_line is not None and len(run.went_on) < 64 and is_progress(ev):
        run.went_on.add(stream(ev))
    if run.failed_line is not None:
        return
    if exc or ev.kind == "start_failure":
        run.failed_line = ev.line
        return
    first = not run.start_sigs and run.first_sig is None and len(run.events) <= 1
    if first and (ev.pid is not None or ev.timestamp):
        run.first_sig = signature(ev)
        run.start_sigs.setdefault(run.first_sig, ev.line)
    elif once and len(run.start_sigs) < _MAX_SIGS:
        run.start_sigs.setdefault(signature(ev), ev.line)


def repeated_start(run: RunState, ev: Event, once: bool) -> Optional[str]:
    """Why ``ev`` begins another start of the same command (prose), or None. After the run's failure
    line, it repeats in the same process stream with the same text (``note_start``) a start line of
    the run (``once``: its rule is ``once_per_start(rule)``), or, after a raised exception (the
    process died: an engine's own failed-step line need not end it, trtllm-build logs 'Engine
    building failed' and builds the next rank, trtllm-137) that its process did not survive (no line
    of its stream went on with the start since, ``lifecycle.is_progress``), the run's first line."""
    if run.failed_line is None or ev.line <= run.failed_line or not run.start_sigs:
        return None
    sig = signature(ev)
    if not once and not (sig == run.first_sig and run.raised_line is not None and ev.line > run.raised_line
                         and stream(ev) not in run.went_on):
        return None
    seen = run.start_sigs.get(sig)
    if seen is None:
        return None
    return (f"line {ev.line} prints line {seen} of the run's start again, after its failure at "
            f"line {run.failed_line}")
