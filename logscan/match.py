"""Match records against pack rules: a keyword prefilter, then each candidate rule's regex.

The prefilter is one index of every rule keyword (``sources.prefilter.KeywordIndex``: ASCII
case-insensitive unless a rule asks otherwise, as the byte-buffer prefilter that runs before it in
``scan``); only records it hits are tried against the rules whose keywords they contain. A rule with a
``continuation`` holds its event open and gathers the following records of the same
process (and the same ``file:line``) whose message matches the rule's ``item`` pattern: the
per-kernel reasons of "Failed to find a kernel ... Reasons:" are kept that way.
Work per line is bounded: all the rule searches of one line share one time budget
(``LINE_BUDGET`` seconds, ``$LOGSCAN_LINE_BUDGET``), each search running with the time that
is left as its timeout; CPU time the cyclic collector spends inside a search is not the line's
(``gcpause.hook_gc_clock``). A line that exhausts it is counted and named (``MatchStats.over_budget``,
``over_budget_at``; the report's ``InputStats``), never silently dropped, and the rules not
tried on it are not tried: a hostile line cannot stall a scan or a tail.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Iterator, Optional

import regex

from .gcpause import hook_gc_clock
from .models import Event, Record
from .packs.loader import CompiledRule, PackSet
from .sources.prefilter import KeywordIndex
from .sources.quoted import QuotedSource

#: CPU seconds all the rule searches of one line may take together (the slowest real log line takes ~1 ms;
#: ``regex`` timeouts count CPU time, so a loaded machine does not push a line over).
LINE_BUDGET = 0.03
MAX_NAMED = 20  #: line numbers of over-budget lines kept to name them in the report


def _line_budget() -> float:
    """``$LOGSCAN_LINE_BUDGET`` (seconds, > 0) or ``LINE_BUDGET``."""
    try:
        v = float(os.environ.get("LOGSCAN_LINE_BUDGET", ""))
    except ValueError:
        return LINE_BUDGET
    return v if 0 < v < 3600 else LINE_BUDGET


MAX_INTERLEAVE = 256  #: records from other processes that may interleave with a continuation before it closes


_HELD: dict = {"concurrent": False}
_NO_KWARGS: dict = {}


def _held(rx) -> dict:
    """Keyword arguments that keep the GIL for a ``regex`` search (``concurrent=False``): a line's
    searches are short, and each release let the reader's search threads take the interpreter from
    the thread that reads the lines. Empty for a ``re`` pattern. Shared, never-mutated dicts."""
    return _HELD if isinstance(rx, regex.Pattern) else _NO_KWARGS


def _keyword_index(packs: PackSet, engines: Optional[list[str]], keys: list[tuple[str, bool]]) -> KeywordIndex:
    """The matcher's keyword index, built once per ``PackSet`` and engine selection."""
    cache = getattr(packs, "derived", {})
    ck = ("keyword-index", tuple(engines) if engines is not None else None,
          os.environ.get("LOGSCAN_PREFILTER", ""))
    idx = cache.get(ck)
    if idx is None or idx.keys != keys:
        idx = cache[ck] = KeywordIndex(keys)
    return idx


@dataclass
class _Pending:
    event: Event
    rule: CompiledRule
    record: Record
    interleaved: int = 0
    last: str = ""  #: message of the last line gathered (a ``joined_by`` marker is looked for there)


@dataclass
class MatchStats:
    """Counters of the matcher: records seen, prefilter hits, regex timeouts, over-budget lines."""

    records: int = 0
    prefilter_hits: int = 0
    timeouts: int = 0
    timed_out_rules: dict[str, int] = field(default_factory=dict)
    #: lines whose searches used up ``LINE_BUDGET`` (some rules not tried, or cut short)
    over_budget: int = 0
    #: the first ``MAX_NAMED`` of their line numbers
    over_budget_at: list[int] = field(default_factory=list)


