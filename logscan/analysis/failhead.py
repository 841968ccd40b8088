"""Why a start failed, in the engine's own words: the failure's headline and its failing kernel.

An operator reading a failed start wants the exception (``RuntimeError: Invalid thread config:
...``), not the first traceback frame a window kept, and, where one is known, the kernel or op
that raised it. ``describe`` fills those fields of a ``StartFailure`` (``headline``,
``exception_type``, ``traceback_line``, ``failing_kernel*``); every report format leads with
``headline``. A traceback whose exception line the log did not keep says so ("no exception line
in the log"); nothing is invented.

The failing kernel is named by data, never by code: the ``[[kernel]]`` entries of
``patterns/lexicon.toml`` (their op aliases, name patterns and own error wording) and the kernel
names of the run's shipped ladder. It is taken from (1) the exception, when its class is one a
kernel raises about itself (lexicon ``[failing]``: ``RuntimeError``, ``ValueError``,
``AssertionError``, ...) and its message names exactly one kernel (vLLM's ``gptq_marlin_gemm only
supports ...``, Marlin's ``Invalid thread config``, ``No compiled cutlass_scaled_mm for ...``); else
(2) the innermost frames of its traceback, when one is in a kernel's op (``gptq_marlin_gemm``,
``rocm_aiter_fused_experts``, a frame rule's kernel). An exception that lists every kernel it
rejected (KERNEL_NOT_FOUND) names no failing kernel: none could serve.
"""
from __future__ import annotations

from typing import Iterable, Optional

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..formats.clip import clip
from ..models import Event, Finding, StartFailure
from ..packs.model import LexiconFile
from .frames import frame_kernel, frame_parts, is_frame_rule, kernel_named, kernel_of_path, kernels_said
from .runstate import RunState
from .uncaught import is_uncaught

#: the exception line's class: ``RuntimeError``, ``torch.OutOfMemoryError``, ``vllm.v1...EngineDeadError``
_EXC_TYPE = lazyre.compile(r"^\s{0,8}(?P<q>(?:[A-Za-z_]\w{0,40}\.){0,6}(?P<t>[A-Z]\w{0,60}))(?::\s|:?$)")
#: event kinds whose line is no raised exception even when it reads like one
_NOT_EXCEPTION = frozenset({"ready", "stop", "progress", "identity", "start_failure", "version", "run_start"})
#: identifiers of a message (op, function and class names are among them)
_TOKEN = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]{3,80}")
#: how many of a traceback's innermost frames may name the op that raised (a frame in the kernel's
#: op, then the torch op dispatch ``_ops.py __call__``, ``_library`` wrappers, a custom-op shim);
#: frames in a JIT compiler's package (lexicon ``[failing] jit_modules``: Triton) are not counted
INNERMOST = 4
#: how far (lines) before a traceback an exception may sit and still be the one it chains to
#: (CPython prints the first exception, a blank line, "The above exception was the direct cause
#: of the following exception:", a blank line, then the second traceback)
CHAINED = 6
#: says that a message lists every kernel it rejected: no kernel served, none "failed"
#: how far apart (lines) two lines of one traceback may be: a frame, its code line, a caret line,
#: a wrapped code line
GAP = 5
_NONE_SERVED = frozenset({"KERNEL_NOT_FOUND"})
_CACHE: dict[int, tuple] = {}


def exception_type(message: str) -> Optional[str]:
    """The class of an exception line (``RuntimeError`` of ``RuntimeError: Invalid ...``, module
    prefix dropped), or None when ``message`` is no ``Type: message`` line."""
    m = _EXC_TYPE.match(message or "")
    if m is None or not rxcache.search(r"^(?:[A-Z]\w{0,60}?(?:Error|Exception|Interrupt|Exit|Failed|Failure)|Exception)$", m.group("t")):
        return None
    return m.group("t")


