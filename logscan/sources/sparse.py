"""Keywords of ``sparse`` rules: a state the log repeats on every line of a kind, read once a stretch.

An HTTP access line with a 2xx status says the server is up (analysis/lifecycle.py), and a
serving engine writes one per request: a quarter of a long-running server's log. Only the first
one after each start marker changes anything, so such rules are ``sparse`` (``Rule.sparse``):

- the prefilter (``SparsePrefilter``) keeps, per buffer, the first line holding a sparse keyword
  and matching a sparse rule's pattern from the buffer's start, and the first after each of the
  plain prefilter's hits that may be a start marker's (``Prefilter.hits_and_starts``: every start
  marker line holds one; a hit of a literal that no start keyword contains, such as a keyword in
  a prompt, is not one: after it, the matcher's sparse rules are done until the next start
  marker), found with one Hyperscan scan
  per start that stops at the first line kept (or ``bytes.find`` per keyword without Hyperscan:
  each keyword absent from a buffer then costs a pass over it, ~0.3 s per 100 MB for 11 of them),
  no per-line work but for the few candidate lines;
- the matcher (``logscan.match``) gives a sparse rule only the first line after the input's start
  or the last start-marker event, and none after it until the next one.

The sparse events are then the same with and without the prefilter (the first sparse line after a
start marker follows a hit), so the report is too; the one way they could differ is a line the
pattern matches that the matcher gives to another rule first or hides as an engine's opaque
shape (a prompt quoting an access line), which the tests' runtime logs never hold. Such a line
is then followed by the next candidate after the next hit that may be a start marker's, or from
the next buffer's start (before, after any hit).
"""
from __future__ import annotations

from typing import Optional


def sparse_rules(packs) -> tuple[list[bytes], list]:
    """``(keywords, regexes)`` of every ``sparse`` rule of ``packs`` (a ``PackSet``): the keywords
    as UTF-8 bytes, searched case-sensitively (a sparse rule sets ``case_sensitive_keywords``), and
    the rules' compiled patterns, which a candidate line must match (searched on the whole line:
    a sparse pattern is not anchored at the message's start)."""
    lits: set[bytes] = set()
    rxs = []
    for pack in packs.packs.values():
        for cr in pack.rules:
            if cr.rule.sparse:
                lits.update(k.encode("utf-8") for k in cr.rule.keywords if k)
                rxs.append(_Unanchored(cr.regex))
    return sorted(lits), rxs


class SparsePrefilter:
    """A ``Prefilter`` (``inner``) whose hits also hold, per buffer, the first line matching a
    sparse rule (one of ``literals``, then one of ``regexes``) at or after the buffer's start and
    after each of the inner hits. Every other attribute is the inner prefilter's."""

    def __init__(self, inner, literals: list[bytes], regexes: list):
        self.inner = inner
        self.sparse = list(literals)
        self.regexes = list(regexes)
        #: the literals as one Hyperscan database (the inner prefilter's engine is Hyperscan), else None
        self._db = None
        if getattr(inner, "backend", None) == "hyperscan" and self.sparse:
            from .hsdb import hs_db
            from .literals import _hex

            self._db = hs_db([_hex(lit) for lit in self.sparse], [0] * len(self.sparse))

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def hits(self, buf: bytes, ascii: Optional[bool] = None) -> list[int]:
        """Sorted offsets in ``buf`` (the inner hits plus the sparse ones); ``ascii`` as
        ``Prefilter.hits`` takes it (``buf.isascii()`` when the caller has it)."""
        both = getattr(self.inner, "hits_and_starts", None)
        out, starts = both(buf, ascii) if both is not None else (self.inner.hits(buf, ascii),) * 2
        return self._add_sparse(buf, out, starts)

    def hits_ascii(self, buf: bytes) -> tuple[list[int], bool]:
        """``(hits(buf), buf.isascii())``, the inner prefilter's ``scan`` telling both."""
        out, starts, ascii = self.inner.scan(buf)
        return self._add_sparse(buf, out, starts), ascii

    def _add_sparse(self, buf: bytes, out: list[int], starts: list[int]) -> list[int]:
        """``out`` (the inner hits) with the sparse lines after the buffer's start and each of ``starts``."""
        extra: list[int] = []
        found = -1  # the last sparse offset added: a start before it finds it again
        nxt: dict[bytes, int] = {}  # literal -> its next offset at or after the last search (-1: none)
        first = self._hs_first if self._db is not None else self._first
        for start in [0] + starts:
            if start <= found:
                continue
            at = first(buf, start, nxt)
            if at is None:
                break  # no sparse line after this start, hence none after any later one
            extra.append(at)
            found = at
        if not extra:
            return out
        return sorted(set(out) | set(extra))

    def first_sparse(self, buf: bytes, start: int = 0) -> Optional[int]:
        """Offset of the first sparse keyword at or after ``start`` of ``buf`` whose line matches a
        sparse rule, or None (Hyperscan when the inner prefilter uses it, else ``bytes.find``)."""
        first = self._hs_first if self._db is not None else self._first
        return first(buf, start, {})

    def _first(self, buf: bytes, start: int, nxt: dict[bytes, int]) -> Optional[int]:
        """Offset of the first sparse keyword at or after ``start`` whose line matches a sparse
        rule. ``nxt`` caches each literal's next offset: the starts only grow, so each literal's
        occurrences are searched once per buffer (a literal absent from it costs one search)."""
        while True:
            best = None
            for lit in self.sparse:
                i = nxt.get(lit, -2)
                if i == -1:
                    continue  # not in the rest of the buffer
                if i < start:
                    i = nxt[lit] = buf.find(lit, start)
                    if i < 0:
                        continue
                if best is None or i < best:
                    best = i
            if best is None:
                return None
            ok, le = self._line_matches(buf, best)
            if ok:
                return best
            start = le + 1  # a keyword in a line of another shape (a prompt): look on


    def _line_matches(self, buf: bytes, at: int) -> tuple[bool, int]:
        """Whether the line holding offset ``at`` of ``buf`` matches a sparse rule, and its end."""
        ls = buf.rfind(b"\n", 0, at) + 1
        le = buf.find(b"\n", at)
        le = len(buf) if le < 0 else le
        line = buf[ls:le].decode("utf-8", "replace")
        return any(_rx(rx).search(line) for rx in self.regexes), le

    def _hs_first(self, buf: bytes, start: int, _nxt: dict) -> Optional[int]:
        """``_first`` with Hyperscan: one scan of ``buf[start:]`` (a memoryview, no copy), ended
        by the first keyword whose line matches. Matches come in order of their end offset; no
        keyword holds a newline, so the first line holding one is the first reported. The offset
        returned is ``_first``'s: the lowest start of a keyword at or after ``start`` in that
        line (``hits`` compares later starts with it)."""
        got: list[int] = []
        seen = [start - 1]  # end of the last line looked at (and rejected)

        def on_match(_i, _s, end, _f, _c):
            at = start + end - 1
            if at < seen[0]:
                return None  # another keyword of a line already rejected
            ok, le = self._line_matches(buf, at)
            if ok:
                lo = max(start, buf.rfind(b"\n", 0, at) + 1)
                got.append(min(i for i in (buf.find(lit, lo, le) for lit in self.sparse) if i >= 0))
                return True  # stop the scan
            seen[0] = le
            return None

        from .hsdb import _hs

        try:
            self._db.scan(memoryview(buf)[start:], match_event_handler=on_match)
        except _hs.ScanTerminated:  # the callback stopped it
            pass
        return got[0] if got else None


