#!/usr/bin/env python3
"""Measure how many engine templates the packs still recognise after a plausible rewording.

The next vLLM release rewords messages; a rule written for one sentence fails there. This
script renders each reference template the way ``shared/tools/template_coverage.py`` does
(the same ``render`` and line ``prefix``), applies ONE rewording to every rendered message
(``falling back`` -> ``fell back``, ``Using`` -> ``Selected``, a ``[tag]`` before the
message, ...), and counts the lines the real prefix parser + matcher turn into an event.

Usage:
    python tools/rewording_coverage.py [TEMPLATES.jsonl] [--tool template_coverage.py]
                                       [--levels info,warning,error] [-v REWORDING]
    python tools/rewording_coverage.py --engines vllm,sglang,tgi,lmdeploy,mlc-llm
                                       [--levels ...] [-v REWORDING]

Without ``--engines``: vLLM only, every template of the kinds counted (``event`` notion: any
rule matched), ``<rewording> <recognised>/<total>`` per rewording.

With ``--engines`` (``rewording_engines.py``): per engine, only the templates whose printed
line gives a selection, a finding, an attention choice or an event with captured parts (the
``--deep`` notion of ``shared/tools/template_coverage.py``), each rewording counted over the
ones it changes: ``<engine> <rewording> <recognised>/<total>``. vLLM and SGLang lines use the
shared tool's ``render`` and ``prefix``; TGI, LMDeploy and MLC-LLM lines use
``tools/other_coverage.py``'s rendering and line formats (TGI compact, LMDeploy python).

``-v NAME`` lists that rewording's misses. Exit status 2 when the templates or the tool
cannot be read.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
SHARED = next((p for p in (Path(os.environ.get("LOGSCAN_SHARED", "/nonexistent")), ROOT.parent / "shared",
                            ROOT.parent.parent / "shared") if p.is_dir()), ROOT.parent / "shared")
sys.path.insert(0, str(ROOT))

from logscan.match import Matcher  # noqa: E402
from logscan.packs.loader import default_packs  # noqa: E402
from logscan.sources.prefix import PrefixParser  # noqa: E402

#: rewordings seen between vLLM releases (verbs, tenses, negations, tags, sentence order)
REWORDINGS: dict[str, Callable[[str], str]] = {
    "as-printed": lambda s: s,
    "lower-first": lambda s: s[:1].lower() + s[1:],
    "fell-back": lambda s: re.sub(r"(?i)falling back", "fell back", s),
    "unsupported": lambda s: s.replace("is not supported", "is unsupported"),
    "needs": lambda s: re.sub(r"\brequires\b", "needs", s),
    "no-period": lambda s: s.rstrip("."),
    "tag-before": lambda s: "[rank0] " + s,
    "Selected": lambda s: re.sub(r"^Using ", "Selected ", s),
    "Now-using": lambda s: re.sub(r"^Using ", "Now using ", s),
}

#: rewordings seen between real releases (patterns/{vllm,sglang}/template-history.toml: a
#: template that ends in one release and a near-identical one that starts in the next), and
#: the other verbs of choice a release may pick; applied by ``--engines`` besides the above
REAL_REWORDINGS: dict[str, Callable[[str], str]] = {
    # vLLM 0.8 -> 0.9 'Quantized %d layers of types' -> 'Quantizing %d layers of types'
    # (a regular past tense only: 'Applied' -> 'Applying', 'Quantized' -> 'Quantizing'; 'Found' stays)
    "ed-to-ing": lambda s: re.sub(r"^([A-Z][a-z]+?)(i?)(?<!e)ed\b", lambda m: m.group(1) + ("y" if m.group(2) else "") + "ing", s, count=1),
    # vLLM 'Using %s backend for MXFP8 GEMM' -> 'Using %s for MXFP8 GEMM'
    "drop-backend": lambda s: re.sub(r" backend( for )", r"\1", s, count=1),
    # SGLang 'Use {backend} backend by default': the imperative
    "Use": lambda s: re.sub(r"^Using ", "Use ", s),
    "Selecting": lambda s: re.sub(r"^Using ", "Selecting ", s),
    "Chose": lambda s: re.sub(r"^Using ", "Chose ", s),
    # vLLM 'Cannot use FlashAttention-2 backend' -> 'Cannot use FlashAttention backend'
    "drop-version": lambda s: re.sub(r"\b(FlashAttention|FlashInfer|FA)-?[234]\b", r"\1", s),
}

KINDS = ("linear_kernel", "moe_kernel", "fallback_warning", "kernel_not_found",
         "backend_override", "quant_method", "kv_cache", "attention_backend")


def load_tool(path: Path):
    """Import the shared coverage tool (for its ``render`` and ``prefix``); raises OSError."""
    spec = importlib.util.spec_from_file_location("template_coverage", path)
    if spec is None or spec.loader is None:
        raise OSError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure(templates: Path, tool: Path, levels: tuple[str, ...]) -> dict[str, tuple[int, int, list[str]]]:
    """rewording -> (recognised, total, missed messages) over the selected templates."""
    tc = load_tool(tool)
    rows = [json.loads(x) for x in templates.read_text().splitlines() if x.strip()]
    rows = [r for r in rows if r.get("kind") in KINDS and r.get("level") in levels]
    packs = default_packs()
    out = {}
    for name, reword in REWORDINGS.items():
        hit, missed = 0, []
        for i, row in enumerate(rows):
            msg = reword(tc.render(row["template"]))
            if row.get("level") == "raise":
                msg = "ValueError: " + msg
            line = tc.prefix("vllm", row.get("level", "info"), row.get("file", ""), i) + msg
            rec = PrefixParser(packs).parse("t", 1, line)
            m = Matcher(packs)
            if list(m.feed(rec)) + list(m.flush()):
                hit += 1
            else:
                missed.append(msg)
        out[name] = (hit, len(rows), missed)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("templates", nargs="?", default=str(SHARED / "reference" / "vllm" / "templates.jsonl"))
    ap.add_argument("--tool", default=str(SHARED / "tools" / "template_coverage.py"))
    ap.add_argument("--levels", default=None, help="template levels (default info,warning,error; "
                    "with --engines also the other logged levels: print, fatal, exception, *_once)")
    ap.add_argument("-v", "--verbose", metavar="REWORDING", default=None)
    ap.add_argument("--patterns", default=None, help="with --engines: a pattern folder instead of the shipped one (a baseline)")
    ap.add_argument("--engines", default=None, help="per engine, deep notion (e.g. vllm,sglang,tgi,lmdeploy,mlc-llm)")
    args = ap.parse_args(argv)
    if args.engines:
        from rewording_engines import main_engines  # noqa: E402  (tools/ is on sys.path when run)

        return main_engines(args)
    try:
        res = measure(Path(args.templates), Path(args.tool), tuple((args.levels or "info,warning,error").split(",")))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"rewording_coverage: {exc}", file=sys.stderr)
        return 2
    print_rows(res, args.verbose)
    return 0


def print_rows(res: dict, verbose: str | None, lead: str = "") -> None:
    """One ``<lead><rewording> hit/total`` line per rewording of ``res`` (``name -> (hit, total,
    missed)``), and the misses of the rewording named by ``verbose``."""
    for name, (hit, total, missed) in res.items():
        print(f"{lead}{name:12s} {hit}/{total}")
        if verbose == name:
            for msg in missed:
                print("   MISS", msg[:220])


if __name__ == "__main__":
    sys.exit(main())
