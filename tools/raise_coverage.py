#!/usr/bin/env python3
"""Which finding a raised refusal gets when it is the cause of a failed start.

Every ``raise``-level template of ``shared/reference/<engine>/templates.jsonl`` is rendered
(``shared/tools/template_coverage.py`` ``render``: placeholders filled with plausible values)
as the exception line at the end of one realistic failed start, one run per template:

- SGLang: the ``server_args=ServerArgs(...)`` launch line, ``Scheduler hit an exception:
  Traceback (most recent call last):``, the scheduler frame, a frame in the template's own
  file and function, the quoted ``raise <Exc>(msg)`` source line, ``<Exc>: <message>``
  (unprefixed, as CPython prints it), then ``Received sigquit from a child process``;
- vLLM: the API server version and ``non-default args`` lines, then ``EngineCore failed to
  start.``, the traceback header, the ``run_engine_core`` frame, a frame in the template's
  file, the quoted source line and ``<Exc>: <message>``, all under the EngineCore ERROR prefix.

logscan runs ONCE over the whole synthetic log (``--cmd``, default ``python -m logscan scan
--format json``); every JSON object with ``code`` and ``line`` keys is a finding on that line.
For each template the finding codes on its exception line other than ``START_FAILED`` are
counted (``-`` for none). Printed: ``runs N templates M``, one ``<count> <codes>`` line per
outcome (most common first), then per template tag the six most common outcomes. The
templates with no code are written to ``--misses`` (default ``/tmp/raise-<engine>-miss.txt``:
``<tags> <first 150 characters of the template>``, one a line).

Many misses are right: a shape check or a model-specific option conflict is no corpus finding
(shared/corpus/README.md), and START_FAILED with the cause is what the report should say. The
measure shows which refusal SHAPES the packs' grammar does not read yet (docs/grammar.md).

Usage::

    python tools/raise_coverage.py sglang
    python tools/raise_coverage.py vllm --cmd 'logscan scan --format json' --misses /tmp/m.txt

Exit status 0 when the measure ran, 2 when the templates, the render tool or the command's
JSON cannot be read. Measured figures: docs/grammar.md ("Raised refusals").
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable

ROOT = Path(__file__).resolve().parent.parent
SHARED = next((p for p in (Path(os.environ.get("LOGSCAN_SHARED", "/nonexistent")), ROOT.parent / "shared",
                            ROOT.parent.parent / "shared") if p.is_dir()), ROOT.parent / "shared")
ENGINES = ("sglang", "vllm")
VLLM_PREFIX = "(EngineCore_DP0 pid=4242) ERROR 11-29 10:00:05 [core.py:708] "


def load_render(tool: Path) -> Callable[[str], str]:
    """``render`` of the shared template tool (``template -> message``). Raises ``OSError`` when absent."""
    if not tool.is_file():
        raise OSError(f"{tool}: no such file")
    spec = importlib.util.spec_from_file_location("template_coverage", tool)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.render


def raise_templates(path: Path) -> list[dict]:
    """The ``level == "raise"`` entries of a templates.jsonl, in file order. Raises ``OSError``, ``ValueError``."""
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [t for t in rows if t.get("level") == "raise"]


def failed_start(engine: str, i: int, t: dict, msg: str) -> tuple[list[str], int]:
    """The lines of one failed start whose exception is ``msg``, and the exception line's index in them."""
    exc, f, fn = t.get("exception") or "ValueError", t.get("file", "x.py"), t.get("function", "f")
    site = "/usr/local/lib/python3.12/dist-packages"
    if engine == "sglang":
        block = [f"[2026-11-29 10:00:00] server_args=ServerArgs(model_path='org/model-{i}', tp_size=1)",
                 "[2026-11-29 10:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):",
                 f'  File "{site}/sglang/srt/managers/scheduler.py", line 2400, in run_scheduler_process',
                 "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank)",
                 f'  File "{site}/{f}", line 88, in {fn}',
                 f"    raise {exc}(msg)", f"{exc}: {msg}", "",
                 "[2026-11-29 10:00:07] Received sigquit from a child process. It usually means the child failed."]
        return block, 6
    p = VLLM_PREFIX
    block = ["INFO 11-29 10:00:00 [api_server.py:1000] vLLM API server version 0.11.0",
             f"INFO 11-29 10:00:00 [utils.py:200] non-default args: {{'model': 'org/model-{i}'}}",
             p + "EngineCore failed to start.", p + "Traceback (most recent call last):",
             p + f'  File "{site}/vllm/v1/engine/core.py", line 699, in run_engine_core',
             p + "    engine_core = EngineCoreProc(*args, **kwargs)",
             p + f'  File "{site}/{f}", line 88, in {fn}',
             p + f"    raise {exc}(msg)", p + f"{exc}: {msg}"]
    return block, 8


