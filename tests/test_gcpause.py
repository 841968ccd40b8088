"""The console entry point pauses cyclic GC during start-up; loading the packs turns it back on."""
import gc

from logscan import gcpause
from logscan.packs.loader import load_packs


def test_load_packs_resumes_a_paused_collector_and_freezes_the_start_up_objects():
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        gcpause.pause()
        assert not gc.isenabled()
        packs = load_packs()
        assert packs.packs and gc.isenabled()
        assert gc.get_freeze_count() > frozen  # the pack set is out of the collector's walks
    finally:
        gc.enable()
        gc.unfreeze()


def test_resume_without_pause_changes_nothing():
    """Library use never pauses: resume() must not freeze or re-enable anything on its own."""
    frozen = gc.get_freeze_count()
    gc.disable()
    try:
        gcpause.resume()
        assert not gc.isenabled() and gc.get_freeze_count() == frozen
    finally:
        gc.enable()


def test_pause_keeps_an_already_disabled_collector_off():
    gc.disable()
    try:
        gcpause.pause()
        gcpause.resume()
        assert not gc.isenabled()  # it was off before pause(): resume() leaves it so
    finally:
        gc.enable()


def test_default_packs_resumes_even_when_the_packs_are_already_loaded():
    """A second entry into the CLI in one process (packs cached in memory) must not leave GC off."""
    from logscan.packs.loader import default_packs

    default_packs()
    frozen = gc.get_freeze_count()
    try:
        gcpause.pause()
        default_packs()
        assert gc.isenabled() and gc.get_freeze_count() >= frozen
    finally:
        gc.enable()
        gc.unfreeze()
