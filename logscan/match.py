"""Match records against pack rules: a keyword prefilter, then each candidate rule's regex.

The prefilter is one ``regex`` alternation of every rule keyword (case-insensitive); only
records it hits are tried against the rules whose keywords they contain. A rule with a
``continuation`` holds its event open and gathers the following records of the same
process (and the same ``file:line``) whose message matches the rule's ``item`` pattern: the
per-kernel reasons of "Failed to find a kernel ... Reasons:" are kept that way.
Every regex search runs with a timeout, so a hostile line cannot stall the scan.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

import regex

from .models import Event, Record
from .packs.loader import CompiledRule, PackSet

#: Seconds one regex search may take before the line is given up for that rule.
REGEX_TIMEOUT = 0.25
#: Records from other processes that may interleave with a continuation before it is closed.
MAX_INTERLEAVE = 256


@dataclass
class _Pending:
    event: Event
    rule: CompiledRule
    record: Record
    interleaved: int = 0


@dataclass
class MatchStats:
    """Counters of the matcher: records seen, prefilter hits, regex timeouts."""

    records: int = 0
    prefilter_hits: int = 0
    timeouts: int = 0
    timed_out_rules: dict[str, int] = field(default_factory=dict)


class Matcher:
    """Stateful matcher over a stream of records of one input; ``feed`` yields finished events."""

    def __init__(self, packs: PackSet, engines: Optional[list[str]] = None):
        self.rules: list[CompiledRule] = []
        for name, pack in packs.packs.items():
            if engines is None or name in engines:
                self.rules.extend(pack.rules)
        self._kw = [[k.lower() for k in r.rule.keywords] for r in self.rules]
        words = sorted({k for ks in self._kw for k in ks}, key=len, reverse=True)
        self.prefilter = regex.compile("|".join(regex.escape(w) for w in words) or r"(?!)", regex.I)
        self.stats = MatchStats()
        self._pending: Optional[_Pending] = None

    def _candidates(self, message: str) -> Iterator[CompiledRule]:
        low = message.lower()
        for cr, kws in zip(self.rules, self._kw):
            for k in kws:
                if k in low:
                    yield cr
                    break

    def _search(self, cr: CompiledRule, text: str):
        try:
            return cr.regex.search(text, timeout=REGEX_TIMEOUT)
        except TimeoutError:
            self.stats.timeouts += 1
            self.stats.timed_out_rules[cr.rule.id] = self.stats.timed_out_rules.get(cr.rule.id, 0) + 1
            return None

    def _continues(self, rec: Record) -> Optional[bool]:
        """True: rec continues the pending event; False: it ends it; None: unrelated interleaved line."""
        p = self._pending
        assert p is not None
        first = p.record
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
        if self._pending is not None:
            verdict = self._continues(rec)
            if verdict is True:
                m = None
                item_re = self._pending.rule.item_regex
                if item_re is not None and rec.message.strip():
                    try:
                        m = item_re.match(rec.message, timeout=REGEX_TIMEOUT)
                    except TimeoutError:
                        self.stats.timeouts += 1
                if m:
                    item = m.groupdict().get("item") or m.group(0)
                    self._pending.event.items.append(item.strip())
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
        if not msg or not self.prefilter.search(msg):
            return
        self.stats.prefilter_hits += 1
        for cr in self._candidates(msg):
            r = cr.rule
            if r.levels and rec.level and rec.level.lower() not in r.levels:
                continue
            m = self._search(cr, msg)
            if not m:
                continue
            ev = Event(
                line=rec.line, rule=r.id, kind=r.kind, source=rec.source, message=msg,
                groups={k: v for k, v in m.groupdict().items() if v is not None},
                process=rec.process, rank=rec.rank, level=rec.level,
            )
            if r.continuation is not None:
                if self._pending is not None:
                    yield self._pending.event
                self._pending = _Pending(ev, cr, rec)
            else:
                yield ev
            break  # first rule wins: rules are ordered most specific first

    def flush(self) -> Iterator[Event]:
        """Yield the pending multi-line event at the end of an input."""
        if self._pending is not None:
            yield self._pending.event
            self._pending = None