def ladder_names(pack, version: Optional[str]) -> frozenset[str]:
    """Every kernel name on the pack's shipped ladder of ``version`` (rungs of every registry
    and platform); empty when the pack ships none for it."""
    lf = pack.ladders.get(version) if version else None
    if lf is None:
        return frozenset()
    hit = _CACHE.get(id(lf))
    if hit is None or hit[0] is not lf:
        names = frozenset(n for reg in lf.registry if reg.kind != "attention"
                          for rungs in reg.platforms.values() for n in rungs if len(n) >= 5)
        hit = _CACHE[id(lf)] = (lf, names)
    return hit[1]


def kernels_in_message(lexicon: LexiconFile, message: str, ladder: Iterable[str] = ()) -> dict[str, str]:
    """kernel -> why, for each kernel ``message`` names: an identifier of it that is a rung of the
    run's ladder or a lexicon kernel's alias / name, or a lexicon kernel's own wording."""
    out: dict[str, str] = {}
    rungs = set(ladder)
    for tok in _TOKEN.findall(message or ""):
        k = kernel_named(lexicon, tok)
        if k is None and tok in rungs:
            k = tok
        if k is not None and k not in out:
            out[k] = f"the exception names {tok}" if tok.lower() != k.lower() else f"the exception names {k}"
    for k, why in kernels_said(lexicon, message or ""):
        out.setdefault(k, why)
    return out


def _cxx_abort(rules: dict, rule_id: Optional[str]) -> bool:
    """Whether ``rule_id``'s rule reads a C++ runtime's abort banner (``Rule.cxx_abort``: libstdc++'s
    std::terminate line, LMDeploy's ``lmdeploy.uncaught.cxx-terminate``): no Python traceback line."""
    cr = rules.get(rule_id) if rule_id else None
    return bool(cr is not None and cr[0].rule.cxx_abort)


def _tb_events(run: RunState, rules: dict) -> list[Event]:
    """The run's traceback lines: ``uncaught`` events and frames read by frame rules, in line order
    (a C++ abort banner is none: ``Rule.cxx_abort``)."""
    out = []
    for e in run.events:
        if e.kind == "uncaught":
            if not _cxx_abort(rules, e.rule):
                out.append(e)
        elif e.rule in rules and is_frame_rule(rules[e.rule][0].rule):
            out.append(e)
    return out


def _chained_cause(run: RunState, tb_line: int, findings: Iterable[Finding]) -> Optional[tuple[int, str]]:
    """An exception line at most ``CHAINED`` lines before the traceback that begins at ``tb_line``
    (an exception the traceback chains to: "The above exception was the direct cause of the
    following exception"), as ``(line, message)``; None when there is none."""
    cands = [(e.line, e.message) for e in run.events if e.kind not in _NOT_EXCEPTION and exception_type(e.message)]
    cands += [(f.line, f.evidence) for f in findings if not f.inferred and exception_type(f.evidence)]
    # ``logger.exception(e)`` (vLLM V0's engine.py) logs str(e), with no class name, and then the
    # traceback, in one log record: an error finding stated in the traceback's own record (same
    # logger prefix) is its exception; a message merely printed before a traceback (trial 38's
    # bare 'This kernel only supports sm100f.' above an EngineCore traceback) is no chaining evidence
    tb = next((e for e in run.events if e.line == tb_line), None)
    cands += [(f.line, f.evidence) for f in findings
              if not f.inferred and f.severity.value == "error" and not exception_type(f.evidence)
              and _same_record(run, f.line, tb)]
    cands = [c for c in cands if tb_line - CHAINED <= c[0] < tb_line]
    return max(cands) if cands else None


