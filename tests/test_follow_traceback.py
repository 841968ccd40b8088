"""``logscan follow`` reports a failed start read from an uncaught traceback once the stream is
quiet (a poll with no new line) or closed, never at the end of a poll that lines may still follow:
the next lines could say the run went on, or name the engine's own failure (logscan/follow/stream.py).

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


def test_a_complete_traceback_is_reported_at_the_first_quiet_poll(packs, tmp_path):
    path = tmp_path / "engine.log"
    path.write_bytes((DATA / "trtllm-2052.log").read_bytes())
    f, out = _follow(packs, path)
    f.poll_once()
    assert _failures(out) == []  # lines may still come: a ready line, or the engine's own failure
    f.poll_once()  # no new line
    (rec,) = _failures(out)
    assert rec["start_failure"]["cause"] == "KeyError: 'type'"
    f.poll_once()
    f.end_all()
    assert len(_failures(out)) == 1  # never twice


def test_a_traceback_cut_after_a_frame_waits_idle_flush_for_its_exception(packs, tmp_path):
    """A traceback with no exception line yet is a multi-line message still gathering: it waits
    --idle-flush seconds of no new line (a first quiet poll printed it 'cut before the exception
    line' and the exception that came a second later was never reported: new-user trial)."""
    path = tmp_path / "engine.log"
    path.write_bytes((DATA / "lmdeploy-2788.log").read_bytes())
    f, out = _follow(packs, path)
    f.poll_once()
    assert _failures(out) == []  # more frames and the exception may still come
    f.poll_once()  # no new line, but not --idle-flush seconds (3600 here) of none
    assert _failures(out) == []
    f.idle_flush = 0.0  # the quiet spell has lasted --idle-flush
    f.poll_once()
    assert len(_failures(out)) == 1
    f.end_all()
    assert len(_failures(out)) == 1  # never twice


def test_the_exception_line_arriving_late_is_the_one_reported(packs, tmp_path):
    """The trial's case: the frames are in the file, the exception line comes after a pause shorter
    than --idle-flush; the failure printed names the exception, as scan of the whole file does."""
    from logscan.pipeline import scan_inputs

    lines = (DATA / "trtllm-2052.log").read_text(encoding="utf-8").splitlines(keepends=True)
    last = max(i for i, ln in enumerate(lines) if "KeyError" in ln)
    path = tmp_path / "engine.log"
    path.write_text("".join(lines[:last]), encoding="utf-8")
    f, out = _follow(packs, path)
    f.poll_once()
    f.poll_once()  # a quiet poll inside the writer's pause
    assert _failures(out) == []
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines[last:]))
    f.poll_once()
    f.poll_once()
    f.end_all()
    (rec,) = _failures(out)
    want = scan_inputs([str(path)], packs).runs[0].start_failure
    assert rec["start_failure"]["cause"] == want.cause == "KeyError: 'type'"


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


def test_the_engines_own_failure_line_after_the_poll_wins(packs, tmp_path):
    """A poll ends at an untagged traceback's exception line (vllm-150: ``ERROR [..] KeyError``);
    the next poll brings the engine's own failure line (vllm-155: ``EngineCore failed to start.``):
    follow's one record is the failed start scan reports for the whole file (the e2e test's case)."""
    from logscan.pipeline import scan_inputs
    from tests.conftest import FIXTURES

    path = tmp_path / "engine.log"
    path.write_bytes((FIXTURES / "vllm" / "vllm-150.log").read_bytes())
    f, out = _follow(packs, path)
    f.poll_once()
    with path.open("ab") as fh:
        fh.write((FIXTURES / "vllm" / "vllm-155.log").read_bytes())
    f.poll_once()
    f.poll_once()
    f.end_all()
    (run,) = [r for r in scan_inputs([str(path)]).runs if r.start_failure is not None]
    assert run.start_failure.evidence == "EngineCore failed to start."
    (rec,) = _failures(out)
    assert rec["start_failure"]["line"] == run.start_failure.line


def test_a_failure_held_for_the_quiet_poll_survives_a_restart_at_that_instant(packs, tmp_path):
    """The poll that read the traceback held its failure for a quiet poll; follow stopped (its
    state saved) before that poll came. The restarted follower's first quiet poll reports it: the
    held flag is in the state file, not only in memory (it used to be forgotten until the close)."""
    path = tmp_path / "engine.log"
    path.write_bytes((DATA / "trtllm-2052.log").read_bytes())
    state = tmp_path / "state.json"
    out = io.StringIO()
    f = Follower([str(path)], packs, out, state_file=str(state), idle_flush=3600)
    f.poll_once()
    f.save_state()  # SIGTERM: run()'s finally
    assert _failures(out) == []
    assert json.loads(state.read_text())["streams"][str(path)]["held_failure"] is True
    out2 = io.StringIO()
    g = Follower([str(path)], packs, out2, state_file=str(state), idle_flush=3600)
    g.poll_once()  # no new line since the state: the quiet poll the first follower did not live to see
    (rec,) = _failures(out2)
    assert rec["start_failure"]["cause"] == "KeyError: 'type'"
    g.poll_once()
    g.save_state()
    assert "held_failure" not in json.loads(state.read_text())["streams"][str(path)]
    h = Follower([str(path)], packs, io.StringIO(), state_file=str(state), idle_flush=3600)
    h.poll_once()
    h.end_all()
    assert _failures(h.out) == []  # reported once, never again after a second restart


def test_the_failure_waits_for_its_exception_line_to_complete(packs, tmp_path):
    """vllm-020 ends on its exception's reason lines (a multi-line event gathering until --idle-flush):
    a quiet poll before that printed the failed start as 'no exception line in the log (the
    traceback ... is cut before it)'; it waits for the exception, and says what scan says."""
    from logscan.pipeline import scan_inputs
    from tests.conftest import FIXTURES

    path = tmp_path / "engine.log"
    path.write_bytes((FIXTURES / "vllm" / "vllm-020.log").read_bytes())
    f, out = _follow(packs, path)
    f.poll_once()
    f.poll_once()  # quiet, but the exception line still gathers its reasons
    assert _failures(out) == []
    f.idle_flush = 0.0
    f.poll_once()  # the idle flush ends the exception
    f.poll_once()  # quiet: the failure
    (rec,) = _failures(out)
    (run,) = scan_inputs([str(path)]).runs
    assert rec["start_failure"]["cause_line"] == run.start_failure.cause_line == 5
    assert rec["start_failure"]["headline"] == run.start_failure.headline
