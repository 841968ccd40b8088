"""Plain-text report for people: a table of selections per run, then findings, worst first.

Every line goes through ``formats.escape.report_line`` as it is joined: log text cannot break a
line, send a terminal control code or start a CI workflow command.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from .clip import clip
from ..models import InputStats, Report, Run
from ..models_run import CONFIG_SHOWN
from .escape import TableLine, report_line, visible_controls
from .failure import stop_words
from .inputs import input_error, input_warnings, unopened  # noqa: F401 (input_error: re-exported)
from .table import render_table
from .selection_notes import selection_notes

if TYPE_CHECKING:
    from ..packs.loader import PackSet
    from ..gate.evaluate import GateResult


#: how a selection chosen 'out of' a logged list that lacks it is noted (``analysis.logged_ladder.OFF_LIST_NOTE``)
#: Lines of a run's "Not understood" section printed in the text report (``--unexplained`` lists all).
MAX_UNEXPLAINED_SHOWN = 20

def selection_mark(s) -> str:
    """The mark a KERNEL cell carries after a selection's name (text and Markdown alike):
    `` (refused)`` (a reason of the run's own failure refuses the kernel: ``Selection.refused``),
    `` (inferred)`` (not logged), `` (?)`` (ambiguous), `` (unconfirmed)`` (its run never said
    the kernel served), `` (traceback)`` (read from a traceback frame of its apply path), or ""."""
    from ..analysis.run_parts import UNCONFIRMED
    from ..analysis.uncaught import TRACEBACK

    reasoning = s.reasoning or ""
    if getattr(s, "refused", None) is not None:  # the run's own failure refuses this kernel
        return " (refused)"
    if not s.observed:
        return " (inferred)"
    if reasoning.startswith("ambiguous:"):
        return " (?)"
    if reasoning.startswith(TRACEBACK):
        return " (traceback)"
    return " (unconfirmed)" if reasoning.startswith(UNCONFIRMED) else ""


#: the parallelism beyond TP a config line shows (``config.extra``, ``analysis.runstate.PARALLEL_FACTS``)
PARALLEL_SHOWN = tuple(k for k, f in CONFIG_SHOWN if f is None)
#: run facts (``config.extra``) that say how the run was judged, and the header label each gets in the
#: text and HTML reports: analysis/run_checks ``note_unknown_gpu``, ``note_given_gpu``,
#: ``judged_machine`` (a GPU of the other vendor), analysis/gpu_source (a GPU only a tool's or
#: wrapper's line names, one it replaced, the system's devices the engine names, weak lines naming
#: GPUs of different kinds) and ``walk_selections`` (no walk without a platform)
RUN_NOTES = (("gpu_unknown", "gpu"), ("gpu_given", "gpu"), ("gpu_contradicted", "gpu"), ("gpu_evidence", "gpu"),
             ("gpu_other", "gpu"), ("gpu_one_of_note", "gpu"), ("gpu_weak_mixed", "gpu"), ("walk_skipped", "inferred"))


def failure_lines(f, what: str = "start FAILED") -> list[str]:
    """A failed start (or a failure while serving: ``what``) as report lines: the headline (the
    exception, else the engine's failure line, else "no exception line in the log") at its line,
    then the failing kernel and where the failure began (``StartFailure.head``, ``kernel_words``,
    ``where_words``); each cut to 300 characters with a visible mark."""
    from .failure import at_words, head, kernel_words, raised_words, where_words

    _, words = head(f)
    tag = " (the server had come up; not START_FAILED)" if what != "start FAILED" else ""
    out = [f"  {what} at {at_words(f)}{tag}: {clip(words, 300)}"]
    for extra in (kernel_words(f), raised_words(f), where_words(f)):
        if extra:
            out.append(f"      {clip(extra, 300)}")
    return out


#: How an engine is named in prose.
def report_packs(packs: "Optional[PackSet]") -> "PackSet":
    """``packs`` (those a report was read with: ``scan --patterns``), else the shipped ones."""
    if packs is not None:
        return packs
    from ..packs.loader import default_packs

    return default_packs()


def _title(engine: str, packs: "Optional[PackSet]" = None) -> str:
    """How reports name an engine: its pack's ``title`` (``TensorRT-LLM``), else the pack name."""
    pack = report_packs(packs).packs.get(engine)
    return (pack.meta.pack.title if pack is not None else "") or engine


def _grouped(devices: str) -> str:
    """``0: A; 1: A; 2: B`` -> ``0-1: A; 2: B``: runs of consecutive devices that print alike, joined."""
    out: list[list] = []  #: [first index, last index, description]
    for entry in devices.split("; "):
        idx, _, desc = entry.partition(": ")
        if out and desc == out[-1][2] and idx.isdigit() and out[-1][1].isdigit() and int(idx) == int(out[-1][1]) + 1:
            out[-1][1] = idx
        else:
            out.append([idx, idx, desc])
    return "; ".join(f"{a}{'-' + b if b != a else ''}: {d}" for a, b, d in out)


def fact_rows(run: Run, packs: "Optional[PackSet]" = None) -> list[tuple[str, str]]:
    """The run's ``devices`` line (when the log lists more than one device: ``config.extra``
    ``devices``, with ``devices_mixed``) and ``switches`` line (the facts its engine's pack names in
    ``[kernel_facts]``: build switches, a process-wide kernel version), as (label, text); each
    text cut to 400 characters. Shared by the text and HTML reports. ``packs``: those the run was
    read with (their ``[kernel_facts]``), None for the shipped ones."""
    extra = run.config.extra
    rows = []
    devs = extra.get("devices") or ""
    if "; " in devs:
        found = extra.get("devices_found")
        mixed = extra.get("devices_mixed")
        n = devs.count("; ") + 1
        want = int(found.split()[0]) if found and found.split()[0].isdigit() else n
        short = f" ({n} of {want} listed in the log)" if want > n else ""
        rows.append(("devices", clip((f"{found}: " if found else "") + _grouped(devs) + short
                                     + (f" (mixed archs: {mixed})" if mixed else ""), 400)))
    pack = report_packs(packs).packs.get(run.engine.name)
    names = pack.meta.kernel_facts if pack is not None else {}
    words = " ".join(f"{label}={extra[key]}" for key, label in names.items() if extra.get(key))
    if words:
        rows.append(("switches", clip(words, 400)))
    return rows


def _table(rows: list[list[str]]) -> list[str]:
    """Through rich (``table.py``): plain when piped, wrapped and coloured on a terminal.

    Cells are made visible first (``visible_controls``): the table's lines then carry only the
    renderer's own colour codes, which ``report_line`` keeps."""
    return [TableLine(line) for line in render_table([[visible_controls(c) for c in r] for r in rows])]


def _run(run: Run, packs: "Optional[PackSet]" = None) -> list[str]:
    e = run.engine
    ver = e.version or "version unknown"
    how = {"logged": f"logged, {e.version_evidence}", "inferred": f"inferred: {e.version_evidence}",
           "given": f"given: {e.version_evidence}",
           "reported": f"reported, {e.version_evidence}"}.get(
        e.version_source, e.version_evidence or "no version line, no era hint")
    out = [f"Run {run.index + 1}: {run.source} lines {run.first_line}-{run.last_line}"]
    if run.folded is not None:
        out.append(f"  repeats  {folded_words(run)}")
    out.append(f"  engine   {e.name} {ver} ({how})")
    if e.name == "unknown":
        out.append(f"  unknown  {e.identified_by}")
    name = e.read_with or e.name
    plat = ""
    if e.platform:
        plat = f", platform {e.platform}"
        if e.platform_source == "inferred":
            plat += f" (inferred: {e.platform_evidence})"
    if e.ladder_version:
        out.append(f"  ladders  {name} {e.ladder_version}{plat}")
    elif e.version:
        out.append(f"  ladders  none shipped for {name} {e.version}{plat}")
    elif e.release_range:
        # an inferred era older than every shipped ladder (a TGI 1.x Args dump, TurboMind's old
        # prefix): said, with the platform, rather than left out
        lo, hi = e.release_range[0], e.release_range[-1]
        out.append(f"  ladders  none shipped for {name} {lo}{' .. ' + hi if hi != lo else ''}{plat}")
    elif plat:
        out.append(f"  platform {e.platform}{plat[len(', platform ') + len(e.platform):]}")
    c = run.config
    facts = [f"{k}={v}" for k, v in ((k, getattr(c, f) if f else c.extra.get(k)) for k, f in CONFIG_SHOWN) if v]
    if facts:
        out.append("  config   " + " ".join(facts))
    out += [f"  {label:<8} {words}" for label, words in fact_rows(run, packs)]
    for key, label in RUN_NOTES:
        if c.extra.get(key):
            out.append(f"  {label:<8} {c.extra[key][:400]}")
    qsrc = c.extra.get("quantization_source")
    if qsrc:  # an engine that never logs its effective quantization (pack quantization_unlogged)
        out.append(f"  quant    {qsrc[:400]}")
    for failure, what in ((run.start_failure, "start FAILED"),
                          (run.serving_failure, "failed WHILE SERVING")):
        if failure is not None:  # the exception first, in the engine's words (docs/lifecycle.md)
            out += failure_lines(failure, what)
    if run.stopped is not None:  # told to stop by a signal: no failure (docs/lifecycle.md "Stopped")
        first, *rest = stop_words(run.stopped)
        out += [f"  {first}"] + [f"      {x}" for x in rest]
    if run.selections:
        rows = [["LAYER FAMILY", "KERNEL", "RUNG", "COST CLASS", "RANKS", "LINE"]]
        for s in run.selections:
            rung = f"{s.ladder.rung}/{s.ladder.rungs}" if s.ladder else "-"
            if s.ladder and s.ladder.elsewhere:  # the releases the run fits disagree: not one rung
                rung += "?"
            rows.append([s.family, s.kernel + selection_mark(s), rung, s.cost_class.value,
                         ",".join(s.ranks) or "-", str(s.line)])
        out.append("")
        out += _table(rows)
        if any(not s.ladder for s in run.selections):
            out.append(f"  {RUNG_NONE}")
        if any(s.ladder and s.ladder.elsewhere for s in run.selections):
            out.append(f"  {RUNG_SPLIT}")
        for s in run.selections:
            out += selection_notes(run, s, packs)
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
            out.append(f"      evidence: {clip(f.evidence, 300)}")
            for r in f.reasons[:20]:
                out.append(f"      reason:   {clip(r, 300)}")
            if len(f.reasons) > 20:  # say so: a list cut silently reads as the whole list
                out.append(f"      ... and {len(f.reasons) - 20} more reason(s) (JSON findings[].reasons)")
            if f.remedy:
                out.append(f"      remedy:   {f.remedy}")
    if run.unexplained:
        out.append("")
        out.append(f"  Not understood ({len(run.unexplained)} kernel-relevant line(s) gave no selection or finding):")
        for u in run.unexplained[:MAX_UNEXPLAINED_SHOWN]:
            out.append(f"  line {u.line}: {u.message[:200]}")
            out.append(f"      why: {clip(u.why, 300)}")
        if len(run.unexplained) > MAX_UNEXPLAINED_SHOWN:
            out.append(f"  ... {len(run.unexplained) - MAX_UNEXPLAINED_SHOWN} more (logscan scan --unexplained lists them all)")
    return out


def input_note(st: InputStats) -> Optional[str]:
    """One line on what the reader had to repair in one input, or why it stopped; None when clean
    (the parts: ``formats.inputs.input_warnings``, which the JSON, Markdown and HTML print too).

    The error of an input that could not be opened already starts with its path: the path is
    printed once.
    """
    parts = input_warnings(st)
    return f"{st.source}: " + "; ".join(parts) if parts else None


#: what ``RUNG -`` means, printed under every table that shows it
RUNG_SPLIT = ("RUNG k/n? is the rung on the ladder read with; other releases the log fits place the kernel on "
              "other rungs, so the log does not settle which")
RUNG_NONE = ("RUNG - means no shipped ladder of this engine release places the kernel for this layer family "
             "(its list does not hold the name, or no ladder is shipped for the release), so its place is unknown; "
             "the cost class says what the log or its name tells ('logscan explain NAME' lists the ladders that "
             "hold a name)")


def folded_words(run: Run) -> str:
    """What ``run.folded`` says, in words: '12,935 more run(s) like this one, lines 33-49,999,801
    (the last from line 49,999,775), folded; 3 differ in numbers of their log text; their 16 recognised
    line(s) are left out of the JSON events'."""
    f = run.folded
    if f is None:
        return ""
    out = (f"{f.runs:,} more run(s) like this one, lines {f.first_line:,}-{f.last_line:,} "
           f"(the last from line {f.last_first_line:,}), folded")
    if f.numbers_differ:
        out += f"; {f.numbers_differ:,} differ in numbers of their log text"
    if f.events:
        out += f"; their {f.events:,} recognised line(s) are left out of the JSON events"
    return out


def render(report: Report, gate: "Optional[GateResult]" = None, packs: "Optional[PackSet]" = None) -> str:
    """The text report (and the gate's checks, worst first, when given); deterministic.

    An input that could not be opened is not described here: its one line is on stderr. ``packs``:
    those the report was read with (``--patterns``: a pack's titles and ``[kernel_facts]``), None
    for the shipped ones.
    """
    lines: list[str] = []
    for st in report.inputs:
        note = input_note(st)
        if note:
            lines.append(f"! {note}")
    if not report.runs and not all(unopened(st) for st in report.inputs):
        lines.append("No engine log line about quantization kernels was recognised.")
    for run in report.runs:
        if lines:
            lines.append("")
        lines += _run(run, packs)
    if report.runs:
        sm = report.summary
        starts = [1 + (r.folded.runs if r.folded is not None else 0) for r in report.runs]
        failed = sum(n for r, n in zip(report.runs, starts) if r.start_failure is not None)
        serving = sum(n for r, n in zip(report.runs, starts) if r.serving_failure is not None)
        stopped = sum(n for r, n in zip(report.runs, starts) if r.stopped is not None)
        # folded repeats hide starts the runs do not list: say how many failed and how many folded
        folded = (f" ({failed:,} failed start(s), {sm.folded_runs:,} folded)" if sm.folded_runs and failed
                  else f" (and {sm.folded_runs:,} folded into them)" if sm.folded_runs else "")
        lines += ["", f"Summary: {sm.runs} run(s){folded}, {sm.selections} selection(s), {sm.findings} finding(s), "
                      f"{sm.unexplained} kernel-relevant line(s) not understood"
                      + (f"; {failed} start(s) FAILED (START_FAILED)" if failed else "")
                      + (f"; {serving} failed while serving" if serving else "")
                      + (f"; {stopped} stopped by a signal" if stopped else "")
                      + _incomplete_words(report)]
    if gate is not None:
        lines += ([""] if lines else []) + _gate(gate)
    return "\n".join(report_line(line) for line in lines) + "\n" if lines else ""


def _incomplete_words(report: Report) -> str:
    """The summary's note on runs that chose kernels but that no line shows to have come up or failed
    (the log was cut off): what ``logscan gate`` fails as START_INCOMPLETE (``gate/incomplete.py``),
    said here too, so that a scan that looks clean does not contradict the gate. '' when none."""
    from ..gate.incomplete import cut_off, runs_up

    up = runs_up(report)
    cut = [r.index + 1 for r in report.runs if cut_off(report, r, up)]
    if not cut:
        return ""
    which = ", ".join(map(str, cut[:8])) + (" ..." if len(cut) > 8 else "")
    return (f"; {len(cut)} start(s) not seen to come up or fail (run {which}: no ready line, no failure; "
            f"gate START_INCOMPLETE unless --partial-log)")


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
                         n.cost_class.value if n else "-", ch.move_text()])
        out += _table(rows)
        if any(r[2] == "-" or r[5] == "-" for r in rows[1:]):
            out.append("  RUNG - means no kernel on that side, or one on no shipped ladder (its place is unknown)")
    for c in sorted(gate.checks, key=lambda c: VERDICT_ORDER[c.verdict]):
        where = f"{c.source}:{c.line}" if c.line else c.source
        out.append(f"  [{c.verdict.value}] {where} {c.code or c.kind}: {c.message}")
        for r in c.reasons[:20]:  # the engine's own reasons (each kernel's refusal), verbatim
            out.append(f"      reason:   {clip(r, 300)}")
        if len(c.reasons) > 20:
            out.append(f"      ... and {len(c.reasons) - 20} more reason(s) (JSON gate.checks[].reasons)")
        out.append(f"      decided by {c.decided_by}")
    return out