def _same_record(run: RunState, line: int, tb: Optional[Event]) -> bool:
    """Whether ``line`` and the traceback's first line ``tb`` are one log record: both carry the
    same logger prefix (level, timestamp, ``file:line``, process), as Python's ``logger.exception``
    prints its message and then the traceback (vLLM V0 ``engine.py:366``, vllm-001); a line
    without a logger prefix never is."""
    ev = next((e for e in run.events if e.line == line), None)
    if ev is None or tb is None or not ev.fileinfo:
        return False
    return (ev.fileinfo, ev.level, ev.timestamp, ev.process) == (tb.fileinfo, tb.level, tb.timestamp, tb.process)


#: how far before an engine's failure line a worker's exception may sit and still be its cause
#: (vLLM workers print their traceback, then the engine core logs "EngineCore failed to start.")
BEFORE = 200


def _engine_cause(run: RunState, sf: StartFailure) -> Optional[tuple[int, str]]:
    """For an engine's own failure line with no cause finding: the exception line of a traceback
    (an ``uncaught`` event) logged at most ``BEFORE`` lines before it, after the run's last ready
    line (the last such), else the first one after it; None when the log kept none."""
    from .lifecycle import recovered_after

    exc = [e for e in run.events if exception_type(e.message) and e.kind not in _NOT_EXCEPTION]
    floor = max(recovered_after(run), sf.line - BEFORE)
    before = [e for e in exc if floor < e.line <= sf.line]
    if before:
        return before[-1].line, before[-1].message
    after = [e for e in exc if e.line > sf.line]
    return (after[0].line, after[0].message) if after else None


def _inline_cause(run: RunState, sf: StartFailure) -> Optional[tuple[int, str]]:
    """The exception the engine's failure line itself carries (its rule's ``exception`` group:
    SGLang's ``Scheduler hit an exception: torch._dynamo.exc.Unsupported: ...``, the first line
    of a formatted chain whose first exception has no traceback), else None."""
    ev = next((e for e in run.events if e.line == sf.line and e.rule == sf.rule), None)
    text = (ev.groups.get("exception") or "").strip() if ev is not None else ""
    return (sf.line, text) if text else None


#: how many lines below an exception line whose message ends in ":" its message may go on
CONTINUED = 6


def _continued(sf: StartFailure, findings: list[Finding]) -> str:
    """The rest of an exception whose first line only opens its message (``CompilationError: at
    1:0:``): a finding the log states within ``CONTINUED`` lines below it (vllm-025's
    ``ValueError("type fp8e4nv not supported in this architecture ...")``), as `` … <its words>
    (line N)``; "" otherwise."""
    if sf.cause is None or sf.cause_line is None or not sf.cause.rstrip().endswith(":"):
        return ""
    below = [f for f in findings if not f.inferred and sf.cause_line < f.line <= sf.cause_line + CONTINUED]
    if not below:
        return ""
    f = min(below, key=lambda x: x.line)
    return f" … {clip(f.evidence.strip(), 300)} (line {f.line})"


def _block_start(lines: list[int], end: int) -> Optional[int]:
    """First line of the block of traceback lines that ends at or before ``end`` (lines at most
    ``GAP`` apart: a frame, its code line and a caret line), or None when none is near ``end``."""
    start, prev = None, end
    for n in sorted((n for n in lines if n <= end), reverse=True):
        if n < prev - GAP:
            break
        start = prev = n
    return start


