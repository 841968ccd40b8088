"""The prefilter's Hyperscan engine: one pure-literal database per buffer, regexes apart.

Split from ``sources/prefilter.py`` (``Prefilter`` takes these methods as a mixin).

Hyperscan's literal matcher runs ~40 % faster on a database of literals only than on the same
literals beside a single regex (issue 18, 60 MB of the bench log in 1 MiB buffers: 0.57 ms/MB
against 0.94 with SGLang's timestamp sniff added, 0.89 with the two-byte ``\\n{``). So the main
database holds only literals of three bytes or more, each with its case: the pack keywords
(caseless), the case-sensitive keywords, the byte triggers (``sources/triggers.py``), the
gate sniffs that are literals, NUL and ESC. The rest is searched apart:

- a lone ``\\r`` (``\\r[^\\n]``): a small database scanned only when the buffer holds a ``\\r``
  (``bytes.__contains__`` is memchr);
- whether the buffer is ASCII: ``bytes.isascii`` (~0.03 ms/MB, a word at a time);
- gate sniffs that are regexes (SGLang's ``\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d``): a cheaper
  prefix of each (``literals.sniff_prefix``) in one database, and the whole sniffs in a second
  one scanned only when a prefix matched.
"""
from __future__ import annotations

from typing import Optional

from .hsdb import _hs, hs_db
from .literals import _hex, pattern_literal, sniff_prefix
from .triggers import EXACT, UNSURE

#: the flags of a gate sniff (Hyperscan reads ``^``/``$`` per line, one report per buffer is enough)
_SNIFF = "MULTILINE SINGLEMATCH ALLOWEMPTY"


def _flags(names: str) -> int:
    out = 0
    for n in names.split():
        out |= getattr(_hs, f"HS_FLAG_{n}")
    return out


class HyperscanSearch:
    """``Prefilter``'s Hyperscan engine (a mixin: it reads the prefilter's literal plan)."""

    @staticmethod
    def _hs_db(exprs: list[bytes], flags: list[int]):
        """``sources.hsdb.hs_db``: a compiled (or cached) Hyperscan database of ``exprs``."""
        return hs_db(exprs, flags)

    def _compile_hyperscan(self) -> None:
        caseless, sniff_flags = _flags("CASELESS"), _flags(_SNIFF)
        exact = self.sensitive + list(EXACT)
        exprs = [_hex(lit) for lit in self.literals + exact]
        flags = [caseless] * len(self.literals) + [0] * len(exact)
        self._n_plain = len(exprs)
        #: main-database ids of the quiet literals (the caseless ones, then the case-sensitive ones)
        self._quiet_ids = {i for i, lit in enumerate(self.literals + self.sensitive) if lit in self._quiet}
        #: main-database id -> what it signals: -1 an unsure byte, g >= 0 a literal sniff of gate g
        self._signal: dict[int, int] = {}
        for lit in UNSURE if self._needs_unsure else ():
            self._signal[len(exprs)] = -1
            exprs.append(_hex(lit))
            flags.append(_flags("SINGLEMATCH"))
        self._always_open: set[int] = set()
        #: main-database id -> gate g: a literal of an always-open gate (one scan of the buffer)
        self._gated: dict[int, int] = {}
        self._gate_dbs = []
        first: list[tuple[bytes, int, bool]] = []  # (pattern, gate, whether its match opens the gate)
        whole: list[tuple[bytes, int]] = []  # regex sniffs searched after their prefix matched
        for gi, (gate, lits) in enumerate(self.gates):
            sniff = self._sniff_sources(gate)
            try:  # a construct Hyperscan does not support (lookaround, backreference) opens the gate
                self._hs_db(sniff, [sniff_flags] * len(sniff))
            except Exception:  # hyperscan.error
                self._always_open.add(gi)
            if any(self._matches_empty(src) for src in sniff):  # it would fire on every buffer anyway
                self._always_open.add(gi)
            if gi in self._always_open:
                for lit in lits:
                    self._gated[len(exprs)] = gi
                    exprs.append(_hex(lit))
                    flags.append(caseless)
                self._gate_dbs.append(None)
                continue
            for src in sniff:
                lit = pattern_literal(src)
                if lit is not None and len(lit) >= 3:
                    self._signal[len(exprs)] = gi
                    exprs.append(_hex(lit))
                    flags.append(_flags("SINGLEMATCH"))
                    continue
                pre = sniff_prefix(src)  # it ends with a literal: it never matches empty
                if pre is None:
                    first.append((src, gi, True))
                else:
                    first.append((pre, gi, False))
                    whole.append((src, gi))
            self._gate_dbs.append(self._hs_db([_hex(lit) for lit in lits], [caseless] * len(lits)))
        self._db = self._hs_db(exprs, flags)
        self._first_sniffs = first
        self._whole_sniffs = whole
        self._first_db = self._hs_db([p for p, _, _ in first], [sniff_flags] * len(first)) if first else None
        self._whole_db = self._hs_db([p for p, _ in whole], [sniff_flags] * len(whole)) if whole else None
        self._cr_db = self._hs_db([rb"\r[^\n]"], [0])

    def _regex_sniffs(self, buf: bytes, signals: set[int]) -> None:
        """Add to ``signals`` the gates whose regex sniffs match in ``buf``: the prefixes first,
        the whole sniffs only for gates whose prefix matched."""
        if self._first_db is None:
            return
        fired: set[int] = set()
        first = self._first_sniffs

        def on_first(i, _s, _e, _f, _c):
            _, gi, final = first[i]
            (signals if final else fired).add(gi)

        self._first_db.scan(buf, match_event_handler=on_first)
        fired -= signals
        if fired and self._whole_db is not None:
            whole = self._whole_sniffs

            def on_whole(i, _s, _e, _f, _c):
                if whole[i][1] in fired:
                    signals.add(whole[i][1])

            self._whole_db.scan(buf, match_event_handler=on_whole)

    def _hyperscan_hits(self, buf: bytes, ascii: Optional[bool] = None) -> tuple[list[int], list[int], bool]:
        out: list[int] = []
        add = out.append
        starts: list[int] = []
        add_start = starts.append
        quiet = self._quiet_ids
        n_plain = self._n_plain
        signals: set[int] = set()
        signal = self._signal
        gated_id = self._gated
        gated: list[tuple[int, int]] = []

        def on_match(i, _start, end, _flags, _ctx):
            if i < n_plain:
                add(end - 1)
                if i not in quiet:
                    add_start(end - 1)
            elif i in gated_id:
                gated.append((gated_id[i], end - 1))
            else:
                signals.add(signal[i])

        self._db.scan(buf, match_event_handler=on_match)
        if b"\r" in buf:  # memchr; a CRLF log then pays one more small scan

            def on_cr(_i, _start, end, _flags, _ctx):
                add(end - 1)
                add_start(end - 1)

            self._cr_db.scan(buf, match_event_handler=on_cr)
        if ascii is None:
            ascii = buf.isascii()
        if self.gates:
            unsure = -1 in signals or not ascii
            if not unsure:
                self._regex_sniffs(buf, signals)
            for gi, db in enumerate(self._gate_dbs):
                if db is None or not (unsure or gi in signals):
                    continue  # always open (searched above), or no line of this buffer can carry the prefix

                def on_gated(_i, _start, end, _flags, _ctx, gi=gi):
                    gated.append((gi, end - 1))

                db.scan(buf, match_event_handler=on_gated)
            if gated:
                opened = self._open_gates(buf, gated)
                out += opened
                starts += opened
        out.sort()
        if len(starts) == len(out):
            return out, out, ascii
        starts.sort()
        return out, starts, ascii
