"""The gate: a pure function of a ``Report`` (plus a policy, a date and an optional baseline).

Every kernel selection, every finding, every run or input with no kernel selection
(``NO_KERNEL_SEEN``) and every layer family compared with a baseline becomes one ``Check``;
one problem is one check (a selection and the finding about it with the same code are folded,
and so are the codes of one baseline family change), keeping the most severe verdict.
The first policy rule that matches a check decides its level (fail, warn or pass); an
allow-list entry turns a fail or warn into a pass until its expiry date, and into a fail
saying it expired after that (an expired entry that matches nothing only warns: remove it).
The gate never reads log lines: it has no matcher of its own.
"""
from __future__ import annotations

from datetime import date
from typing import Optional

from ..models import Report, Run, Selection
from ..formats.failure import did_not_start
from ..packs.model import FindingsFile
from .baseline import FamilyChange, compare
from .fallback import FALLBACK_UNEXPLAINED, fold_refused, fold_unexplained, unexplained_check  # noqa: F401 (re-exported)
from .policy import AllowEntry, Policy, Subject
from .releases import Release, release_of
from .repeats import note_folded
from .unread import KERNEL_LINE_UNREAD, no_kernel_note, unread_check  # noqa: F401 (re-exported)
from .incomplete import (START_INCOMPLETE, _incomplete_check, came_up, cut_off,  # noqa: F401 (re-exported)
                         ready_engines_of, runs_up)
# judging one check lives in .judge, the result models in .result; their names stay importable
# from here (formats, api, tests)
from .judge import KERNEL_POLICY, NO_RULE, _allow, _decide, _judge, _outcome, _versioned  # noqa: F401
from .result import VERDICT_ORDER, Allowance, Check, CodeRule, GateResult, Verdict  # noqa: F401

NO_KERNEL_SEEN = "NO_KERNEL_SEEN"
INPUT_INCOMPLETE = "INPUT_INCOMPLETE"  #: an input read only in part (cut gzip, read error, a signal)
START_FAILED = "START_FAILED"  #: a run whose log says the engine did not start (``Run.start_failure``)
SERVING_FAILED = "SERVING_FAILED"  #: a run that came up, then failed (``Run.serving_failure``)
LINES_NOT_READ = "LINES_NOT_READ"  #: an input with lines over the matching budget or skipped (``InputStats``)
INPUT_UNREADABLE = "INPUT_UNREADABLE"  #: an input of which no line could be read (missing, a directory, denied)


def _code_rule(info) -> CodeRule:
    """The SARIF/JUnit description of a finding code (its ``findings.toml`` entry's three texts)."""
    return CodeRule(severity=info.severity, title=info.title, explanation=info.explanation)


def _scheme_of_finding(run: Run, kernel: Optional[str], line: int, family: Optional[str] = None) -> Optional[Selection]:
    if family is not None:  # the finding names its layer family: that family's selection
        hit = next((s for s in run.selections if s.family == family), None)
        if hit is not None:
            return hit
    for s in run.selections:
        if (kernel and s.kernel.lower() == kernel.lower()) or s.line == line:
            return s
    return None


