"""Text renderings of ``logscan ladder``, ``explain`` and ``matrix`` results (pure functions -> str)."""
from __future__ import annotations

from ..analysis.predict import Walk

_MARK = {"passes": "passes", "fails": "fails", "unknown": "unknown"}


def render_walk(w: Walk) -> str:
    """The walked ladder: one line per rung with verdict and gate, then the prediction."""
    out = [f"{w.engine} {w.ladder_version or '-'} · {w.scheme} ({w.scheme_title})",
           f"  ladder   {w.registry or '-'} ({w.role or '-'}, {w.platform})",
           f"  machine  {w.machine}"]
    if w.scheme_gate:
        out.append(f"  scheme   {w.scheme_verdict.value}: " + "; ".join(f"{t.term} -> {t.verdict.value} ({t.why})" for t in w.scheme_gate))
    if w.rungs:
        width = max(len(r.kernel) for r in w.rungs)
        out.append("")
        out.append(f"  {'RUNG':6} {'KERNEL':{width}}  {'COST CLASS':15} {'VERDICT':8} GATE")
        for r in w.rungs:
            mark = "=>" if r.predicted else ("? " if r.possible else "  ")
            out.append(f"{mark}{r.rung:>2}/{r.rungs:<3} {r.kernel:{width}}  {r.cost_class:15} {r.verdict.value:8} {r.gate}")
            for t in r.terms:
                if r.verdict.value != "passes" and t.verdict == r.verdict:
                    out.append(f"  {'':6} {'':{width}}  {'':15} {'':8}   {t.verdict.value}: {t.term} ({t.why})")
    out.append("")
    out.append(f"  predicted: {w.outcome}")
    out.append("  (=> the rung the engine picks; ? an unknown rung above it that wins if its unknown facts hold)")
    return "\n".join(out) + "\n"


def render_explain(kernel: str, rows: list[dict]) -> str:
    """Every ladder holding a kernel, one line each."""
    if not rows:
        return f"{kernel}: on no shipped ladder\n"
    out = [f"{kernel}: on {len(rows)} ladder(s)"]
    for r in rows:
        out.append(f"  {r['engine']} {r['ladder_version']:12} {r['registry']} ({r['role']}, {r['platform']}): "
                   f"rung {r['rung']}/{r['rungs']}, {r['cost_class']}")
        if r["gate"]:
            out.append(f"      gate: {r['gate']}")
    return "\n".join(out) + "\n"


def render_matrix(rows: list[dict], scheme: str, machine: str) -> str:
    """One row per engine: what would execute, its cost class, and how sure."""
    out = [f"{scheme} on {machine}", ""]
    names = [f"{r['engine']} {r['ladder_version'] or ''}".strip() for r in rows]
    width = max([len(n) for n in names] + [6])
    ex = max([len(r["executes"] or "-") for r in rows] + [8])
    out.append(f"  {'ENGINE':{width}}  {'EXECUTES':{ex}}  {'COST CLASS':15} BASIS")
    for n, r in zip(names, rows):
        out.append(f"  {n:{width}}  {(r['executes'] or '-'):{ex}}  {(r['cost_class'] or '-'):15} {r['basis']}")
        if r.get("note"):
            out.append(f"  {'':{width}}  {r['note']}")
    return "\n".join(out) + "\n"
