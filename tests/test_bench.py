"""A smoke run of the throughput benchmark (1 MB; the 1 GB run is for people, not CI)."""
from __future__ import annotations

import re
import subprocess
import sys

from .conftest import ROOT


def test_the_benchmark_prints_every_figure_and_cleans_up(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "throughput.py"), "--sizes", "1", "--repeat", "1",
                        "--fallback", "--no-check", "--dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.strip().startswith("1 ")]
    assert rows[0][1:4] == ["grep", "-E", "-i"] and float(rows[0][5]) > 0 and float(rows[0][7]) >= 0
    tools = [row[3].strip("()") for row in rows[1:]]
    assert tools and tools[-1] == "python"  # the pure-Python fallback is always timed with --fallback
    for row in rows[1:]:
        wall, mbs, ratio, cpu, cpu_ratio, rss = map(float, row[-6:])
        assert wall > 0 and mbs > 0 and ratio > 0 and cpu > 0 and cpu_ratio > 0 and 5 < rss < 1024
    assert re.search(r"targets met|target missed", r.stdout)
    assert not list(tmp_path.iterdir()), "the synthetic log must be deleted"
