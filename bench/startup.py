#!/usr/bin/env python3
"""Start-up benchmark: ``logscan scan`` on a small log, this tree against a peer tree, one run.

A peer is another checkout of logscan (e.g. ``git archive <base> | tar -x -C /tmp/base``). Both
run ``python -c 'from logscan.cli import main; main()' scan LOG`` with ``PYTHONPATH`` set to
their tree, interleaved, ``--repeat`` times after one warm-up each (the parsed-TOML cache and
the page cache filled). Prints the best and median wall time and CPU time (user + system of
the child, which moves less on a shared machine) and the ratio this/peer. Exit 1 when the
median CPU ratio exceeds ``--max-ratio`` (default 1.20: issue 14's 20% budget).

``--callgrind`` also counts the instructions of one warm run of each tree under valgrind's
callgrind (load-independent: the figure to compare on a shared machine), when valgrind is
installed.

Bytecode: an installed logscan has its ``.pyc`` files (pip compiles them), so the children run
with ``PYTHONDONTWRITEBYTECODE`` removed from their environment and the warm-up writes each tree's
``__pycache__``; ``--source`` keeps the variable (a tree without ``__pycache__``, e.g. a fresh
``git archive`` under ``PYTHONDONTWRITEBYTECODE=1``, then compiles logscan's modules from source
at every start: ~0.1 s more; a tree that has ``.pyc`` files still reads them).

Usage::

    python bench/startup.py --peer /tmp/base [--log fixtures/vllm/vllm-022.log] [--repeat 15] [--format json]
    python bench/startup.py --peer /tmp/base --format json --callgrind
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent.parent


#: keep ``PYTHONDONTWRITEBYTECODE`` in the children's environment (``--source``)
SOURCE = False


def _env(tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    if not SOURCE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def once(tree: Path, log: Path, fmt: str = "text") -> tuple[float, float]:
    env = _env(tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from logscan.cli import main; main()", "scan", "--format", fmt, str(log)],
                   env=env, cwd=str(tree), stdout=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(tree: Path, log: Path, fmt: str) -> Optional[int]:
    """Instructions (callgrind ``Ir``) of one ``scan`` run of ``tree``; None without valgrind."""
    import re
    import shutil
    import tempfile

    vg = shutil.which("valgrind")
    if vg is None:
        return None
    env = _env(tree)
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.run([vg, "--tool=callgrind", f"--callgrind-out-file={d}/cg.out", sys.executable, "-c",
                               "from logscan.cli import main; main()", "scan", "--format", fmt, str(log)],
                              env=env, cwd=str(tree), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False)
    m = re.search(r"Collected\s*:\s*([\d,]+)", proc.stderr)
    return int(m.group(1).replace(",", "")) if m else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", type=Path, required=True)
    ap.add_argument("--log", type=Path, default=HERE / "fixtures" / "vllm" / "vllm-022.log")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--max-ratio", type=float, default=1.20)
    ap.add_argument("--format", default="text", choices=["text", "json"], help="report format of the timed scan")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions under callgrind (one run each)")
    ap.add_argument("--source", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE (a tree without __pycache__ then compiles at every start)")
    args = ap.parse_args()
    global SOURCE
    SOURCE = args.source
    load_before = os.getloadavg()
    trees = {"this": HERE, "peer": args.peer.resolve()}
    res: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    for k, t in trees.items():
        once(t, args.log.resolve(), args.format)
    for _ in range(args.repeat):
        for k, t in trees.items():
            res[k].append(once(t, args.log.resolve(), args.format))
    for k in trees:
        w = [x[0] for x in res[k]]
        c = [x[1] for x in res[k]]
        print(f"{k:5} wall best {min(w):.3f} s median {statistics.median(w):.3f} s | "
              f"cpu best {min(c):.3f} s median {statistics.median(c):.3f} s")
    ratio = statistics.median(x[1] for x in res["this"]) / statistics.median(x[1] for x in res["peer"])
    wr = statistics.median(x[0] for x in res["this"]) / statistics.median(x[0] for x in res["peer"])
    print(f"ratio this/peer: cpu median {ratio:.3f}, wall median {wr:.3f} (target <= {args.max_ratio})")
    print(f"load average: before {' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; bytecode {'off (--source)' if SOURCE else 'on'}")
    if args.callgrind:
        ir = {k: instructions(t, args.log.resolve(), args.format) for k, t in trees.items()}
        if None in ir.values():
            print("instructions: valgrind not installed (or it failed)")
        else:
            print(f"instructions (callgrind, one warm run): this {ir['this'] / 1e6:.0f} M, peer "
                  f"{ir['peer'] / 1e6:.0f} M, ratio {ir['this'] / ir['peer']:.3f}")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