def evaluate(report: Report, policy: Policy, findings: FindingsFile, today: date,
             baseline: Optional[Report] = None, baseline_name: Optional[str] = None,
             ready_engines: Optional[frozenset[str]] = None, packs=None) -> GateResult:
    """Judge ``report`` with ``policy`` on ``today``; compare with ``baseline`` when given
    (``packs``: the shipped ladders, which rank two kernels on lists of different length).

    ``ready_engines``: the engines whose pack has a ``kind = "ready"`` rule (``ready_engines_of``):
    a run with kernels that is not seen to come up or fail is ``START_INCOMPLETE``, which for a
    known engine outside the set warns at most (its log has no line that could have said so).
    None: no START_INCOMPLETE check is made (the caller gave no packs to tell; ``logscan gate``
    and ``logscan.gate`` always give them).

    ``findings`` is ``patterns/findings.toml``: its map of cost classes to the finding codes
    they imply (a cost-class target covers both) and the codes' descriptions. Deterministic:
    checks follow report order, then baseline families sorted by name.
    """
    from ..formats.text import selection_mark

    cmap = findings.cost_class_finding
    checks: list[Check] = []
    facts: dict[int, str] = {}  #: id(check) -> its message before the policy's reason was added
    keys: dict[int, tuple] = {}  #: id(check) -> (run, source, line of its selection, code): one problem
    up = runs_up(report) if ready_engines is not None else set()  #: runs seen to come up (one pass)
    refused: list[tuple[Check, Selection]] = []  #: selection checks a finding's reasons refuse
    unexplained: list[tuple[Check, tuple]] = []  #: FALLBACK_UNEXPLAINED checks, their selection's key
    for run in report.runs:
        eng, n = run.engine.name, run.index + 1
        rel = release_of(run.engine)
        ver = rel.exact
        for sel in run.selections:
            rung = f" rung {sel.ladder.rung}/{sel.ladder.rungs} on {sel.ladder.registry}" if sel.ladder else ""
            fell = f", fell {sel.ladder.fell}" if sel.ladder and sel.ladder.fell else ""
            if sel.ladder and sel.ladder.elsewhere:  # the text table's 'k/n?': not one rung
                rung = rung.replace(f"/{sel.ladder.rungs} on ", f"/{sel.ladder.rungs}? on ", 1)
                fell += f"; in {sel.ladder.ladder_version}, the releases the log fits disagree on the rung"
            kernels = tuple(k for k in (sel.kernel, sel.ladder.kernel_class if sel.ladder else None) if k)
            cost = sel.cost_class.value if sel.cost_class.value != "unknown" else "cost class unknown"
            mark = selection_mark(sel)  # the text report's mark: (?) ambiguous, (inferred), (traceback)...
            verb = "may run" if mark == " (?)" else "runs"  # one of several kernels named for the family
            rf = sel.refused
            c = Check(kind="selection", code=cmap.get(sel.cost_class.value),
                      name=f"{sel.family}: {sel.kernel}",
                      message=(f"{sel.family} {verb} {sel.kernel}{mark} ({cost}{rung}{fell})"
                               if run.start_failure is None else
                               f"{sel.family} chose {sel.kernel}{' (refused)' if rf else ''} ({cost}{rung}{fell}), "
                               f"not confirmed: the start failed at line {run.start_failure.line}")
                      + (f"; the run's own failure at line {rf.line} ({rf.code}) refuses it" if rf else ""),
                      verdict=Verdict.passed, decided_by="", source=run.source, line=sel.line, run=n,
                      engine=eng, family=sel.family, kernel=sel.kernel, cost_class=sel.cost_class.value,
                      scheme=sel.scheme, evidence=sel.evidence, reasons=[rf.reason] if rf else [])
            subj = Subject(eng, ver, sel.scheme, sel.family, cost_class=sel.cost_class.value, kernels=kernels)
            facts[id(c)] = c.message
            keys[id(c)] = (n, run.source, sel.line, sel.family)
            checks.append(_judge(c, subj, policy, cmap, today, rel))
            if rf is not None:
                refused.append((checks[-1], sel))
            ux = unexplained_check(run, sel, n, ver, findings)
            if ux is not None:  # better rungs above it that the run's stated facts do not decide
                facts[id(ux[0])] = ux[0].message
                unexplained.append((_judge(ux[0], ux[1], policy, cmap, today, rel), keys[id(c)]))
        for f in run.findings:
            sel = _scheme_of_finding(run, f.kernel, f.line, f.family)
            tag = f.inferred_tag()
            c = Check(kind="finding", code=f.code, name=f"{f.code} line {f.line}",
                      message=f"{f.title}{tag}", verdict=Verdict.passed, decided_by="",
                      source=run.source, line=f.line, run=n, engine=eng, kernel=f.kernel,
                      family=sel.family if sel else None, scheme=sel.scheme if sel else None,
                      evidence=f.evidence, reasons=list(f.reasons))
            subj = Subject(eng, ver, sel.scheme if sel else None, sel.family if sel else None, code=f.code,
                           kernels=tuple(k for k in (f.kernel,) if k), parents=findings.lineage(f.code)[1:],
                           severity=f.severity.value)
            facts[id(c)] = c.message
            keys[id(c)] = (n, run.source, sel.line, sel.family) if sel else (n, run.source, f.line, None)
            judged = _judge(c, subj, policy, cmap, today, rel)
            if judged.decided_by == NO_RULE and f.severity.value != "info":
                # a [pass] beside the scan's [warning]/[error] must not read as "checked and fine"
                judged.decided_by += (f"; the scan rates this finding {f.severity.value}, but no rule of the "
                                      f"policy names {f.code}, so it does not change the verdict")
            checks.append(judged)
        sf = run.start_failure
        if sf is not None:
            c = Check(kind="start_failure", code=START_FAILED, name=f"{START_FAILED} run {n}",
                      message=did_not_start(n, sf),
                      verdict=Verdict.passed, decided_by="", source=run.source, line=sf.line, run=n,
                      engine=eng, evidence=sf.evidence, reasons=[sf.cause] if sf.cause else [])
            checks.append(_judge(c, Subject(eng, ver, None, None, code=START_FAILED), policy, cmap, today, rel))
        lf = run.serving_failure
        if lf is not None:
            c = Check(kind="start_failure", code=SERVING_FAILED, name=f"{SERVING_FAILED} run {n}",
                      message=did_not_start(n, lf, "the engine failed after it came up"),
                      verdict=Verdict.passed, decided_by="", source=run.source, line=lf.line, run=n,
                      engine=eng, evidence=lf.evidence, reasons=[lf.cause] if lf.cause else [])
            checks.append(_judge(c, Subject(eng, ver, None, None, code=SERVING_FAILED), policy, cmap, today, rel))
        if ready_engines is not None and cut_off(report, run, up):
            checks.append(_incomplete_check(report, run, n, eng, rel, policy, cmap, today, ready_engines))
        ur = unread_check(run, n, rel, policy, cmap, today)  # a kernel sentence no rule reads: said
        if ur is not None:
            checks.append(ur)
        if not run.selections:
            c = Check(kind="no_kernel", code=NO_KERNEL_SEEN, name=f"{NO_KERNEL_SEEN} run {n}",
                      message=f"run {n} (lines {run.first_line}-{run.last_line}) names no quantized kernel "
                              f"selection{no_kernel_note(run)}{_failing_kernel_note(run)}",
                      verdict=Verdict.passed, decided_by="", source=run.source, line=run.first_line, run=n,
                      engine=eng)
            c = _judge(c, Subject(eng, ver, None, None, code=NO_KERNEL_SEEN), policy, cmap, today, rel)
            why = _explained_absence(checks, n, run.source, findings) if c.verdict is Verdict.fail else None
            if why is None:
                checks.append(c)
            else:  # one cause, one failure: the finding that says why no kernel ran carries the fact
                said = (f"; it is why run {n} (lines {run.first_line}-{run.last_line}) names no "
                        f"quantized kernel selection ({NO_KERNEL_SEEN} folded into it)")
                why.message += said
                if id(why) in facts:
                    facts[id(why)] += said
    fold_refused(checks, refused, _merge, facts)  # a selection its run's failure refuses: that failing check
    checks = _fold(checks, facts, keys)
    fold_unexplained(checks, unexplained, keys, _merge, facts)  # into its selection's check: one problem
    sources_with_runs = {r.source for r in report.runs}
    for st in report.inputs:
        if st.error and st.lines:  # read in part: what came after is unknown, so it cannot pass
            c = Check(kind="input", code=INPUT_INCOMPLETE, name=f"{INPUT_INCOMPLETE} {st.source}",
                      message=f"{st.source}: read {st.lines} line(s), then: {st.error.removeprefix(st.source + ': ')}",
                      verdict=Verdict.passed, decided_by="", source=st.source, line=st.lines)
            checks.append(_judge(c, Subject(None, None, None, None, code=INPUT_INCOMPLETE), policy, cmap, today,
                                 Release()))
        if st.source in sources_with_runs:
            continue
        if st.error and st.lines == 0:  # missing, a directory, permission denied: not a log without kernels
            c = Check(kind="input", code=INPUT_UNREADABLE, name=f"{INPUT_UNREADABLE} {st.source}",
                      message=f"{st.source}: cannot be read ({st.error.removeprefix(st.source + ': ')}): "
                              "no line of it was read, so no evidence and no pass",
                      verdict=Verdict.passed, decided_by="", source=st.source)
            checks.append(_judge(c, Subject(None, None, None, None, code=INPUT_UNREADABLE), policy, cmap, today,
                                 Release()))
            continue
        what = (f"no engine log line about quantization kernels was recognised in {st.lines} line(s)"
                + (f" ({st.error})" if st.error else ""))
        c = Check(kind="no_kernel", code=NO_KERNEL_SEEN, name=f"{NO_KERNEL_SEEN} {st.source}",
                  message=f"{st.source}: {what}",
                  verdict=Verdict.passed, decided_by="", source=st.source)
        checks.append(_judge(c, Subject(None, None, None, None, code=NO_KERNEL_SEEN), policy, cmap, today, Release()))
    for st in report.inputs:
        if st.over_budget_lines or st.skipped_lines:
            named = ", ".join(map(str, st.over_budget_at)) + (" ..." if st.over_budget_lines > len(st.over_budget_at) else "")
            what = "; ".join(w for w in (
                f"{st.over_budget_lines} line(s) over the per-line matching budget (line {named})"
                if st.over_budget_lines else "",
                f"{st.skipped_lines} line(s) skipped (a value past a parser bound)" if st.skipped_lines else "") if w)
            c = Check(kind="input", code=LINES_NOT_READ, name=f"{LINES_NOT_READ} {st.source}",
                      message=f"{st.source}: {what}", verdict=Verdict.passed, decided_by="", source=st.source,
                      line=st.over_budget_at[0] if st.over_budget_at else None)
            checks.append(_judge(c, Subject(None, None, None, None, code=LINES_NOT_READ), policy, cmap, today, Release()))
    changes: list[FamilyChange] = []
    if baseline is not None:
        changes = compare(baseline, report, packs)
        checks += _baseline_checks(changes, report, policy, cmap, today)
    note_folded(checks, report)  # a check of a run with folded repeats says so (a crash loop)
    used = {c.allowance.where for c in checks if c.allowance is not None}
    for loc in policy.allow:
        entry: AllowEntry = loc.item  # type: ignore[assignment]
        if loc.where not in used and today > entry.expires:
            checks.append(Check(kind="allow", name=f"allow-list entry {loc.where}", verdict=Verdict.warn,
                                message=f"allow-list entry {loc.where} expired on {entry.expires.isoformat()} and "
                                        f"matched nothing: remove it (reason was: {entry.reason})",
                                decided_by=loc.where, source=policy.source))
    worst = min((c.verdict for c in checks), key=VERDICT_ORDER.__getitem__, default=Verdict.passed)
    counts = {v.value: sum(1 for c in checks if c.verdict == v) for v in Verdict}
    codes = {c.code: _code_rule(findings.code[c.code]) for c in checks if c.code in findings.code}
    return GateResult(verdict=worst, policy=policy.source, baseline=baseline_name, date=today, counts=counts,
                      checks=checks, changes=changes, codes=dict(sorted(codes.items())))


