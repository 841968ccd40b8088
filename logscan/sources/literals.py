"""Keyword literals for the byte prefilter: the minimal set, pattern heads, Hyperscan escapes.

Pure functions over bytes and pattern text, used by ``sources.prefilter`` (and the benchmark).
"""
from __future__ import annotations

import re
from typing import Iterable, Optional


def minimal_literals(keywords: Iterable[str]) -> list[bytes]:
    """Lower-cased UTF-8 keywords, without those that contain another one (same lines hit).

    Sorted. One ``bytes.find`` pass per literal over all literals joined by NUL (a byte no
    keyword holds), instead of a pairwise ``in`` test: ~460 keywords cost ~1 ms, not ~30 ms
    of every start-up.
    """
    low = sorted({k.encode("utf-8").lower() for k in keywords if k})
    drop = _containing(low, low)
    return [k for k in low if k not in drop]


def _containing(literals: list[bytes], needles: list[bytes]) -> set[bytes]:
    """The members of ``literals`` that contain a member of ``needles`` other than themselves."""
    joined = b"\x00".join(literals)
    starts, pos = [], 0
    for lit in literals:
        starts.append(pos)
        pos += len(lit) + 1
    import bisect

    out: set[bytes] = set()
    for needle in needles:
        if not needle or b"\x00" in needle:
            out.update(lit for lit in literals if needle in lit and needle != lit)
            continue
        i = joined.find(needle)
        while i >= 0:
            j = bisect.bisect_right(starts, i) - 1
            if literals[j] != needle:
                out.add(literals[j])
            i = joined.find(needle, i + 1)
    return out


def _head(pattern: str) -> str:
    """``pattern`` up to the end of its first top-level group (with its quantifier), or whole.

    Unchanged when the pattern has a top-level ``|`` (a head would not be necessary then).
    """
    depth, i, end, in_class = 0, 0, None, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0 and end is None:
                j = i + 1
                m = re.match(r"(?:[?*+]|\{\d*,?\d*\})\??", pattern[j:])
                end = j + (m.end() if m else 0)
        elif c == "|" and depth == 0:
            return pattern
        i += 1
    return pattern[:end] if end is not None else pattern


#: one top-level literal atom: a plain character or an escaped punctuation character
_ATOM = re.compile(r"[^\\.^$|?*+()\[\]{}]|\\[^\w\s]")
_QUANT = re.compile(r"[?*+{]")


def sniff_head(pattern: str) -> str:
    """``_head(pattern)`` and the literal characters that follow it at the top level (up to the
    first special character, a quantified one left out): still a necessary condition (a prefix
    of the pattern's top-level sequence), and one Hyperscan searches far faster when the group
    is made of classes (``\\d{4}-\\d\\d...``: ~0.7 ms/MB) and the literal after it is
    rare (`` \\| ``, ``lmdeploy - ``, ``\\[TRT-LLM\\] ``). A head that is the whole pattern,
    or an inline-flag group, is returned as ``_head`` gives it."""
    head = _head(pattern)
    if head == pattern or re.match(r"\(\?[a-zA-Z]+\)", pattern):
        return head
    i = len(head)
    while True:
        m = _ATOM.match(pattern, i)
        if m is None or _QUANT.match(pattern, m.end()):
            break
        i = m.end()
    return pattern[:i]


def _literal_run(pattern: str, i: int) -> tuple[int, int]:
    """End of the run of unquantified top-level literal atoms from ``pattern[i]``, and its length in characters."""
    n = 0
    while True:
        m = _ATOM.match(pattern, i)
        if m is None or _QUANT.match(pattern, m.end()):
            return i, n
        i, n = m.end(), n + 1


#: a literal factor this long is rare enough to stand for the whole head (it is searched as a literal)
MIN_FACTOR = 4


def sniff_source(pattern: str) -> str:
    """A necessary condition of ``pattern`` (matched anywhere in a buffer) for the prefilter's sniff:
    the longer of the literal runs before and after its first top-level group when it has at least
    ``MIN_FACTOR`` characters (a sniff searched anywhere: wherever the pattern matches, each of its
    top-level factors does; a pure literal is the cheapest search Hyperscan has: LMDeploy's
    ``lmdeploy - `` and ``\\[TM\\]\\[``, TensorRT-LLM's ``\\[TRT-LLM\\] ``), or a longer literal
    factor found anywhere in the pattern (``literal_factor``: TGI's ``text_generation_``,
    escaped), else ``sniff_head``."""
    head = sniff_head(pattern)
    group = _head(pattern)
    if group == pattern or re.match(r"\(\?[a-zA-Z]+\)", pattern):
        return head
    pre_end, pre_n = _literal_run(pattern, 0)
    post_n = _literal_run(head, len(group))[1]
    factor = literal_factor(pattern)
    if len(factor) >= MIN_FACTOR and len(factor) > max(pre_n, post_n):
        return _escaped(factor)
    if max(pre_n, post_n) < MIN_FACTOR:
        return head
    return pattern[:pre_end] if pre_n >= post_n else head[len(group):]


