#!/usr/bin/env python3
"""Template coverage of TGI, LMDeploy and MLC-LLM, each template rendered in its engine's OWN line
format (the shared ``template_coverage.py`` knows only the vLLM/SGLang prefixes).

Usage::

    python tools/other_coverage.py [--templates FILE] [--engine tgi,lmdeploy,mlc-llm]
                                   [--deep] [--keep DIR] [-v] [--json]

Each template (``tests/data/other-engines/templates-other.jsonl``: template, level, kind, file,
versions, engine; taken from the engines' sources, see the README beside it) becomes one
synthetic line, placeholders filled with plausible values. One synthetic log is written per
engine and line format (below) and scanned in-process with ``logscan.scan``. A line counts as
*recognised* when an object of the report with ``"line"`` equal to its line number carries a
``"rule"``; with ``--deep`` only when it gave a selection, a finding, an attention choice or an
event with captured parts (a ``kernel``, ``code`` or ``backend`` key, or non-empty ``groups``:
the shared tool's definition). ``identified`` says whether a run names the engine and no run names
another one (``unknown`` is right for a lone ``ValueError:`` line). ``--isolated`` scans each
template alone (a report keeps one finding per code, so in the shared log a second sentence of the
same fact has no object of its own).

Line formats: the real shapes of ``tools/other_shapes.py`` (each named after the fixture it comes
from): TGI ``compact`` / ``ansi`` / ``json`` with a Python ``raise`` inside the shard's ``Error when
initializing model`` traceback record; LMDeploy ``python`` / ``python-pid`` / ``python-nofile``
with TurboMind's two logger eras and three fatal shapes; MLC-LLM ``python``; a ``raise`` of
LMDeploy / MLC-LLM as a Python traceback. A template spanning several lines (a traceback) is hit
when any of its lines is. ``--legacy`` renders the first tool's one-line shapes (TGI compact /
json, LMDeploy python / python-nofile, a raise as a lone ``ValueError:`` line) to retake the
figures taken with them (docs/other-engine-coverage.md).

Prints ``<engine>/<format> <kind>: ok/total`` rows and ``coverage=<hit>/<total>=<rate>`` per
engine (the templates counted once, a line recognised in ANY of its engine's formats counts as
hit only when it is hit in every format: the figure is the worst format's).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(Path(__file__).resolve().parent))
import other_shapes as shapes  # noqa: E402
TEMPLATES = ROOT / "tests" / "data" / "other-engines" / "templates-other.jsonl"
ENGINES = ("tgi", "lmdeploy", "mlc-llm")
#: kinds whose right answer is "this is not a kernel choice" (docs/other-engine-coverage.md)
NOT_A_CHOICE = frozenset({"config", "other", "platform"})

PCT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrfiegx%]")
BRACE = re.compile(r"\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")

#: placeholder word -> plausible value; first match on the expression (lower case) wins
FILL = [
    ("exllama", "2"), ("attention", "flashinfer"), ("prefix_caching", "True"),
    ("system", "cuda"), ("card", "nvidia-a100"), ("module", "quantization"),
    ("loader", "GPTQMarlinWeightsLoader"), ("target", "Linear"), ("__class__", "W8ANFpLoader"),
    ("quantization_type", "W8A8"), ("scale", "static"), ("symmetric", "symmetric"),
    ("model_path", "/models/Qwen2-VL-7B-Instruct-AWQ"), ("model_format", "awq"),
    ("quant_method", "gptq"), ("quantize", "gptq"), ("method", "gptq"), ("group_size", "64"),
    ("groupsize", "64"), ("supported_bits", "[4, 8]"), ("supported", "[128]"), ("bits", "3"),
    ("in_features", "4096"), ("out_features", "11008"), ("quant_config", "{'quant_method': 'fp8'}"),
    ("_format", "float-quantized"), ("_num_bits", "8"), ("_type", "float"), ("fmt", "e5m2"),
    ("impl_cls", "TritonLinearBlockedF8Impl"), ("layer_type", "LinearW8A8"), ("mod_name", "dlinfer"),
    ("message", "dlinfer is not installed"), ("desc", "sm80_bf16_u4g128_bf16"),
    ("kernel_name", "sm80_s16816gemm_bf16_u4g128"), ("calibration", "max"),
    ("dtype", "float8_e5m2"), ("e", "No module named 'flash_attn_2_cuda'"),
    ("self.quantization", "GroupQuantize(name='q4f16_1', kind='group-quant', group_size=32, "
     "quantize_dtype='int4', storage_dtype='uint32', model_dtype='float16')"),
    ("self.target.export", "{'kind': 'cuda', 'arch': 'sm_90', 'max_num_threads': 1024}"),
    ("quantization", "q4f16_1"), ("status", "frozen"), ("group_name", "group_0"),
    ("err", "RuntimeError: CUDA error: no kernel image is available for execution on the device"), ("block", "128"),
    ("weights.loader", "Fp8Loader"), ("value", "4096"), ("available", "['qweight']"),
    ("pfx", "'model.layers.0.mlp'"), ("_formats", "['awq', 'gptq']"), ("int(self.", "1"),
    ("self.opt", "flashinfer=1;cublas_gemm=1;faster_transformer=0;cudagraph=1;cutlass=1"),
]
#: %s placeholders carry no name: the words just before them name the value
PCT_CONTEXT = [
    ("nn.Linear", '"model.layers.0.mlp.down_proj"'), ("weight.shape", "[4096, 11008]"),
    ("out_dtype", "float16"), ("key", "((4096, 11008), float16, cuda)"),
    ("CUDA architecture", "sm_90"), ("target device", "cuda:0"), ("device:", "cuda:0"),
("target:", "{'kind': 'cuda', 'arch': 'sm_90'}"),
    ("model lib", "/root/.cache/mlc_llm/model_lib/abc.so"), ("library model", "/models/lib.so"),
    ("metadata", "{'model_type': 'llama', 'quantization': 'q4f16_1', 'context_window_size': 4096}"), ("TM_LOG_LEVEL", "REQUEST"),
]


def fill_expr(expr: str) -> str:
    """A plausible value for a ``{expr}`` placeholder (str; never raises)."""
    lit = re.fullmatch(r"\w+\('([^']*)'\)(?::<(\d+))?", expr.strip())
    if lit:  # MLC-LLM CompileArgs.display: {bold('--quantization'):<25} (ANSI stripped)
        return lit.group(1).ljust(int(lit.group(2) or 0))
    e = expr.lower()
    for word, value in sorted(FILL, key=lambda wv: -len(wv[0])):  # the most specific word first
        if word == e or (len(word) > 2 and word in e):
            return value
    return "128"


def render(template: str, oneline: bool = True) -> str:
    """The template with every ``{..}`` / ``%s`` placeholder filled (str), on one line unless
    ``oneline`` is false (then a ``\\n`` of the source stays a line break, as the engine prints it)."""
    out, pos = [], 0
    toks = sorted([(m.start(), m.end(), "pct", m.group(0)) for m in PCT.finditer(template)]
                  + [(m.start(), m.end(), "brace", m.group(1)) for m in BRACE.finditer(template)])
    for start, end, kind, text in toks:
        if start < pos:
            continue
        out.append(template[pos:start])
        if kind == "brace":
            if template[start:start + 2] == "{}":
                out.append("sm75_f16_e4m3b128_f16" if "problem" in template else "12")
            else:
                out.append(fill_expr(text))
        elif text == "%%":
            out.append("%")
        elif text.endswith(("d", "i")):
            out.append("90")
        else:
            before = template[max(0, start - 24):start]
            if start == 0:  # MLC-LLM: '%s device: ..' / '%s target: ..' / '%s = %s. Can be one of'
                value = "MLC_JIT_POLICY" if "Can be one of" in template else "Found"
            elif before.endswith("= "):
                value = "ON"
            elif before.endswith("device: ") and template[end:end + 1] == ":":
                value = "cuda"
            elif before.endswith(":") and template[start - 2:start] == "s:":
                value = "0"
            elif "configuration of target device" in template[:start] and template[start - 3:start] == '": ':
                value = '{"thread_warp_size": 32, "arch": "sm_90", "max_threads_per_block": 1024}'
            else:
                value = next((v for w, v in PCT_CONTEXT if w in before), "value")
            out.append(value)
        pos = end
    out.append(template[pos:])
    text = "".join(out).replace("{{", "{").replace("}}", "}")
    return text.replace("\n", " ") if oneline else text


def message(t: dict, oneline: bool = True) -> str:
    """The message a template prints. A ``__str__`` template is no line of its own: TGI prints a
    compressed-tensors loader's ``__str__`` only inside ``Using {loader} for compressed-tensors
    target '{target}'`` (``layers/compressed_tensors/loader.py``; tgi.md section 2.5)."""
    fn = str(t.get("function", ""))
    msg = render(t["template"].replace("{self.__class__.__name__}", fn.split(".")[0] if "." in fn else "{self.__class__.__name__}"), oneline)
    if fn.endswith(".__str__") and t.get("engine") == "tgi":
        return f"Using {msg} for compressed-tensors target 'Linear'"
    return msg


def _lvl(level: str) -> str:
    return {"warning": "WARNING", "error": "ERROR", "exception": "ERROR", "debug": "DEBUG",
            "fatal": "ERROR"}.get(level, "INFO")


def _is_cpp(file: str) -> bool:
    return file.endswith((".cc", ".cu", ".cpp", ".h"))


def tgi_line(t: dict, msg: str, i: int, fmt: str) -> str:
    if t["level"] == "raise":
        return f'Error: ArgumentValidation("{msg}")' if t["file"].endswith(".rs") else f"ValueError: {msg}"
    lvl = {"warning": "WARN", "error": "ERROR", "debug": "DEBUG"}.get(t["level"], "INFO")
    ts = f"2024-08-09T12:44:{i % 60:02d}.{179449 + i:06d}Z"
    if fmt == "json":
        return json.dumps({"timestamp": ts, "level": lvl, "fields": {"message": msg},
                           "target": "text_generation_launcher"})
    return f"{ts} {lvl:>5} text_generation_launcher: {msg}"


def lmdeploy_line(t: dict, msg: str, i: int, fmt: str) -> str:
    level, file = t["level"], Path(t["file"]).name
    if level == "raise":
        return f"ValueError: {msg}"
    if level == "print" or msg.startswith("[TM]"):
        return msg
    if _is_cpp(file):
        if level == "fatal":
            return f"[TM][FATAL] {t['file']}(34): Check failed: {msg}"
        return f"[TM][{ {'warning': 'WARNING', 'error': 'ERROR'}.get(level, 'INFO') }] {msg}"
    where = "" if fmt == "python-nofile" else f"{file}:{40 + i % 60} - "
    return f"2024-11-21 17:46:{i % 60:02d},971 - lmdeploy - {_lvl(level)} - {where}{msg}"


def mlc_line(t: dict, msg: str, i: int, fmt: str) -> str:
    if t["level"] == "raise":
        return f"ValueError: {msg}"
    if t["level"] == "print":
        return msg
    return f"[2025-02-08 12:57:{i % 60:02d}] {_lvl(t['level'])} {Path(t['file']).name}:{70 + i % 90}: {msg}"


#: the first tool's shapes (one line a template, a raise as a lone ``ValueError:`` line), kept
#: for ``--legacy`` so the figures taken with them can be retaken
LEGACY_FORMATS = {"tgi": (tgi_line, ("compact", "json")),
                  "lmdeploy": (lmdeploy_line, ("python", "python-nofile")),
                  "mlc-llm": (mlc_line, ("python",))}
#: the real shapes (tools/other_shapes.py, each from a fixture): ANSI TGI, LMDeploy's pid format,
#: TurboMind's v0.13+ prefix and its fatal shapes, a raise inside its Python traceback
FORMATS = shapes.FORMATS


def load(path: Path = TEMPLATES) -> list[dict]:
    """The templates (list of dicts), in file order. Raises ``OSError`` / ``ValueError``."""
    return [json.loads(r) for r in path.read_text().splitlines() if r.strip()]


def hits(report: dict, deep: bool) -> set[int]:
    """Line numbers (1-based) the JSON report says it read (``deep``: understood)."""
    hit: set[int] = set()

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("line"), int) and (
                    any(k in node for k in ("kernel", "code", "backend")) or bool(node.get("groups"))
                    if deep else "rule" in node):
                hit.add(node["line"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(report)
    return hit


def measure(rows: list[dict], engine: str, fmt: str, deep: bool, keep: Path | None = None,
            formats: dict | None = None):
    """Scan the synthetic log of ``engine`` in ``fmt``. Returns ``(ok, lines, engines)``: a list of
    booleans per row, the synthetic text per row (several lines for a traceback: the row is hit
    when any of its lines is), and the engine names of the report's runs."""
    import logscan  # imported here so ``--help`` works without the package

    make, _ = (formats or FORMATS)[engine]
    msgs = [message(t, oneline=formats is LEGACY_FORMATS) for t in rows]
    blocks = [make(t, m, i, fmt) for i, (t, m) in enumerate(zip(rows, msgs))]
    spans, n = [], 1
    for b in blocks:
        k = b.count("\n") + 1
        spans.append(range(n, n + k))
        n += k
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / f"{engine}-{fmt}.log"
        log.write_text("\n".join(blocks) + "\n")
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / log.name).write_text(log.read_text())
        report = json.loads(logscan.scan(log).model_dump_json())
    hit = hits(report, deep)
    names = [r["engine"]["name"] for r in report["runs"]]
    ok = [any(i in hit for i in span) for span in spans]
    # the same sentence from two source files (``Using GPTQ-Marlin kernels`` in gptq.py and
    # wna16_int.py) is one fact: the report gives it one object, at its first line
    seen = {m for m, good in zip(msgs, ok) if good}
    return [good or m in seen for m, good in zip(msgs, ok)], blocks, names


