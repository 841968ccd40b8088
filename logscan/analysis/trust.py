"""Which findings a CI gate can trust, and which recognised lines stay unexplained.

A finding a line states is kept only when the evidence holds up (issue 11, "precision a
gate can trust"):

- a rule of another engine's pack may not raise an error on a run whose engine is known
  (SGLang lines read by a borrowed vLLM rule: ``... requires SM100+; disabled.`` for an
  optional fusion is no fatal arch limit); on a run whose engine is ``unknown`` an error is
  lowered to a warning (no line shows which engine, so which rules apply);
- ``OPTIONAL_PACKAGE_MISSING`` needs a package tied to a kernel or a backend
  (``patterns/lexicon.toml`` ``[packages]``);
- ``SLOW_QUANT_METHOD`` needs a faster method: named by the line (a ``better`` / ``fast``
  group) or listed for the method and release in the pack's ``[[faster_method]]`` table.

A recognised line that gives no selection, no trusted finding, no run fact and captured no
named part is ``Run.unexplained``: logscan saw what it speaks of but did not understand it.
"""
from __future__ import annotations

from typing import Optional

import regex
from packaging.version import Version

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..models import Event, Severity, Unexplained
from ..packs.loader import CompiledRule, Pack, PackSet
from .ladders import parse_version
from .lexicon import kernel_package

#: groups by which a line names the faster method it did not use
_FASTER_GROUPS = ("better", "fast", "faster")
#: groups that may hold the package a line says is missing
_PACKAGE_GROUPS = ("package", "module", "pip")
#: event kinds that are run facts or run structure, never "not understood"
_FACT_KINDS = frozenset({"version", "config", "platform", "identity", "run_start", "start_failure", "gpu",
                         "uncaught", "ready", "progress", "machine", "stop"})
#: fact kinds whose rule reads a line into named values (``sets``): that line is understood
_SET_KINDS = frozenset({"version", "config", "platform", "gpu", "machine"})


@dataclass
class Verdict:
    """What becomes of a finding a rule states: kept (maybe at a lower severity) or dropped, and why."""

    keep: bool
    severity: Optional[Severity] = None  #: a lowered severity, None to keep the code's own
    why: Optional[str] = None


def judge(code: str, severity: Severity, cr: CompiledRule, rule_pack: Pack, run_engine: str,
          identified: bool, ev: Event, packs: PackSet, version: Optional[str]) -> Verdict:
    """Whether the finding ``code`` that rule ``cr`` (of ``rule_pack``) states on ``ev`` holds
    for a run of ``run_engine`` (``identified``: a line named that engine), release ``version``."""
    g = ev.groups
    if code == "OPTIONAL_PACKAGE_MISSING":
        pkg = next((g[k] for k in _PACKAGE_GROUPS if g.get(k)), None)
        if pkg is not None and kernel_package(packs.lexicon, pkg) is False:
            return Verdict(False, why=f"the missing package {pkg!r} is tied to no kernel or backend "
                                      "(patterns/lexicon.toml [packages])")
    if code == "SLOW_QUANT_METHOD" and not any(g.get(k) for k in _FASTER_GROUPS):
        faster = _faster_method(packs.packs[run_engine], g.get("method") or g.get("slow") or "", version)
        if faster is None:
            return Verdict(False, why=f"no faster method is named by the line nor known for "
                                      f"{g.get('method') or 'this method'} in {run_engine} {version or '(release unknown)'}")
    if severity == Severity.error and rule_pack.engine != run_engine and identified:
        # an engine may print another's exact message (SGLang runs vLLM's Triton / Marlin code):
        # that is evidence only as a raised error of the run's engine, never a logged remark
        exc = packs.packs[run_engine].meta.pack.exception_line
        raised = _RAISED.search(ev.message) or (exc and pack_regex(exc).search(ev.message))
        if not cr.rule.generic and not raised:
            return Verdict(False, why=f"an error from a {rule_pack.engine} rule on a line of a {run_engine} run that "
                                      "is no raised exception: an error needs evidence from the run's own engine")
    if (severity == Severity.error and ev.level and ev.level.lower() in _GOES_ON
            and not _RAISED.search(ev.message)):
        return Verdict(True, Severity.warning, why=f"severity lowered from error: the engine logged this line at "
                                                  f"{ev.level.upper()}, so it went on (a later fatal line raises it again)")
    if severity == Severity.error and not identified and not cr.rule.generic:
        return Verdict(True, Severity.warning, why="severity lowered from error: no line names the engine, "
                                                  "so no engine's rules are known to apply")
    return Verdict(True)


