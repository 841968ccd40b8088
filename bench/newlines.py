#!/usr/bin/env python3
"""Newline counting: ``bytes.count`` against ``sources/nlcount.py`` (its pick per buffer), by line length.

Prints, for 1 MiB buffers of lines of mean length 40, 120, 400 and 2,000 bytes (exponentially
distributed, seeded), the best-of-5 CPU ms/MB of ``bytes.count(b"\\n")``, of the replace way,
and of ``nlcount.counter``'s choice, and the ratio choice/count. Nothing is asserted: the
figures are the result (issue 18: newline counting was ~0.4 ms/MB of the bench log's ~2.3).

Usage: ``python bench/newlines.py [--buffers N]``
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from logscan.sources import nlcount  # noqa: E402


def _buffer(mean: int, rng: random.Random, size: int = 1 << 20) -> bytes:
    out, n = [], 0
    while n < size:
        line = b"x" * max(1, int(rng.expovariate(1 / mean))) + b"\n"
        out.append(line)
        n += len(line)
    return b"".join(out)[:size]


def _best(f, mb: float, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best * 1e3 / mb


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--buffers", type=int, default=20, help="1 MiB buffers per line length (default 20)")
    args = ap.parse_args(argv)
    rng = random.Random(1)
    print(f"{'mean line B':>11} {'count ms/MB':>12} {'replace':>8} {'counter':>8} {'counter/count':>14}")
    for mean in (40, 120, 400, 2000):
        bufs = [_buffer(mean, rng) for _ in range(args.buffers)]
        mb = sum(map(len, bufs)) / 1e6
        a = _best(lambda: [b.count(b"\n") for b in bufs], mb)
        r = _best(lambda: [nlcount.count_by_replace(b, 0, len(b)) for b in bufs], mb)
        c = _best(lambda: [nlcount.counter(b)(0, len(b)) for b in bufs], mb)
        print(f"{mean:>11} {a:>12.3f} {r:>8.3f} {c:>8.3f} {c / a:>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
