"""Library chatter of an imported engine, read as the importing engine's lines.

SGLang 0.3-0.4 imports vLLM, so an SGLang process prints vLLM-formatted lines (``INFO 02-14
07:01:15 __init__.py:190] Automatically detected platform cuda.``, sgl-project/sglang#3571)
before and between its own. Which engine imports which is pack data (``[pack] imports`` in
``patterns/<engine>/pack.toml``); this module only decides whether lines of the imported
engine said anything of that engine's own.

A line is *chatter* when its rule states no selection (``family``), no finding, no start
(``starts_run``) and is not a version banner, engine config/args dump, run start or failed
start: platform detection is chatter, ``vLLM API server version 0.9.2`` is not. A run made
only of chatter has no substance of its engine: a run of an importing engine that follows it
takes it over (its lines are kept), and a chatter line of an imported engine inside an open
run of an importing engine stays in that run.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..models import Event

if TYPE_CHECKING:
    from .analyzer import Analyzer
    from .runstate import RunState

#: event kinds that are an engine's own substance, whatever rule states them
SUBSTANCE_KINDS = frozenset({"version", "config", "run_start", "start_failure"})


def is_chatter(ctx: Analyzer, ev: Event) -> bool:
    """Whether ``ev`` is library chatter (no selection, finding, start marker, version or config)."""
    r = ctx.rules[ev.rule][0].rule
    return not (r.family or r.finding or r.starts_run or ev.kind in SUBSTANCE_KINDS)


def imports(ctx: Analyzer, importer: str, imported: str) -> bool:
    """Whether the pack of engine ``importer`` declares that it imports engine ``imported``."""
    pack = ctx.packs.packs.get(importer)
    return pack is not None and imported in pack.meta.pack.imports


def folds_into(ctx: Analyzer, run: RunState, engine: str) -> bool:
    """Whether the open ``run`` (of another engine) is only chatter of a library ``engine`` imports.

    Then the run is ``engine``'s: its lines were printed by the library in ``engine``'s process.
    """
    return (run.engine != engine and imports(ctx, engine, run.engine) and not run.started
            and all(is_chatter(ctx, e) for e in run.events))


def stays_in(ctx: Analyzer, run: RunState, engine: str, ev: Event) -> bool:
    """Whether ``ev``, a line of ``engine``, is chatter of a library the open ``run``'s engine imports."""
    return run.engine != engine and imports(ctx, run.engine, engine) and is_chatter(ctx, ev)


def chatter_note(ctx: Analyzer, run: RunState, engine: str, imported: str, line: int) -> str:
    """In prose, for ``EngineInfo.identified_by``: the lines before ``line`` are ``imported``'s library's."""
    titles = [ctx.packs.packs[e].meta.pack.title or e for e in (engine, imported)]
    lines = sorted({e.line for e in run.events if e.line < line})
    span = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}" if lines else "the lines"
    return f"{span} before it: {titles[1]} library lines ({titles[0]} imports {titles[1]})"
