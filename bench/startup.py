#!/usr/bin/env python3
"""Start-up benchmark: every subcommand a user starts once per log, this tree against a peer tree.

A peer is another checkout of logscan (e.g. ``git archive <base> | tar -x -C /tmp/base``). Both
run ``python -c 'from logscan.cli import main; main()' ARGS`` with ``PYTHONPATH`` set to their
tree, for each subcommand below, interleaved (this, peer, then peer, this on the next round),
``--repeat`` times after one warm-up each (the pack cache, the parsed-TOML cache, ``__pycache__``
and the page cache filled). For each subcommand it prints the best and median wall time and CPU
time (user + system of the child, which moves less on a shared machine), the 1-minute load
average while it ran, and the ratio this/peer. Exit 1 when a median CPU ratio exceeds
``--max-ratio`` (default 1.20: issue 14's 20% budget). Absolute figures are printed, never
asserted (issue 18's target, <= 0.2 s wall at idle, is read off these rows).

Subcommands (``--commands``, default all but ``schema``): ``scan-text`` / ``scan-json`` (``scan
[--format json] LOG``), ``gate`` (``gate LOG``, the shipped policy), ``gate-baseline`` (``gate
--baseline REPORT LOG``, REPORT saved once by this tree's ``scan --format json LOG``), ``diff``
(``diff vllm-005.log LOG``), ``explain`` (``explain marlin``), ``ladder`` (``ladder vllm NVFP4
--gpu H100``), ``matrix`` (``matrix NVFP4 --gpu H100``), ``codes``, ``follow`` (``follow
--metrics-addr 127.0.0.1:0 LOG``, metrics served as by default: wall = start to its first JSON line on stdout; CPU = the whole process,
stopped by SIGTERM right after that line), ``schema`` (``schema``: pydantic is its point).

``--callgrind`` also counts the instructions of one warm run of each tree and subcommand under
valgrind's callgrind (load-independent: the figure to compare on a shared machine), when
valgrind is installed (``follow`` is left out there: it runs until stopped).

Bytecode: an installed logscan has its ``.pyc`` files (pip compiles them), so the children run
with ``PYTHONDONTWRITEBYTECODE`` removed from their environment and the warm-up writes each tree's
``__pycache__``; ``--source`` keeps the variable (a tree without ``__pycache__``, e.g. a fresh
``git archive`` under ``PYTHONDONTWRITEBYTECODE=1``, then compiles logscan's modules from source
at every start: ~0.1 s more; a tree that has ``.pyc`` files still reads them).

Usage::

    python bench/startup.py --peer /tmp/base [--log fixtures/vllm/vllm-005.log] [--repeat 15]
    python bench/startup.py --peer /tmp/base --commands gate,explain --callgrind
"""
from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent.parent
ENTRY = "from logscan.cli import main; main()"

#: subcommand -> its arguments (``{log}``, ``{report}``, ``{fixtures}`` filled in)
COMMANDS = {
    "scan-text": ["scan", "{log}"],
    "scan-json": ["scan", "--format", "json", "{log}"],
    "gate": ["gate", "{log}"],
    "gate-baseline": ["gate", "--baseline", "{report}", "{log}"],
    "diff": ["diff", "{fixtures}/vllm/vllm-005.log", "{log}"],
    "explain": ["explain", "marlin"],
    "ladder": ["ladder", "vllm", "NVFP4", "--gpu", "H100"],
    "matrix": ["matrix", "NVFP4", "--gpu", "H100"],
    "codes": ["codes"],
    "follow": ["follow", "--metrics-addr", "127.0.0.1:0", "--poll-interval", "0.05", "{log}"],
    "schema": ["schema"],
}
DEFAULT = [c for c in COMMANDS if c != "schema"]

#: keep ``PYTHONDONTWRITEBYTECODE`` in the children's environment (``--source``)
SOURCE = False


