"""Keyword literals for the byte prefilter: the minimal set, pattern heads, Hyperscan escapes.

Pure functions over bytes and pattern text, used by ``sources.prefilter`` (and the benchmark).
"""
from __future__ import annotations

import re
from typing import Iterable


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
    ``lmdeploy - `` and ``\\[TM\\]\\[``, TensorRT-LLM's ``\\[TRT-LLM\\] ``), else ``sniff_head``."""
    head = sniff_head(pattern)
    group = _head(pattern)
    if group == pattern or re.match(r"\(\?[a-zA-Z]+\)", pattern):
        return head
    pre_end, pre_n = _literal_run(pattern, 0)
    post_n = _literal_run(head, len(group))[1]
    if max(pre_n, post_n) < MIN_FACTOR:
        return head
    return pattern[:pre_end] if pre_n >= post_n else head[len(group):]


def _hex(lit: bytes) -> bytes:
    """``lit`` as a Hyperscan pattern of ``\\xNN`` escapes (every byte literal)."""
    return b"\\x" + lit.hex("-").replace("-", "\\x").encode("ascii") if lit else b""


def ere_alternation(keywords: Iterable[str]) -> str:
    """The keywords as one POSIX ERE alternation (for ``grep -E -i``; used by the benchmark)."""
    return "|".join(re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", k) for k in sorted(set(keywords)))