def _rx(rx):
    compiled = getattr(rx, "compiled", None)
    return compiled() if compiled is not None else rx


def unanchored(pattern: str) -> str:
    """``pattern`` without its start-of-text anchors (``^`` and ``\\A`` outside a character
    class): a sparse rule's pattern is written for the line's message, after the engine's prefix,
    but the prefilter's candidate test searches the whole raw line, prefix and any outer wrapper
    (``> ``, a compose name, a runtime timestamp) included. Without its anchors the pattern
    matches a superset of the lines it matches (a search finds the anchored match at any offset),
    so the test keeps every line the matcher would read, and the matcher still applies the rule's
    own pattern (an anchored sparse branch such as Ollama's ``^\\[GIN\\]`` otherwise dropped every
    access line behind a wrapper)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            if not in_class and pattern[i + 1] == "A":
                i += 2
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
        elif c == "[":
            in_class = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i += 2
                continue
        elif c == "^":
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _Unanchored:
    """A sparse rule's regex for the candidate test: ``unanchored`` of its pattern, compiled on
    first use (``search`` only)."""

    __slots__ = ("_rx", "_compiled")

    def __init__(self, rx):
        self._rx, self._compiled = rx, None

    def search(self, line: str):
        if self._compiled is None:
            import regex

            inner = _rx(self._rx)
            self._compiled = regex.compile(unanchored(inner.pattern), inner.flags)
        return self._compiled.search(line)


def with_sparse(prefilter, packs):
    """``prefilter`` wrapped in a ``SparsePrefilter`` when ``packs`` have sparse rules, else itself."""
    lits, rxs = sparse_rules(packs)
    return SparsePrefilter(prefilter, lits, rxs) if lits else prefilter


def read_since_start(events, rules: dict) -> bool:
    """Whether the matcher, having read ``events`` (an open run's, in order; ``rules``: rule id ->
    ``(CompiledRule, Pack)``), has read a ``sparse`` state line since the last start marker: it then
    reads no other until the next start (``logscan.match``, ``_sparse_done``). A restored pipeline
    rebuilds that state from the replayed events, or it read the next such line again and its run
    ended later than the uninterrupted pass (vllm-357's teardown, docs/follow.md)."""
    done = False
    for ev in events:
        said = rules.get(ev.rule)
        if said is None:
            continue
        r = said[0].rule
        if r.sparse and r.kind != "identity":
            done = True
        elif r.starts_run:
            done = False
    return done