def _env(tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    if not SOURCE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def once(tree: Path, args: list[str], follow: bool = False) -> tuple[float, float]:
    """(wall s, CPU s) of one child run of ``tree`` with ``args``; ``follow``: wall until its
    first stdout line, then SIGTERM (CPU counts the whole child)."""
    env = _env(tree)
    before = _cpu()
    t = time.perf_counter()
    if follow:
        proc = subprocess.Popen([sys.executable, "-c", ENTRY, *args], env=env, cwd=str(tree),
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        proc.stdout.readline()
        wall = time.perf_counter() - t
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    else:
        subprocess.run([sys.executable, "-c", ENTRY, *args], env=env, cwd=str(tree),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall = time.perf_counter() - t
    return wall, _cpu() - before


def instructions(tree: Path, args: list[str]) -> Optional[int]:
    """Instructions (callgrind ``Ir``) of one run of ``tree`` with ``args``; None without valgrind."""
    import re
    import shutil
    import tempfile

    vg = shutil.which("valgrind")
    if vg is None:
        return None
    env = _env(tree)
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.run([vg, "--tool=callgrind", f"--callgrind-out-file={d}/cg.out", sys.executable, "-c",
                               ENTRY, *args], env=env, cwd=str(tree), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, check=False)
    m = re.search(r"Collected\s*:\s*([\d,]+)", proc.stderr)
    return int(m.group(1).replace(",", "")) if m else None


def _args(cmd: str, log: Path, report: Path) -> list[str]:
    return [a.format(log=log, report=report, fixtures=HERE / "fixtures") for a in COMMANDS[cmd]]


def _row(tree: str, cmd: str, res: list[tuple[float, float]]) -> str:
    w = [x[0] for x in res]
    c = [x[1] for x in res]
    return (f"{tree:5} {cmd:13} wall best {min(w):.3f} s median {statistics.median(w):.3f} s | "
            f"cpu best {min(c):.3f} s median {statistics.median(c):.3f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", type=Path, required=True)
    ap.add_argument("--log", type=Path, default=HERE / "fixtures" / "vllm" / "vllm-022.log")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--max-ratio", type=float, default=1.20)
    ap.add_argument("--commands", default=",".join(DEFAULT),
                    help=f"comma-separated subcommands to time, of: {', '.join(COMMANDS)}")
    ap.add_argument("--format", default=None, choices=["text", "json"],
                    help="time only this format of scan (the other scan row is left out)")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions under callgrind (one run each)")
    ap.add_argument("--source", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE (a tree without __pycache__ then compiles at every start)")
    args = ap.parse_args()
    global SOURCE
    SOURCE = args.source
    cmds = [c.strip() for c in args.commands.split(",") if c.strip()]
    bad = [c for c in cmds if c not in COMMANDS]
    if bad:
        ap.error(f"unknown subcommand(s) {', '.join(bad)}; known: {', '.join(COMMANDS)}")
    if args.format:
        cmds = [c for c in cmds if not c.startswith("scan-") or c == f"scan-{args.format}"]
    if not args.peer.is_dir():
        ap.error(f"--peer {args.peer}: not a directory (give a checkout of logscan, e.g. "
                 f"git -C {HERE} worktree add --detach /tmp/peer <commit>)")
    if not (args.peer / "logscan" / "cli.py").is_file():
        ap.error(f"--peer {args.peer}: no logscan/cli.py there (not a checkout of logscan)")
    if not args.log.is_file():
        ap.error(f"--log {args.log}: not a file")
    log = args.log.resolve()
    trees = {"this": HERE, "peer": args.peer.resolve()}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "baseline.json"
        with report.open("w") as fh:
            subprocess.run([sys.executable, "-c", ENTRY, "scan", "--format", "json", str(log)], env=_env(HERE),
                           cwd=str(HERE), stdout=fh, check=False)
        res: dict[tuple[str, str], list[tuple[float, float]]] = {(k, c): [] for k in trees for c in cmds}
        loads: dict[str, list[float]] = {c: [] for c in cmds}
        for c in cmds:
            for t in trees.values():
                once(t, _args(c, log, report), c == "follow")
        for r in range(args.repeat):
            for c in cmds:
                order = list(trees.items()) if r % 2 == 0 else list(reversed(trees.items()))
                for k, t in order:
                    res[(k, c)].append(once(t, _args(c, log, report), c == "follow"))
                loads[c].append(os.getloadavg()[0])
        worst = 0.0
        for c in cmds:
            for k in trees:
                print(_row(k, c, res[(k, c)]))
            ratio = statistics.median(x[1] for x in res[("this", c)]) / statistics.median(x[1] for x in res[("peer", c)])
            wr = statistics.median(x[0] for x in res[("this", c)]) / statistics.median(x[0] for x in res[("peer", c)])
            worst = max(worst, ratio)
            print(f"ratio this/peer: cpu median {ratio:.3f}, wall median {wr:.3f} ({c}; load "
                  f"{min(loads[c]):.2f}-{max(loads[c]):.2f})")
        print(f"load average: before {' '.join(f'{x:.2f}' for x in load_before)}, after "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; bytecode {'off (--source)' if SOURCE else 'on'}; "
              f"worst cpu ratio {worst:.3f} (target <= {args.max_ratio})")
        if args.callgrind:
            for c in cmds:
                if c == "follow":
                    continue
                ir = {k: instructions(t, _args(c, log, report)) for k, t in trees.items()}
                if None in ir.values():
                    print("instructions: valgrind not installed (or it failed)")
                    break
                print(f"instructions (callgrind, one warm run) {c:13}: this {ir['this'] / 1e6:.0f} M, peer "
                      f"{ir['peer'] / 1e6:.0f} M, ratio {ir['this'] / ir['peer']:.3f}")
    return 0 if worst <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
