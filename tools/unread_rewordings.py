#!/usr/bin/env python3
"""How many reworded kernel lines still speak: read, "not understood", or vanished.

Takes real kernel lines of bundled fixtures (``LINES``: fixture, line number), rewords each the
way a next release might (every rewording of ``rewording_coverage.REWORDINGS`` and
``REAL_REWORDINGS`` that changes the message, plus ``fold-100``: the line folded at 100 columns,
tgi-101's shape) in place in its own log, scans the log and sorts the outcome at that line:

- ``placed``: a selection or finding of some rule holds the line (or a piece of it);
- ``event``: only an event holds it, and the run lists it nowhere: a broad rule read it without a
  selection (``vllm.family.fallback`` on 'Falling back to EmulationMxfp8LinearKernel'), so the
  gate passes on it as on a vanished line (``analysis/targets.py`` closes this);
- ``unread``: the run's "not understood" list names it (``Run.unexplained``); ``before`` counts
  only the entries that are not the vocabulary sweep's or an event target's (kind ``unread``,
  ``patterns/common-rules/95-unread-kernel.toml``, ``patterns/lexicon.toml`` ``[target]``): what a
  report said before the sweep;
- ``vanished``: none of these (a false "all fine").

Besides the rewording tools' own, ``TRIAL`` holds the rewordings a new-user trial found: the
choice's object dropped ('Using X for MXFP8 GEMM' -> 'Using X') and a choice printed as a
fallback ('Using X ...' -> 'Falling back to X'), each read by a broad event rule before.

Usage: ``python tools/unread_rewordings.py [-v]`` (``-v``: one line per case). Prints
``before`` and ``after`` counts; exit status 0.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))
from _common import ROOT, tool  # noqa: E402

sys.path.insert(0, str(ROOT))
import logscan  # noqa: E402
from logscan.packs.loader import default_packs  # noqa: E402
from logscan.sources.prefix import PrefixParser  # noqa: E402

#: real kernel lines of the fixtures: (fixture, 1-based line)
LINES = [
    ("fixtures/vllm/vllm-001.log", 1),   # Using MarlinLinearKernel for CompressedTensorsWNA16
    ("fixtures/vllm/vllm-121.log", 6),   # Using FlashInfer MXFP4 MXFP8 CUTLASS backend for SM100
    ("fixtures/vllm/vllm-022.log", 2),   # Using TritonScaledMMLinearKernel for CompressedTensorsW8A8Int8
    ("fixtures/vllm/vllm-119.log", 3),   # Selected FlashInferFp8DeepGEMMDynamicBlockScaledKernel for Fp8LinearMethod
    ("fixtures/tgi/tgi-102.log", 1),     # Using exllama kernels
    ("fixtures/vllm/vllm-304.log", 2),   # Using FlashInferCutlassMxfp8LinearKernel for MXFP8 GEMM:
]

#: rewordings of a new-user trial (task unread12): a choice's object dropped, a choice as a fallback
TRIAL = {
    "drop-object": lambda s: __import__("re").sub(r"^((?:Using|Selected) \S+) for .*$", r"\1", s),
    "as-fallback": lambda s: __import__("re").sub(r"^Using (\S+)(?: for .*)?$", r"Falling back to \1", s),
}
FOLD = 100  #: terminal width of the fold rewording


def rewordings() -> dict:
    """name -> message rewording: the rewording tools' own, without ``as-printed``."""
    rc = tool("rewording_coverage")
    return {k: v for k, v in {**rc.REWORDINGS, **rc.REAL_REWORDINGS, **TRIAL}.items() if k != "as-printed"}


def outcome(lines: list[str], at: set[int]) -> tuple[str, str]:
    """``(before, after)`` outcome of the lines ``at`` (1-based) of the log ``lines``."""
    rep = logscan.scan([x + "\n" for x in lines])
    if any(s.line in at for r in rep.runs for s in r.selections) or any(
            f.line in at for r in rep.runs for f in r.findings):
        return "placed", "placed"
    ux = [u for r in rep.runs for u in r.unexplained if u.line in at]
    held = any(e.line in at for e in rep.events)
    before = "unread" if any(u.kind != "unread" for u in ux) else ("event" if held else "vanished")
    return before, ("unread" if ux else ("event" if held else "vanished"))


def cases():
    """``(fixture, line, rewording, new lines, lines to look at)`` for every changing rewording."""
    parser = PrefixParser(default_packs())
    for path, n in LINES:
        lines = (ROOT / path).read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        raw = lines[n - 1]
        msg = parser.parse(path, n, raw).message
        head = raw[: raw.rindex(msg)] if msg and msg in raw else ""
        for name, reword in rewordings().items():
            new = reword(msg)
            if new != msg:
                yield path, n, name, lines[: n - 1] + [head + new] + lines[n:], {n}
        if len(raw) > FOLD:
            yield path, n, "fold-100", lines[: n - 1] + [raw[:FOLD], raw[FOLD:]] + lines[n:], {n, n + 1}
        else:  # a short line folded where a narrower terminal (or a tmux pane) cuts it
            cut = max(len(head) + 8, len(raw) - 4)
            yield path, n, "fold-100", lines[: n - 1] + [raw[:cut]] + lines[n:], {n}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    tally = {"before": {}, "after": {}}
    for path, n, name, lines, at in cases():
        before, after = outcome(lines, at)
        tally["before"][before] = tally["before"].get(before, 0) + 1
        tally["after"][after] = tally["after"].get(after, 0) + 1
        if args.verbose:
            print(f"{path}:{n} {name:14s} before={before:8s} after={after:8s} {lines[n - 1][-90:]}")
    for when, t in tally.items():
        print(f"{when:6s} " + "  ".join(f"{k}={t.get(k, 0)}" for k in ("placed", "event", "unread", "vanished")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
