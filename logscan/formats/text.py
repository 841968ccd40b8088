"""Plain-text report for people: a table of selections per run, then findings, worst first."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..models import InputStats, Report, Run

if TYPE_CHECKING:
    from ..gate.evaluate import GateResult


#: How an engine is named in prose.
_TITLE = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "llamacpp": "llama.cpp"}


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _run(run: Run) -> list[str]:
    e = run.engine
    ver = e.version or "version unknown"
    how = {"logged": f"logged, {e.version_evidence}", "inferred": f"inferred: {e.version_evidence}",
           "given": f"given: {e.version_evidence}"}.get(
        e.version_source, "no version line, no era hint")
    out = [f"Run {run.index + 1}: {run.source} lines {run.first_line}-{run.last_line}",
           f"  engine   {e.name} {ver} ({how})"]
    if e.ladder_version:
        plat = ""
        if e.platform:
            plat = f", platform {e.platform}"
            if e.platform_source == "inferred":
                plat += f" (inferred: {e.platform_evidence})"
        out.append(f"  ladders  {e.name} {e.ladder_version}{plat}")
    elif e.version:
        out.append(f"  ladders  none shipped for {e.name} {e.version}")
    c = run.config
    facts = [f"{k}={v}" for k, v in (("model", c.model), ("quantization", c.quantization), ("dtype", c.dtype),
                                     ("kv_cache_dtype", c.kv_cache_dtype), ("tp", c.tensor_parallel_size),
                                     ("gpu", c.gpu), ("compute_capability", c.compute_capability)) if v]
    if facts:
        out.append("  config   " + " ".join(facts))
    sf = run.start_failure
    if sf is not None:
        out.append(f"  start FAILED at line {sf.line}: {sf.evidence[:300]}")
        if sf.cause_line is not None:
            out.append(f"      cause (line {sf.cause_line}): {(sf.cause or '')[:300]}")
    if run.selections:
        rows = [["LAYER FAMILY", "KERNEL", "RUNG", "COST CLASS", "RANKS", "LINE"]]
        for s in run.selections:
            rung = f"{s.ladder.rung}/{s.ladder.rungs}" if s.ladder else "-"
            rows.append([s.family, s.kernel + ("" if s.observed else " (inferred)"), rung, s.cost_class.value,
                         ",".join(s.ranks) or "-", str(s.line)])
        out.append("")
        out += _table(rows)
        for s in run.selections:
            if s.ladder and s.ladder.fell:
                out.append(f"  {s.kernel}: fell {s.ladder.fell} rung(s) on {s.ladder.registry} "
                           f"({s.ladder.platform}, {_TITLE.get(e.name, e.name)} {s.ladder.ladder_version}) below "
                           + ", ".join(s.ladder.above[:6]) + (" ..." if len(s.ladder.above) > 6 else ""))
            if s.ladder and s.ladder.elsewhere:  # the inferred releases disagree on the rung
                out.append(f"  {s.kernel}: rung {s.ladder.rung}/{s.ladder.rungs} in {s.ladder.holds_in}, "
                           + ", ".join(f"{x.rung}/{x.rungs} in {x.releases}"
                                     + (f" (on {x.registry})" if x.registry != s.ladder.registry else "")
                                     for x in s.ladder.elsewhere)
                           + " (the inferred releases disagree)")
    else:
        out.append("  no quantized kernel selection in this run")
    if run.attention:
        out.append("  attention " + "; ".join(
            f"{a.backend} (line {a.line}" + (f", {','.join(a.ranks)}" if a.ranks else "") + ")" for a in run.attention))
    if run.kv_cache and (run.kv_cache.in_effect or (run.kv_cache.requested or "auto") != "auto"):
        kv = run.kv_cache
        out.append(f"  kv cache  requested {kv.requested or 'unknown'}"
                   + (f", in effect {kv.in_effect} (line {kv.in_effect_line})" if kv.in_effect else ", in effect: no line says"))
    if run.findings:
        out.append("")
        out.append("  Findings (worst first):")
        for f in run.findings:
            tag = f.inferred_tag()
            if f.fatal:
                tag += " [fatal: this exception failed the start]"
            out.append(f"  [{f.severity.value}] {f.code} line {f.line}: {f.title}{tag}")
            out.append(f"      evidence: {f.evidence[:300]}")
            for r in f.reasons[:20]:
                out.append(f"      reason:   {r[:300]}")
            if f.remedy:
                out.append(f"      remedy:   {f.remedy}")
    return out


def input_note(st: InputStats) -> Optional[str]:
    """One line on what the reader had to repair in one input, or why it stopped; None when clean.

    The error of an input that could not be opened already starts with its path: the path is
    printed once.
    """
    repairs = [f"{n} {what}" for n, what in (
        (st.decode_errors, "line(s) of invalid UTF-8 (bytes replaced by U+FFFD)"),
        (st.truncated_lines, "over-long line(s) cut to the reader's limit"),
        (st.nul_bytes, "NUL byte(s) removed")) if n]
    parts = []
    if repairs:
        parts.append(f"read {st.lines} line(s) with repairs: " + ", ".join(repairs))
    if st.error:
        err = st.error[len(st.source) + 2:] if st.error.startswith(st.source + ": ") else st.error
        parts.append(("input ended early: " if st.lines else "") + err)
    return f"{st.source}: " + "; ".join(parts) if parts else None


def render(report: Report, gate: "Optional[GateResult]" = None) -> str:
    """The text report (and the gate's checks, worst first, when given); deterministic."""
    lines: list[str] = []
    for st in report.inputs:
        note = input_note(st)
        if note:
            lines.append(f"! {note}")
    if not report.runs:
        lines.append("No engine log line about quantization kernels was recognised.")
    for run in report.runs:
        if lines:
            lines.append("")
        lines += _run(run)
    if gate is not None:
        lines += [""] + _gate(gate)
    return "\n".join(lines) + "\n"


def _gate(gate: "GateResult") -> list[str]:
    from ..gate.evaluate import VERDICT_ORDER

    out = [f"Gate: {gate.verdict.value.upper()} (policy {gate.policy}"
           + (f", baseline {gate.baseline}" if gate.baseline else "") + f", date {gate.date.isoformat()}; "
           + ", ".join(f"{n} {v}" for v, n in gate.counts.items()) + ")"]
    if gate.changes:
        rows = [["LAYER FAMILY", "BASELINE", "RUNG", "COST CLASS", "NOW", "RUNG", "COST CLASS", "MOVE"]]
        for ch in gate.changes:
            o, n = ch.old, ch.new
            rows.append([ch.family, o.kernel if o else "-", o.rung_text() if o else "-",
                         o.cost_class.value if o else "-", n.kernel if n else "-", n.rung_text() if n else "-",
                         n.cost_class.value if n else "-", ch.status + ("" if ch.cost == "same" else f", cost {ch.cost}")])
        out += _table(rows)
    for c in sorted(gate.checks, key=lambda c: VERDICT_ORDER[c.verdict]):
        where = f"{c.source}:{c.line}" if c.line else c.source
        out.append(f"  [{c.verdict.value}] {where} {c.code or c.kind}: {c.message}")
        out.append(f"      decided by {c.decided_by}")
    return out
