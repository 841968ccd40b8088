"""One self-contained HTML page: the run header, each selection drawn as its ladder, findings.

``scan --format html`` and ``gate --format html`` / ``--output html=PATH``. The page has no
script, no external stylesheet, image, font or link target: everything is inline, so opening
it makes no network request (tests/test_html_report.py checks that in headless Chromium).

Each selection with a ladder position is drawn as the whole registry, top (the engine's first
choice) to bottom: the selected rung highlighted, the better rungs that were skipped marked
with the gate that stopped each (the rung's gate from the shipped ladder file,
``patterns/<engine>/ladders/<release>.toml``), every rung coloured by its cost class. Log text is
untrusted: everything is escaped with ``html.escape``.
"""
from __future__ import annotations

import textwrap
from html import escape
from typing import TYPE_CHECKING, Optional

from ..models import Report, Run, Selection
from .selection_notes import selection_notes
from .text import PARALLEL_SHOWN, RUNG_SPLIT, RUN_NOTES, _incomplete_words, fact_rows, report_packs, selection_mark

if TYPE_CHECKING:
    from ..packs.loader import PackSet
    from ..gate.evaluate import GateResult

#: cost class -> (background, border): green for native, to red for emulated
COLOURS = {"native": ("#e3f4e3", "#2e7d32"), "portable": ("#e0f2f1", "#00796b"),
           "weight_only": ("#fff4d6", "#b7791f"), "dequant_at_load": ("#ffe6d5", "#c05621"),
           "activation_upcast": ("#fdf0e0", "#c4691a"),
           "emulated": ("#fde2e2", "#c53030"), "unknown": ("#eeeeee", "#666666")}