class Matcher:
    """Stateful matcher over a stream of records of one input; ``feed`` yields finished events."""

    def __init__(self, packs: PackSet, engines: Optional[list[str]] = None, context: Optional[str] = None):
        self.rules: list[CompiledRule] = []
        self._engine_of: list[str] = []  #: engine (pack) of each rule, parallel to ``rules``
        #: prefix-format id -> engine: a line whose prefix belongs to a pack is that engine's
        self._prefix_engine: dict[str, str] = {}
        for name, pack in packs.packs.items():
            if engines is None or name in engines:
                self.rules.extend(pack.rules)
                self._engine_of.extend([pack.engine] * len(pack.rules))
                for pf in pack.prefixes:
                    if not pf.spec.shared_with:  # a shape several engines print names none of them
                        self._prefix_engine.setdefault(pf.spec.id, pack.engine)
        #: engine of the last prefixed record (tried first for unprefixed lines such as tracebacks);
        #: ``context`` presets it (e.g. a test of one pack's rules, or a known engine)
        self._context: Optional[str] = context
        #: (engine, source) whose prefixed lines already gave an event: its identity text is not
        #: needed again (see ``_candidates``); ``_source`` is the record being matched
        self._prefix_named: set[tuple[str, str]] = set()
        self._source = ""
        #: with no context, packs are tried in ``unprefixed_priority`` order (then by name)
        self._pack_rank = {p.engine: (p.meta.pack.unprefixed_priority, p.engine) for p in packs.packs.values()}
        self._borrows = {p.engine: p.meta.pack.borrow_rules for p in packs.packs.values()}
        #: engine -> its ``[[opaque]]`` alternation: messages quoting user content that its rules never see
        self._opaque = {p.engine: p.opaque for p in packs.packs.values() if p.opaque is not None}
        self._noise = {p.engine: p.noise for p in packs.packs.values() if p.noise is not None}
        self._quoted = QuotedSource()  # which records are a traceback's quoted source lines
        # Keywords: ASCII case folding only (or case-sensitive for a rule that asks), as the
        # reader's byte prefilter, so a line it skips can never be one this matcher would take.
        # One index of every distinct keyword (Hyperscan when available: ~1 us a line).
        keys: dict[tuple[str, bool], list[int]] = {}
        for i, cr in enumerate(self.rules):
            cs = cr.rule.case_sensitive_keywords
            for k in cr.rule.keywords:
                idxs = keys.setdefault((k if cs else k.lower(), cs), [])
                if not idxs or idxs[-1] != i:
                    idxs.append(i)
        self._rules_of_key = list(keys.values())
        self._index = _keyword_index(packs, engines, list(keys))
        #: (line, rule) -> (prefix engine, context engine) of events not yet claimed by ``engine_hint``
        self._hints: dict[tuple[int, str], tuple[Optional[str], Optional[str]]] = {}
        self.stats = MatchStats()
        self._pending: Optional[_Pending] = None
        #: sources whose ``sparse`` rules already fired since their last start marker (sources/sparse.py)
        self._sparse_done: set[str] = set()
        self.budget = _line_budget()
        self._gc_clock = hook_gc_clock()  #: [CPU seconds in cyclic collections, ...] (gcpause)
        self._left = self.budget  #: seconds left to the line being matched
        self._over = False  #: the line being matched was counted over budget

    @property
    def pending(self) -> bool:
        """True while a multi-line event (a rule with ``continuation``) is still gathering lines."""
        return self._pending is not None

    @property
    def held(self) -> Optional[Event]:
        """That event (None when none is): a later line's event that ends its run must not pass it."""
        return self._pending.event if self._pending is not None else None

    @property
    def context(self) -> Optional[str]:
        """Engine of the last prefixed record (tried first for unprefixed lines); settable to restore it."""
        return self._context

    @context.setter
    def context(self, engine: Optional[str]) -> None:
        self._context = engine

    def _keyword_rules(self, message: str) -> list[int]:
        """Indices (ascending) of the rules one of whose keywords ``message`` holds."""
        found = self._index.present(message.encode("utf-8", "surrogatepass"))
        if not found:
            return []
        if len(found) == 1:
            return self._rules_of_key[found[0]]
        return sorted({i for k in found for i in self._rules_of_key[k]})

    def _candidates(self, message: str, owner: Optional[str],
                    rule_ids: list[int]) -> Iterator[tuple[str, CompiledRule]]:
        """``(engine, rule)`` of the rules whose keywords the message holds, in the order they are tried.

        A line whose prefix belongs to a pack (``owner``) is tried against that pack's rules
        only (then, for a pack with ``borrow_rules``, the other packs' exact rules), so one
        engine's rules never take another engine's lines. An unprefixed line
        (traceback tail, pasted fragment) is tried against every pack, the engine of the
        last prefixed line first; ``prefixed_only`` rules never see it. Identity rules skip a
        prefixed line (its prefix names the engine) unless nothing of that engine was read yet
        in the input: then its own identity rules are tried last, so a log of prefixed lines no
        rule reads is still a run of its engine.
        """
        opaque = {e for e, rx in self._opaque.items() if rx.match(message, **_held(rx))} if self._opaque else ()
        if (owner or self._context) in opaque:
            return  # the line's engine says this shape quotes user text: no pack may read it
        # engine evidence of an unprefixed line first: one that matches, with no engine known
        # yet, becomes the context (``feed``) before the other rules are ordered, so the run's
        # own engine's generic rules outrank another pack's (lmdeploy-114: an lmdeploy
        # traceback frame is also the first line of the uncaught traceback)
        if owner is None:
            first = [(self._pack_rank[self._engine_of[i]], i) for i in rule_ids
                     if self.rules[i].rule.kind == "identity" and not self.rules[i].rule.prefixed_only
                     and self._engine_of[i] not in opaque]
            for _, i in sorted(first):
                yield self._engine_of[i], self.rules[i]
        hits = []
        for i in rule_ids:
            cr = self.rules[i]
            eng = self._engine_of[i]
            if owner is not None and eng != owner and not self._borrows.get(owner):
                continue
            if eng in opaque:
                continue
            if eng != owner and cr.rule.prefixed_only:
                continue
            # own exact rules; borrowed rules that state something (a selection, a
            # finding); own broad (prefixed_only) rules; borrowed event-only rules
            r = cr.rule
            if r.kind == "identity":
                if owner is not None:
                    if eng != owner or (owner, self._source) in self._prefix_named:
                        continue  # a line's own prefix already names its engine
                    # the prefix names the engine, but a line no rule reads makes no run: the
                    # owner's identity text (a relayed traceback frame) is tried last, once
                    # per input (tgi-113: a Gaudi shard traceback relayed at DEBUG)
                    tier = 6
                else:
                    continue  # engine evidence: tried first (above), and never takes the line
            elif r.kind == "unread":  # a kernel sentence no rule read (95-unread-kernel.toml): after all
                tier = 7 if eng == (owner or self._context) else 8
            elif r.kind in ("uncaught", "ready", "progress", "machine", "stop"):
                # every pack's generic traceback / came-up / stop lines (99-uncaught.toml) and the common
                # tool / wrapper GPU lines (60-machine-lines.toml): after every rule that may read
                # the line, the line's (or context's) engine first
                tier = 4 if eng == (owner or self._context) else 5
            elif eng == (owner or self._context):
                tier = 2 if r.prefixed_only else 0
            else:
                tier = 1 if (r.family or r.finding or r.cost_class) else 3
            hits.append((tier, self._pack_rank[eng], i, cr))
        hits.sort(key=lambda h: (h[0], h[1], h[2]))
        for _, _, i, cr in hits:
            yield self._engine_of[i], cr

    def _search(self, rx, text: str, rule_id: str, method: str = "search"):
        """``rx.search`` (or ``match``) within the line's budget left; None on a timeout (counted)."""
        compiled = getattr(rx, "compiled", None)
        if compiled is not None:
            rx = compiled()  # a lazy pattern: compile outside the line's budget
        gc_clock = self._gc_clock
        t0, g0 = time.thread_time(), gc_clock[0]
        try:
            return getattr(rx, method)(text, timeout=max(self._left, 1e-4), **_held(rx))
        except TimeoutError:
            self.stats.timeouts += 1
            self.stats.timed_out_rules[rule_id] = self.stats.timed_out_rules.get(rule_id, 0) + 1
            self._left = 0.0
            return None
        finally:
            self._left -= (time.thread_time() - t0) - (gc_clock[0] - g0)

    def _over_budget(self, line: int) -> None:
        """Count the line being matched as over budget (once)."""
        if not self._over:
            self._over, st = True, self.stats
            st.over_budget += 1
            if len(st.over_budget_at) < MAX_NAMED:
                st.over_budget_at.append(line)

    def _continues(self, rec: Record) -> Optional[bool]:
        """True: rec continues the pending event; False: it ends it; None: unrelated interleaved line."""
        p = self._pending
        assert p is not None
        first = p.record
        if p.rule.joined_regex is not None:
            # a wrapped command: only a line after one that ended with the marker goes on, and a
            # log line (it has a prefix) is never part of the command
            if rec.prefix_format is not None or not p.rule.joined_regex.search(p.last or first.message):
                return False
        same_proc = (rec.process, rec.pid) == (first.process, first.pid)
        if not same_proc and rec.prefix_format is not None:
            return None
        cont = p.rule.rule.continuation
        assert cont is not None
        if cont.same_source_line and first.fileinfo and rec.fileinfo and rec.fileinfo != first.fileinfo:
            return False
        if len(p.event.items) >= cont.max_lines:
            return False
        return True

    def feed(self, rec: Record) -> Iterator[Event]:
        """Match one record; yields events that are complete (possibly an earlier pending one)."""
        self.stats.records += 1
        self._left, self._over = self.budget, False
        if self._pending is not None:
            verdict = self._continues(rec)
            if verdict is True:
                m = None
                item_re = self._pending.rule.item_regex
                if item_re is not None and rec.message.strip():
                    m = self._search(item_re, rec.message, self._pending.rule.rule.id + "#item", "match")
                    if self._left <= 0:
                        self._over_budget(rec.line)
                if m:
                    item = m.groupdict().get("item") or m.group(0)
                    self._pending.event.items.append(item.strip())
                    self._pending.event.item_groups.append(
                        {k: v for k, v in m.groupdict().items() if v is not None and k != "item"})
                    self._pending.event.end_line = rec.line
                    self._pending.last = rec.message
                    return
                verdict = False
            if verdict is None:
                self._pending.interleaved += 1
                if self._pending.interleaved > MAX_INTERLEAVE:
                    verdict = False
            if verdict is False:
                yield self._pending.event
                self._pending = None
        msg = rec.message
        quoted = self._quoted.quoted(rec)  # a traceback's quoted code line: no log statement
        owner = self._prefix_engine.get(rec.prefix_format) if rec.prefix_format else None
        own_noise = self._noise.get(owner) if owner is not None else None
        noise = own_noise is not None and bool(msg) and own_noise.match(msg, **_held(own_noise)) is not None
        noise_named = noise and (owner, rec.source) in self._prefix_named
        if noise_named and rec.source in self._sparse_done:
            return  # a shape its own engine marks as carrying no engine fact (per-step statistics)
        # ... but until something of that engine was read in this input, its identity rules
        # may still read it, so a window of per-step statistics alone is a run (sglang-172); and
        # a sparse ``ready`` rule reads it once per start: a scheduler that ran a batch was up
        # (SGLang's 'Decode batch', docs/lifecycle.md "Serving evidence")
        rule_ids = self._keyword_rules(msg) if msg else []
        if not rule_ids:
            return
        # the context follows keyword lines only: the reader's byte prefilter skips the others,
        # and a report must not depend on whether it ran
        if owner is not None:
            self._context = owner
        self.stats.prefilter_hits += 1
        self._source = rec.source
        state_read = said = False  # a sparse ``ready`` rule read the line: only identity rules follow
        for eng, cr in self._candidates(msg, owner, rule_ids):
            r = cr.rule
            if r.kind == "unread" and (said or state_read):
                break  # an identity / platform / state rule read the line: it is no unread sentence
            if (state_read or quoted and not r.source_line) and r.kind != "identity":
                continue
            if r.quoted_only and not quoted:
                continue  # code a traceback quotes (an op call), never a log statement
            if noise and not (r.sparse and r.kind == "ready") and (noise_named or r.kind != "identity"):
                continue
            if r.levels and rec.level and rec.level.lower() not in r.levels:
                continue
            if r.sparse and r.kind != "identity" and rec.source in self._sparse_done:
                continue  # a state already noted since the last start marker
            if self._left <= 0:
                self._over_budget(rec.line)
                return
            m = self._search(cr.regex, msg, r.id)
            if not m:
                continue
            ev = Event(
                line=rec.line, rule=r.id, kind=r.kind, source=rec.source, message=msg,
                groups={k: v for k, v in m.groupdict().items() if v is not None},
                process=rec.process, rank=rec.rank, level=rec.level, pid=rec.pid,
                timestamp=rec.timestamp, fileinfo=rec.fileinfo or None, end_line=rec.end_line,
            )
            if len(self._hints) < 4096:
                self._hints[(ev.line, ev.rule)] = (owner, None if owner else self._context)
            if r.sparse and r.kind == "ready":
                # a state (the server is up), not a reading of the line: the engine's identity
                # rules, tried last on a prefixed line not yet named, may still name the engine
                self._sparse_done.add(rec.source)
                state_read = True
                yield ev
                continue
            if owner is not None:
                self._prefix_named.add((owner, rec.source))  # the engine's prefixed lines make a run
            if r.sparse and r.kind != "identity":  # naming the engine notes no state
                self._sparse_done.add(rec.source)
            elif r.starts_run:
                self._sparse_done.discard(rec.source)
            if r.kind in ("identity", "platform"):
                # evidence of the engine (a traceback path, a banner) or of the platform (a
                # package path's build tag, a device banner): other rules still read the line
                if r.kind == "identity" and not r.disowns and owner is None and self._context is None:
                    # (a ``disowns`` line is another program's: no evidence of the engine)
                    self._context = eng  # the run's engine: its rules first
                said = True
                yield ev
                continue
            if r.continuation is not None:
                if self._pending is not None:
                    yield self._pending.event
                self._pending = _Pending(ev, cr, rec)
            else:
                yield ev
            break  # first rule wins: rules are ordered most specific first
        else:
            if self._left <= 0:  # the last rule tried ran out of time
                self._over_budget(rec.line)

    def engine_hint(self, ev: Event, keep: bool = False) -> tuple[Optional[str], Optional[str]]:
        """``(prefix_engine, context_engine)`` of an event this matcher yielded (once, then forgotten,
        unless ``keep``: a look at the ``held`` event's before it is emitted).

        ``prefix_engine``: the engine whose line prefix the record carried, None when it had
        none. ``context_engine``: for an unprefixed record, the engine of the last prefixed
        line before it (a weak hint). Both None for an event it does not know.
        """
        return (self._hints.get if keep else self._hints.pop)((ev.line, ev.rule), (None, None))

    def flush(self) -> Iterator[Event]:
        """Yield the pending multi-line event at the end of an input."""
        if self._pending is not None:
            yield self._pending.event
            self._pending = None
