"""Lines that name the run's machine but are not the engine's: kind ``machine``.

A tool's output pasted with a log (nvidia-smi's device table, ``nvidia-smi --query-gpu ...
--format=csv`` rows) or a wrapper script's echo ('✅ NVIDIA GPU: NVIDIA GB10' before ``docker
run ... vllm``, vllm-358) names the GPU, but no engine printed it: such a line never opens,
names or splits a run (it says nothing of which engine runs, and it often comes dozens of lines
before the engine's first line). It joins the open run of its input; heard while none is open,
it waits for the next run that input opens (at most ``MAX_HELD`` per input). Its facts are set
with the rule's ``gpu_source`` (``gpu_source.set_gpu``), so the engine's own statement of the GPU
wins over it (``patterns/common-rules/60-machine-lines.toml``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..models import Event
from .runstate import continuation_facts, set_facts

if TYPE_CHECKING:
    from ..packs.loader import Pack
    from .analyzer import Analyzer
    from .runstate import RunState

MAX_HELD = 16  #: machine lines kept per input while no run of it is open


def take(ctx: "Analyzer", run: Optional["RunState"], r, ev: Event, pack: "Pack") -> None:
    """A ``machine`` event: its facts on the open run of its input, else held for the next one."""
    if run is not None and run.source == ev.source:
        if len(run.events) < ctx.max_events_per_run:
            run.events.append(ev)
        run.last_line = max(run.last_line, ev.end_line or ev.line)  # a tool's rows inside the run's lines
        _facts(ctx, run, ev)
        return
    held = ctx.machine_held.setdefault(ev.source, [])
    if len(held) < MAX_HELD:
        held.append(ev)


def opened(ctx: "Analyzer", run: "RunState") -> None:
    """A run just opened: the machine lines its input printed while no run was open are its facts."""
    for ev in ctx.machine_held.pop(run.source, ()):
        _facts(ctx, run, ev)


def _facts(ctx: "Analyzer", run: "RunState", ev: Event) -> None:
    """``ev``'s facts on ``run``: its rule's ``sets`` and its continuation lines' (a tool's rows)."""
    cr, pack = ctx.rules[ev.rule]
    set_facts(run, cr.rule.sets, ev.groups, ev, pack.meta.pack.cli, cr.rule.lists)
    continuation_facts(run, cr, ev, pack.meta.pack.cli)
