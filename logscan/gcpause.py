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