def remedy_applies(cr: CompiledRule, identified: bool) -> bool:
    """Whether the remedy of rule ``cr`` may be printed on a run (``identified``: a line names its engine).

    A pack's remedy speaks of its engine's builds, flags and packages ("Use a torch / sgl-kernel /
    flashinfer build ...": patterns/sglang); on a run that no line ties to that engine (``unknown``:
    a neighbouring tool's log, flash-attention's 'no kernel image' under xformers, negative10
    other-108) it would tell the user to fix an engine that did not run. A generic rule's remedy
    names no engine and is kept; on a run a line names, every kept finding keeps its remedy (an
    imported engine's grammar remedy such as 'install awq' holds there, lmdeploy-153)."""
    return cr.rule.generic or identified


#: log levels at which an engine reports what it works around, not what stops it
_GOES_ON = frozenset({"warning", "warn", "info", "debug"})

_EXC: dict[str, "regex.Pattern"] = {}
#: a raised Python exception on the line: ``ValueError: ...`` or ``ValueError("...")``
_RAISED = lazyre.compile(r"(?:^|[\s:\]])(?:[A-Za-z_]\w{0,40}\.){0,6}[A-Z]\w{0,60}(?:Error|Exception)(?::|\([\x27\"])")


def pack_regex(pattern: str):
    """A pack-level pattern (``exception_line``, ``fatal_line`` of ``pack.toml``), compiled once
    per pattern."""
    rx = _EXC.get(pattern)
    if rx is None:
        rx = _EXC[pattern] = rxcache.compile(pattern)
    return rx


def _faster_method(pack: Pack, method: str, version: Optional[str]) -> Optional[str]:
    """The pack's ``[[faster_method]]`` entry for ``method`` that holds in ``version``; a release
    that is not known passes only an entry valid for every release of the pack."""
    v = parse_version(version)
    for fm in pack.meta.faster_method:
        if fm.method.lower() != method.lower():
            continue
        if not fm.since:
            return fm.faster
        if v is not None and v >= Version(fm.since):
            return fm.faster
    return None