def build_log(engine: str, templates: list[dict], render: Callable[[str], str]) -> tuple[list[str], list[tuple[int, dict]]]:
    """All failed starts one after another, and ``(1-based line of the exception, template)`` per template."""
    lines: list[str] = []
    where: list[tuple[int, dict]] = []
    for i, t in enumerate(templates):
        block, k = failed_start(engine, i, t, render(t["template"]))
        where.append((len(lines) + k + 1, t))
        lines += block
    return lines, where


def codes_by_line(report) -> dict[int, set[str]]:
    """Every ``{"code": C, "line": N}`` object of a JSON report, wherever it sits: ``{N: {C, ...}}``."""
    out: dict[int, set[str]] = collections.defaultdict(set)
    stack = [report]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if "code" in n and "line" in n:
                out[n["line"]].add(n["code"])
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    return out


def tally(where: Iterable[tuple[int, dict]], byline: dict[int, set[str]]):
    """``(Counter of outcomes, {tag: Counter}, misses)``; an outcome is the sorted codes other than
    START_FAILED joined by ``,`` (``-`` for none); a miss is ``(tags, template)``."""
    stat: collections.Counter = collections.Counter()
    bytag: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    misses = []
    for ln, t in where:
        codes = byline.get(ln, set()) - {"START_FAILED"}
        key = ",".join(sorted(codes)) or "-"
        stat[key] += 1
        for tag in t.get("tags") or ["(none)"]:
            bytag[tag][key] += 1
        if not codes:
            misses.append((t.get("tags"), t["template"]))
    return stat, bytag, misses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Details: the module docstring (python -c 'import tools.raise_coverage as m; help(m)').")
    ap.add_argument("engine", choices=ENGINES)
    ap.add_argument("--templates", type=Path, help="templates.jsonl (default: shared/reference/<engine>/templates.jsonl)")
    ap.add_argument("--tool", type=Path, default=SHARED / "tools" / "template_coverage.py",
                    help="the shared template tool whose render() fills placeholders")
    ap.add_argument("--cmd", default=f"{shlex.quote(sys.executable)} -m logscan scan --format json",
                    help="command printing logscan's JSON report; the log path is appended")
    ap.add_argument("--misses", type=Path, help="file for the templates with no code (default /tmp/raise-<engine>-miss.txt)")
    ap.add_argument("--keep-log", type=Path, help="also write the synthetic log here")
    a = ap.parse_args(argv)
    templates_path = a.templates or SHARED / "reference" / a.engine / "templates.jsonl"
    try:
        render = load_render(a.tool)
        templates = raise_templates(templates_path)
    except (OSError, ValueError) as e:
        print(f"raise_coverage: {e}", file=sys.stderr)
        return 2
    lines, where = build_log(a.engine, templates, render)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(a.keep_log or Path(tmp) / f"raise-{a.engine}.log")
        log.write_text("\n".join(lines) + "\n", encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        out = subprocess.run(shlex.split(a.cmd) + [str(log)], capture_output=True, text=True, env=env)
    try:
        report = json.loads(out.stdout)
    except ValueError:
        print(f"raise_coverage: the command printed no JSON (exit {out.returncode}): {out.stderr[-500:]}", file=sys.stderr)
        return 2
    stat, bytag, misses = tally(where, codes_by_line(report))
    print("runs", len(report.get("runs", [])), "templates", len(templates))
    for k, v in stat.most_common():
        print(v, k)
    for tag, c in bytag.items():
        print(tag, dict(c.most_common(6)))
    miss_path = a.misses or Path(tempfile.gettempdir()) / f"raise-{a.engine}-miss.txt"
    miss_path.write_text("\n".join(f"{tags} {tpl[:150]}" for tags, tpl in misses), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
