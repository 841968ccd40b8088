#!/usr/bin/env python3
"""Which error / warning findings does logscan raise on the sentences an engine can print?

Usage::

    python tools/finding_audit.py [--engine vllm,sglang,tgi,lmdeploy,mlc-llm] [--json] [--counts]

The engines' template files are the universe of sentences a log can hold
(``shared/reference/vllm/templates.jsonl``, ``shared/reference/sglang/templates.jsonl``,
``shared/reference/other-engines/templates-other.jsonl``, the latter copied to
``tests/data/other-engines/``). Every template is rendered once in its engine's real line shape,
reusing the coverage tools' renderers: vLLM and SGLang by ``shared/tools/template_coverage.py``
(``render`` + ``prefix``; a ``raise`` as ``<exception>: msg``, the template's own exception class
when the file records it, else ``ValueError`` as that tool does), TGI / LMDeploy / MLC-LLM by
``tools/other_coverage.py`` ``message`` in the first shape of ``tools/other_shapes.py``
(TGI ``compact``, LMDeploy ``python``, MLC-LLM ``python``; a raise inside its traceback).

Each rendered line is scanned twice, in process: ALONE (a log of that one line) and INSIDE a
healthy start of its engine (``HEALTHY``: a real fixture that came up and raises no finding; the
line is put in the middle). Every finding of severity ``error`` or ``warning`` the line brings
(alone: every such finding; inside: every one the healthy log alone does not raise) is one row:
``engine  mode  severity  code  template``. ``--counts`` prints only the totals, by engine and
code (what ``tests/test_finding_audit.py`` pins). The rows are the material of a precision audit
(docs/report.md "prec37"): each finding judged warranted or false by what the sentence says.
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(Path(__file__).resolve().parent))
from _common import tool  # noqa: E402


def _shared() -> Path:
    for cand in (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared")):
        if cand.is_dir():
            return cand
    return ROOT.parent / "shared"


SHARED = _shared()
SOURCES = {"vllm": SHARED / "reference" / "vllm" / "templates.jsonl",
           "sglang": SHARED / "reference" / "sglang" / "templates.jsonl",
           "other": ROOT / "tests" / "data" / "other-engines" / "templates-other.jsonl"}
ENGINES = ("vllm", "sglang", "tgi", "lmdeploy", "mlc-llm")
#: a real start of each engine that came up (or, LMDeploy, loaded) and raises no finding
HEALTHY = {"vllm": "fixtures/vllm/vllm-358.log", "sglang": "fixtures/sglang/sglang-307.log",
           "tgi": "fixtures/tgi/tgi-103.log", "lmdeploy": "fixtures/lmdeploy/lmdeploy-103.log",
           "mlc-llm": "fixtures/mlc-llm/mlc-llm-150.log"}
SEVERITIES = ("error", "warning")


def _coverage_tool():
    spec = importlib.util.spec_from_file_location("template_coverage", SHARED / "tools" / "template_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def templates(engine: str) -> list[dict]:
    """The templates of ``engine`` (list of dicts, file order)."""
    path = SOURCES.get(engine, SOURCES["other"])
    rows = [json.loads(r) for r in path.read_text().splitlines() if r.strip()]
    return [t for t in rows if engine in ("vllm", "sglang") or t.get("engine") == engine]


def rendered(engine: str, t: dict, i: int) -> str:
    """The text one template prints in ``engine``'s line shape (one or more lines, no final newline)."""
    if engine in ("vllm", "sglang"):
        tc = _coverage_tool() if "template_coverage" not in sys.modules else sys.modules["template_coverage"]
        sys.modules["template_coverage"] = tc
        msg = tc.render(t["template"])
        if t.get("level") == "raise":
            msg = f"{t.get('exception') or 'ValueError'}: {msg}"
        return tc.prefix(engine, t.get("level", "info"), t.get("file", ""), i) + msg
    cov, shapes = tool("other_coverage"), tool("other_shapes")
    make, fmts = shapes.FORMATS[engine]
    return make(t, cov.message(t, oneline=False), i, fmts[0])


def findings(lines: list[str]) -> list[dict]:
    """The error / warning findings of a log made of ``lines`` (``[{code, severity, line}]``)."""
    import logscan

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "audit.log"
        log.write_text("\n".join(lines) + "\n", encoding="utf-8")
        report = json.loads(logscan.scan(log).model_dump_json())
    return [{"code": f["code"], "severity": f["severity"], "line": f.get("line")}
            for run in report["runs"] for f in run.get("findings", [])
            if f["severity"] in SEVERITIES]


def audit(engine: str) -> list[dict]:
    """Rows ``{engine, mode, code, severity, level, kind, template}`` for every error / warning
    finding a template of ``engine`` brings, alone and inside its healthy start (see module doc)."""
    base = (ROOT / HEALTHY[engine]).read_text(encoding="utf-8", errors="replace").splitlines()
    mid = len(base) // 2
    known = {(f["code"], f["line"]) for f in findings(base)}
    rows = []
    for i, t in enumerate(templates(engine)):
        text = rendered(engine, t, i).split("\n")
        alone = {(f["code"], f["severity"]) for f in findings(text)}
        inside = {(f["code"], f["severity"]) for f in findings(base[:mid] + text + base[mid:])
                  if (f["code"], f["line"]) not in known}
        for mode, got in (("alone", alone), ("inside", inside)):
            for code, sev in sorted(got):
                rows.append({"engine": engine, "mode": mode, "code": code, "severity": sev,
                             "level": t.get("level"), "kind": t.get("kind"), "template": t["template"]})
    return rows


def counts(rows: list[dict]) -> dict:
    """``{engine: {"templates": n, "alone": n, "inside": n, "codes": {code: n}}}``: templates with a
    finding alone / inside, and findings by code over both modes (each template counted once per code)."""
    out: dict = {}
    for engine in sorted({r["engine"] for r in rows}):
        mine = [r for r in rows if r["engine"] == engine]
        codes = collections.Counter(c for c, _ in {(r["code"], r["template"]) for r in mine})
        out[engine] = {"templates": len({r["template"] for r in mine}),
                       "alone": len({r["template"] for r in mine if r["mode"] == "alone"}),
                       "inside": len({r["template"] for r in mine if r["mode"] == "inside"}),
                       "codes": dict(sorted(codes.items()))}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", default=",".join(ENGINES))
    ap.add_argument("--json", action="store_true", help="the rows as one JSON list")
    ap.add_argument("--counts", action="store_true", help="only the totals by engine and code")
    args = ap.parse_args(argv)
    rows = [r for e in args.engine.split(",") for r in audit(e)]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    if not args.counts:
        print(f"{'ENGINE':9} {'MODE':6} {'SEVERITY':8} {'CODE':26} TEMPLATE")
        for r in rows:
            print(f"{r['engine']:9} {r['mode']:6} {r['severity']:8} {r['code']:26} "
                  f"[{r['level']}] {r['template'][:160]!r}")
    for engine, c in counts(rows).items():
        codes = " ".join(f"{k}={v}" for k, v in c["codes"].items())
        print(f"{engine}: templates={c['templates']} alone={c['alone']} inside={c['inside']} {codes}")
    print(f"total: rows={len(rows)} templates={len({(r['engine'], r['template']) for r in rows})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