try:  # the standard library's regex parser (a private module; absent: no literal factors)
    from re import _parser as _sre
    from re import _constants as _sre_c
except ImportError:  # pragma: no cover - Python < 3.11
    try:
        import sre_constants as _sre_c
        import sre_parse as _sre
    except ImportError:
        _sre = _sre_c = None


def literal_factor(pattern: str) -> str:
    """The longest literal that every match of ``pattern`` contains ('' when none is found).

    Read from the parsed pattern (the standard library's parser; ``regex`` V0 syntax is the
    same): a run of literal characters in the top-level concatenation, also through groups
    that are not quantified (their content is concatenated in place; an alternation, a
    repeat, a class or an anchor ends a run). TGI's prefix ``(?P<timestamp>\\d{4}-...Z)\\s{1,3}
    (?P<level>...)...text_generation_(?:launcher|...)`` holds ``text_generation_`` wherever it
    matches. A case-insensitive pattern or group, or one the parser does not read, gives ''.
    """
    if _sre is None:
        return ""
    try:
        parsed = _sre.parse(pattern)
    except Exception:  # re.error, or syntax only the regex module reads
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    best: list[int] = []
    run: list[int] = []

    def end_run() -> None:
        nonlocal best, run
        if len(run) > len(best):
            best = run
        run = []

    def walk(items) -> None:
        for op, av in items:
            if op is _sre_c.LITERAL:
                run.append(av)
            elif op is _sre_c.SUBPATTERN and not (av[1] & re.IGNORECASE):
                walk(av[-1])  # an unquantified group: its content is part of the concatenation
            else:
                end_run()

    walk(parsed)
    end_run()
    return "".join(map(chr, best))


def _escaped(text: str) -> str:
    """``text`` as a pattern matching exactly its UTF-8 bytes (ASCII punctuation escaped,
    other non-alphanumeric characters as ``\\xNN`` bytes)."""
    out = []
    for c in text:
        if c.isascii() and (c.isalnum() or c == "_"):
            out.append(c)
        elif " " <= c <= "~":
            out.append("\\" + c)
        else:
            out.append("".join(f"\\x{b:02x}" for b in c.encode("utf-8")))
    return "".join(out)


def _sequence(src: bytes):
    """The top-level items of the (bytes) pattern ``src`` as nested tuples, None when the
    parser does not read it."""
    if _sre is None:
        return None
    try:
        parsed = _sre.parse(src)
    except Exception:
        return None

    def norm(x):
        if isinstance(x, _sre.SubPattern):
            return tuple(norm(i) for i in x.data)
        if isinstance(x, (list, tuple)):
            return tuple(norm(i) for i in x)
        return x

    return norm(parsed), parsed.state.flags


def without_implied(sources: list[bytes]) -> list[bytes]:
    """``sources`` (a gate's sniffs, any of which opens it) without those whose every match
    holds a match of another: a sniff whose top-level items contain another's as a contiguous
    run (SGLang's ``\\[(?:...)\\.`` holds ``\\[(?:...)``; a literal holding another). The set of
    buffers some sniff matches is unchanged; each sniff left out is a Hyperscan pattern less
    (SGLang's second timestamp sniff cost ~0.03 ms/MB, each in a class-heavy database more)."""
    seqs = [_sequence(s) for s in sources]
    keep = []
    for i, (src, sq) in enumerate(zip(sources, seqs)):
        implied = False
        for j, other in enumerate(seqs):
            if j == i or sq is None or other is None or other[1] != sq[1] or not other[0]:
                continue
            a, b = other[0], sq[0]
            if a == b and j > i:
                continue  # the same sniff spelled twice: the first is kept
            if any(b[k:k + len(a)] == a for k in range(len(b) - len(a) + 1)):
                implied = True
                break
        if not implied:
            keep.append(src)
    return keep


def gate_sniffs(prefixes: list, memo: Optional[dict] = None) -> list[bytes]:
    """The sniffs of a gate whose prefix patterns are ``prefixes`` (compiled regexes): per pattern
    ``sniff_head`` (case-insensitive) or ``sniff_source``, named groups made plain, as bytes,
    deduplicated, then ``without_implied``. Kept in ``memo`` (the pack set's, pickled with it:
    parsing the patterns costs ~4 ms a start) under a key holding the patterns and this
    module's code, so a changed sniff rule never reads an old answer."""
    key = ("gate-sniffs", _code_id(), tuple((rx.pattern, rx.flags) for rx in prefixes))
    if memo is not None and key in memo:
        return list(memo[key])
    out: list[bytes] = []
    for rx in prefixes:
        cut = sniff_head(rx.pattern) if rx.flags & re.IGNORECASE else sniff_source(rx.pattern)
        src = re.sub(r"\(\?P<\w+>", "(?:", cut).encode("utf-8")
        if src not in out:
            out.append(src)
    out = without_implied(out)
    if memo is not None:
        memo[key] = list(out)
    return out