def _more_severe(a: Check, b: Check) -> bool:
    """``b`` should be kept over ``a``: a worse verdict; on a tie, a finding (it carries the engine's reasons)."""
    return (VERDICT_ORDER[b.verdict], b.kind != "finding") < (VERDICT_ORDER[a.verdict], a.kind != "finding")


def _merge(a: Check, b: Check, facts: dict[int, str]) -> Check:
    """One check for two views of one problem: the more severe one, its message naming the other's facts."""
    if _more_severe(a, b):
        a, b = b, a
    fa, fb = facts.get(id(a), a.message), facts.get(id(b), b.message)
    a.message = f"{fa}; {fb}" + a.message[len(fa):] if a.message.startswith(fa) else f"{a.message}; {fb}"
    facts[id(a)] = f"{fa}; {fb}"
    for field in ("family", "kernel", "cost_class", "scheme", "evidence"):
        if getattr(a, field) is None:
            setattr(a, field, getattr(b, field))
    a.reasons = a.reasons + [r for r in b.reasons if r not in a.reasons]
    return a


#: finding codes (and their children, ``findings.toml`` ``parent``) whose failure says why a run
#: has no kernel selection: no rung accepted the layer (KERNEL_NOT_FOUND), or the GPU cannot run it
EXPLAINS_NO_KERNEL = frozenset({"KERNEL_NOT_FOUND", "UNSUPPORTED_ON_ARCH"})