def unexplained(events: list[Event], rules: dict, used: set[tuple[int, str]],
                dropped: dict[tuple[int, str], str], lexicon=None) -> list[Unexplained]:
    """The events of a run that were noticed but not understood, in line order.

    ``used``: ``(line, rule)`` of events that gave a selection, a trusted finding, an
    attention choice or a run fact; ``dropped``: ``(line, rule)`` -> why a finding the line
    states was not trusted. ``lexicon`` (patterns/lexicon.toml): an optional-package line
    none of whose words is a kernel package there ('opentelemetry package is not installed,
    tracing disabled', SGLang's tracing/trace.py) speaks of no kernel and is not listed, also
    when the finding it states was dropped for naming such a package (transformers' 'You can
    update Transformers with the command `pip install --upgrade transformers`', sglang-243): the
    only reason an optional-package finding is dropped is its package. A line that also names a
    kernel package, or a dropped one that is a raised exception ('ModuleNotFoundError: No module
    named 'sglang.srt.flashmla_tests'', sglang-113), stays listed.
    """
    out: list[Unexplained] = []
    seen: set = set()  # lines, and messages: a message every rank prints is listed once
    # lines whose platform / version / config a rule read into named values: a vaguer shape that
    # also noticed the line and captured nothing adds no question ('`fork` method is not supported
    # by ROCm. VLLM_WORKER_MULTIPROC_METHOD is overridden to `spawn` instead.', platform ROCm,
    # also matched by the kernel-requirement family: sglang-257 / 258)
    read = {ev.line for ev in events if ev.kind in _SET_KINDS and rules[ev.rule][0].rule.sets}
    for ev in events:
        key = (ev.line, ev.rule)
        if key in used or ev.kind in _FACT_KINDS or ev.line in seen or ev.message in seen:
            continue
        if ev.line in read and not (ev.groups or ev.items) and key not in dropped:
            continue
        if (ev.kind == "optional_package" and lexicon is not None
                and (key not in dropped or not _RAISED.search(ev.message))
                and not _names_kernel_package(lexicon, ev.message)):
            continue
        cr = rules[ev.rule][0]
        why = dropped.get(key)
        if why is None:
            if ev.groups or ev.items or cr.rule.sets:
                continue  # it captured named parts: a statement logscan read
            kind = ev.kind.replace('_', ' ')
            why = (f"recognised as {'an' if kind[:1] in 'aeiou' else 'a'} {kind} line "
                   f"({cr.rule.description.rstrip('.') or ev.rule}) but no rule states what it chose")
        else:
            why = "its finding was not trusted: " + why
        seen.update((ev.line, ev.message))
        out.append(Unexplained(line=ev.line, rule=ev.rule, kind=ev.kind, message=ev.message[:2000], why=why))
    return out


#: the words of a line that could name a package (``flashinfer``, ``vllm._C``, ``deep-gemm``)
_WORD = lazyre.compile(r"[A-Za-z_][\w.-]{1,60}")


def _names_kernel_package(lexicon, message: str) -> bool:
    """Whether a word of ``message`` is a package the lexicon ties to a kernel or a backend
    (True when the lexicon has no package list: nothing to decide by)."""
    for w in _WORD.findall(message):
        verdict = kernel_package(lexicon, w.rstrip(".-"))
        if verdict is None or verdict:
            return True
    return False


def unread_lines(unread: list[Event], events: list[Event], chosen: list = ()) -> list[Unexplained]:
    """The run's ``unread`` events as "not understood" entries, in line order: sentences that name
    a kernel or backend (group ``kernel``) in a choice's words (group ``verb``) that no rule read
    (``patterns/common-rules/95-unread-kernel.toml``, the vocabulary sweep).

    ``chosen``: the run's selections (``line``, ``kernel``). A sentence one or two lines after a
    selection of the same kernel is the rest of the message that stated it, wrapped onto its own
    line (vLLM's 'Your GPU does not have native support for FP8 computation ...' / 'Weight-only FP8
    compression will be used leveraging the Marlin kernel.', vllm-171): read, no question. A
    message every rank prints is listed once; a line another event of the run holds is no unread line.
    """
    held = {ev.line for ev in events}
    out: list[Unexplained] = []
    seen: set[str] = set()
    for ev in unread:
        kernel, verb = ev.groups.get("kernel") or "", ev.groups.get("verb")
        k = kernel.lower()
        if ev.line in held or ev.message in seen or any(
                0 < ev.line - s.line <= 2 and s.kernel and (k in s.kernel.lower() or s.kernel.lower() in k)
                for s in chosen):
            continue
        seen.add(ev.message)
        said = f" in a choice's words ({verb!r})" if verb else ""
        # the sweep is every pack's (common-rules): its id without the engine of the copy that fired
        out.append(Unexplained(line=ev.line, rule=ev.rule.split(".", 1)[-1], kind=ev.kind, message=ev.message[:2000],
                               why=f"names kernel {kernel or '(unnamed)'}{said} but no rule reads this sentence"))
    return out
