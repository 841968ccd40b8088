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

``--templates vllm,sglang,tgi,lmdeploy,mlc-llm`` (needs ``shared/reference/``) sorts the same way
every reworded reference template of ``rewording_coverage.py --engines`` (the kept templates each
rewording changes, ``rewording_engines.measure_engine``; ``TRIAL`` too), each line scanned alone
after a start line of its engine: per engine, how many are placed, only an event (silent),
not understood, or vanished. ``--patterns DIR``: another pattern folder (an older commit's).
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


#: a line that opens a run of the engine and states nothing else (its release where it has one)
START = {
    "vllm": "INFO 11-29 10:00:00 [api_server.py:1] vLLM API server version 0.33.0",
    "sglang": "[2026-11-29 10:00:00] server_args=ServerArgs(model_path='m')",
    "tgi": "2024-06-17T13:11:09.543633Z  INFO text_generation_launcher: Args { model_id: \"m\" }",
    "lmdeploy": "2024-09-03 17:49:32,706 - lmdeploy - INFO - async_engine.py:1 - input backend=pytorch",
    "mlc-llm": "[2025-02-08 12:57:08] INFO auto_device.py:79: Found device: cuda:0",
}


_TARGET: list = []


def names_target(message: str, groups: dict, lexicon: Path = ROOT / "patterns" / "lexicon.toml") -> bool:
    """Whether an event's line names a kernel of ``[target]``'s vocabulary as its choice (its ``to``
    capture or the object of a choice verb): read from the TOML, so the figure of an older
    commit's code (which has no ``[target]``) is taken with this one's vocabulary."""
    import regex
    import tomllib

    if not _TARGET:
        t = tomllib.loads(lexicon.read_text())["target"]
        vocab = "(?:" + t["vocabulary"] + ")"
        _TARGET.extend([regex.compile(vocab), regex.compile(t["chosen"].replace("{vocabulary}", vocab)),
                        regex.compile(t["excludes"]) if t.get("excludes") else None])
    vocab, chosen, excludes = _TARGET
    if len(message) > 1000 or (excludes is not None and excludes.search(message)):
        return False
    return bool((groups.get("to") and vocab.search(groups["to"])) or chosen.search(message))


def sort_line(engine: str, text: str, patterns=None) -> str:
    """``placed`` / ``event`` / ``unread`` / ``vanished`` of line ``text`` scanned after ``START``
    (``event-kernel``: only an event holds it and it names a kernel as its choice: the silent pass)."""
    rep = logscan.scan([START[engine] + "\n", text + "\n"], patterns=patterns)
    at = {2}
    if any(s.line in at for r in rep.runs for s in r.selections) or any(
            f.line in at for r in rep.runs for f in r.findings) or any(
            a.line in at for r in rep.runs for a in (r.attention or [])):
        return "placed"
    if any(u.line in at for r in rep.runs for u in r.unexplained):
        return "unread"
    evs = [e for e in rep.events if e.line in at and e.groups]
    if any(names_target(e.message, e.groups) for e in evs):
        return "event-kernel"
    return "event" if evs else "vanished"


SORTS = ("placed", "event", "event-kernel", "unread", "vanished")


def held(engine: str, text: str, patterns=None) -> bool:
    """Whether line ``text`` (after ``START``) gave a selection or finding, or an event with parts."""
    rep = logscan.scan([START[engine] + "\n", text + "\n"], patterns=patterns)
    return (any(s.line == 2 for r in rep.runs for s in r.selections)
            or any(f.line == 2 for r in rep.runs for f in r.findings)
            or any(e.line == 2 and e.groups for e in rep.events))


def main_templates(engines: str, patterns, verbose: bool) -> int:
    """``--templates``: the reworded reference templates sorted per engine."""
    re_ = tool("rewording_engines")
    words = {**re_.ALL_REWORDINGS, **TRIAL}
    total: dict = {}
    for engine in engines.split(","):
        rows = re_.templates(engine, re_.LOGGED)
        message, line = re_._printer(engine, Path(re_.SHARED / "tools" / "template_coverage.py"))
        msgs = [message(r) for r in rows]
        # kept: the templates a rule reads as printed (a selection, a finding, or an event with
        # parts: rewording_engines' deep notion), whatever this commit then makes of the event
        kept = [(r, m) for r, m in zip(rows, msgs) if held(engine, line(r, m, 1), patterns)]
        tally: dict = {}
        printed: dict = {}
        for r, m in kept:
            got = sort_line(engine, line(r, m, 1), patterns)
            printed[got] = printed.get(got, 0) + 1
        print(f"{engine:9s} as-printed " + "  ".join(f"{k}={printed.get(k, 0)}" for k in SORTS))
        for name, reword in words.items():
            for r, m in kept:
                new = reword(m)
                if new == m:
                    continue
                got = sort_line(engine, line(r, new, 1), patterns)
                tally[got] = tally.get(got, 0) + 1
                total[got] = total.get(got, 0) + 1
                if verbose and got in ("event-kernel", "vanished"):
                    print(f"{engine} {name:13s} {got:8s} {new[:120]}")
        print(f"{engine:9s} reworded   " + "  ".join(f"{k}={tally.get(k, 0)}" for k in SORTS))
    print("all       reworded   " + "  ".join(f"{k}={total.get(k, 0)}" for k in SORTS))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--templates", default=None, help="engines whose reworded reference templates to sort")
    ap.add_argument("--patterns", default=None, help="with --templates: a pattern folder instead of the shipped one")
    args = ap.parse_args(argv)
    if args.templates:
        return main_templates(args.templates, Path(args.patterns) if args.patterns else None, args.verbose)
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