def _failing_kernel_note(run) -> str:
    """What NO_KERNEL_SEEN adds when the run's failed start links a kernel to its exception
    (``StartFailure.failing_kernel``, a traceback frame or the exception's words): that kernel is
    where the start died, not a selection a line states, so both are said (a trial read
    'failing kernel: CUTLASS' beside 'names no quantized kernel selection' as a contradiction)."""
    sf = run.start_failure or run.serving_failure
    if sf is None or not sf.failing_kernel:
        return ""
    return (f"; its failure names {sf.failing_kernel} as the failing kernel (line "
            f"{sf.failing_kernel_line or sf.line}), but no line states what the engine chose or on which rung")


def _explained_absence(checks: list[Check], run: int, source: str, findings: FindingsFile) -> Optional[Check]:
    """The first failing finding check of run ``run`` in ``source`` whose code (or an ancestor of
    it) is in ``EXPLAINS_NO_KERNEL``, or None. A run whose start says no kernel could take the
    layer names no selection for that very reason: NO_KERNEL_SEEN would fail the gate a second
    time for one cause (vLLM 0.5.4, vllm-project/vllm#7240: 'Marlin does not support
    weight_bits = uint4b8' as UNSUPPORTED_ON_ARCH, then NO_KERNEL_SEEN). The gate still fails,
    on the explaining check."""
    for c in checks:
        if (c.kind == "finding" and c.run == run and c.source == source and c.verdict is Verdict.fail
                and c.code and EXPLAINS_NO_KERNEL.intersection(findings.lineage(c.code))):
            return c
    return None


