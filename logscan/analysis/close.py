"""Closing a run: its recognised lines become a ``Run`` (selections on their ladders, findings).

Each line naming a kernel for a layer family is placed on the engine's ladder (rung k of n,
cost class), else classed by the pack's ``name_cost`` table, else by the engine-neutral
lexicon; a cost class that is a degradation raises its finding (inferred). A rule's stated
finding is kept only when ``trust.judge`` trusts it for this run. ``ctx`` is the
``Analyzer`` (its packs, rules, ladders, ``gpu`` and ``cuda``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from packaging.version import Version

from .. import rxcache
from ..formats.clip import clip
from ..models import COST_ORDER, CostClass, Event, Finding, Run, Selection, Severity
from ..packs.model import FindingsFile
from . import assumed, run_checks, run_parts, statements
from .engine_facts import engine_info, infer_platform, kernel_of, platform_from_failure
from .infer import infer_selections
from .refused import mark_refused
from .logged_ladder import logged_candidates, off_list, off_list_entry, off_list_note, on_logged_list
from .ladders import parse_version
from .lexicon import classify, normalise
from .runstate import RunState, SelectionGroup, fill
from .ambiguity import ambiguous_moe
from .trust import judge, remedy_applies, unexplained, unread_lines
from .targets import SHOWN_FACTS, event_target, family_of, placeable, stated_fact, unplaced
from .failhead import describe, ladder_names
from .triton_def import jit_failing_kernel, name_jit_kernels
from .frames import corroborate
from .uncaught import seen_in_traceback

if TYPE_CHECKING:
    from .analyzer import Analyzer


#: severities from least to most grave
_RANK = {Severity.info: 0, Severity.warning: 1, Severity.error: 2}


#: lines of other rules named in one finding's reasons ("also line N: ...")
_ALSO_MAX = 8


class FindingSet:
    """The findings of one run being closed: one per (layer family, code).

    ``items``: (family, code) -> ``Finding`` (family None: about the run as a whole).
    """

    def __init__(self, codes: FindingsFile):
        self.codes = codes
        self.items: dict[tuple[Optional[str], str], Finding] = {}

    def key(self, code: str, family: Optional[str]) -> tuple[Optional[str], str]:
        """One finding per (family, code): a finding about no family joins the code's only
        finding, and a family's finding takes over the code's family-less one."""
        same = [k for k in self.items if k[1] == code]
        if family is None and len(same) == 1:
            return same[0]
        if family is not None and (None, code) in self.items and (family, code) not in self.items:
            self.items[(family, code)] = self.items.pop((None, code)).model_copy(update={"family": family})
        return (family, code)

    def add(self, code: str, ev: Event, rule_id: Optional[str], kernel: Optional[str] = None,
            reasons: Optional[list[str]] = None, remedy: Optional[str] = None,
            severity: Optional[Severity] = None, cost_class: Optional[CostClass] = None,
            inferred: bool = False, title: Optional[str] = None,
            basis: Optional[str] = None, family: Optional[str] = None) -> None:
        """``basis``: what an inferred finding was inferred from (``Finding.inferred_from``);
        ``family``: the layer family it is about (None: the run as a whole)."""
        key = self.key(code, family)
        if key in self.items:
            f = self.items[key]
            for rs in reasons or []:
                if rs not in f.reasons and len(f.reasons) < 64:
                    f.reasons.append(rs)
            if rule_id != f.rule and ev.line != f.line and not inferred:
                # another rule states the same code: one finding, but its line is named, never lost
                # (llama.cpp's 'offloaded 0/28 layers to GPU' after 'flash_attn ... forcing off')
                also = f"also line {ev.line}: {clip(ev.message, 300)}"
                if also not in f.reasons and sum(r.startswith("also line ") for r in f.reasons) < _ALSO_MAX:
                    f.reasons.append(also)
            new_sev = severity or Severity(self.codes.code[code].severity)
            graver = not inferred and _RANK[new_sev] > _RANK[f.severity]
            if (f.inferred and not inferred) or graver:
                # a line stating it beats an inference; a later line stating it more gravely (a
                # warning that the engine goes on, then the fatal error) gives its severity and evidence
                self.items[key] = f.model_copy(update={"inferred": False, "inferred_from": None, "line": ev.line,
                                                   "evidence": clip(ev.message, 2000), "rule": rule_id,
                                                   "kernel": kernel or f.kernel,
                                                   "cost_class": cost_class or f.cost_class,
                                                   "severity": max(new_sev, f.severity, key=_RANK.get),
                                                   "reasons": [rs for rs in f.reasons if not (graver and rs.startswith(
                                                       "severity lowered from error"))]})
            return
        info = self.codes.code[code]
        self.items[key] = Finding(
            code=code, severity=severity or Severity(info.severity), title=title or info.title, line=ev.line,
            evidence=clip(ev.message, 2000), rule=rule_id, kernel=kernel, cost_class=cost_class, family=key[0],
            reasons=list(reasons or []),
            remedy=remedy, inferred=inferred, inferred_from=basis if inferred else None,
        )


def close_run(ctx: Analyzer, run: RunState) -> Run:
    """The ``Run`` a closed run state makes: engine facts, selections placed on their ladders, findings."""
    run_checks.settle_engine(ctx, run)  # generic lines read before the engine was known: its own rules
    info = engine_info(ctx, run)
    idx = ctx.ladders.get(run.engine)
    pack = ctx.packs.packs[run.engine]
    infer_platform(ctx, run, info, pack)
    sels: dict[tuple[str, str], SelectionGroup] = {}
    codes = ctx.packs.findings
    findings = FindingSet(codes)
    add_finding = findings.add

    logged_v = parse_version(info.version) if info.version_source in ("logged", "reported") else None
    between_ladders = bool(logged_v and info.ladder_version and Version(info.ladder_version) < logged_v)
    #: (line, rule) of events that gave something; (line, rule) -> why a stated finding was not trusted
    used: set[tuple[int, str]] = set()
    dropped: dict[tuple[int, str], str] = {}
    pending: list = []  #: (event, kernel, how) of events naming a target no ladder placed (``targets``)
    assumed_on: set = set()  #: selections whose scheme a rule's ``assumes`` reading gave
    off_lists: list = []  #: "not understood" entries of choices absent from their own logged list
    release = info.version if info.version_source in ("logged", "reported") else info.ladder_version
    # the facts a skipped rung is judged on (the GPU, CUDA runtime, build, env, server args the
    # run states): ``fell`` counts the rungs none of them refuses, and the fallback is judged on them
    from .fallback import run_machine

    known, origin = run_machine(ctx, run, pack)
    off = run_checks.disabled_kernels(run)  # rungs the log's own switch disabled
    shown = SHOWN_FACTS | set(pack.meta.kernel_facts)  # facts the report shows (targets.stated_fact)
    for ev in run.events:
        cr, rule_pack = ctx.rules[ev.rule]
        r = statements.as_stated_for(cr.rule, run)  # a sentence under the checkpoint it serves natively
        reading = assumed.read(r, run, known)  # a scheme the sentence assumes: stated, contradicted, or assumed
        r = reading.rule if reading is not None else r
        g = dict(ev.groups)
        kernel = kernel_of(cr, ev)
        reasons = list(ev.items)
        if g.get("reason") and g["reason"].strip():
            reasons.insert(0, g["reason"].strip())
        sel_family: Optional[str] = None  # the family of the selection this line names, if any
        cost: Optional[CostClass] = None
        placed_family = None  # an event's named target a ladder holds: the registry's family
        if not r.family and not r.finding and not r.frame:  # an event or run fact, not a selection or frame
            tgt = event_target(ctx.packs.lexicon, ev)
            if tgt is not None and not stated_fact(tgt[0], r.sets, g, shown):
                tname = normalise(tgt[0]) or tgt[0]
                # placed only where one registry holds the name itself: a bare 'Marlin' is a rung
                # of several, and which one the line means it does not say
                got = (idx.place(info.ladder_version, tname, None, run.platform, run.config.quantization, known, off)
                       if idx and len(idx.holders(info.ladder_version, tname)) == 1
                       and placeable(tname) else None)
                placed_family = family_of(got.registry) if got is not None else None
                if placed_family is None:
                    pending.append((ev, tgt[0], tgt[1]))
                else:
                    kernel = tgt[0]
        if (r.family or placed_family) and kernel:
            used.add((ev.line, ev.rule))
            family = fill(r.family, g) if r.family else placed_family
            hint = fill(r.registry, g) if r.registry else None
            kname = normalise(kernel) or kernel  # an enum member or a quoted name, as the ladders hold it
            placement = (idx.place(info.ladder_version, kname, hint, run.platform, run.config.quantization, known, off)
                         if idx and (reading is None or reading.placed) else None)
            nearer = None
            if (placement is None and idx is not None and info.ladder_version and (reading is None or reading.placed)
                    and (between_ladders or idx.is_composed(info.ladder_version))):
                # a release between two shipped ladders (0.10.1 between 0.9.2 and 0.10.2) may
                # already hold the next ladder's registry: the next shipped release is nearest
                nearer = idx.next_release(info.ladder_version)
                placement = (idx.place(nearer, kname, hint, run.platform, run.config.quantization, known, off)
                             if nearer else None)
            if placement is not None and family == "linear":
                # a bare kind word states no scheme ('Using XPUwNa16LinearKernel' quoted without its
                # 'for <method>'): the registry the ladder places the kernel on names it (targets.family_of)
                family = family_of(placement.registry) or family
            cands = logged_candidates(ev)
            if placement is not None and cands:  # the run's own ladder
                placement = on_logged_list(idx, placement, kname, cands, ev.line, hint, known, off) or placement
            unlisted = off_list(kname, cands, placement)  # chosen 'out of' a list that lacks it
            cost = CostClass(r.cost_class) if r.cost_class else None
            if r.shape and placement is None and classify(ctx.packs.lexicon, kernel, "") is None:
                used.discard((ev.line, ev.rule))  # a grammar shape naming no known kernel: its parts stay an event
                continue
            basis = "ladder" if placement is not None and not r.cost_class else "engine_message"
            reasoning = (f"cost class stated by the engine's own message (rule {r.id})"
                         if r.cost_class and placement is None else None)
            if placement is not None and nearer:
                reasoning = (f"placed on the next shipped ladder, {pack.meta.pack.title or pack.engine} {nearer}: the {info.ladder_version} "
                             f"registries do not hold {kernel}")
            if cost is None and placement is not None:
                cost = placement.cost_class
            if (placement is not None and len(run.era) > 1 and idx is not None and not nearer
                    and not placement.position.logged_list):
                pos = placement.position
                pos.elsewhere, pos.unplaced_in = idx.elsewhere(run.era, placement, kernel, hint, run.platform,
                                                               run.config.quantization)
            if cost is None:
                for nc in pack.meta.name_cost:
                    if (rxcache.search(nc.pattern, kernel) and (not nc.family or rxcache.search(nc.family, family))
                            and (not nc.quantization or rxcache.search(nc.quantization, run.config.quantization or ""))):
                        cost = CostClass(nc.cost_class)
                        reasoning = f"classified by name ({pack.meta.pack.title or pack.engine} name table): {nc.why}"
                        basis = "kernel_name"
                        break
            if cost is None:  # the engine-neutral lexicon, last: never silently
                bn = classify(ctx.packs.lexicon, kernel, f"{run.config.quantization or ''} {family}")
                if bn is not None and bn.cost_class != "unknown":
                    cost, reasoning, basis = CostClass(bn.cost_class), bn.reasoning, "kernel_name"
                elif bn is not None:
                    reasoning = bn.reasoning
            # one rung of one registry is one selection, whichever lines name it (a "Selected X"
            # line and the engine's own warning about X are the same choice)
            key = ((placement.registry.name, placement.position.kernel_class) if placement
                   else (family, kernel))
            rank = ev.rank  # a process name without a rank (VllmWorkerProcess) tells no ranks apart
            if key not in sels:
                sel = Selection(
                    family=family, kernel=kernel, cost_class=cost or CostClass.unknown,
                    scheme=(placement.registry.scheme or None) if placement else None,
                    ladder=placement.position if placement else None,
                    observed=True, reasoning=reasoning, line=ev.line, evidence=clip(ev.message, 2000),
                    rule=r.id,
                )
                sels[key] = SelectionGroup(sel)
            sel_family = sels[key].selection.family  # another line may have named this choice first
            if reading is not None and key not in assumed_on:  # once per selection, whichever line
                assumed_on.add(key)
                s0 = sels[key].selection
                s0.scheme = reading.scheme_of(s0.scheme)
                kept = [s0.reasoning] if s0.reasoning and reading.kind in ("assumed", "stated") else []
                s0.reasoning = "; ".join([*reading.reasons, *kept])  # a cost class the reading gave is no engine's
            if unlisted and not any(u.line == ev.line for u in off_lists):
                note = off_list_note(kernel, cands, ev.line, placement is not None)
                s0 = sels[key].selection
                s0.reasoning = note + (f"; {s0.reasoning}" if s0.reasoning else "")
                off_lists.append(off_list_entry(ev, note))
            if rank:
                sels[key].ranks.add(rank)
            sels[key].printers.add(ev.rank or "main")
            if len(sels[key].events) < 8:
                sels[key].events.append(ev)
            lk = (pack.ladders[placement.position.ladder_version].kernel.get(placement.position.kernel_class)
                  if placement is not None else None)
            if cost is not None and cost.value in codes.cost_class_finding and not r.finding:
                code = codes.cost_class_finding[cost.value]
                add_finding(code, ev, r.id, kernel=kernel, inferred=True, basis=basis, family=sel_family,
                            title=f"{codes.code[code].title}: {kernel} ({family})",
                            reasons=run_checks.why_cost(placement, lk, cost, reasoning,
                                                       pack.meta.pack.title or pack.engine))
            if (lk is not None and lk.activation_scaling == "per-tensor"
                    and (run.config.quantization or "").lower() in pack.meta.pack.per_token_fp8_methods):
                add_finding("FP8_PER_TENSOR_FALLBACK", ev, r.id, kernel=kernel, inferred=True, basis="ladder",
                            family=sel_family, reasons=[
                    f"quantization={run.config.quantization} asks for dynamic per-token FP8 activation "
                    f"scales where the GPU allows it; {placement.position.kernel_class} applies one scale "
                    f"per tensor (rung {placement.position.rung}/{placement.position.rungs} of "
                    f"{placement.position.registry}, {pack.meta.pack.title or pack.engine} {placement.position.ladder_version})"])
        if r.finding:
            verdict = judge(r.finding, Severity(codes.code[r.finding].severity), cr, rule_pack, run.engine,
                            run.engine_sure, ev, ctx.packs, release)
            if not verdict.keep:
                dropped[(ev.line, ev.rule)] = verdict.why or "not trusted"
            else:
                used.add((ev.line, ev.rule))
                add_finding(r.finding, ev, r.id, kernel=kernel, reasons=reasons + (
                                [verdict.why] if verdict.why else []) + (reading.reasons if reading else []),
                            title=reading.title if reading else None,
                            remedy=((fill(r.remedy, g).strip() or None)
                                    if r.remedy and remedy_applies(cr, run.engine_sure) else None),
                            severity=(reading.severity if reading and reading.severity else verdict.severity),
                            cost_class=cost, family=sel_family)
        elif r.sets or ev.groups:
            used.add((ev.line, ev.rule))

    name_jit_kernels(run.jit_heads + run.events, findings.items)  # a Triton CompilationError's `def <kernel>(` line
    run_checks.arch_check(ctx, run, pack, add_finding, frozenset(code for _, code in findings.items))
    run_checks.expected_rungs(ctx, run, pack, sels, add_finding, known, origin, info)
    statements.gpu_statements(ctx, run, add_finding, known, origin)
    ambiguous = ambiguous_moe(sels, ctx.rules)
    selections = []
    for s in sels.values():
        s.selection.ranks = sorted(s.ranks)
        selections.append(s.selection)
    start_failure, crashed = run_parts.outcome(run, pack, findings.items if run.engine_sure else dict(findings.items))
    failure = start_failure or crashed
    said_by = ctx.rules.get(failure.rule) if failure is not None else None  # (rule, its pack)
    unclaimable = failure is not None and not run.engine_sure and said_by is not None and (
        said_by[0].rule.kind == "uncaught" or ctx.disowned(run.source, said_by[1].engine))
    if failure is not None and not run.engine_sure and not unclaimable:
        start_failure, crashed = run_parts.outcome(run, pack, findings.items)  # kept: its cause is fatal
    unclaimed = None
    if unclaimable:
        # a failed start (START_FAILED) is an engine's. In a run no line ties to an engine, a bare
        # Python traceback names none (FlashInfer's JIT build, a vLLM fork's start: negative10), and
        # an engine pack's own fatal line is no evidence once a line showed another program built on
        # the engine's library (whisper.cpp's ggml 'CUDA error' abort): said, not gated. A pack's
        # fatal line alone (rocBLAS's missing Tensile library, llamacpp-111) stays a failed start.
        unclaimed, start_failure, crashed = start_failure or crashed, None, None
        info.identified_by += (f"; the failure at line {unclaimed.line} ({clip(unclaimed.cause or unclaimed.evidence, 120)}) is not "
                               "reported as START_FAILED: a failed start is an engine's, and no line names one")
    # a start that a line says failed (an error finding) ran no kernel: nothing to infer
    failed = start_failure is not None or unclaimed is not None or any(
        f.severity == Severity.error and not f.inferred for f in findings.items.values())
    seen_in_traceback(selections, ctx.rules)
    corroborate(run.events, ctx.rules, selections, used, ctx.packs.lexicon)
    for failure in (start_failure, crashed):
        if failure is not None:  # why, in the engine's own words (the report's headline)
            describe(failure, run, ctx.rules, ctx.packs.lexicon, ladder_names(pack, info.ladder_version),
                     findings.items.values())
            jit_failing_kernel(failure, run.jit_heads + run.events)
            if failure.failing_kernel and failure.failing_kernel_line == failure.cause_line:
                # the exception is read: it is the failure's cause and names its kernel
                used.update((e.line, e.rule) for e in run.events if e.line == failure.cause_line)
            elif failure.failing_kernel and failure.failing_kernel_line is not None:
                # a frame naming its own format and path (rule names_path) gave the failing path: read
                used.update((e.line, e.rule) for e in run.events if e.line == failure.failing_kernel_line
                            and e.rule in ctx.rules and ctx.rules[e.rule][0].rule.names_path)
    if start_failure is not None:
        run_parts.unconfirmed(selections, start_failure)
        platform_from_failure(run, info, pack, start_failure.failing_kernel, start_failure.failing_kernel_line)
    for sel, hint in ([] if failed else infer_selections(
            pack, run.config, info.version, selections,
            {e.kind for e in run.events}, ctx.gpu, ctx.cuda)):
        placement = idx.place(info.ladder_version, sel.kernel, hint, run.platform) if idx else None
        if placement is not None:
            sel.ladder, sel.scheme = placement.position, placement.registry.scheme or None
        selections.append(sel)
        code = codes.cost_class_finding.get(sel.cost_class.value)
        if code:
            ev0 = Event(line=sel.line, rule=sel.rule, kind="inferred", source=run.source,
                        message=sel.reasoning or sel.evidence)
            add_finding(code, ev0, sel.rule, kernel=sel.kernel, inferred=True, basis="config", family=sel.family,
                        title=f"{codes.code[code].title}: {sel.kernel} ({sel.family})")
    selections += run_checks.walk_selections(ctx, run, pack, selections)
    run_parts.rank_divergence(sels, add_finding)
    attention = run_parts.attention(run)
    kv = run_parts.kv_cache(run, add_finding, pack.meta.pack.kv_dtype_aliases)
    run_parts.quantization_source(run, pack)
    run_checks.note_unknown_gpu(ctx, run, origin)  # a GPU name the table does not know: said, not guessed
    run_checks.note_given_gpu(run, known, origin)  # --gpu decided the machine: the report names it
    # a selection whose kernel a reason of the run's own failure refuses (KERNEL_NOT_FOUND)
    mark_refused(selections, list(findings.items.values()), codes, pack.ladders)
    order = {c: i for i, c in enumerate(COST_ORDER)}
    sev = {"error": 0, "warning": 1, "info": 2}
    fl = sorted(findings.items.values(), key=lambda f: (sev[f.severity.value], f.line, f.code))
    worst = min((s.cost_class for s in selections), key=lambda c: order[c], default=None)
    return Run(index=run.index, source=run.source, first_line=run.first_line, last_line=run.last_line,
               engine=info, config=run.config, selections=selections, findings=fl,
               worst_cost_class=worst, attention=attention, kv_cache=kv, start_failure=start_failure,
               unexplained=_not_understood(run, ctx, used, dropped, selections, fl, pending, ambiguous + off_lists),
               serving_failure=crashed, stopped=run_parts.stopped(run, pack, ctx.rules))


def _not_understood(run: RunState, ctx: Analyzer, used, dropped, selections, findings, pending, ambiguous) -> list:
    """The run's "not understood" entries in line order: events read without a statement
    (``trust.unexplained``), an event's named target no ladder placed (``targets.unplaced``: it
    takes the place of the event's own entry), sentences no rule read (``trust.unread_lines``)."""
    held = {s.line for s in selections} | {f.line for f in findings}
    targets = unplaced(pending, selections, held)
    lines = {u.line for u in targets}
    return sorted([u for u in unexplained(run.events, ctx.rules, used, dropped, ctx.packs.lexicon) if u.line not in lines]
                  + targets + unread_lines(run.unread, run.events, selections) + ambiguous, key=lambda u: u.line)
