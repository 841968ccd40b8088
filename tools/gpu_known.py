#!/usr/bin/env python3
"""How many bundled logs name a GPU logscan knows (the GPU-identity measure of ident34).

Usage::

    python tools/gpu_known.py [CORPUS_DIR] [--by-engine] [--list] [--json OUT]

Every labelled log under CORPUS_DIR (default ``fixtures/``; ``corpus_score.labelled_logs``) is
scanned in process. A log counts as *known* when one of its runs has a GPU ``patterns/gpus.toml``
resolves to a compute capability or a gfx arch (``gpus.resolve_logged_gpu`` of ``config.gpu``),
or a logged compute capability it knows (also the one capability of every device vLLM's
platform warning names, ``gpu_one_of_cc``): the machine ``run_checks.judged_machine`` judges a run on with
no ``--gpu``. ``--list`` prints each known log with its GPU and where it came from (run fact
``gpu_source``: engine, tool or wrapper); ``--json`` writes that per-log table (and each run's
finding codes), so two trees can be compared.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))
from _common import ROOT, tool  # noqa: E402

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def log_gpu(report) -> dict:
    """The first run of ``report`` with a known GPU: ``{"gpu", "cc", "source"}``, else the first
    GPU name read (``known`` false); every run's finding codes under ``findings``."""
    from logscan.analysis.gpus import resolve_logged_gpu

    out: dict = {"known": False, "gpu": None, "source": None, "findings": []}
    for run in report.runs:
        c = run.config
        out["findings"].append(sorted(f.code for f in run.findings))
        known = any(g is not None and (g.cc is not None or bool(g.gfx))
                    for g in (resolve_logged_gpu(c.gpu), resolve_logged_gpu(c.compute_capability),
                              resolve_logged_gpu(c.extra.get("gpu_one_of_cc"))))
        if known and not out["known"]:
            out.update(known=True, gpu=c.gpu or f"cc {c.compute_capability or c.extra.get('gpu_one_of_cc')}",
                       source=c.extra.get("gpu_source") or "engine")
        elif c.gpu and out["gpu"] is None:
            out.update(gpu=c.gpu, source=c.extra.get("gpu_source") or "engine")
    return out


def main(argv=None) -> int:
    """Scan, count and print; exit 0 (2 when no labelled log is found)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT / "fixtures"))
    ap.add_argument("--by-engine", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    from logscan.api import scan

    logs = tool("corpus_score").labelled_logs(Path(a.corpus))
    if not logs:
        print("no labelled log found", file=sys.stderr)
        return 2
    table: dict[str, dict] = {}
    for log, _label in logs:
        table[str(log.relative_to(ROOT) if log.is_relative_to(ROOT) else log)] = log_gpu(scan(log))
    known = {k: v for k, v in table.items() if v["known"]}
    print(f"logs with a known GPU: {len(known)} of {len(table)}")
    if a.by_engine:
        tot = Counter(Path(k).parent.name for k in table)
        hit = Counter(Path(k).parent.name for k in known)
        for eng in sorted(tot):
            print(f"  {eng:10} {hit[eng]:4} of {tot[eng]}")
        src = Counter(v["source"] or "unsaid" for v in known.values())
        print("  by source: " + ", ".join(f"{s} {n}" for s, n in sorted(src.items())))
    if a.list:
        for k, v in known.items():
            print(f"  {k}: {v['gpu']} ({v['source'] or 'source unsaid'})")
    if a.json:
        Path(a.json).write_text(json.dumps(table, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
