#!/usr/bin/env python3
"""Crash-loop benchmark: logscan on a log of one real failing start-up repeated, folding on and off.

A pod whose engine restarts over and over logs the same start-up (banner, kernel lines, warnings,
a traceback) thousands of times (``bench/crashloop_log.py`` writes such a log from real fixture
windows, clocks and pids advanced). Before folding (``logscan/fold.py``) every restart was a run
of the report: a 381 MB loop gave a 3.4 GB JSON report, and memory grew with it.

Per engine and size, each command runs in a child process, folded (the default) and unbounded
(``LOGSCAN_FOLD=0``, the behaviour before), and the script prints wall and CPU seconds, peak RSS
(``ru_maxrss`` of the child from ``os.wait4``), the report's size in bytes, and the ratios
unbounded / folded:

- ``scan --format json``, ``scan`` (text), ``gate --format json``;
  (peak RSS read by ``/usr/bin/time -f %M`` when installed, see ``_child``)
- ``follow -`` (the log piped in, ``--metrics-addr off``; prints JSON lines, never folds: the
  two modes are the same, one row).

Targets (issue 18): folded peak RSS <= 64 MiB and flat (within 8 MiB) between the sizes; the gate's
verdict the same folded and unbounded. Exit status 1 when one is missed (``--no-check`` to skip).

Usage::

    python bench/crashloop.py                               # 50, 100, 400 MB, vLLM and SGLang
    python bench/crashloop.py --sizes 20 --engines sglang --no-unbounded
    python bench/crashloop.py --sizes 2 --no-check          # a smoke run
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from crashloop_log import write_loop  # noqa: E402


def _logscan() -> list[str]:
    exe = shutil.which("logscan", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "logscan.cli"]


def _child(cmd: list[str], env: dict, stdin: Optional[Path] = None) -> tuple[int, float, float, float, bytes]:
    """Run ``cmd``; returns (exit status, wall s, CPU s, peak RSS MiB, stdout).

    Peak RSS is ``/usr/bin/time -f %M``'s (when there): Linux keeps a forked child's high-water
    mark across exec, so ``ru_maxrss`` from ``os.wait4`` would count this script's own memory
    (large after it read an unbounded report)."""
    t0 = time.perf_counter()
    gnu_time = shutil.which("time", path="/usr/bin:/bin")
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss, \
            (open(stdin, "rb") if stdin else open(os.devnull, "rb")) as inp:
        full = [gnu_time, "-f", "%M", "-o", rss.name] + cmd if gnu_time else cmd
        p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=inp, env=env)
        out = p.stdout.read() if p.stdout else b""
        _, status, ru = os.wait4(p.pid, 0)
        text = rss.read().strip().splitlines()
        peak = int(text[-1]) / 1024.0 if gnu_time and text and text[-1].isdigit() else ru.ru_maxrss / 1024.0
    return (os.waitstatus_to_exitcode(status), time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, peak, out)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="50,100,400", help="log sizes in MB (10^6 bytes), comma-separated")
    ap.add_argument("--engines", default="vllm,sglang")
    ap.add_argument("--commands", default="json,text,gate,follow")
    ap.add_argument("--no-unbounded", action="store_true", help="skip the LOGSCAN_FOLD=0 runs (slow, large)")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the logs go (deleted after)")
    ap.add_argument("--no-check", action="store_true")
    a = ap.parse_args(argv)
    cmds = {"json": ["scan", "--format", "json"], "text": ["scan"], "gate": ["gate", "--format", "json"],
            "follow": ["follow", "--metrics-addr", "off", "-"]}
    print(f"{'engine':<7} {'MB':>5} {'restarts':>8} {'command':<7} {'mode':<9} {'wall s':>7} {'CPU s':>7} "
          f"{'RSS MiB':>8} {'report B':>11} {'runs':>6} {'exit':>4}  ratios unbounded/folded")
    failed: list[str] = []
    rss: dict[tuple[str, str], list[float]] = {}
    for engine in [e for e in a.engines.split(",") if e]:
        for mb in [int(s) for s in a.sizes.split(",") if s.strip()]:
            path = Path(a.dir) / f"logscan-crashloop-{engine}-{mb}MB.log"
            try:
                _, restarts = write_loop(path, engine, size=mb * 1_000_000)
                for name in [c for c in a.commands.split(",") if c]:
                    modes = ["folded"] + ([] if a.no_unbounded or name == "follow" else ["unbounded"])
                    rows = {}
                    for mode in modes:
                        env = {**os.environ, "LOGSCAN_FOLD": "1" if mode == "folded" else "0"}
                        follow = name == "follow"
                        rc, wall, cpu, peak, out = _child(_logscan() + cmds[name] + ([] if follow else [str(path)]),
                                                          env, stdin=path if follow else None)
                        runs = ""
                        if name in ("json", "gate") and out[:1] == b"{":
                            doc = json.loads(out)
                            runs = f"{len(doc['runs'])}"
                            rows.setdefault("verdict", []).append(doc.get("gate", {}).get("verdict"))
                        rows[mode] = (wall, cpu, peak, len(out))
                        ratio = ""
                        if mode == "unbounded":
                            f = rows["folded"]
                            ratio = (f"wall {wall / f[0]:.1f}x  RSS {peak / f[2]:.1f}x  "
                                     f"report {len(out) / max(1, f[3]):.0f}x")
                        print(f"{engine:<7} {mb:>5} {restarts:>8} {name:<7} {mode:<9} {wall:>7.1f} {cpu:>7.1f} "
                              f"{peak:>8.1f} {len(out):>11,} {runs:>6} {rc:>4}  {ratio}", flush=True)
                        if mode == "folded":
                            rss.setdefault((engine, name), []).append(peak)
                    if name == "gate" and len(set(rows.get("verdict", []))) > 1:
                        failed.append(f"{engine} {mb} MB: gate verdict {rows['verdict']} differs folded/unbounded")
            finally:
                path.unlink(missing_ok=True)
    for (engine, name), values in rss.items():
        if max(values) > 64:
            failed.append(f"{engine} {name}: peak RSS {max(values):.1f} MiB > 64 MiB")
        if max(values) - min(values) > 8:
            failed.append(f"{engine} {name}: peak RSS not flat ({min(values):.1f} .. {max(values):.1f} MiB)")
    for f in failed:
        print(f"target missed: {f}")
    if not failed:
        print("targets met")
    return 1 if failed and not a.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
