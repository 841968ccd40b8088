#!/usr/bin/env python3
"""CPU and memory of ``logscan follow`` while a log grows at a set rate, and while it is idle.

A writer in this process appends lines to a log at ``--rates`` lines per second (the runtime
lines of ``bench/throughput.py``, with the bundled real vLLM start-ups spread in: 1 in 2,000
lines), in 20 batches a second, for ``--seconds`` each (bounded). The follower is the real
command, ``logscan follow FILE --metrics-addr off``, started as a child process; its CPU time
is read from ``/proc/PID/stat`` (utime + stime, clock ticks) before and after each phase, its
RSS from ``/proc/PID/status`` (VmRSS, VmHWM). JSON lines go to a pipe that is drained and
counted. Phases: ``idle`` (the file exists, nothing is written), then each rate.

Prints, per phase: lines written, seconds, the follower's CPU as a percentage of one core,
CPU microseconds per line, RSS and peak RSS (MiB), JSON lines emitted. Nothing is asserted
(targets of issue 18: <= 2% of a core at 1k lines/s, near zero when idle).

    python bench/follow_cost.py                       # idle, 1k and 10k lines/s, 60 s each
    python bench/follow_cost.py --seconds 10 --rates 1000
    python bench/follow_cost.py --seconds 1 --rates 200   # a smoke run (the test suite does this)

Linux only (``/proc``).
"""
from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import ROOT, runtime_lines, startups  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (``/proc/PID/stat`` fields 14 and 15)."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB."""
    vals = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            key, kb = line.split(":", 1)
            vals[key] = int(kb.split()[0]) / 1024.0
    return vals.get("VmRSS", float("nan")), vals.get("VmHWM", float("nan"))


def _lines():
    """Runtime lines with a real start-up's lines spliced in every 2,000 lines (forever)."""
    ups = [b.decode("utf-8", "replace").splitlines() for b in startups()]
    gen = runtime_lines(7)
    for n in itertools.count():
        if n % 2000 == 1999:
            yield from ups[(n // 2000) % len(ups)]
        yield next(gen)


def _logscan() -> list[str]:
    exe = shutil.which("logscan", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "logscan.cli"]


def run(seconds: float, rates: list[int], workdir: Path) -> list[str]:
    """Start a follower on a fresh log, run the idle phase and each rate; return the rows."""
    log = workdir / f"logscan-follow-cost-{os.getpid()}.log"
    log.write_bytes(b"")
    proc = subprocess.Popen(_logscan() + ["follow", str(log), "--metrics-addr", "off"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    emitted = [0]

    def drain():
        for _ in proc.stdout:  # type: ignore[union-attr]
            emitted[0] += 1

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    rows = []
    lines = _lines()
    try:
        time.sleep(1.5)  # start-up (imports, packs) is not the steady state being measured
        for rate in [0] + rates:
            before, e0, t0, written = cpu_seconds(proc.pid), emitted[0], time.monotonic(), 0
            end = t0 + seconds
            with log.open("ab", buffering=0) as fh:
                while (now := time.monotonic()) < end:
                    due = int((now - t0) * rate) - written
                    if due > 0:
                        fh.write(("\n".join(next(lines) for _ in range(due)) + "\n").encode("utf-8"))
                        written += due
                    time.sleep(0.05)
            time.sleep(0.5)  # let the follower catch up on the last batch
            used, wall = cpu_seconds(proc.pid) - before, time.monotonic() - t0
            cur, peak = rss_mib(proc.pid)
            name = "idle" if rate == 0 else f"{rate}/s"
            per_line = f"{used / written * 1e6:.0f}" if written else "-"
            rows.append(f"{name:>8} {written:>9} {wall:>7.1f} {100 * used / wall:>7.2f} {per_line:>9} "
                        f"{cur:>8.1f} {peak:>9.1f} {emitted[0] - e0:>8}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.unlink(missing_ok=True)
    return rows


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="length of each phase (s)")
    ap.add_argument("--rates", default="1000,10000", help="lines per second, comma-separated")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the log is written (deleted after)")
    args = ap.parse_args(argv)
    if not Path("/proc/self/stat").exists():
        print("follow_cost: needs Linux /proc", file=sys.stderr)
        return 2
    rates = [int(r) for r in args.rates.split(",") if r.strip()]
    print(f"phase: {args.seconds:g} s each; cores: {os.cpu_count()}; load average: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'phase':>8} {'lines':>9} {'wall s':>7} {'CPU %':>7} {'us/line':>9} {'RSS MiB':>8} {'peak MiB':>9} "
          f"{'emitted':>8}")
    for row in run(args.seconds, rates, Path(args.dir)):
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
