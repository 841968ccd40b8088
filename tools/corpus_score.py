#!/usr/bin/env python3
"""Score logscan's JSON reports against the labelled real-log corpus (port of shared/corpus/eval.py).

Usage::

    python tools/corpus_score.py [CORPUS_DIR] [--cmd 'logscan scan --format json {log}']
                                 [--by-engine] [--verbose] [--json]

CORPUS_DIR (default: the project's ``fixtures/``) is searched recursively for ``<name>.log``
files with a label beside them: ``<name>.label.json`` (the project's layout) or
``<name>.json`` (the shared corpus layout). Without ``--cmd`` each log is scanned in process
(``logscan.pipeline.scan_inputs`` rendered by ``logscan.formats.json``, the document that
``logscan scan --format json`` prints); with ``--cmd`` the command is run with ``{log}``
replaced by the path, exactly as ``eval.py`` does.

The scoring rules are those of ``shared/corpus/eval.py`` (see ``shared/corpus/README.md``),
kept identical so that figures here and there agree:

- every JSON object with a ``"kernel"`` key is a reported kernel (its ``"cost_class"`` read
  when present); every object with a ``"code"`` key is a reported finding, wherever it sits;
- a labelled name matches a reported kernel equal to it or containing it (case-insensitive,
  containment only for names of 4+ characters);
- ``kernels_logged`` gives kernel recall; ``expected[].cost_class`` (not ``unknown``) gives
  cost-class accuracy; ``expected_findings`` minus ``optional_findings`` gives finding
  precision and recall (``NONE`` / ``""`` mean no finding);
- ``score`` is the mean of the four rates, 0 when any log crashed (exit other than 0/1, no
  JSON, or, in process, an exception).

Exit status: 0 when the corpus could be read (the figures are the verdict), 2 on a usage
error (no labelled log found).
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python tools/corpus_score.py` from a clone, not installed
    sys.path.insert(0, str(ROOT))
NO_FINDING = {"NONE", ""}
ENGINES_ORDER = ("vllm", "sglang", "trtllm", "llamacpp")


def label_of(log: Path) -> Optional[Path]:
    """The label beside ``log``: ``x.label.json`` (project) or ``x.json`` (shared corpus)."""
    for cand in (log.with_suffix(".label.json"), log.with_suffix(".json")):
        if cand.is_file():
            return cand
    return None


def labelled_logs(corpus: Path, real_only: bool = True) -> list[tuple[Path, Path]]:
    """``(log, label)`` pairs under ``corpus``, sorted by path; ``real_only`` leaves out the
    constructed ``synthetic-*`` fixtures, which are not bug-report logs."""
    pairs = []
    for log in sorted(corpus.rglob("*.log")):
        if real_only and log.name.startswith("synthetic-"):
            continue
        lab = label_of(log)
        if lab is not None:
            pairs.append((log, lab))
    return pairs


def collect(node, kernels: list, codes: set) -> None:
    """Walk a report document: ``(kernel, cost_class)`` pairs into ``kernels``, codes into ``codes``."""
    if isinstance(node, dict):
        if isinstance(node.get("kernel"), str):
            kernels.append((node["kernel"], node.get("cost_class")))
        if isinstance(node.get("code"), str):
            codes.add(node["code"])
        for value in node.values():
            collect(value, kernels, codes)
    elif isinstance(node, list):
        for value in node:
            collect(value, kernels, codes)


@dataclass
class LogScore:
    """Counts for one log (or a sum of logs), with the problems found on it."""

    logs: int = 0
    k_hit: int = 0
    k_all: int = 0
    c_hit: int = 0
    c_all: int = 0
    f_tp: int = 0
    f_rep: int = 0
    f_exp: int = 0
    crashes: int = 0
    problems: list = field(default_factory=list)

    def add(self, other: "LogScore") -> None:
        for name in ("logs", "k_hit", "k_all", "c_hit", "c_all", "f_tp", "f_rep", "f_exp", "crashes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def perfect(self) -> bool:
        return not self.problems and not self.crashes

    def figures(self) -> dict:
        """The four rates (1.0 where nothing was to be counted) and ``score``."""
        def rate(hit, total):
            return hit / total if total else 1.0

        fig = {
            "kernel_recall": rate(self.k_hit, self.k_all),
            "cost_class_acc": rate(self.c_hit, self.c_all),
            "finding_precision": rate(self.f_tp, self.f_rep),
            "finding_recall": rate(self.f_tp, self.f_exp),
        }
        fig["score"] = 0.0 if self.crashes else sum(fig.values()) / 4
        return fig

    def summary(self) -> str:
        f = self.figures()
        return (f"logs={self.logs} kernels={self.k_hit}/{self.k_all} cost_classes={self.c_hit}/{self.c_all} "
                f"findings tp={self.f_tp} reported={self.f_rep} expected={self.f_exp} "
                f"crashes={self.crashes} precision={f['finding_precision']:.3f} score={f['score']:.3f}")


def score_report(label: dict, report) -> LogScore:
    """Score one parsed report (a JSON document, or None for a crash) against one label dict."""
    s = LogScore(logs=1)
    if report is None:
        s.crashes = 1
        s.problems.append("crash")
        return s
    kernels: list = []
    codes: set = set()
    collect(report, kernels, codes)

    def classes_of(name: str) -> set:
        low = name.lower()
        return {c for k, c in kernels if k.lower() == low or (len(low) >= 4 and low in k.lower())}

    want_kernels = set(label.get("kernels_logged") or [])
    missing = {k for k in want_kernels if not classes_of(k)}
    s.k_all, s.k_hit = len(want_kernels), len(want_kernels) - len(missing)
    if missing:
        s.problems.append(f"missing kernels {sorted(missing)}")
    wrong = []
    for item in label.get("expected") or []:
        want = item.get("cost_class")
        if not want or want == "unknown":
            continue
        s.c_all += 1
        got = classes_of(item.get("kernel") or "")
        if want in got:
            s.c_hit += 1
        else:
            wrong.append(f"{item.get('kernel')}: want {want}, got {sorted(map(str, got))}")
    if wrong:
        s.problems.append("cost class " + "; ".join(wrong))
    optional = set(label.get("optional_findings") or [])
    codes -= optional
    want_codes = set(label.get("expected_findings") or []) - NO_FINDING - optional
    s.f_exp, s.f_rep, s.f_tp = len(want_codes), len(codes), len(codes & want_codes)
    if codes - want_codes:
        s.problems.append(f"unexpected findings {sorted(codes - want_codes)}")
    if want_codes - codes:
        s.problems.append(f"missed findings {sorted(want_codes - codes)}")
    return s


def in_process(log: Path):
    """The ``scan --format json`` document of one log, scanned in this process."""
    from logscan.formats import json as json_format
    from logscan.pipeline import scan_inputs

    try:
        return json.loads(json_format.render(scan_inputs([str(log)])))
    except Exception:  # a crash is a score of 0, as in eval.py; the caller sees "crash"
        return None


def by_command(cmd: str, timeout: float = 60.0) -> Callable[[Path], object]:
    """A runner that runs ``cmd`` (``{log}`` replaced) and parses its stdout, like eval.py."""
    def run(log: Path):
        argv = [part.replace("{log}", str(log)) for part in shlex.split(cmd)]
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if proc.returncode not in (0, 1):
            return None
        try:
            return json.loads(proc.stdout.decode("utf-8", "replace"))
        except json.JSONDecodeError:
            return None
    return run


def engine_of(log: Path, label: dict) -> str:
    return label.get("engine") or log.parent.name


def score_corpus(pairs: list[tuple[Path, Path]], runner=in_process):
    """Score every ``(log, label)``: returns ``(total, {engine: LogScore}, [(log, LogScore)])``."""
    total, per_engine, per_log = LogScore(), {}, []
    for log, lab in pairs:
        label = json.loads(lab.read_text(encoding="utf-8"))
        s = score_report(label, runner(log))
        per_log.append((log, s))
        total.add(s)
        per_engine.setdefault(engine_of(log, label), LogScore()).add(s)
    return total, per_engine, per_log


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", default=str(ROOT / "fixtures"))
    parser.add_argument("--cmd", help="command printing JSON, {log} replaced (default: scan in process)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--only", action="append", default=[],
                        help="score only logs whose path contains this text (repeatable)")
    parser.add_argument("--with-synthetic", action="store_true", help="also score synthetic-* fixtures")
    parser.add_argument("--by-engine", action="store_true", help="a summary line per engine")
    parser.add_argument("--verbose", "-v", action="store_true", help="a line for every log")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args(argv)

    corpus = Path(args.corpus)
    pairs = labelled_logs(corpus, real_only=not args.with_synthetic)
    if args.only:
        pairs = [p for p in pairs if any(o in str(p[0]) for o in args.only)]
    if not pairs:
        print(f"no labelled logs under {corpus}", file=sys.stderr)
        return 2
    runner = by_command(args.cmd, args.timeout) if args.cmd else in_process
    total, per_engine, per_log = score_corpus(pairs, runner)
    if args.json:
        doc = {"total": total.figures() | {"summary": total.summary()},
               "engines": {e: s.figures() | {"summary": s.summary()} for e, s in per_engine.items()},
               "misses": {str(log.relative_to(corpus)): s.problems for log, s in per_log if not s.perfect}}
        print(json.dumps(doc, indent=2))
        return 0
    for log, s in per_log:
        if args.verbose or not s.perfect:
            state = "ok   " if s.perfect else "MISS "
            print(f"{state}{log.relative_to(corpus)}: " + ("; ".join(s.problems) or "all match"))
    if args.by_engine:
        for engine in sorted(per_engine, key=lambda e: (ENGINES_ORDER + (e,)).index(e)):
            print(f"[{engine}] {per_engine[engine].summary()}")
    print(total.summary())
    for key, value in total.figures().items():
        print(f"{key}={value:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
