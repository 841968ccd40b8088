#!/usr/bin/env python3
"""Side-by-side benchmark: ``logscan scan`` against ripgrep and GNU grep, paired runs, one table.

The question a user asks is "is the tool that understands the lines slower than the one that
only finds them?". This script writes the synthetic runtime log of ``bench/throughput.py``
(deterministic: request, metrics and access lines with real start-ups spread in) at each size,
then runs, in every repetition and in the same order (paired, so a load spike hits all tools
of one repetition alike):

- ``rg -i -F -c -f KEYWORDS`` and ``grep -i -F -c -f KEYWORDS`` (``LC_ALL=C``): the packs' own
  keywords, case-insensitive fixed strings, what logscan's prefilter searches for;
- ``rg -c -i -e 'marlin|emulat|kernel|backend'`` and ``grep -E -i -c`` with the same pattern:
  a user's everyday search;
- ``logscan scan --format json`` (the default prefilter engine).

Per size it prints, for each tool: the median wall time (s), throughput (MB/s, 10^6 bytes),
median CPU seconds (user + system of the child), peak RSS (MiB), the 1-minute load average
before and after the size's runs, and the ratios
logscan / rg-keywords and logscan / grep-keywords (median of the per-repetition ratios, so
each ratio compares runs made side by side), by wall time and by CPU seconds (on a shared,
loaded machine a tool's wall time is its share of the cores; its CPU seconds are its work).
A missing ``rg`` is said, and its rows left out.
Nothing is asserted: the figures are the result (targets of issue 18: logscan/rg <= 1.0 at
300 MB and 1 GB, logscan/grep <= 0.5, RSS <= 64 MiB and flat). ``--startup`` also times
``logscan scan`` on a 20-line real log (median wall and CPU of ``--repeat`` runs).

Usage::

    python bench/compare.py                          # 100, 300 and 1000 MB, 3 repetitions
    python bench/compare.py --sizes 300 --repeat 5
    python bench/compare.py --sizes 2 --repeat 1     # a smoke run (the test suite does this)
    python bench/compare.py --sizes 300 --peer /tmp/base   # before/after: another checkout, same runs
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import ROOT, _logscan_cmd, _run, pack_keywords, write_log  # noqa: E402

#: GNU time, when present, measures a child's peak RSS exactly: a child forked from this Python
#: process inherits its resident set in ``ru_maxrss`` (``os.wait4`` would report >= ~40 MiB even
#: for grep). Without it the RSS column is an upper bound and is marked so.
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def _timed(argv: list[str], env: Optional[dict]) -> tuple[float, float, bytes, float]:
    """``_run`` with the peak RSS (MiB) taken by GNU time when it is installed."""
    if GNU_TIME is None:
        return _run(argv, env)
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as fh:
        wall, _, out, cpu = _run([GNU_TIME, "-o", fh.name, "-f", "%M"] + argv, env)
        lines = [ln for ln in open(fh.name, encoding="utf-8").read().split() if ln.isdigit()]
    return wall, (int(lines[-1]) / 1024.0 if lines else float("nan")), out, cpu

EVERYDAY = "marlin|emulat|kernel|backend"


#: ``--peer TREE``: another checkout of logscan timed in the same repetitions (before/after figures)
PEER: dict[str, Optional[Path]] = {"tree": None}
LS = "logscan scan --format json"
LS_PEER = "logscan (peer) --format json"


def tools(keyword_file: Path, path: Path) -> list[tuple[str, list[str], Optional[dict]]]:
    """The commands timed on ``path``: (label, argv, extra environment)."""
    c = {"LC_ALL": "C"}
    rg, grep = shutil.which("rg"), shutil.which("grep")
    out: list[tuple[str, list[str], Optional[dict]]] = []
    if rg:
        out.append(("rg -i -F -f keywords", [rg, "-i", "-F", "-c", "-f", str(keyword_file), str(path)], c))
    out.append(("grep -i -F -f keywords", [grep, "-i", "-F", "-c", "-f", str(keyword_file), str(path)], c))
    if rg:
        out.append(("rg -i everyday", [rg, "-i", "-c", "-e", EVERYDAY, str(path)], c))
    out.append(("grep -E -i everyday", [grep, "-E", "-i", "-c", EVERYDAY, str(path)], c))
    out.append((LS, _logscan_cmd() + ["scan", "--format", "json", str(path)], None))
    if PEER["tree"] is not None:
        # the peer's tree first on sys.path: ahead of the current folder ('' comes first for -c)
        # and of this checkout's editable install
        code = f"import sys; sys.path.insert(0, {str(PEER['tree'])!r}); from logscan.cli import main; main()"
        out.append((LS_PEER, [sys.executable, "-c", code, "scan", "--format", "json", str(path)],
                    {"PYTHONPATH": str(PEER["tree"])}))
    return out


def measure(size_mb: int, workdir: Path, keyword_file: Path, repeat: int, keep: bool) -> list[str]:
    """Time every tool ``repeat`` times on a ``size_mb`` MB log; return the printed rows."""
    path = workdir / f"logscan-compare-{size_mb}MB.log"
    rows = []
    try:
        mb = write_log(path, size_mb * 1_000_000) / 1e6
        cmds = tools(keyword_file, path)
        walls: dict[str, list[float]] = {t: [] for t, _, _ in cmds}
        cpus: dict[str, list[float]] = {t: [] for t, _, _ in cmds}
        rss: dict[str, float] = {}
        load0 = os.getloadavg()[0]  # the machine is shared: the load beside the figures it moves
        for _ in range(repeat):
            for label, argv, env in cmds:
                wall, peak, out, cpu = _timed(argv, {**os.environ, **env} if env else None)
                if label in (LS, LS_PEER) and b'"runs"' not in out:
                    raise SystemExit("logscan printed no report")
                walls[label].append(wall)
                cpus[label].append(cpu)
                rss[label] = max(rss.get(label, 0.0), peak)
        def ratio(peer: str, ls: str = LS, of: Optional[dict] = None) -> str:
            of = walls if of is None else of
            if peer not in of or ls not in of or not all(of[peer]):
                return "-"
            return f"{statistics.median(a / b for a, b in zip(of[ls], of[peer])):.2f}"

        for label, _, _ in cmds:
            w, c = statistics.median(walls[label]), statistics.median(cpus[label])
            rows.append(f"{size_mb:>7} {label:<28} {w:>8.2f} {mb / w:>8.1f} {c:>7.2f} {rss[label]:>9.1f}")
        rows.append(f"{size_mb:>7} {'load average (1 min)':<28} {load0:>8.2f} -> {os.getloadavg()[0]:.2f}")
        rows.append(f"{size_mb:>7} {'ratio logscan/rg (keywords)':<28} {ratio('rg -i -F -f keywords'):>8}")
        rows.append(f"{size_mb:>7} {'ratio logscan/grep (keywords)':<28} {ratio('grep -i -F -f keywords'):>8}")
        # CPU seconds move far less than wall time on a loaded machine (the work, not the share of it)
        rows.append(f"{size_mb:>7} {'CPU ratio logscan/rg':<28} {ratio('rg -i -F -f keywords', of=cpus):>8}")
        rows.append(f"{size_mb:>7} {'CPU ratio logscan/grep':<28} {ratio('grep -i -F -f keywords', of=cpus):>8}")
        if LS_PEER in walls:
            rows.append(f"{size_mb:>7} {'ratio peer/rg (keywords)':<28} {ratio('rg -i -F -f keywords', LS_PEER):>8}")
            rows.append(f"{size_mb:>7} {'ratio peer/grep (keywords)':<28} {ratio('grep -i -F -f keywords', LS_PEER):>8}")
            rows.append(f"{size_mb:>7} {'ratio logscan/peer':<28} {ratio(LS_PEER):>8}")
            rows.append(f"{size_mb:>7} {'CPU ratio logscan/peer':<28} {ratio(LS_PEER, of=cpus):>8}")
    finally:
        if not keep:
            path.unlink(missing_ok=True)
    return rows


def startup(repeat: int) -> str:
    """Median wall and CPU seconds of ``logscan scan`` on a bundled 20-line real log."""
    log = ROOT / "fixtures" / "vllm" / "vllm-005.log"
    runs = [_timed(_logscan_cmd() + ["scan", str(log)], None) for _ in range(max(repeat, 3))]
    return (f"start-up (logscan scan {log.name}, {len(runs)} runs): median wall "
            f"{statistics.median(r[0] for r in runs):.3f} s, median CPU {statistics.median(r[3] for r in runs):.3f} s")


def compile_bytecode(tree: Path) -> bool:
    """Write the ``__pycache__`` of ``tree``'s ``logscan`` package, so that no timed run compiles it.

    Sessions that set ``PYTHONDONTWRITEBYTECODE=1`` in a fresh checkout (or a ``git archive`` peer)
    otherwise compile every module in every run: ~0.18 s CPU (cProfile, ``builtins.compile``),
    a fifth of a 300 MB scan (issue 18, ninth round). False when it could not be written."""
    import compileall

    pkg = tree / "logscan"
    return not pkg.is_dir() or bool(compileall.compile_dir(str(pkg), quiet=2))


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,300,1000", help="input sizes in MB (10^6 bytes), comma-separated")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the synthetic logs go (deleted after)")
    ap.add_argument("--repeat", type=int, default=3, help="paired repetitions per size (medians are printed)")
    ap.add_argument("--startup", action="store_true", help="also time start-up on a 20-line log")
    ap.add_argument("--keep", action="store_true", help="keep the synthetic logs")
    ap.add_argument("--peer", type=Path, default=None,
                    help="another logscan checkout (e.g. git archive BASE | tar -x -C /tmp/base) timed in the "
                         "same repetitions: its row and ratios are printed beside this tree's")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    PEER["tree"] = args.peer.resolve() if args.peer else None
    cached = [compile_bytecode(t) for t in (ROOT, PEER["tree"]) if t is not None]
    workdir = Path(args.dir)
    kws = pack_keywords()
    keyword_file = workdir / f"logscan-compare-keywords-{os.getpid()}.txt"
    keyword_file.write_text("\n".join(kws) + "\n", encoding="utf-8")
    try:
        print(f"keywords: {len(kws)} from the packs; rg: {shutil.which('rg') or 'not found (rows left out)'}; "
              f"cores: {os.cpu_count()}; load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
              f"bytecode: {'cached' if all(cached) else 'NOT cached (each run compiles its modules, ~0.18 s CPU)'}")
        rss_note = "" if GNU_TIME else " (upper bound: no GNU time)"
        print(f"{'size MB':>7} {'tool':<28} {'wall s':>8} {'MB/s':>8} {'CPU s':>7} {'RSS MiB':>9}{rss_note}")
        for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
            for row in measure(size, workdir, keyword_file, args.repeat, args.keep):
                print(row, flush=True)
        if args.startup:
            print(startup(args.repeat))
    finally:
        keyword_file.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
