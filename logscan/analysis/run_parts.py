"""The parts of a run beside its selections: start failure, attention, KV cache, rank divergence.

Each reads the run's recognised lines once it closes; the findings go through the
``add_finding`` of ``close.FindingSet`` (one finding per layer family and code).
"""
from __future__ import annotations

from typing import Optional

from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..formats.clip import clip
from ..models import AttentionChoice, Event, KvCache, StartFailure, Stop
from ..packs.loader import Pack
from .ladders import norm
from .lifecycle import in_serving_loop, signal_of, stop_line, torn_down, up_before
from .runstate import RunState, SelectionGroup, kv_norm, kv_same
from .trust import pack_regex
from .uncaught import TRACEBACK, uncaught_start_failure

_LIST_ITEM = lazyre.compile(r"[\w.\-/]{1,80}")


def quantization_source(run: RunState, pack: Pack) -> None:
    """Pack ``quantization_unlogged``: say (``config.extra["quantization_source"]``) that the
    engine never logs its effective quantization, unless a line logged it (``logged ...``)."""
    note = pack.meta.pack.quantization_unlogged
    src = run.config.extra.get("quantization_source", "")
    if note and not src.startswith("logged"):
        run.config.extra["quantization_source"] = (f"{src}; " if src else "not logged; ") + note


def _failure(run: RunState, pack: Pack) -> tuple[Optional[Event], Optional[StartFailure]]:
    """The run's first failure line (an engine's ``start_failure`` event, then the
    ``StartFailure`` it makes) or, with none, the traceback it never recovered from
    (``uncaught.uncaught_start_failure``: ``(None, failure)``); ``(None, None)`` when neither."""
    ev = next((e for e in run.events if e.kind == "start_failure"), None)
    if ev is not None:
        return ev, StartFailure(line=ev.line, evidence=clip(ev.message, 2000), rule=ev.rule, process=ev.process)
    fatal = pack.meta.pack.fatal_line
    return None, uncaught_start_failure(run, pack_regex(fatal) if fatal else None)


def stopped(run: RunState, pack: Pack, rules: dict) -> Optional[Stop]:
    """The run's stop (docs/lifecycle.md "Stopped"): its first ``stop`` line (a signal handler's:
    vLLM v1/engine/core.py ``[shutdown] EngineCore: trigger received signal=SIGTERM``), the signal it
    names (``lifecycle.signal_of``; the rule's ``stop_signal`` when the line names none), whether the
    server was up before it, and the failure after it that was its teardown (``lifecycle.torn_down``:
    vllm-357's AsyncLLM ``EngineDeadError``), which ``outcome`` then reports as no failure. None
    without a stop line. ``rules``: rule id -> ``(CompiledRule, Pack)``."""
    stop = stop_line(run)
    if stop is None:
        return None
    _, sf = _failure(run, pack)
    torn = sf is not None and torn_down(run, sf.line)
    limit = sf.line if sf is not None and sf.line > stop.line else run.last_line + 1
    served = up_before(run, limit) is not None or (sf is not None and in_serving_loop(run, sf.line))
    said = rules.get(stop.rule)
    st = Stop(line=stop.line, evidence=clip(stop.message, 2000), rule=stop.rule, process=stop.process,
              signal=signal_of(stop, said[0].rule.stop_signal if said else None), served=served)
    if torn and sf is not None:
        st.teardown_line, st.teardown = sf.line, clip(sf.cause or sf.evidence, 2000)
    return st


def start_failure(run: RunState, pack: Pack, findings: dict) -> Optional[StartFailure]:
    """The failed start of the run (``outcome``'s first part), or None."""
    return outcome(run, pack, findings)[0]


def outcome(run: RunState, pack: Pack,
            findings: dict) -> tuple[Optional[StartFailure], Optional[StartFailure]]:
    """``(failed start, crash while serving)`` of the run: at most one of them is set.

    The failure is the first ``start_failure`` line of the run, else a traceback the run never
    recovered from (``uncaught.uncaught_start_failure``). When the source's server was up
    before that line with no start marker since (``lifecycle.up_before``: a ready or HTTP 2xx
    line of this run, of an earlier run, or of no run), it is a crash while serving (sglang#23548's
    scheduler exception after ``Application startup complete``; vLLM ``EngineCore encountered a
    fatal error`` after served requests), else a failed start.

    The cause is a finding whose line matches the pack's ``exception_line`` (the last line
    of a traceback, ``RuntimeError: ...``): the last one at or before the failure line (vLLM
    workers print their exception before ``EngineCore failed to start.``), else the first
    after it (the traceback that follows the failure line); for a traceback, the first
    exception finding from its first line on, else the traceback's own exception line. The
    cause finding of a failed start gets ``fatal``.
    """
    ev, sf = _failure(run, pack)
    if sf is None or torn_down(run, sf.line):
        return None, None  # none, or the teardown of a stop after serving (``stopped``)
    serving = up_before(run, sf.line) is not None or in_serving_loop(run, sf.line)
    pat = pack.meta.pack.exception_line
    if not pat:
        return (None, sf) if serving else (sf, None)
    exc = pack_regex(pat)
    cands = [f for f in findings.values() if not f.inferred and exc.search(f.evidence)]
    before = [f for f in cands if f.line <= sf.line]
    after = [f for f in cands if f.line > sf.line]
    if ev is None:  # the traceback's header comes first, its exception after it
        after = [f for f in cands if f.line >= sf.line]
        before = []
    if serving:  # a crash's cause is its own exception, never one logged before the server came up
        before = [f for f in before if up_before(run, f.line) is not None]
    cause = max(before, key=lambda f: f.line) if before else min(after, key=lambda f: f.line, default=None)
    if cause is not None:
        if not serving:
            key = next(k for k, f in findings.items() if f is cause)
            findings[key] = cause.model_copy(update={"fatal": True})
        sf.cause_line, sf.cause = cause.line, clip(cause.evidence, 2000)
    elif ev is None and sf.cause is None:
        # the traceback's exception line was read by a kernel rule that states no finding (a
        # kernel's own dispatch error, vllm.kernel.marlin-thread-config): still its cause
        late = [e for e in run.events if e.line >= sf.line and exc.match(e.message)]
        if late:
            sf.cause_line, sf.cause = late[-1].line, clip(late[-1].message, 2000)
    return (None, sf) if serving else (sf, None)