def _fold(checks: list[Check], facts: dict[int, str], keys: dict[int, tuple]) -> list[Check]:
    """One check per selection (run, input, its log line) and code: a selection whose cost class
    implies a finding code (``findings.toml`` ``cost_class_finding``) and the finding raised about
    that selection (same kernel, or same line) are one problem, counted once. Order: where the
    first of them stood."""
    out: list[Check] = []
    first: dict[tuple, int] = {}
    for c in checks:
        key = keys[id(c)] + (c.code,) if c.code and id(c) in keys else None
        if key is None or key not in first:
            if key is not None:
                first[key] = len(out)
            out.append(c)
        else:
            out[first[key]] = _merge(out[first[key]], c, facts)
    return out


def _baseline_checks(changes: list[FamilyChange], report: Report, policy: Policy, cmap: dict[str, str],
                     today: date) -> list[Check]:
    engines = {r.source: (r.engine.name, release_of(r.engine)) for r in report.runs}
    out = []
    for ch in changes:
        cur, old = ch.new, ch.old
        src = cur.source if cur else (report.inputs[0].source if report.inputs else "-")
        eng, rel = engines.get(src, (None, Release()))
        before = f"{old.kernel} {old.rung_text()} {old.cost_class.value}" if old else "-"
        after = f"{cur.kernel} {cur.rung_text()} {cur.cost_class.value}" if cur else "-"
        codes = []
        if ch.status == "down":
            codes.append("KERNEL_MOVED_DOWN")
        if ch.status == "moved":  # another kernel no list ranks: not passed as unchanged
            codes.append("KERNEL_CHANGED_UNRANKED")
        if ch.cost_changed:  # not "added" / "removed": a family one side lacks is FAMILY_MISSING or new
            codes.append("COST_CLASS_CHANGED")
        if ch.status == "missing":
            codes.append("FAMILY_MISSING")
        what = {"KERNEL_MOVED_DOWN": "moved down its ladder since the baseline",
                "KERNEL_CHANGED_UNRANKED": "runs another kernel than the baseline, which no ladder ranks against it",
                "COST_CLASS_CHANGED": f"cost class changed since the baseline ({ch.cost})",
                "FAMILY_MISSING": "has no kernel selection now", None: f"{ch.status} since the baseline"}
        judged: list[Check] = []
        for code in codes or [None]:
            c = Check(kind="baseline", code=code, name=ch.family + (f" {code}" if code else ""),
                      message=f"{ch.family} {what[code]}: {before} -> {after} ({ch.reasoning})",
                      verdict=Verdict.passed, decided_by="", source=src, line=cur.line if cur else None,
                      engine=eng, family=ch.family, kernel=cur.kernel if cur else (old.kernel if old else None),
                      cost_class=cur.cost_class.value if cur else None, evidence=cur.evidence if cur else None)
            if code is None:
                c.decided_by = "default: no change that the baseline judges"
                judged.append(c)
                continue
            subj = Subject(eng, rel.exact, None, ch.family, code=code,
                           kernels=tuple(k for k in (c.kernel,) if k))
            judged.append(_judge(c, subj, policy, cmap, today, rel))
        # one family change is one check: the most severe code (first listed on a tie), the others named
        keep = judged[0]
        for other in judged[1:]:
            if VERDICT_ORDER[other.verdict] < VERDICT_ORDER[keep.verdict]:
                keep = other
        rest = [o for o in judged if o is not keep]
        if rest:
            keep.message += "; also " + "; ".join(f"{o.code}: {what[o.code]} ({o.verdict.value})" for o in rest)
        out.append(keep)
    return out


def __getattr__(name: str):
    """``GatedReport`` (a pydantic model, for ``logscan schema --gate``) is built on first use."""
    if name == "GatedReport":
        from . import result

        return result.GatedReport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