_CSS = """
pre.notes{white-space:pre-wrap;background:#f6f6f6;padding:6px 8px;margin:6px 0}p.doubt{color:#8a5a00}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1a1a1a;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
table.hdr td{padding:1px 10px 1px 0;vertical-align:top}table.hdr td:first-child{color:#555;white-space:nowrap}
.verdict{display:inline-block;padding:3px 10px;border-radius:4px;font-weight:600;color:#fff}
.v-pass{background:#2e7d32}.v-warn{background:#b7791f}.v-fail{background:#c53030}
ol.ladder{list-style:none;padding:0;margin:6px 0 14px;max-width:900px}
ol.ladder li{margin:2px 0;padding:4px 8px;border-left:6px solid;border-radius:3px;display:flex;gap:10px}
ol.ladder li .n{width:46px;color:#444}ol.ladder li .k{flex:1;word-break:break-all}
ol.ladder li .c{width:120px}ol.ladder li.selected{outline:3px solid #1a1a1a;font-weight:700}
ol.ladder li.below{opacity:.55}ol.ladder .why{display:block;font-weight:400;color:#444;font-size:12px}
.legend span{display:inline-block;padding:1px 8px;margin-right:6px;border-left:6px solid;border-radius:3px}
.finding{border-left:4px solid #999;padding:4px 10px;margin:8px 0;background:#fafafa}
.finding.error{border-color:#c53030}.finding.warning{border-color:#b7791f}.finding.info{border-color:#2b6cb0}
.ev{white-space:pre-wrap;word-break:break-all;color:#333}
table.checks{border-collapse:collapse}table.checks td,table.checks th{border:1px solid #ddd;padding:3px 8px;text-align:left}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _ladder_rungs(run: Run, s: Selection, packs: "Optional[PackSet]" = None) -> list[tuple[str, str, str]]:
    """Every rung of the selection's registry as ``(name, cost class, gate)``, from the shipped ladder
    (the run's logged candidate list instead, when it has one: ``LadderPosition.logged_list``).

    Falls back to the skipped rungs the report names (``ladder.above``) plus the selected one
    when the packs (``packs``, the report's ``--patterns``; None: the shipped ones) do not hold that
    ladder.
    """
    lp = s.ladder
    assert lp is not None
    try:
        pack = report_packs(packs).packs[run.engine.name]
        ladder = pack.ladders[lp.ladder_version]
        reg = next(r for r in ladder.registry if r.name == lp.registry)
        # the run's logged candidate list, when a line logs it (its items as the ladder spells them)
        names = list(lp.logged_list) if lp.logged_list else reg.platforms[lp.platform]
        if len(names) != lp.rungs or names[lp.rung - 1] != lp.kernel_class:
            raise LookupError(lp.registry)
        out = []
        for n in names:
            k = ladder.kernel.get(n)
            out.append((n, reg.cost.get(n) or (k.cost_class if k else "unknown"), (k.gate if k else "") or ""))
        return out
    except (KeyError, LookupError, StopIteration, AttributeError):
        rows = [(n, "unknown", "") for n in lp.above]
        return rows + [(lp.kernel_class, s.cost_class.value, lp.gate or "")]


def _selection(run: Run, s: Selection, packs: "Optional[PackSet]" = None) -> list[str]:
    lp = s.ladder
    tag = selection_mark(s)  # the text and Markdown reports' mark, from the one source
    out = [f'<h3 class="selection">{_e(s.family)}: <code>{_e(s.kernel)}</code>{_e(tag)} '
           f'<span class="mono">({_e(s.cost_class.value)}, line {s.line})</span></h3>']
    if lp is None:
        out.append(f'<p>no ladder position: the shipped ladders do not hold <code>{_e(s.kernel)}</code>.</p>')
        return out
    out.append(f'<p class="mono">{_e(lp.registry)} · {_e(lp.platform)} · {_e(run.engine.name)} '
               f'{_e(lp.ladder_version)} · rung {lp.rung}{"?" if lp.elsewhere else ""} of {lp.rungs}'
               + (f", fell {lp.fell} rung(s)" if lp.fell else ", the engine's first choice") + "</p>")
    if lp.elsewhere:  # the releases the run fits put the kernel on other rungs (text report's legend)
        out.append(f'<p class="doubt">{_e(RUNG_SPLIT)}</p>')
    notes = selection_notes(run, s, packs)  # what the text report says under the row: one source
    if notes:
        out.append('<pre class="notes mono">' + _e(textwrap.dedent("\n".join(notes))) + "</pre>")
    out.append(f'<ol class="ladder" data-registry="{_e(lp.registry)}" data-selected="{lp.rung}">')
    for i, (name, cost, gate) in enumerate(_ladder_rungs(run, s, packs), start=1):
        bg, border = COLOURS.get(cost, COLOURS["unknown"])
        state = "selected" if i == lp.rung else ("skipped" if i < lp.rung else "below")
        why = ""
        if state == "skipped":
            why = f'<span class="why">skipped; gate: {_e(gate or "not recorded in the ladder")}</span>'
        elif state == "selected":
            why = f'<span class="why">selected: {_e(s.evidence[:240])}</span>'
        out.append(f'<li class="rung {state} cost-{_e(cost)}" data-rung="{i}" data-cost="{_e(cost)}" '
                   f'style="background:{bg};border-color:{border}"><span class="n">{i}/{lp.rungs}</span>'
                   f'<span class="k">{_e(name)}{why}</span><span class="c">{_e(cost)}</span></li>')
    out.append("</ol>")
    return out


def _failure(f, cls: str, title: str, note: str) -> str:
    """A run's failed start or failure while serving (``StartFailure``) as one finding box: the
    evidence line and, when the engine named it, the cause line (each cut to 500 characters)."""
    cause = (f'<div class="ev mono">cause (line {f.cause_line}): {_e((f.cause or "")[:500])}</div>'
             if f.cause_line is not None else "")
    sep = " " if note else ""
    return (f'<div class="finding {cls}"><b>{title}</b> at line {f.line}{sep}{note.strip()}'
            f'<div class="ev mono">{_e(f.evidence[:500])}</div>{cause}</div>')


def _run(run: Run, packs: "Optional[PackSet]" = None) -> list[str]:
    e = run.engine
    how = {"logged": "logged", "inferred": "inferred", "reported": "reported"}.get(
        e.version_source, "unknown")
    rows = [("source", f"{run.source} lines {run.first_line}-{run.last_line}"),
            ("engine", f"{e.name} {e.version or 'version unknown'} ({how}"
                       + (f": {e.version_evidence}" if e.version_evidence else "") + ")"),
            ("ladders", f"{e.name} {e.ladder_version}" if e.ladder_version else "none shipped"),
            ("platform", f"{e.platform} ({e.platform_source}"
                         + (f": {e.platform_evidence}" if e.platform_evidence else "") + ")"
                         if e.platform else "CUDA (assumed: no line names the platform)")]
    c = run.config
    facts = " ".join(f"{k}={v}" for k, v in (("model", c.model), ("quantization", c.quantization),
                                             ("tp", c.tensor_parallel_size),
                                             *((k, c.extra.get(k)) for k in PARALLEL_SHOWN), ("gpu", c.gpu)) if v)
    if facts:
        rows.append(("config", facts))
    rows += fact_rows(run, packs)
    rows += [(label, c.extra[key][:400]) for key, label in RUN_NOTES if c.extra.get(key)]
    out = [f'<section class="run" id="run-{run.index + 1}"><h2>Run {run.index + 1}</h2><table class="hdr">']
    out += [f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in rows]
    out.append("</table>")
    if run.start_failure is not None:
        out.append(_failure(run.start_failure, "error", "start FAILED", ""))
    if run.serving_failure is not None:
        out.append(_failure(run.serving_failure, "warning", "failed while serving",
                            " (the server had come up; not a failed start)"))
    if run.stopped is not None:  # told to stop by a signal: no failure (docs/lifecycle.md "Stopped")
        from .failure import stop_words

        words = stop_words(run.stopped)
        out.append(f'<div class="finding info"><b>{_e(words[0])}</b>'
                   + "".join(f'<div class="ev mono">{_e(w)}</div>' for w in words[1:]) + "</div>")
    if not run.selections:
        out.append("<p>no quantized kernel selection in this run</p>")
    for s in run.selections:
        out += _selection(run, s, packs)
    if run.findings:
        out.append("<h3>Findings (worst first)</h3>")
    for f in run.findings:
        out.append(f'<div class="finding {_e(f.severity.value)}"><b>[{_e(f.severity.value)}] {_e(f.code)}</b> '
                   f'line {f.line}: {_e(f.title)}{_e(f.inferred_tag())}'
                   f'<div class="ev mono">evidence: {_e(f.evidence[:500])}</div>'
                   + "".join(f'<div class="ev mono">reason: {_e(r[:300])}</div>' for r in f.reasons[:20])
                   + (f"<div>remedy: {_e(f.remedy)}</div>" if f.remedy else "") + "</div>")
    out.append("</section>")
    return out


def _gate(gate: "GateResult") -> list[str]:
    v = gate.verdict.value
    out = [f'<p>gate: <span class="verdict v-{_e(v)}" id="verdict">{_e(v.upper())}</span> '
           f'policy {_e(gate.policy)}, judged on {_e(gate.date)}</p>',
           '<table class="checks"><tr><th>verdict</th><th>code</th><th>check</th><th>decided by</th></tr>']
    order = {"fail": 0, "warn": 1, "pass": 2}
    for c in sorted(gate.checks, key=lambda c: order[c.verdict.value]):
        reasons = "".join(f'<div class="ev mono">reason: {_e(r[:300])}</div>' for r in c.reasons[:20])
        out.append(f"<tr><td>{_e(c.verdict.value)}</td><td>{_e(c.code or '-')}</td><td>{_e(c.name)}: "
                   f"{_e(c.message[:300])}{reasons}</td><td>{_e(c.decided_by)}</td></tr>")
    out.append("</table>")
    return out


def render(report: Report, gate: "Optional[GateResult]" = None, packs: "Optional[PackSet]" = None) -> str:
    """The page as one string; deterministic (no clock), no external reference. ``packs``: those the
    report was read with (``--patterns``), None for the shipped ones."""
    legend = "".join(f'<span style="background:{bg};border-color:{bd}">{_e(k)}</span>' for k, (bg, bd) in COLOURS.items())
    body = [f"<h1>logscan report</h1><p class=\"mono\">logscan {_e(report.logscan_version)} · "
            + _e(", ".join(s.source for s in report.inputs)) + "</p>",
            f'<p class="legend">cost classes: {legend}</p>']
    if gate is not None:
        body += _gate(gate)
    from .inputs import input_warnings, unopened

    for s in report.inputs:
        if unopened(s):
            body.append(f'<div class="finding error">input {_e(s.source)}: {_e(s.error)}</div>')
        notes = input_warnings(s)  # the text report's "!" line: evidence may be missing, say so
        if notes:
            body.append(f'<div class="finding warning input-note">input {_e(s.source)}: '
                        + "; ".join(_e(n) for n in notes) + "</div>")
    incomplete = _incomplete_words(report).lstrip("; ")  # the text summary's START_INCOMPLETE words
    if incomplete:
        body.append(f'<div class="finding warning incomplete">{_e(incomplete)}</div>')
    if not report.runs:
        body.append("<p>No engine log line was recognised.</p>")
    for run in report.runs:
        body += _run(run, packs)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>logscan report</title><style>{_CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
