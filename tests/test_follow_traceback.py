"""``logscan follow`` reports a failed start read from an uncaught traceback at the end of the
traceback (its exception line is the run's last line when a poll ends), not one quiet poll late;
a traceback cut after a frame still waits for a quiet poll or the close (logscan/follow/stream.py).

Real logs: tests/data/trtllm-2052.log (ends with ``KeyError: 'type'``), tests/data/lmdeploy-2788.log
(the excerpt ends on a frame), see tests/data/README.md.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

from logscan.follow.runner import Follower

DATA = Path(__file__).parent / "data"


def _failures(out: io.StringIO) -> list[dict]:
    return [r for r in map(json.loads, out.getvalue().splitlines()) if r["type"] == "start_failure"]


def _follow(packs, path: Path) -> tuple[Follower, io.StringIO]:
    out = io.StringIO()
    return Follower([str(path)], packs, out, idle_flush=3600), out


def test_a_complete_traceback_is_reported_in_the_poll_that_read_it(packs, tmp_path):
    path = tmp_path / "engine.log"
    path.write_bytes((DATA / "trtllm-2052.log").read_bytes())
    f, out = _follow(packs, path)
    f.poll_once()
    (rec,) = _failures(out)
    assert rec["start_failure"]["cause"] == "KeyError: 'type'"
    f.poll_once()
    f.end_all()
    assert len(_failures(out)) == 1  # never twice


def test_a_traceback_cut_after_a_frame_waits_for_a_quiet_poll(packs, tmp_path):
    path = tmp_path / "engine.log"
    path.write_bytes((DATA / "lmdeploy-2788.log").read_bytes())
    f, out = _follow(packs, path)
    f.poll_once()
    assert _failures(out) == []  # more frames and the exception may still come
    f.poll_once()  # no new line: the traceback is as complete as it gets
    assert len(_failures(out)) == 1


def test_a_ready_line_after_the_traceback_in_the_same_poll_reports_no_failure(packs, tmp_path):
    path = tmp_path / "engine.log"
    lines = (DATA / "trtllm-2052.log").read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines + ["[08/01/2024-10:55:42] [TRT-LLM] [I] Total time of building all engines: 00:02:00"])
                    + "\n", encoding="utf-8")
    f, out = _follow(packs, path)
    f.poll_once()
    f.poll_once()
    f.end_all()
    assert _failures(out) == []