def measure_isolated(rows: list[dict], engine: str, fmt: str, deep: bool, formats: dict | None = None):
    """As :func:`measure`, but each template alone in its own one-line log: a report keeps one
    finding per code and one selection per kernel, so in the shared log a second sentence stating
    the same fact (``exllamav2_kernels not installed`` after ``Exllama GPTQ cuda kernels ... not
    currently installed``) has no object of its own although logscan reads it."""
    oks, lines, names = [], [], []
    for i, t in enumerate(rows):
        ok, line, name = measure([t], engine, fmt, deep, formats=formats)
        oks += ok
        lines += line
        names += name
    return oks, lines, names


def coverage(engine: str, deep: bool, rows: list[dict] | None = None, keep: Path | None = None,
             isolated: bool = False, legacy: bool = False) -> dict:
    """Coverage of one engine: ``{"formats": {fmt: {"by_kind": {kind: [ok, total]}, "engines": [..],
    "identified": bool}}, "hit": n, "total": n, "choice_hit": n, "choice_total": n, "misses": [..]}``.
    A template counts as hit only when it is hit in every format of its engine."""
    rows = [t for t in (rows if rows is not None else load()) if t["engine"] == engine]
    out: dict = {"formats": {}, "misses": []}
    all_ok = [True] * len(rows)
    formats = LEGACY_FORMATS if legacy else FORMATS
    for fmt in formats[engine][1]:
        ok, lines, names = (measure_isolated(rows, engine, fmt, deep, formats) if isolated
                            else measure(rows, engine, fmt, deep, keep, formats))
        by_kind: dict[str, list[int]] = {}
        for t, good, line in zip(rows, ok, lines):
            by_kind.setdefault(t["kind"], [0, 0])
            by_kind[t["kind"]][0] += good
            by_kind[t["kind"]][1] += 1
            if not good:
                out["misses"].append(f"{fmt} [{t['kind']}] {line.splitlines()[-1]}")
        out["formats"][fmt] = {"by_kind": by_kind, "engines": sorted(set(names)),
                               "identified": engine in names and set(names) <= {engine, "unknown"}}
        all_ok = [a and b for a, b in zip(all_ok, ok)]
    out["hit"], out["total"] = sum(all_ok), len(rows)
    choice = [ok for t, ok in zip(rows, all_ok) if t["kind"] not in NOT_A_CHOICE]
    out["choice_hit"], out["choice_total"] = sum(choice), len(choice)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--templates", type=Path, default=TEMPLATES)
    ap.add_argument("--engine", default=",".join(ENGINES))
    ap.add_argument("--deep", action="store_true", help="count only lines giving a selection, a finding, an attention choice or an event with captured parts")
    ap.add_argument("--keep", type=Path, default=None, help="write the synthetic logs into this folder")
    ap.add_argument("--isolated", action="store_true", help="scan each template alone (no finding / selection merged with an earlier line's)")
    ap.add_argument("--legacy", action="store_true", help="the first tool's one-line shapes (to retake its figures)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every missed line")
    args = ap.parse_args(argv)
    rows = load(args.templates)
    result = {e: coverage(e, args.deep, rows, args.keep, args.isolated, args.legacy) for e in args.engine.split(",")}
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for engine, res in result.items():
        for fmt, f in res["formats"].items():
            for kind, (ok, total) in sorted(f["by_kind"].items()):
                print(f"{engine}/{fmt} {kind}: {ok}/{total}")
            print(f"{engine}/{fmt} identified={f['identified']} runs={','.join(f['engines']) or '-'}")
        if args.verbose:
            print("\n".join(f"MISS {m}" for m in res["misses"]))
        print(f"{engine} coverage={res['hit']}/{res['total']}={res['hit'] / max(1, res['total']):.3f}"
              f" choice-kinds={res['choice_hit']}/{res['choice_total']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
