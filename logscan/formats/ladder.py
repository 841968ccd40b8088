"""Text renderings of ``logscan ladder``, ``explain`` and ``matrix`` results (pure functions -> str)."""
from __future__ import annotations

import textwrap

from ..analysis.predict import Walk

_MARK = {"passes": "passes", "fails": "fails", "unknown": "unknown"}


def _wrap(text: str, indent: int, width: int = 100) -> list[str]:
    return textwrap.wrap(text, width=max(40, width - indent), break_on_hyphens=False) or [""]


def render_outcomes(w: Walk, indent: str = "  ") -> list[str]:
    """The set of outcomes, most capable first, each with its condition."""
    out = []
    n = len(w.outcomes)
    for i, o in enumerate(w.outcomes):
        if o.refused:
            head = "the layer fails to load" + (f" ({w.exhausted})" if w.exhausted else "")
        elif o.undetermined:
            head = "not determined: no recorded rung passes"
        else:
            head = f"{o.kernel} (rung {o.rung}, {o.cost_class})"
        cond = o.condition_text()
        lead = "=> " if n == 1 else ("   " if i else "   ")
        line = f"{head}" + ("" if cond == "always" else f"  {cond}")
        for j, piece in enumerate(_wrap(line, len(indent) + 5)):
            out.append(f"{indent}{lead if j == 0 else '   '}{'' if j == 0 else '  '}{piece}")
    return out


def render_walk(w: Walk, gate_source: bool = False) -> str:
    """The walked ladder: one line per rung with verdict and gate (in words; ``gate_source``: the
    source expression), then every possible outcome with its condition."""
    out = [f"{w.engine} {w.ladder_version or '-'} · {w.scheme} ({w.scheme_title})",
           f"  ladder   {w.registry or '-'} ({w.role or '-'}, {w.platform})",
           f"  machine  {w.machine}"]
    if w.scheme_gate:
        out.append(f"  scheme   {w.scheme_verdict.value}: " + "; ".join(
            f"{t.term if gate_source else (t.words or t.term)} -> {t.verdict.value} ({t.why})" for t in w.scheme_gate))
    if w.rungs:
        width = min(44, max(len(r.kernel) for r in w.rungs))
        out.append("")
        out.append(f"  {'RUNG':6} {'KERNEL':{width}}  {'COST CLASS':15} {'VERDICT':8} GATE")
        for r in w.rungs:
            # "=>" only for a certain answer; with several outcomes each winner is "?" (the
            # JSON ``predicted`` still names the least capable outcome, the fallback)
            mark = "=>" if r.predicted and w.certain else ("? " if r.possible or r.predicted else "  ")
            name = r.kernel if len(r.kernel) <= width else r.kernel[: width - 1] + "~"
            gate = r.gate if gate_source else (r.words or r.gate)
            lead = f"{mark}{r.rung:>2}/{r.rungs:<3} {name:{width}}  {r.cost_class:15} {r.verdict.value:8} "
            pieces = _wrap(gate, len(lead))
            out.append(lead + pieces[0])
            out += [" " * len(lead) + p for p in pieces[1:]]
            for t in r.terms:
                if r.verdict.value != "passes" and t.verdict == r.verdict:
                    why = f"{t.verdict.value}: {t.term if gate_source else (t.words or t.term)} ({t.why[:80]})"
                    out += [" " * (len(lead) + 2) + p for p in _wrap(why, len(lead) + 2)]
    out.append("")
    if w.outcomes and w.scheme_verdict.value != "fails":
        out.append("  outcomes (most capable first):" if len(w.outcomes) > 1 else "  outcome:")
        out += render_outcomes(w)
    else:
        out.append(f"  predicted: {w.outcome}")
    for n in w.notes:
        out.append(f"  note: {n}")
    for d in w.disagreements:
        out.append(f"  note: the reference and the seeds differ on {d['kernel']}:")
        out.append(f"        reference: {d['reference']}")
        out.append(f"        seed:      {d['seed']}")
        out.append(f"        source:    {d['source']} (the release's source wins)")
    marks = [m for m, shown in (("=> the rung the engine picks", any(r.predicted and w.certain for r in w.rungs)),
                                ("? a rung that wins in some of the outcomes",
                                 any((r.possible or r.predicted) and not w.certain for r in w.rungs))) if shown]
    if marks:  # explain only the marks the table shows
        out.append("  (" + "; ".join(marks) + ")")
    return "\n".join(out) + "\n"


def render_explain(kernel: str, rows: list[dict]) -> str:
    """Every ladder holding a kernel, one line each."""
    if not rows:
        return f"{kernel}: on no shipped ladder\n"
    out = [f"{kernel}: on {len(rows)} ladder(s)"]
    # one column for 'engine release range', as wide as the widest ('vllm 0.8.5.post1–0.9.2'), so
    # the registries line up (a fixed width of 12 let long ranges push them right)
    names = [f"{r['engine']} {r['ladder_version']}" for r in rows]
    width = max(len(n) for n in names)
    for n, r in zip(names, rows):
        # the rung's own name when it is not the name asked for (a scheme's every rung, a short label
        # inside a class name): 'rung 3/7 MarlinNvFp4LinearKernel', never a bare 'NVFP4 ... rung 3/7'
        named = f" {r['kernel']}" if r.get("kernel") and r["kernel"] != kernel else ""
        out.append(f"  {n:{width}} {r['registry']} ({r['role']}, {r['platform']}): "
                   f"rung {r['rung']}/{r['rungs']}{named}, {r['cost_class']}")
        if r.get("words") or r["gate"]:
            out.append(f"      gate: {r.get('words') or r['gate']}")
            if r["gate"] and r.get("words") and r["gate"] != r["words"]:
                out.append(f"      source: {r['gate']}")
    return "\n".join(out) + "\n"


def render_matrix(rows: list[dict], scheme: str, machine: str) -> str:
    """One row per engine: what would execute, its cost class, and how sure."""
    out = [f"{scheme} on {machine}", ""]
    names = [f"{r['engine']} {r['ladder_version'] or ''}".strip() for r in rows]
    width = max([len(n) for n in names] + [6])
    ex = max([len(r["executes"] or "-") for r in rows] + [8])
    cc = max([len(r["cost_class"] or "-") for r in rows] + [10])  # activation_upcast is 17 wide
    out.append(f"  {'ENGINE':{width}}  {'EXECUTES':{ex}}  {'COST CLASS':{cc}}  BASIS")
    for n, r in zip(names, rows):
        out.append(f"  {n:{width}}  {(r['executes'] or '-'):{ex}}  {(r['cost_class'] or '-'):{cc}}  {r['basis']}")
        if r.get("note"):
            out += [f"  {'':{width}}  {p}" for p in _wrap(r["note"], width + 4)]
    return "\n".join(out) + "\n"
