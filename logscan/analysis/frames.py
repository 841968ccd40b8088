"""Traceback frames that name a kernel's op, as a general mechanism (docs/traceback-frames.md).

A frame ``File "...", line N, in f`` says ``f`` ran: the process raised inside it. A pack rule
with ``frame = true`` (``Rule.frame``) reads such a frame in a kernel's apply path or op. Its
kernel is the rule's ``kernel`` (a selection when the rule also has a ``family``), else the
kernel of the lexicon whose ``[[kernel]]`` aliases or name pattern take the frame's function
(``gptq_marlin_gemm`` is Marlin's: ``patterns/lexicon.toml``). A kernel-relevant frame of the
SAME kernel as a selection of the run corroborates that selection (the kernel ran), and is no
"not understood" line; any other stays not understood, never silent.
"""
from __future__ import annotations

from typing import Iterable, Optional

from .. import rxcache
from ..models import Event, Selection
from ..packs.model import LexiconFile, Rule
from ..packs.model_rules import FRAME_SHAPE

#: deprecated: the rule-id segment that marked a frame rule before ``Rule.frame`` existed; a rule
#: of a third-party pack still carrying it (and not ``frame = true``) is read as a frame rule
FRAME_ID = ".frame."

_FRAME = rxcache.compile(FRAME_SHAPE)
_CACHE: dict[int, tuple] = {}


def is_frame_rule(rule: Rule) -> bool:
    """Whether ``rule`` reads a traceback frame: ``frame = true``, or (deprecated fallback) a
    ``.frame.`` segment in its id."""
    return rule.frame or FRAME_ID in rule.id


def frame_parts(message: str) -> Optional[tuple[str, str]]:
    """``(path, function)`` of a CPython traceback frame line, or None when ``message`` is none."""
    m = _FRAME.match(message)
    return (m.group("path"), m.group("function")) if m else None


def _kernels(lexicon: LexiconFile) -> list:
    hit = _CACHE.get(id(lexicon))
    if hit is None or hit[0] is not lexicon:
        rows = [(k, rxcache.compile(k.pattern), {a.lower() for a in k.aliases},
                 rxcache.compile(k.says) if k.says else None) for k in lexicon.kernel]
        hit = _CACHE[id(lexicon)] = (lexicon, rows)
    return hit[1]


def kernel_named(lexicon: LexiconFile, name: str) -> Optional[str]:
    """The lexicon kernel (``[[kernel]]`` ``name``) a kernel, op or function name belongs to:
    the first entry listing it as an alias (case folded), else the first whose pattern matches
    it. None when no entry takes it (``cutlass_scaled_mm`` -> ``CUTLASS``, ``Marlin`` -> ``Marlin``)."""
    n = (name or "").strip()
    if not n:
        return None
    rows = _kernels(lexicon)
    low = n.lower()
    for k, _, aliases, _ in rows:
        if low in aliases or low == k.name.lower():
            return k.name
    for k, rx, _, _ in rows:
        if rx.search(n):
            return k.name
    return None


def kernel_alias(lexicon: LexiconFile, name: str) -> Optional[str]:
    """The lexicon kernel that lists ``name`` (case folded) among its op / function aliases
    (``gptq_marlin_gemm`` -> ``Marlin``), or None: what ``logscan explain`` resolves a name no
    ladder holds through."""
    low = (name or "").strip().lower()
    for k, _, aliases, _ in _kernels(lexicon):
        if low in aliases:
            return k.name
    return None


def kernel_of_path(lexicon: LexiconFile, path: str) -> Optional[str]:
    """The lexicon kernel whose own Python package (``[[kernel]] modules``) holds the file
    ``path`` (``.../site-packages/flashinfer/jit/fused_moe.py`` -> ``FlashInfer``), or None."""
    segs = set(path.replace("\\", "/").split("/")[:-1])
    for k, _, _, _ in _kernels(lexicon):
        if any(m in segs for m in k.modules):
            return k.name
    return None


def kernels_said(lexicon: LexiconFile, message: str) -> list[tuple[str, str]]:
    """``(kernel, why)`` for each lexicon kernel whose own wording (``says``, a regex) is in
    ``message``; ``why`` quotes the words of the message that matched."""
    out = []
    for k, _, _, says in _kernels(lexicon):
        m = says.search(message) if says is not None else None
        if m:
            out.append((k.name, f"the wording is {k.name}'s own ({m.group(0)!r})"))
    return out


def frame_kernel(lexicon: LexiconFile, rule: Optional[Rule], message: str) -> Optional[str]:
    """The kernel a frame line names: the frame rule's ``kernel``, else the lexicon kernel of the
    frame's function. None for a line that is no frame, or a frame of no known kernel."""
    parts = frame_parts(message)
    if parts is None:
        return None
    frame_rule = rule is not None and is_frame_rule(rule)
    if frame_rule and rule.kernel and "{" not in rule.kernel:
        return kernel_named(lexicon, rule.kernel) or rule.kernel
    k = kernel_named(lexicon, parts[1])
    if k is None and frame_rule:  # a frame rule chose the file as a kernel's (kernels/scaled_mm/cutlass.py)
        stem = parts[0].replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
        k = kernel_named(lexicon, stem)
    return k


def _same_kind(rule: Rule, sel: Selection) -> bool:
    """A MoE frame corroborates a MoE selection, a linear frame a linear one (a Marlin MoE frame
    says nothing of the dense layers' Marlin)."""
    moe = "moe" in sel.family.lower() or "expert" in sel.family.lower()
    if rule.kind == "moe_kernel":
        return moe
    if rule.kind == "linear_kernel":
        return not moe
    return True


def corroborate(events: Iterable[Event], rules: dict, selections: list[Selection],
                used: set[tuple[int, str]], lexicon: LexiconFile) -> None:
    """Each kernel-relevant frame (a frame rule without ``family``) of the same kernel as a
    selection of the run: marked used (not "not understood") and the selection marked as seen
    in a traceback (``uncaught.TRACEBACK``: the kernel ran, so a failed start leaves it
    confirmed), with the frame's line and function in its reasoning.

    ``rules``: rule id -> ``(CompiledRule, Pack)`` (``Analyzer.rules``); ``used``: ``(line,
    rule)`` of events that gave something, extended in place.
    """
    from .uncaught import TRACEBACK

    for ev in events:
        cr = rules.get(ev.rule)
        if cr is None:
            continue
        r = cr[0].rule
        if not is_frame_rule(r) or r.family:
            continue
        k = frame_kernel(lexicon, r, ev.message)
        if k is None:
            continue
        fn = (frame_parts(ev.message) or ("", "?"))[1]
        for s in selections:
            if not _same_kind(r, s) or (kernel_named(lexicon, s.kernel) or s.kernel) != k:
                continue
            used.add((ev.line, ev.rule))
            note = f"corroborated by a traceback frame (line {ev.line}, in {fn}, an op of {k}): the kernel ran"
            why = s.reasoning or ""
            if why.startswith(TRACEBACK):
                if "corroborated by" not in why:
                    s.reasoning = f"{why}; {note}"
            else:
                s.reasoning = f"{TRACEBACK} {note}" + (f"; {why}" if why else "")
