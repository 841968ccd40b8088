"""The two rotations of issue 12, case 8, step by step (the property test also draws them).

A: the log is renamed to ``.1``, then a copytruncate names its copy ``.2``.
B: the live file is renamed to ``engine.log.2`` while ``.1`` exists and follow is stopped.
Both used to read ``.1`` again (its lines twice: a selection and a finding reported twice).
"""
from __future__ import annotations

import os
import shutil

from logscan.follow.tail import FileTail, Position


def test_renamed_to_1_then_copytruncate_copy_named_2(numbered_log):
    w = numbered_log
    t = w.tail()
    w.write(3)
    w.poll(t)
    os.rename(w.log, str(w.log) + ".1")
    w.write(2)
    w.poll(t)
    w.poll(t)
    shutil.copyfile(w.log, str(w.log) + ".2")
    os.truncate(w.log, 0)
    w.write(2)
    w.poll(t)
    w.poll(t)
    w.write(1)
    w.poll(t)
    w.check()


def test_live_renamed_to_2_while_1_exists_and_follow_is_stopped(numbered_log):
    w = numbered_log
    t = w.tail()
    w.write(3)
    w.poll(t)
    os.rename(w.log, str(w.log) + ".1")
    w.write(2)
    w.poll(t)
    w.poll(t)
    saved = t.position().to_json()  # what the state file keeps
    t.close()
    w.write(1)
    os.rename(w.log, str(w.log) + ".2")
    w.write(2)
    t = FileTail(str(w.log))
    t.resume(Position.from_json(saved))
    w.poll(t)
    w.poll(t)
    w.write(1)
    w.poll(t)
    w.check()
