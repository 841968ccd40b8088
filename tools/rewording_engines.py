#!/usr/bin/env python3
"""Rewording coverage per engine, deep notion (``rewording_coverage.py --engines``).

For each engine the reference templates of the kernel kinds (``rewording_coverage.KINDS``) are
rendered and printed in the engine's own line format: vLLM and SGLang by
``shared/tools/template_coverage.py`` (``render``, ``prefix``), TGI / LMDeploy / MLC-LLM by
``tools/other_coverage.py`` (``message``; TGI's compact launcher line, LMDeploy's python logger
line with ``file:line``, MLC-LLM's logger line). The as-printed log is scanned with
``logscan.scan``; a template is *kept* when its line gave a selection, a finding, an attention
choice or an event with captured parts (``other_coverage.hits(deep=True)``: the shared tool's
``--deep``). Each rewording is then applied to the kept templates it CHANGES and those lines
scanned again: ``recognised/total`` is over that set (a rewording that leaves a message as it
was says nothing about the rules). A line missed in the shared log is scanned once more alone
before it counts as missed: a report keeps one finding per code, so a second sentence stating
the same fact has no object of its own in a shared log (``other_coverage.measure_isolated``).

TensorRT-LLM and llama.cpp have no template list in ``shared/reference/other-engines/``
(``templates-other.jsonl`` holds TGI, LMDeploy and MLC-LLM only): they are not measured.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import other_coverage as oc
from rewording_coverage import KINDS, REAL_REWORDINGS, REWORDINGS, SHARED, load_tool, print_rows

ENGINES = ("vllm", "sglang", "tgi", "lmdeploy", "mlc-llm")
#: template levels that print a log line (``raise`` is measured with ``--levels raise``)
LOGGED = ("info", "warning", "error", "info_once", "warning_once", "exception", "print", "fatal")
ALL_REWORDINGS: dict[str, Callable[[str], str]] = {k: v for k, v in {**REWORDINGS, **REAL_REWORDINGS}.items()
                                                  if k != "as-printed"}


def templates(engine: str, levels: tuple[str, ...]) -> list[dict]:
    """The engine's reference templates of the counted kinds and levels (raises OSError)."""
    ref = SHARED / "reference"
    path = ref / engine / "templates.jsonl" if engine in ("vllm", "sglang") else ref / "other-engines" / "templates-other.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [r for r in rows if r.get("kind") in KINDS and r.get("level") in levels
            and r.get("engine", engine) == engine]


def _printer(engine: str, tool: Path):
    """``(message(row) -> str, line(row, msg, i) -> str)`` for the engine."""
    if engine in ("vllm", "sglang"):
        tc = load_tool(tool)

        def line(row, msg, i):
            body = "ValueError: " + msg if row.get("level") == "raise" else msg
            return tc.prefix(engine, row.get("level", "info"), row.get("file", ""), i) + body
        return (lambda row: tc.render(row["template"])), line
    # the one-line shapes the floors (tests/test_rewording_engines.py) were measured with; the real,
    # multi-line shapes of tools/other_shapes.py are other_coverage's own measure (coverage36)
    make, formats = oc.LEGACY_FORMATS[engine]
    return oc.message, (lambda row, msg, i: make(row, msg, i, formats[0]))


def _deep_hits(lines: list[str], patterns: Path | None = None) -> list[bool]:
    """Per line: did it give a selection / finding / attention choice / event with parts
    (``patterns``: a pattern folder instead of the shipped one, e.g. an older commit's)."""
    import logscan

    def scan(ls):
        return oc.hits(json.loads(logscan.scan([x + "\n" for x in ls], patterns=patterns).model_dump_json()), True)
    hit = scan(lines)
    ok = [i in hit for i in range(1, len(lines) + 1)]
    return [good or 1 in scan([ln]) for good, ln in zip(ok, lines)]


def measure_engine(engine: str, tool: Path, levels: tuple[str, ...] = LOGGED,
                   rewordings: dict[str, Callable[[str], str]] | None = None,
                   patterns: Path | None = None) -> dict:
    """``{"printed": (kept, total), rewording: (recognised, changed, missed lines), ...}``."""
    rows = templates(engine, levels)
    message, line = _printer(engine, tool)
    msgs = [message(r) for r in rows]
    ok = _deep_hits([line(r, m, i) for i, (r, m) in enumerate(zip(rows, msgs))], patterns) if rows else []
    kept = [(r, m) for r, m, good in zip(rows, msgs, ok) if good]
    out: dict = {"printed": (len(kept), len(rows))}
    for name, reword in (rewordings or ALL_REWORDINGS).items():
        changed = [(r, reword(m)) for r, m in kept if reword(m) != m]
        lines = [line(r, m, i) for i, (r, m) in enumerate(changed)]
        good = _deep_hits(lines, patterns) if lines else []
        out[name] = (sum(good), len(lines), [ln for ln, g in zip(lines, good) if not g])
    return out


def main_engines(args) -> int:
    """``rewording_coverage.py --engines``: print ``<engine> <rewording> <hit>/<total>``."""
    levels = tuple(args.levels.split(",")) if args.levels else LOGGED
    for engine in args.engines.split(","):
        try:
            res = measure_engine(engine, Path(args.tool), levels,
                                 patterns=Path(args.patterns) if args.patterns else None)
        except (OSError, json.JSONDecodeError, KeyError) as exc:
            print(f"rewording_coverage: {engine}: {exc}")
            return 2
        kept, total = res.pop("printed")
        print(f"{engine:9s} {'as-printed':12s} {kept}/{total} (deep; the rewordings count these)")
        print_rows(res, args.verbose, lead=f"{engine:9s} ")
    return 0
