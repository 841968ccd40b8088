"""A smoke run of the throughput benchmark (1 MB; the 1 GB run is for people, not CI)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

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


def test_the_side_by_side_benchmark_prints_every_tool_and_both_ratios(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "compare.py"), "--sizes", "1", "--repeat", "1",
                        "--dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = {ln[8:37].strip(): ln[37:].split() for ln in r.stdout.splitlines() if ln.startswith("      1 ")}
    assert "grep -i -F -f keywords" in rows and "grep -E -i everyday" in rows
    wall, mbs, cpu, rss = map(float, rows["logscan scan --format json"])
    assert wall > 0 and mbs > 0 and cpu > 0 and 5 < rss < 1024
    assert float(rows["ratio logscan/grep (keywords)"][0]) > 0
    cpu_ratio = rows["CPU ratio logscan/grep"][0]  # by CPU seconds too ('-': grep's CPU rounded to 0 at 1 MB)
    assert cpu_ratio == "-" or float(cpu_ratio) > 0
    before, arrow, after = rows["load average (1 min)"]  # beside the figures it moves
    assert arrow == "->" and float(before) >= 0 and float(after) >= 0
    rg = rows["ratio logscan/rg (keywords)"][0]
    assert rg == "-" if "rg: not found" in r.stdout else float(rg) > 0
    assert not [p for p in tmp_path.iterdir()], "the synthetic log and keyword file must be deleted"


def test_the_follow_cost_benchmark_measures_idle_and_a_rate(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "follow_cost.py"), "--seconds", "1", "--rates", "3000",
                        "--dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = {ln.split()[0]: ln.split()[1:] for ln in r.stdout.splitlines()[2:] if ln.strip()}
    assert set(rows) == {"idle", "3000/s"}
    assert rows["idle"][0] == "0" and float(rows["idle"][2]) >= 0
    lines, wall, cpu, per_line, rss, peak, emitted = rows["3000/s"]
    # CPU is read in clock ticks (10 ms): a short phase may round to 0, never below
    assert int(lines) > 1500 and float(wall) >= 1 and float(cpu) >= 0 and float(per_line) >= 0
    assert int(emitted) >= 1, "a real start-up is spliced in every 2,000 lines: the follower must report it"
    assert 5 < float(rss) <= float(peak) < 1024
    assert not list(tmp_path.iterdir()), "the followed log must be deleted"


def test_the_side_by_side_benchmark_times_a_peer_checkout_in_the_same_runs(tmp_path):
    """``--peer TREE``: before/after figures from one paired run (here the tree against itself)."""
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "compare.py"), "--sizes", "1", "--repeat", "1",
                        "--dir", str(tmp_path), "--peer", str(ROOT)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = {ln[8:37].strip(): ln[37:].split() for ln in r.stdout.splitlines() if ln.startswith("      1 ")}
    wall, mbs, cpu, rss = map(float, rows["logscan (peer) --format json"])
    assert wall > 0 and mbs > 0 and cpu > 0 and 5 < rss < 1024
    assert float(rows["ratio logscan/peer"][0]) > 0 and float(rows["ratio peer/grep (keywords)"][0]) > 0
    assert float(rows["CPU ratio logscan/peer"][0]) > 0  # logscan's CPU at 1 MB is ~0.3 s: never 0
    assert not [p for p in tmp_path.iterdir()]


def test_the_start_up_benchmark_prints_both_trees_and_the_load():
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "startup.py"), "--peer", str(ROOT), "--repeat", "1",
                        "--format", "json", "--max-ratio", "100"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for tree in ("this", "peer"):
        row = next(ln for ln in lines if ln.startswith(tree))
        assert float(re.search(r"cpu best ([\d.]+) s", row).group(1)) > 0
    assert re.search(r"ratio this/peer: cpu median [\d.]+", r.stdout) and "load average:" in r.stdout


@pytest.mark.parametrize("peer", ["missing", "empty"])
def test_the_start_up_benchmark_refuses_a_peer_that_is_no_checkout(tmp_path, peer):
    """A ``--peer`` that is not a directory (or holds no logscan) is a usage error (exit 2, one
    message naming it), not a ``FileNotFoundError`` traceback from the first child run."""
    path = tmp_path / "nothing-here" if peer == "missing" else tmp_path
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "startup.py"), "--peer", str(path), "--repeat", "1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and f"--peer {path}" in r.stderr
    assert ("not a directory" if peer == "missing" else "no logscan/cli.py") in r.stderr