def describe(sf: StartFailure, run: RunState, rules: dict, lexicon: LexiconFile,
             ladder: Iterable[str] = (), findings: Iterable[Finding] = ()) -> StartFailure:
    """Fill ``sf``'s headline, exception type, traceback line and failing kernel (in place; returned).

    ``rules``: rule id -> ``(CompiledRule, Pack)`` (``Analyzer.rules``); ``ladder``: the kernel
    names of the run's shipped ladder (``ladder_names``); ``findings``: the run's findings (a
    cause that is a KERNEL_NOT_FOUND finding names no failing kernel; an exception finding just
    before a cut traceback is the exception it chains to).
    """
    findings = list(findings)
    tb = _tb_events(run, rules)
    uncaught = is_uncaught(sf)
    lines = [e.line for e in tb]
    note = ""  # how the cause relates to the failure, when the log's order does not say it
    inline = False  # the cause is on the failure line itself: its traceback comes after it
    if not uncaught and sf.cause is None:
        got = _engine_cause(run, sf)
        if got is None:
            got = _inline_cause(run, sf)
            inline = got is not None
        if got is not None:
            sf.cause_line, sf.cause = got[0], clip(got[1], 2000)
            note = (" (logged before the engine's failure line)" if got[0] < sf.line else
                    " (on the engine's failure line)" if inline else "")
    if uncaught:
        sf.traceback_line = sf.line
    elif sf.cause_line is not None and not inline:
        sf.traceback_line = _block_start(lines, sf.cause_line)
    else:  # the traceback after the engine's failure line, else the one that ends at it
        sf.traceback_line = next((n for n in lines if n >= sf.line), None) or _block_start(lines, sf.line)
    chained = False
    if uncaught and sf.cause is None:
        got = _chained_cause(run, sf.line, findings)
        if got is not None:
            sf.cause_line, sf.cause = got[0], clip(got[1], 2000)
            chained = True
            note = f" (the exception the traceback at line {sf.line} chains to)"
    end = sf.cause_line if sf.cause_line is not None and not (chained or inline) else max(lines, default=sf.line)
    frames = [e for e in tb if frame_parts(e.message) and (sf.traceback_line or 0) <= e.line <= end]
    if sf.cause is not None:
        sf.exception_type = exception_type(sf.cause)
        sf.headline = sf.cause.strip() + _continued(sf, findings) + note
    else:
        last = frames[-1] if frames else None
        fn = f"; its last frame, line {last.line}, is in {frame_parts(last.message)[1]}" if last else ""
        cut = (f" (the traceback from line {sf.traceback_line} is cut before it{fn})"
               if sf.traceback_line is not None else "")
        if uncaught and _cxx_abort(rules, sf.rule):  # a C++ abort: its what() line was cut
            sf.headline = f"{sf.evidence.strip()} — the exception that caused it is not in the log (a C++ exception nothing caught: its what() line is cut)"
        elif uncaught:
            sf.headline = f"no exception line in the log{cut}"
        elif sf.traceback_line is not None:  # the engine's line names a traceback the window cut
            sf.headline = f"{sf.evidence.strip()} — the exception that caused it is not in the log{cut}"
        else:  # no traceback at all: the engine's own failure line is all it says (a C++ assertion,
            # TurboMind's / ggml's abort), and nothing in the log is missing from it
            sf.headline = sf.evidence.strip()
    _raised_in(sf, frames, tb)
    calls = [e for e in tb if e.groups.get("op") and (sf.traceback_line or 0) <= e.line <= end]
    _failing_kernel(sf, lexicon, ladder, findings, frames, rules, calls)
    return sf


#: a frame header's path, source line number and function (CPython ``traceback`` format)
#: (``line N`` may be missing in a pasted log: ``packs.model_rules.FRAME_SHAPE``)
_WHERE = lazyre.compile(r'File "(?P<path>[^"]{1,500})",(?: line (?P<n>\d{1,7}),)? in (?P<fn>[^\s(]{1,160})')


def _raised_in(sf: StartFailure, frames: list[Event], tb: list[Event]) -> None:
    """Fill ``sf.raised_in`` / ``raised_in_line`` from the innermost frame of the failure's
    traceback: of the exception line's process when that process has frames there (interleaved
    ranks), else the last frame (always the last when the log has no exception line: the frame
    the headline names). The frames under the exception line come from ``frames``."""
    if sf.cause_line is None:
        # no exception line: the traceback is cut, and its last frame shown (of whichever process,
        # the headline's 'its last frame') is all the log says of where it was (new-user trial:
        # two interleaved cut tracebacks named one frame in the headline and another here)
        own = []
    else:
        proc = next((e.process for e in tb if e.line == sf.cause_line), None)
        own = [e for e in frames if e.process == proc] if proc is not None else []
    for ev in reversed(own or frames):
        m = _WHERE.search(ev.message)
        if m:
            at = f", line {m.group('n')}" if m.group("n") else ""
            sf.raised_in = f"{m.group('path')}{at}, in {m.group('fn')}"
            sf.raised_in_line = ev.line
            return


