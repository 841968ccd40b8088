#!/usr/bin/env python3
"""Where run 2 of two glued real logs starts, against where it should (docs/run-splitting.md).

Usage::

    python tools/glued_pairs.py [--pairs 1500] [--seed 13] [--second llamacpp,trtllm,...]
                                [--first all] [-v] [--json]

Draws ordered pairs ``(a, b)`` at random (``--seed``) from the bundled fixtures that are one run
alone (``fixtures/<engine>/*.log``): ``a`` of any engine (``--first``), ``b`` of the engines named
by ``--second`` (default: the five whose launch commands had no run-opening rule: llama.cpp,
TensorRT-LLM, MLC-LLM, TGI, LMDeploy). Each pair is written as ``a`` then ``b`` (``cat a b``) and
scanned in-process (``scan_inputs``, folding off). Run 2 *should* start at ``len(a) +`` the first
line of ``b``'s run alone (its first recognised line), or of a launch command before it (``LAUNCH``,
this measure's own yardstick, the same whether or not a rule reads the command).
Each pair is counted once:

- ``on_time``: the first run that begins inside ``b`` begins there;
- ``late``: it begins later (``b``'s first lines joined ``a``'s run: a command, a banner-less
  traceback);
- ``merged``: no run begins inside ``b`` (all of ``b`` joined ``a``'s run);
- ``early``: a run begins inside ``a`` that ``a`` alone does not have, or before ``b``'s first
  recognised line.

``same`` counts the pairs whose runs each say what their log says alone (findings, kernels,
engine, model, TP size, dtype, failure: ``tests/test_run_boundary_held._view``). ``b_command``
restricts the counts to pairs whose ``b`` begins with a launch command (``LAUNCH``). Prints one line per figure (``--json``: one object); ``-v`` lists
the late and merged pairs.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))
from _common import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT))
from logscan.pipeline import scan_inputs  # noqa: E402

ENGINES = ("vllm", "sglang", "llamacpp", "trtllm", "mlc-llm", "tgi", "lmdeploy")
SECOND = ("llamacpp", "trtllm", "mlc-llm", "tgi", "lmdeploy")
#: a launch command of one of the engines (the measure's own yardstick, not a rule: ``b_command``)
LAUNCH = re.compile(r"^\S{0,200}[$#>] |^\s{0,8}(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:\S{0,200}/)?(?:llama-server|llama-cli|"
                    r"main|trtllm-serve|trtllm-build|mlc_llm|python3? -m\s+mlc_llm|mpirun|text-generation-launcher|"
                    r"lmdeploy\s+(?:serve|chat))\s+-?\w")
NOT_LAUNCH = re.compile(r"\s--?(?:version|help|h|list-devices)\b|^usage:")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace").rstrip("\n") + "\n"


def _view(run) -> tuple:
    return (sorted(f.code for f in run.findings), sorted(s.kernel or "" for s in run.selections),
            run.engine.name, run.config.model, run.config.tensor_parallel_size, run.config.dtype,
            run.start_failure.exception_type if run.start_failure else None, run.serving_failure is not None)


def one_run_fixtures(engines) -> dict[Path, tuple]:
    """The fixtures of ``engines`` that are one run alone: path -> (lines, first_line, view, command)."""
    out = {}
    for engine in engines:
        for path in sorted((ROOT / "fixtures" / engine).glob("*.log")):
            report = scan_inputs([str(path)], fold=False)
            if len(report.runs) != 1:
                continue
            run = report.runs[0]
            first = run.first_line
            lines = _text(path).splitlines()
            # a launch command at or before the run's first line is where it should start, whether
            # or not a rule of this version reads it (the same yardstick before and after a change)
            command = next((i + 1 for i, text in enumerate(lines[:first])
                            if LAUNCH.search(text) and not NOT_LAUNCH.search(text)), None)
            out[path] = (len(lines), min(first, command or first), _view(run), command is not None)
    return out


def measure(pairs: int, seed: int, first_engines, second_engines, verbose: bool = False) -> dict:
    firsts = one_run_fixtures(first_engines)
    seconds = {p: v for p, v in firsts.items() if p.parent.name in second_engines}
    seconds.update(one_run_fixtures([e for e in second_engines if e not in first_engines]))
    rng = random.Random(seed)
    a_list, b_list = sorted(firsts), sorted(seconds)
    counts = {k: 0 for k in ("on_time", "late", "merged", "early", "same")}
    cmd = {k: 0 for k in ("pairs", "on_time", "late", "merged", "early", "same")}
    listed = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "glued.log"
        for _ in range(pairs):
            a, b = rng.choice(a_list), rng.choice(b_list)
            (na, _, va, _), (_, fb, vb, b_cmd) = firsts[a], seconds[b]
            out.write_text(_text(a) + _text(b), encoding="utf-8")
            runs = scan_inputs([str(out)], fold=False).runs
            expected = na + fb
            inside_a = [r for r in runs if r.first_line <= na]
            in_b = [r.first_line for r in runs if r.first_line > na]
            if len(inside_a) > 1 or (in_b and in_b[0] < expected):
                kind = "early"
            elif not in_b:
                kind = "merged"
            elif in_b[0] > expected:
                kind = "late"
            else:
                kind = "on_time"
            same = [_view(r) for r in runs] == [va, vb]
            counts[kind] += 1
            counts["same"] += same
            if b_cmd:
                cmd["pairs"] += 1
                cmd[kind] += 1
                cmd["same"] += same
            if verbose and kind in ("late", "merged", "early"):
                listed.append(f"{kind:7} {'C' if b_cmd else '-'} {a.parent.name}/{a.name} + {b.parent.name}/{b.name}: run 2 at "
                              f"{in_b[0] if in_b else '-'}, should be {expected}")
    return {"pairs": pairs, "seed": seed, **counts, "b_command": cmd, "listed": listed}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--first", default="all", help="engines of the first log (comma list, or all)")
    ap.add_argument("--second", default=",".join(SECOND), help="engines of the second log (comma list)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    first = ENGINES if args.first == "all" else tuple(args.first.split(","))
    res = measure(args.pairs, args.seed, first, tuple(args.second.split(",")), args.verbose)
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    for line in res.pop("listed"):
        print(line)
    for k, v in res.items():
        print(f"{k:10} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
