"""Find, in a large byte buffer, the offsets of every line that may matter to the pipeline.

A long-running server's log is millions of request and metrics lines around a few start-ups.
Before any per-line work (decode, prefix, regex), the reader hands each buffer of complete
lines (1 MiB) to a ``Prefilter``, which returns the offsets of

- every pack keyword, ASCII case-insensitive (the matcher's own keyword test,
  ``logscan.match``, is the same: ASCII case folding on the message);
- the bytes that change a line's text before matching, so a keyword hidden by them is not
  missed: NUL, ESC (ANSI colour codes, also spelled ``#033[`` by syslog relays and ``^[[`` in caret
  notation), a ``\\r`` not followed by ``\\n``;
- the starts of wrapped or joined records: a Kubernetes CRI partial line (`` stdout P`` /
  `` stderr P``) and a JSON record (one of the keys the unwrapper reads, ``"log"``,
  ``"message"``, ``"msg"``: Docker json-file or a JSON formatter; JSON escapes can hide a
  keyword and Docker splits long lines into partial entries). ``sources/triggers.py``.

Keywords of ``prefixed_only`` rules (e.g. SGLang's catch-all topic rules) only count on a line
that carries a line prefix of their engine: the matcher gives such rules no other line. They
are "gated": a hit is kept only when one of the engine's prefix patterns is found in the
decoded line (a buffer with none of them is not even searched for them, in the pure-Python
engine). Lines without such an offset are skipped, counted, never decoded. The set may over-select
(a keyword in a prompt): the per-line stages decide. It must never under-select;
``tests/test_prefilter.py`` checks that reports are equal with and without it.

Two engines, chosen automatically: Intel Hyperscan (the ``hyperscan`` package, x86-64 wheels;
``sources/hsscan.py``) and a pure-Python one (``bytes.lower`` and ``bytes.find`` per literal:
~80 MB/s here; ``sources/pyscan.py``). This module plans the literals and holds the API.
``LOGSCAN_PREFILTER=python|hyperscan|off`` forces one (``off``: every line goes through).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from .backends import ENV, KeywordIndex, PrefilterError, _choose, available_backends  # noqa: F401 (re-exported)
from .hsdb import _HsDb, _cache_path, _hs, hs_db, matches_empty  # noqa: F401 (re-exported)
from .hsscan import HyperscanSearch
from .literals import _containing, _head, _hex, ere_alternation, gate_sniffs, minimal_literals, sniff_head, sniff_source, without_implied  # noqa: F401 (re-exported)
from .pyscan import PythonSearch
from .sparse import with_sparse
from .triggers import CRI_PARTIAL as _CRI_PARTIAL, DIRTY as _DIRTY, UNSURE as _UNSURE  # noqa: F401 (re-exported)


@dataclass
class Gate:
    """Keywords that count only on a line where one of ``prefixes`` (compiled regexes) is found."""

    engine: str
    keywords: list[str]
    prefixes: list = field(default_factory=list)
    #: the pack set's memo (``PackSet.memo``, pickled with it), which keeps the gate's sniffs
    memo: Optional[dict] = field(default=None, compare=False, repr=False)


def pack_keywords(packs) -> tuple[list[str], list[Gate], list[str]]:
    """``(everywhere, gates, case_sensitive)``: keywords searched on every line (ASCII
    case-insensitive), per engine the keywords of its ``prefixed_only`` rules with the engine's
    line-prefix patterns (``pack.toml``), and keywords searched everywhere case-sensitively
    (rules with ``case_sensitive_keywords``; gated ones are searched case-insensitively, a
    superset)."""
    everywhere: set[str] = set()
    sensitive: set[str] = set()
    gates = []
    for pack in packs.packs.values():
        gated: set[str] = set()
        for cr in pack.rules:
            if cr.rule.sparse:
                continue  # searched apart, once per stretch (sources/sparse.py)
            if cr.rule.prefixed_only:
                gated.update(cr.rule.keywords)
            elif cr.rule.case_sensitive_keywords:
                sensitive.update(cr.rule.keywords)
            else:
                everywhere.update(cr.rule.keywords)
        if gated:
            gates.append(Gate(pack.engine, sorted(gated), [p.regex for p in pack.prefixes], getattr(packs, "memo", None)))
    return sorted(everywhere), gates, sorted(sensitive)


def make_prefilter(packs, backend: Optional[str] = None) -> Optional["Prefilter"]:
    """A ``Prefilter`` for the keywords of ``packs`` (a ``PackSet``), or None when ``backend``
    (or ``$LOGSCAN_PREFILTER``) is ``off``. Raises ``ValueError`` for an unknown or unavailable
    engine name."""
    choice = (backend or os.environ.get(ENV, "auto")).strip().lower() or "auto"
    if choice == "off":
        return None
    cache = getattr(packs, "derived", {})
    key = ("prefilter", choice)
    if key not in cache:  # compiling a Hyperscan database takes ~0.1 s: once per PackSet
        everywhere, gates, sensitive = pack_keywords(packs)
        pre = Prefilter(everywhere, choice, gates, sensitive, getattr(packs, "memo", None), start_keywords(packs))
        cache[key] = with_sparse(pre, packs)
    return cache[key]


def start_keywords(packs) -> list[str]:
    """The keywords of every ``starts_run`` rule of ``packs`` (a ``PackSet``): a line holding none of
    them can fire no start marker, the only event after which the matcher reads a ``sparse`` line
    again (``logscan.match``: ``_sparse_done`` is cleared by a ``starts_run`` event only)."""
    return sorted({k for pack in packs.packs.values() for cr in pack.rules if cr.rule.starts_run
                   for k in cr.rule.keywords if k})


def literal_plan(keywords: Iterable[str], case_sensitive: Iterable[str], gate_keywords: list[list[str]],
                 memo: Optional[dict] = None) -> tuple[list[bytes], list[bytes], list[list[bytes]]]:
    """``(caseless literals, case-sensitive literals, per gate its literals)``: the fewest
    literals whose hits cover every keyword (``minimal_literals``), a case-sensitive or gated
    literal left out when an everywhere literal already finds it. Kept in ``memo`` (keyed by
    the inputs) when one is given."""
    keywords, case_sensitive = list(keywords), list(case_sensitive)
    key = ("literal-plan", tuple(keywords), tuple(case_sensitive), tuple(tuple(g) for g in gate_keywords))
    if memo is not None and key in memo:
        return memo[key]
    literals = minimal_literals(keywords)
    sens = sorted({k.encode("utf-8") for k in case_sensitive if k})
    low = sorted({k.lower() for k in sens})
    covered = _containing(low, literals) | (set(low) & set(literals))
    sensitive = [k for k in sens if k.lower() not in covered]
    per_gate = []
    for kws in gate_keywords:
        lits = minimal_literals(kws)
        covered = _containing(lits + literals, literals) | set(literals)
        per_gate.append([k for k in lits if k not in covered])
    plan = (literals, sensitive, per_gate)
    if memo is not None:
        memo[key] = plan
    return plan


class Prefilter(HyperscanSearch, PythonSearch):
    """Offsets of interesting bytes in a buffer of complete lines.

    ``keywords``: keywords searched everywhere (str). ``gates``: keywords that count only on a
    line carrying one of their engine's prefixes. ``backend``: ``hyperscan``, ``python``, or
    None for ``$LOGSCAN_PREFILTER`` / the best available. Raises ``ValueError`` for an unknown
    or unavailable backend name. ``memo``: a dict that keeps ``literal_plan``'s result (the
    pack set's ``memo``, pickled with it: the plan costs ~10 ms a start).

    A gate is first tried on the whole buffer with a fast "sniff" of its prefix patterns
    (compiled for bytes: Hyperscan, or ``regex`` bytes patterns). The sniff is trusted only
    where it cannot disagree with the parser's str patterns (an ASCII buffer without
    ``\\x1c``-``\\x1f``; a pattern that compiles); otherwise the gate is opened and every
    gated hit is checked on its decoded line with the pack's own compiled patterns.
    """

    #: Every NUL byte is a hit (``_DIRTY``), so a line the reader skips never holds one: the
    #: reader need not count NULs in skipped spans (a second pass over every byte).
    marks_nul = True

    def __init__(self, keywords: Iterable[str], backend: Optional[str] = None, gates: Iterable[Gate] = (),
                 case_sensitive: Iterable[str] = (), memo: Optional[dict] = None,
                 starts: Optional[Iterable[str]] = None):
        gates = list(gates)
        self._memo = memo if memo is not None else {}
        plan = literal_plan(keywords, case_sensitive, [g.keywords for g in gates], memo)
        #: caseless literals searched everywhere; case-sensitive literals (bytes as written),
        #: those holding a caseless one left out
        self.literals, self.sensitive = plan[0], plan[1]
        #: (gate, its literals), literals already searched everywhere left out
        self.gates = [(g, lits) for g, lits in zip(gates, plan[2]) if lits]
        #: literals whose hit cannot be a start marker's (``hits_and_starts``): contained in no
        #: start keyword (lower-cased: a superset for a case-sensitive one); none when ``starts``
        #: is None (every hit may be one)
        self._quiet: set[bytes] = set()
        if starts is not None:
            low = b"\x00".join(k.encode("utf-8").lower() for k in starts)
            self._quiet = {lit for lit in self.literals + self.sensitive if lit.lower() not in low}
        choice = (backend or os.environ.get(ENV, "auto")).strip().lower() or "auto"
        if choice == "off":
            raise PrefilterError(f"{ENV}=off: no prefilter (use make_prefilter, which returns None)")
        choice = _choose(choice)
        self.backend = choice
        #: only ``\\s``/``\\S`` read ``\\x1c``-``\\x1f`` differently in str and bytes patterns
        #: (ASCII text): without them in a sniff, those bytes need no search (~0.15 ms/MB)
        self._needs_unsure = any(re.search(rb"\\[sS]", src) for g, _ in self.gates for src in self._sniff_sources(g))
        if choice == "hyperscan":
            self._compile_hyperscan()
        else:
            self._sniffs = [self._bytes_sniff(g) for g, _ in self.gates]

    # -- compiling ---------------------------------------------------------------------------
    @staticmethod
    def _sniff_sources(gate: Gate) -> list[bytes]:
        """The gate's prefix patterns as bytes, cut after their first top-level group and the
        literal after it (``sniff_head``: a necessary condition, wherever the whole pattern
        matches, its head does) and named groups made plain (Hyperscan has none). Deduplicated,
        and without a sniff that holds another (``without_implied``: the same buffers open the gate).
        ``literals.gate_sniffs``, kept in the gate's ``memo``."""
        return gate_sniffs(gate.prefixes, gate.memo)

    def _matches_empty(self, src: bytes) -> bool:
        """``hsdb.matches_empty(src)``, kept in the pack set's memo (a ``regex`` compile each start)."""
        key = ("matches-empty", src)
        if key not in self._memo:
            self._memo[key] = matches_empty(src)
        return self._memo[key]

    # -- searching ---------------------------------------------------------------------------
    def hits(self, buf: bytes, ascii: Optional[bool] = None) -> list[int]:
        """Sorted offsets in ``buf``, each inside (or at the first byte of) a line to keep.

        ``ascii``: ``buf.isascii()`` when the caller has it already (None: computed if needed).
        """
        return self.hits_and_starts(buf, ascii)[0]

    def hits_and_starts(self, buf: bytes, ascii: Optional[bool] = None) -> tuple[list[int], list[int]]:
        """``(hits, starts)``: ``hits()``, and the sorted subset of them that may lie in a line
        firing a start marker (every hit but those of a literal contained in no start keyword:
        a line holding a start keyword holds a hit of a literal contained in it, and every
        other trigger, gated hit, ANSI, NUL, ``\\r``, JSON or CRI start, is kept). The sparse
        prefilter searches its next line only after these (``sources/sparse.py``)."""
        if self.backend == "hyperscan":
            return self._hyperscan_hits(buf, ascii)[:2]
        return self._python_hits(buf)

    def scan(self, buf: bytes) -> tuple[list[int], list[int], bool]:
        """``hits_and_starts(buf)`` and ``buf.isascii()`` (~0.03 ms/MB: a ``[\\x80-\\xff]`` pattern
        in the Hyperscan database cost ~0.09, as it stops the literal matcher's fast path)."""
        if self.backend == "hyperscan":
            return self._hyperscan_hits(buf)
        ascii = buf.isascii()
        return (*self._python_hits(buf), ascii)

    def _open_gates(self, buf: bytes, gated: list[tuple[int, int]]) -> list[int]:
        """The gated hits whose decoded line holds one of the gate's prefix patterns (exact check)."""
        out: list[int] = []
        seen: dict[tuple[int, int], bool] = {}
        for gi, h in gated:
            ls = buf.rfind(b"\n", 0, h) + 1
            ok = seen.get((gi, ls))
            if ok is None:
                le = buf.find(b"\n", h)
                line = buf[ls:le if le >= 0 else len(buf)].decode("utf-8", "replace")
                ok = seen[(gi, ls)] = any(rx.search(line) for rx in self.gates[gi][0].prefixes)
            if ok:
                out.append(h)
        return out
