"""Cyclic garbage collection paused while a command starts (issue 18: start-up cost).

Start-up allocates some 10^5 container objects that live for the whole process: imported
modules, pydantic model classes, and the unpickled pack set (~5,000 model objects). Python's
collector runs a generation every 700 allocations and walks every live object on each
full pass: 13% of the instructions of ``logscan scan`` on a 20-line log (callgrind). The
console entry point (``cli.main``) calls ``pause()``; ``resume()``, called once the packs are
loaded (``packs.loader.load_packs``), moves every object alive into the permanent
generation (``gc.freeze``: later full passes of a long scan or ``follow`` no longer walk the
pack set) and turns collection back on. What start-up leaves as cyclic garbage (~1,000
objects, measured) is kept frozen rather than paying a full collection (~40 M instructions). Library use (``logscan.api``, the tests)
never pauses, so ``resume()`` is then a no-op.
"""
import gc
import time

_paused = {"on": False}


def pause() -> None:
    """Turn cyclic collection off until ``resume()`` (a no-op when it is already off)."""
    if gc.isenabled():
        gc.disable()
        _paused["on"] = True


def resume() -> None:
    """Freeze what is alive, turn collection back on; a no-op unless ``pause()`` turned it off."""
    if _paused["on"]:
        _paused["on"] = False
        gc.freeze()
        gc.enable()


#: CPU seconds (``time.thread_time``) this process has spent in cyclic collections since the
#: first ``gc_seconds()`` call; ``[total, start of the pass running now]``.
_gc_clock = [0.0, 0.0]
_gc_hooked = {"on": False}


def _on_gc(phase: str, info: dict) -> None:
    """``gc.callbacks`` hook: add each collection's thread CPU time to ``_gc_clock``."""
    if phase == "start":
        _gc_clock[1] = time.thread_time()
    elif _gc_clock[1]:
        _gc_clock[0] += time.thread_time() - _gc_clock[1]
        _gc_clock[1] = 0.0


def hook_gc_clock() -> list:
    """Start counting collection time (``gc.callbacks``, once per process) and return the clock
    list: ``clock[0]`` is the CPU seconds spent in cyclic collections since (read it directly on a
    hot path, as ``match.Matcher._search`` does)."""
    if not _gc_hooked["on"]:
        _gc_hooked["on"] = True
        gc.callbacks.append(_on_gc)
    return _gc_clock


def gc_seconds() -> float:
    """CPU seconds spent in cyclic garbage collection so far (hooked on first call).

    The per-line matching budget (``match.LINE_BUDGET``) subtracts it: a collection that a
    match object's allocation triggers inside a timed rule search is the interpreter's work,
    not the line's, and on a large heap (a test run scanning 600 logs in one process) a full
    pass takes longer than the whole budget, which put a plain line "over budget" at random.
    """
    return hook_gc_clock()[0]