def pattern_literal(src: bytes) -> Optional[bytes]:
    """The bytes ``src`` (a bytes pattern) matches when it is a plain literal (``\\[TRT-LLM\\] ``,
    ``text_generation_``), else None (a class, a repeat, an alternation, a flag, or syntax the
    parser does not read). A gate sniff that is a literal joins the prefilter's literal database:
    Hyperscan's pure-literal matcher is ~40 % cheaper than the same literals beside one regex."""
    sq = _sequence(src)
    if sq is None or sq[1] & ~_sre_c.SRE_FLAG_UNICODE or not sq[0]:
        return None
    if any(op is not _sre_c.LITERAL for op, _ in sq[0]):
        return None
    return bytes(av for _, av in sq[0])


def _class_source(items) -> Optional[bytes]:
    """A parsed character class (``IN`` items) written back as a Hyperscan class, None for a
    member other than a literal, a range or ``\\d`` (``\\s`` and ``\\w`` are read apart)."""
    out = []
    for op, av in items:
        if op is _sre_c.LITERAL:
            out.append(b"\\x%02x" % av)
        elif op is _sre_c.RANGE:
            out.append(b"\\x%02x-\\x%02x" % av)
        elif op is _sre_c.CATEGORY and av is _sre_c.CATEGORY_DIGIT:
            out.append(b"0-9")
        else:
            return None
    return b"[" + b"".join(out) + b"]"


def sniff_prefix(src: bytes) -> Optional[bytes]:
    """A shorter necessary condition of the sniff ``src`` (a bytes pattern), or None.

    The top-level items of ``src`` (groups without a quantifier are read in place) up to the
    first literal that follows a class or a repeat, written back as a pattern of ``\\xNN``
    literals, ``[...]`` classes and ``{m,n}`` repeats: wherever ``src`` matches, this prefix
    of its sequence matches at the same start. SGLang's timestamp sniff
    ``\\[(?:\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d)`` becomes ``\\[\\d{4}-``, which Hyperscan
    searches in ~0.13 ms/MB against ~0.37 for the whole head (issue 18): the prefilter searches
    it first, and the whole sniff only in a buffer where it matches. None when ``src`` has
    flags, starts with an item not written back here, or no shorter prefix exists.
    """
    sq = _sequence(src)
    if sq is None or sq[1] & ~_sre_c.SRE_FLAG_UNICODE:
        return None
    items = list(sq[0])
    out: list[bytes] = []
    seen_class = False
    for k, (op, av) in enumerate(items):
        if op is _sre_c.LITERAL:
            out.append(b"\\x%02x" % av)
            if seen_class:
                return b"".join(out) if k + 1 < len(items) else None
            continue
        if op is _sre_c.IN:
            piece = _class_source(av)
        elif op is _sre_c.MAX_REPEAT and len(av[2]) == 1 and av[2][0][0] is _sre_c.IN:
            lo, hi = av[0], av[1]
            cls = _class_source(av[2][0][1])
            rep = b"{%d}" % lo if lo == hi else b"{%d,}" % lo if hi is _sre_c.MAXREPEAT else b"{%d,%d}" % (lo, hi)
            piece = cls + rep if cls is not None else None
        else:
            piece = None
        if piece is None:
            return None
        out.append(piece)
        seen_class = True
    return None

_CODE_ID: list[str] = []


def _code_id() -> str:
    """A digest of this module's source (the sniff rules), read once a process."""
    if not _CODE_ID:
        from .. import hashes as hashlib

        try:
            with open(__file__, "rb") as fh:
                _CODE_ID.append(hashlib.sha1(fh.read()).hexdigest()[:16])
        except OSError:  # no source file (a frozen build): never reuse an answer across versions
            _CODE_ID.append(f"pid-{__import__('os').getpid()}")
    return _CODE_ID[0]


def _hex(lit: bytes) -> bytes:
    """``lit`` as a Hyperscan pattern of ``\\xNN`` escapes (every byte literal)."""
    return b"\\x" + lit.hex("-").replace("-", "\\x").encode("ascii") if lit else b""


def ere_alternation(keywords: Iterable[str]) -> str:
    """The keywords as one POSIX ERE alternation (for ``grep -E -i``; used by the benchmark)."""
    return "|".join(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", k) for k in sorted(set(keywords)))