#: ``Selection.reasoning`` prefix of a selection in a failed start (``formats/text.py`` marks it)
UNCONFIRMED = "unconfirmed:"


def unconfirmed(selections: list, sf: StartFailure) -> None:
    """Mark each selection of a failed start as chosen or configured, never confirmed to run.

    A line that names a kernel (vLLM ``Using CutlassFP8ScaledMMLinearKernel``) or a build
    setting (trtllm-build ``Set gemm_plugin to fp8.``) says what the start chose; a start
    that then failed (``sf``) ran none of it. The selection stays (what was chosen is the
    evidence an operator needs), its ``reasoning`` says it is unconfirmed. A selection read
    from a traceback frame (``uncaught.seen_in_traceback``) ran, and stays as it is.
    """
    why = (f"{UNCONFIRMED} selected or configured at this line, but the start failed at line {sf.line}"
           + (f" ({clip(sf.cause, 160)})" if sf.cause else "") + ": no line shows it ran")
    for s in selections:
        if not (s.reasoning or "").startswith((UNCONFIRMED, TRACEBACK)):  # a frame: it ran
            s.reasoning = why + (f"; {s.reasoning}" if s.reasoning else "")


def rank_divergence(sels: dict, add_finding) -> None:
    """RANK_DIVERGENCE: one layer family, different kernels, printed by disjoint sets of ranks.

    Ranks of one engine build the same layers on the same GPU model, so they should walk
    the ladder to the same rung; when they do not (mixed GPUs, a rank missing a package),
    the slowest rank sets the pace of every collective.
    """
    by_family: dict[str, list[SelectionGroup]] = {}
    for s in sels.values():
        by_family.setdefault(s.selection.family, []).append(s)
    for family, group in sorted(by_family.items()):
        if len(group) < 2 or len({x.selection.kernel for x in group}) < 2:
            continue
        ranked = sorted(group, key=lambda x: x.selection.line)
        # only lines that carry an explicit rank (TP1, DP0, rank=1) can show a divergence: an
        # untagged or process-only line ("main", EngineCore) may be any rank, or a paste
        if any("main" in x.printers for x in ranked):
            continue
        disjoint = all(a.printers.isdisjoint(b.printers) for i, a in enumerate(ranked) for b in ranked[i + 1:])
        if not disjoint:
            continue
        reasons = [f"{', '.join(sorted(x.printers))}: {x.selection.kernel} (line {x.selection.line})"
                   for x in ranked]
        add_finding("RANK_DIVERGENCE", ranked[-1].events[0], ranked[-1].selection.rule, reasons=reasons,
                    family=family,
                    title=f"ranks chose different kernels for {family}: "
                          + " vs ".join(x.selection.kernel for x in ranked))


def attention(run: RunState) -> list[AttentionChoice]:
    """Attention backends chosen (rules ``sets = { attention_backend = ... }``), one per name, ranks merged."""
    out: dict[str, AttentionChoice] = {}
    for name, ev in run.attention:
        key = norm(name)
        if not key:
            continue
        who = ev.rank  # a process name without a rank tells no ranks apart
        if key not in out:
            cands = ev.groups.get("candidates") or ""
            out[key] = AttentionChoice(backend=name.strip(), candidates=_LIST_ITEM.findall(cands)[:32],
                                       line=ev.line, evidence=clip(ev.message, 2000), rule=ev.rule)
        if who and who not in out[key].ranks:
            out[key].ranks = sorted([*out[key].ranks, who])
    return list(out.values())


def kv_cache(run: RunState, add_finding, aliases: dict[str, str]) -> Optional[KvCache]:
    """KV-cache dtype asked for versus in effect; a quantized request that did not hold is
    KV_CACHE_DTYPE_FALLBACK (unless a rule already raised it from the line itself)."""
    req = run.config.kv_cache_dtype
    if not req and run.kv_used is None:
        return None
    kv = KvCache(requested=req, requested_line=run.kv_requested_line)
    if run.kv_used is not None:
        used, ev = run.kv_used
        kv.in_effect, kv.in_effect_line, kv.evidence = used, ev.line, clip(ev.message, 2000)
        if req and kv_norm(req, aliases) != "auto" and not kv_same(req, used, aliases):
            add_finding("KV_CACHE_DTYPE_FALLBACK", ev, ev.rule,
                        reasons=[f"requested kv_cache_dtype={req} (line {run.kv_requested_line}), "
                                 f"in effect {used} (line {ev.line})"])
    return kv