def _failing_kernel(sf: StartFailure, lexicon: LexiconFile, ladder: Iterable[str], findings: list[Finding],
                    frames: list[Event], rules: dict, calls: list[Event] = ()) -> None:
    """Fill ``sf.failing_kernel*``: the one kernel the exception names, else the kernel of one of
    the ``INNERMOST`` innermost positions of the traceback: a frame in a kernel's op or package, or
    a quoted op call (``calls``: uncaught events with an ``op`` group, the code a frame ran, e.g.
    ``torch.ops._C.cutlass_scaled_mm(...)`` under a cut traceback's last frame)."""
    calls = list(calls)
    if sf.cause_line is not None and any(f.line == sf.cause_line and f.code in _NONE_SERVED for f in findings):
        return  # the exception lists every kernel it rejected: none served, none failed
    if lexicon.failing is not None and lexicon.failing.traced and sf.cause and \
            rxcache.search(lexicon.failing.traced, sf.cause):
        return  # the op was being traced (torch.compile's fake tensors), never run: no kernel failed
    raising = lexicon.failing is not None and sf.exception_type is not None and rxcache.search(
        lexicon.failing.exceptions, sf.exception_type)
    named = kernels_in_message(lexicon, sf.cause or "", ladder) if raising else {}
    frame_hit = None
    jit = set(lexicon.failing.jit_modules) if lexicon.failing is not None else set()
    own = [ev for ev in frames if not jit & set((frame_parts(ev.message) or ("",))[0].replace("\\", "/").split("/")[:-1])]
    for ev in reversed(own[-INNERMOST:]):
        cr = rules.get(ev.rule)
        r = cr[0].rule if cr else None
        path, fn = frame_parts(ev.message)
        k = frame_kernel(lexicon, r, ev.message)
        if k is None and r is not None and r.family and r.kernel and is_frame_rule(r):
            k = kernel_named(lexicon, r.kernel) or r.kernel
        how = f"its op {fn} is among the innermost frames of the traceback (line {ev.line})"
        if k is None:  # a frame in the kernel library's own code (site-packages/flashinfer/...)
            k = kernel_of_path(lexicon, path)
            how = f"the innermost frames run its own code ({fn}, line {ev.line}, in {path.rsplit('/', 1)[-1]})"
        if k is not None:
            frame_hit = (k, ev.line, fn, how)
            break
    if frame_hit is None:  # a quoted op call under one of the innermost frames: the op its frame ran
        last = sorted(own + calls, key=lambda e: e.line)[-INNERMOST:]
        for ev in reversed([e for e in last if e in calls]):
            k = kernel_named(lexicon, ev.groups["op"])
            if k is not None:
                frame_hit = (k, ev.line, ev.groups["op"],
                             f"the traceback's quoted source line calls its op {ev.groups['op']} (line {ev.line})")
                break
    if len(named) == 1:
        k, why = next(iter(named.items()))
        sf.failing_kernel, sf.failing_kernel_line, sf.failing_kernel_why = k, sf.cause_line, why
        if frame_hit is not None and (kernel_named(lexicon, frame_hit[0]) or frame_hit[0]) == (kernel_named(lexicon, k) or k):
            sf.failing_kernel_why += f"; {frame_hit[3]}"
        return
    if frame_hit is not None:
        k, line, _, how = frame_hit
        sf.failing_kernel, sf.failing_kernel_line = k, line
        sf.failing_kernel_why = how + ("" if sf.cause is not None else "; the log holds no exception line")
