"""Memory of ``logscan follow`` over a long run: RSS after 10,000 followed lines vs 1,000,000.

A writer appends real vLLM start-up lines (every bundled ``fixtures/vllm/*.log``, cycled, so
the log holds thousands of engine starts, each with selections and findings) to a log file
in batches; the follower (the real ``Follower``: tailer, pipeline, reporting, metrics, state
file) polls after each batch, as it would every ``--poll-interval``. Every 100,000 lines the
log is rotated by rename and the rotated file deleted, so the disk stays small and rotation
is part of the run. JSON lines go to /dev/null. RSS is read from /proc/self/status.

    python bench/follow_memory.py            # 1,000,000 lines
    python bench/follow_memory.py --lines 200000

Prints one line per checkpoint: lines followed, RSS in MiB, lines per second.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logscan.follow.metrics import FollowMetrics  # noqa: E402
from logscan.follow.runner import Follower  # noqa: E402
from logscan.packs.loader import default_packs  # noqa: E402


def rss_mib() -> float:
    """Resident set size of this process, MiB (Linux /proc)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=2_000, help="lines written between two polls")
    a = ap.parse_args()
    source = [ln for f in sorted((ROOT / "fixtures" / "vllm").glob("*.log"))
              for ln in f.read_text(encoding="utf-8").split("\n")]
    packs = default_packs()
    checkpoints = sorted({10_000, 100_000, a.lines // 2, a.lines} - {0})
    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as devnull:
        log = Path(tmp) / "engine.log"
        metrics = FollowMetrics("sidecar", packs.findings.cost_class_finding)
        f = Follower([str(log)], packs, devnull, metrics=metrics, state_file=str(Path(tmp) / "state.json"),
                     state_every=0.5)
        written = 0
        t0 = time.perf_counter()
        out = open(log, "a", encoding="utf-8")
        print(f"{'lines':>10} {'RSS MiB':>8} {'lines/s':>9}")
        while written < a.lines:
            n = min(a.batch, a.lines - written)
            out.write("".join(source[(written + i) % len(source)] + "\n" for i in range(n)))
            out.flush()
            written += n
            f.poll_once()
            if written % 100_000 == 0:  # rotate by rename, delete the rotated file once read
                out.close()
                rotated = log.with_name("engine.log.1")
                os.rename(log, rotated)
                out = open(log, "a", encoding="utf-8")
                f.poll_once()
                f.poll_once()
                rotated.unlink()
            if written in checkpoints:
                f.poll_once()
                s = f.streams[str(log)]
                assert s.stats.lines == written, (s.stats.lines, written)
                print(f"{written:>10} {rss_mib():>8.1f} {written / (time.perf_counter() - t0):>9.0f}", flush=True)
        out.close()
        f.save_state()


if __name__ == "__main__":
    main()
