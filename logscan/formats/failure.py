"""A failure's words as every report format gives them (``StartFailure``: a failed start or a
failure while serving; the fields are filled by ``analysis/failhead.describe``, docs/lifecycle.md)."""
from __future__ import annotations

from ..models import StartFailure, Stop
from .clip import clip


def head(f: StartFailure) -> tuple[int, str]:
    """``(line, words)`` a report leads with: the headline and its line (the exception's when the
    log kept one); a report read back from an older JSON without ``headline`` gives the cause,
    else the evidence."""
    if f.headline:
        return (f.cause_line if f.cause_line is not None else f.line), f.headline
    if f.cause:
        return f.cause_line or f.line, f.cause
    return f.line, f.evidence


def at_words(f: StartFailure) -> str:
    """Where every report format says a failure is: ``line 21`` (the failure's own line, the gate
    check's location), with ``, cause line 12`` when the words a report leads with (``head``: the
    exception) are on another line; the text report and the gate used to give one line each."""
    line, _ = head(f)
    return f"line {f.line}" if line == f.line else f"line {f.line}, cause line {line}"


def kernel_words(f: StartFailure) -> str:
    """``failing kernel: Marlin (why)``, or "" when no kernel is linked to the failure."""
    if not f.failing_kernel:
        return ""
    return f"failing kernel: {f.failing_kernel}" + (f" ({f.failing_kernel_why})" if f.failing_kernel_why else "")


def raised_words(f: StartFailure) -> str:
    """``raised in <path>, line N, in f (log line L)``: the traceback's innermost frame, or "";
    ``last frame in the log: ...`` when the log has no exception line (a cut traceback)."""
    if not getattr(f, "raised_in", None):
        return ""
    if f.cause is None:  # cut before the exception: deeper frames may be missing, so no 'raised in' claim
        return f"last frame in the log: {f.raised_in} (log line {f.raised_in_line}; cut before the exception)"
    return f"raised in {f.raised_in} (log line {f.raised_in_line})"


def where_words(f: StartFailure) -> str:
    """Where the failure began when that is not the headline's line: ``traceback from line 2:
    <its first line>`` or ``engine line 9: EngineCore failed to start.``; "" otherwise."""
    line, _ = head(f)
    if f.line == line:
        return ""
    what = "traceback from line" if f.traceback_line == f.line else "engine line"
    return f"{what} {f.line}: {f.evidence}"


def did_not_start(n: int, f: StartFailure, what: str = "the engine did not start") -> str:
    """The gate's START_FAILED message for run ``n``: why, in the engine's words (``head``: the
    exception, else its failure line, else "no exception line in the log"), the failing kernel
    when one is linked, and where the failure began; each part cut to 200 characters, marked."""
    _, words = head(f)
    extra = [x for x in (kernel_words(f), where_words(f)) if x]
    return (f"run {n}: {what}: {clip(words, 200)} ({at_words(f)}"
            + "".join(f"; {clip(x, 200)}" for x in extra) + ")")


def stop_words(st: Stop) -> list[str]:
    """How every report format says a run was stopped (``Stop``, docs/lifecycle.md "Stopped"): first
    ``stopped (SIGTERM) at line 37 after serving: <the line>`` (``signal not named`` when the line
    names none; ``before the server came up`` when no line showed it up), then, when a failure
    after the stop was its teardown, which line and exception that was (no failure)."""
    sig = st.signal or "signal not named"
    when = "after serving" if st.served else "before the server came up"
    out = [f"stopped ({sig}) at line {st.line} {when}: {clip(st.evidence, 200)}"]
    if st.teardown_line is not None:
        out.append(f"the failure at line {st.teardown_line} is the stop's teardown, not a failure: "
                   f"{clip(st.teardown or '', 200)}")
    return out
