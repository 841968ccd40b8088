"""The polling tailer: every line exactly once through growth, rename, copytruncate, gzip and restart.

Driven poll by poll (no sleeps, no threads): the test writes, rotates, then calls ``poll()``.
Lines are real vLLM lines from ``fixtures/vllm``.
"""
from __future__ import annotations

import gzip
import os
import shutil

import pytest

from logscan.follow.tail import FP_LEN, FileTail, Position, StreamTail, rotation_order
from tests.conftest import real_logs

LINES = [ln for f in [p for p in real_logs("vllm") if p.name.startswith("vllm-")] for ln in f.read_text(encoding="utf-8").split("\n") if ln][:120]


def _poll(t: FileTail) -> list[str]:
    return [raw.decode() for raw, _ in t.poll()]


def _append(path, lines) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(ln + "\n" for ln in lines))


def test_growth_and_a_half_written_line_waits_for_its_newline(tmp_path):
    log = tmp_path / "engine.log"
    _append(log, LINES[:3])
    t = FileTail(str(log))
    assert _poll(t) == LINES[:3]
    with open(log, "a") as fh:
        fh.write(LINES[3][:20])
    assert _poll(t) == []
    with open(log, "a") as fh:
        fh.write(LINES[3][20:] + "\n")
    assert _poll(t) == [LINES[3]]
    assert t.position().offset == log.stat().st_size


def test_rename_rotation_reads_the_old_file_to_its_end_then_the_new_one(tmp_path):
    log = tmp_path / "0.log"
    _append(log, LINES[:5])
    t = FileTail(str(log))
    got = _poll(t)
    _append(log, LINES[5:8])  # written before the rename, not yet read
    os.rename(log, tmp_path / "0.log.20261129-000001")
    _append(log, LINES[8:10])
    got += _poll(t)  # old file grew during this poll: the switch waits one poll
    got += _poll(t)
    _append(log, LINES[10:12])
    got += _poll(t)
    assert got == LINES[:12]
    assert t.rotations == {"rename": 1, "copytruncate": 0}


def test_unterminated_last_line_of_a_rotated_file_is_not_lost(tmp_path):
    log = tmp_path / "0.log"
    _append(log, LINES[:2])
    with open(log, "a") as fh:
        fh.write(LINES[2])  # the writer died mid-line
    t = FileTail(str(log))
    got = _poll(t)
    os.rename(log, tmp_path / "0.log.1")
    _append(log, LINES[3:4])
    got += _poll(t) + _poll(t)
    assert got == LINES[:4]


def test_copytruncate_reads_the_rest_from_the_copy(tmp_path):
    log = tmp_path / "engine.log"
    _append(log, LINES[:4])
    t = FileTail(str(log))
    got = _poll(t)
    _append(log, LINES[4:7])  # not read yet when the copy is taken
    shutil.copyfile(log, tmp_path / "engine.log.1")
    os.truncate(log, 0)
    _append(log, LINES[7:30])  # regrows beyond the old offset: only the fingerprint tells
    got += _poll(t)
    assert got == LINES[:30]
    assert t.rotations["copytruncate"] == 1 and t.gaps == 0


def test_copytruncate_without_a_copy_is_counted_as_a_gap(tmp_path):
    log = tmp_path / "engine.log"
    _append(log, LINES[:4])
    t = FileTail(str(log))
    _poll(t)
    os.truncate(log, 0)
    _append(log, LINES[10:11])
    assert _poll(t) == [LINES[10]]
    assert t.gaps == 1 and t.notes and "lost" in t.notes[0]


@pytest.mark.parametrize("gzipped", [False, True])
def test_resume_after_restart_finds_the_renamed_file_and_what_came_after(tmp_path, gzipped):
    log = tmp_path / "0.log"
    _append(log, LINES[:6])
    t = FileTail(str(log))
    first = _poll(t)
    pos = t.position()
    t.close()
    _append(log, LINES[6:9])  # while logscan is down: more lines, two rotations
    r1 = tmp_path / "0.log.20261129-000001"
    os.rename(log, r1)
    _append(log, LINES[9:12])
    os.rename(log, tmp_path / "0.log.20261129-000002")
    _append(log, LINES[12:14])
    if gzipped:  # kubelet compresses the older rotated file: a new inode, same content
        with open(r1, "rb") as src, gzip.open(str(r1) + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        r1.unlink()
    t2 = FileTail(str(log))
    t2.resume(Position.from_json(pos.to_json()))
    assert first + _poll(t2) == LINES[:14]


def test_resume_after_a_copytruncate_while_down(tmp_path):
    log = tmp_path / "engine.log"
    _append(log, LINES[:6])
    t = FileTail(str(log))
    first = _poll(t)
    pos = t.position()
    t.close()
    _append(log, LINES[6:8])
    shutil.copyfile(log, tmp_path / "engine.log.1")
    os.truncate(log, 0)
    _append(log, LINES[8:40])
    t2 = FileTail(str(log))
    t2.resume(pos)
    assert first + _poll(t2) == LINES[:40]


def test_resume_on_the_same_file_continues_at_the_offset(tmp_path):
    log = tmp_path / "engine.log"
    _append(log, LINES[:50])
    t = FileTail(str(log))
    gen = t.poll()
    got = [next(gen)[0].decode() for _ in range(20)]  # stopped after 20 lines (SIGTERM)
    pos = t.position()
    gen.close()
    t2 = FileTail(str(log))
    t2.resume(pos)
    assert got + _poll(t2) == LINES[:50]
    assert len(pos.fp) == min(FP_LEN, pos.offset)


def test_over_long_line_is_cut_and_the_next_line_kept(tmp_path):
    log = tmp_path / "engine.log"
    log.write_bytes(b"x" * 5000 + b"\n" + LINES[0].encode() + b"\n")
    t = FileTail(str(log), max_line=1000)
    got = list(t.poll())
    assert got[0] == (b"x" * 1000, True) and got[1] == (LINES[0].encode(), False)
    assert t.dropped == 1


def test_missing_file_is_waited_for(tmp_path):
    log = tmp_path / "later.log"
    t = FileTail(str(log))
    assert _poll(t) == []
    _append(log, LINES[:2])
    assert _poll(t) == LINES[:2]


def test_rotation_order_sorts_kubelet_and_logrotate_suffixes_oldest_first():
    names = ["0.log.20261129-000002.gz", "0.log.20261129-000010", "0.log.20261129-000001.gz"]
    assert sorted(names, key=lambda n: rotation_order("0.log", n)) == [
        "0.log.20261129-000001.gz", "0.log.20261129-000002.gz", "0.log.20261129-000010"]
    assert sorted(["x.log.1", "x.log.3.gz", "x.log.2"], key=lambda n: rotation_order("x.log", n)) == [
        "x.log.3.gz", "x.log.2", "x.log.1"]


def test_rotation_order_reads_an_all_digit_date_suffix_as_a_date_not_a_count():
    # logrotate's dateext with a dot ('.%Y%m%d'), or a Unix time: rising with age. Read as
    # rotation counts they sorted newest first, and follow fed a continuation line after the
    # lines that followed it (found by test_follow_kill_properties on a real vLLM log).
    names = ["e.log.20261202", "e.log.20261130.gz", "e.log.20261201"]
    assert sorted(names, key=lambda n: rotation_order("e.log", n)) == [
        "e.log.20261130.gz", "e.log.20261201", "e.log.20261202"]
    assert sorted(["e.log.1764633600", "e.log.1764547200"], key=lambda n: rotation_order("e.log", n)) == [
        "e.log.1764547200", "e.log.1764633600"]
    assert sorted(["e.log.9999999", "e.log.10"], key=lambda n: rotation_order("e.log", n)) == [
        "e.log.9999999", "e.log.10"]  # below eight digits: still a count, the higher the older


def test_position_from_json_refuses_a_malformed_dict():
    with pytest.raises(ValueError):
        Position.from_json({"dev": 1, "ino": "x", "fp": "", "offset": 0})


def test_stream_tail_reads_a_pipe_to_its_end(tmp_path):
    r, w = os.pipe()
    t = StreamTail(r)
    os.write(w, ("\n".join(LINES[:3]) + "\n" + LINES[3][:10]).encode())
    got = [raw.decode() for raw, _ in t.poll()]
    assert got == LINES[:3] and not t.eof
    os.write(w, LINES[3][10:].encode())  # the last line has no newline
    os.close(w)
    got += [raw.decode() for raw, _ in t.poll()]
    os.close(r)
    assert got == LINES[:4] and t.eof


def test_a_symlinked_path_finds_its_rotated_files_next_to_the_target(tmp_path):
    pods = tmp_path / "pods" / "llm_vllm-0_0f1e" / "vllm"
    pods.mkdir(parents=True)
    (tmp_path / "containers").mkdir()
    link = tmp_path / "containers" / "vllm-0_llm_vllm-0123.log"
    link.symlink_to(pods / "0.log")
    _append(pods / "0.log", LINES[:5])
    t = FileTail(str(link))
    first = _poll(t)
    pos = t.position()
    t.close()
    _append(pods / "0.log", LINES[5:7])
    os.rename(pods / "0.log", pods / "0.log.20261129-000001")  # kubelet rotates the target
    _append(pods / "0.log", LINES[7:9])
    t2 = FileTail(str(link))
    t2.resume(pos)
    assert first + _poll(t2) == LINES[:9]


def test_only_rotated_names_count_as_siblings(tmp_path):
    log = tmp_path / "engine.log"
    _append(log, LINES[:6])
    t = FileTail(str(log))
    first = _poll(t)
    pos = t.position()
    t.close()
    (tmp_path / "engine.log.state").write_text('{"version": 1}\n')  # a state file next to the log
    (tmp_path / "engine.log.offset").write_text("123\n")
    _append(log, LINES[6:8])
    os.rename(log, tmp_path / "engine.log-20261129")  # logrotate dateext
    _append(log, LINES[8:10])
    t2 = FileTail(str(log))
    assert [os.path.basename(s) for s in t2.siblings()] == ["engine.log-20261129"]
    t2.resume(pos)
    assert first + _poll(t2) == LINES[:10]


def test_a_queued_rotated_file_gzipped_before_its_turn_is_still_read(tmp_path):
    log = tmp_path / "0.log"
    _append(log, LINES[:6])
    t = FileTail(str(log))
    first = _poll(t)
    pos = t.position()
    t.close()
    os.rename(log, tmp_path / "0.log.20261129-000001")
    _append(log, LINES[6:9])
    r2 = tmp_path / "0.log.20261129-000002"
    os.rename(log, r2)
    _append(log, LINES[9:11])
    t2 = FileTail(str(log))
    t2.resume(pos)  # queues both rotated files
    with open(r2, "rb") as src, gzip.open(str(r2) + ".gz", "wb") as dst:  # kubelet compresses one now
        shutil.copyfileobj(src, dst)
    r2.unlink()
    assert first + _poll(t2) == LINES[:11]
    assert t2.gaps == 0


def test_rotations_faster_than_polls_are_read_in_order(tmp_path):
    log = tmp_path / "0.log"
    _append(log, LINES[:4])
    t = FileTail(str(log))
    got = _poll(t)
    os.rename(log, tmp_path / "0.log.20261129-000001")  # two renames between two polls
    _append(log, LINES[4:7])
    os.rename(log, tmp_path / "0.log.20261129-000002")
    _append(log, LINES[7:9])
    shutil.copyfile(log, tmp_path / "0.log.20261129-000003")  # and a copytruncate of a file never opened
    os.truncate(log, 0)
    _append(log, LINES[9:12])
    got += _poll(t) + _poll(t)
    assert got == LINES[:12]


def test_a_fresh_start_reads_the_rotated_pieces_first(tmp_path):
    log = tmp_path / "0.log"
    _append(tmp_path / "0.log.20261129-000001", LINES[:3])  # start-up lines rotated away already
    with gzip.open(tmp_path / "0.log.20261129-000000.gz", "wt") as fh:
        fh.write("".join(ln + "\n" for ln in LINES[10:12]))
    _append(log, LINES[3:5])
    t = FileTail(str(log))
    t.read_rotated_first()
    assert _poll(t) == LINES[10:12] + LINES[:5]


def test_copytruncate_then_rename_of_the_truncated_file_before_a_poll(tmp_path):
    log = tmp_path / "0.log"
    _append(log, LINES[:10])
    t = FileTail(str(log))
    got = _poll(t)
    _append(log, LINES[10:12])
    shutil.copyfile(log, tmp_path / "0.log.20261129-000001")  # copytruncate...
    os.truncate(log, 0)
    _append(log, LINES[12:14])
    os.rename(log, tmp_path / "0.log.20261129-000002")  # ...then the truncated file is renamed
    _append(log, LINES[14:16])
    got += _poll(t) + _poll(t)
    assert got == LINES[:16]


def test_an_empty_rotated_piece_does_not_hide_the_next_ones(tmp_path):
    log = tmp_path / "0.log"
    _append(log, LINES[:4])
    t = FileTail(str(log))
    got = _poll(t)
    os.rename(log, tmp_path / "0.log.20261129-000001")
    log.touch()  # copytruncate and rename at once: an empty rotated piece
    os.rename(log, tmp_path / "0.log.20261129-000002")
    _append(log, LINES[4:6])
    shutil.copyfile(log, tmp_path / "0.log.20261129-000003")
    os.truncate(log, 0)
    os.rename(log, tmp_path / "0.log.20261129-000004")  # the live file is gone for now
    got += _poll(t) + _poll(t)
    assert got == LINES[:6]
    _append(log, LINES[6:7])
    assert _poll(t) == LINES[6:7]


def test_a_file_being_gzipped_counts_once(tmp_path):
    (tmp_path / "0.log.20261129-000001").write_text("a\n")
    (tmp_path / "0.log.20261129-000001.gz").write_bytes(b"\x1f\x8b")  # gzip still writing
    (tmp_path / "0.log.20261129-000000.gz").write_bytes(b"\x1f\x8b")
    t = FileTail(str(tmp_path / "0.log"))
    assert [os.path.basename(s) for s in t.siblings()] == ["0.log.20261129-000000.gz", "0.log.20261129-000001"]


def test_pieces_there_before_an_unstarted_tailer_are_never_read(tmp_path):
    """Neither read_rotated_first nor resume: the old pieces are skipped on purpose, and stay
    skipped after a rotation (they used to be taken then for pieces not read yet)."""
    log = tmp_path / "0.log"
    _append(tmp_path / "0.log.20261129-000001", LINES[50:53])  # an older run, not wanted
    _append(log, LINES[:3])
    t = FileTail(str(log))
    got = _poll(t)
    _append(log, LINES[3:4])
    os.rename(log, tmp_path / "0.log.20261129-000002")
    _append(log, LINES[4:6])
    got += _poll(t) + _poll(t)
    assert got == LINES[:6]


def test_unread_pieces_of_two_naming_schemes_are_read_with_a_note(tmp_path):
    """A dated and a numbered piece, both unread after a restart: no name or content tells
    their order; the tailer reads numbered first and says so (docs/follow.md, "Undecidable")."""
    log = tmp_path / "0.log"
    _append(log, LINES[:3])
    t = FileTail(str(log))
    t.read_rotated_first()
    got = _poll(t)
    pos = t.position()
    t.close()
    os.rename(log, tmp_path / "0.log.20261129-000001")  # kubelet, dated: the file read
    _append(log, LINES[3:5])
    os.rename(log, tmp_path / "0.log.1")  # logrotate, numbered
    _append(log, LINES[5:6])
    os.rename(log, tmp_path / "0.log.20261129-000002")
    _append(log, LINES[6:7])
    t2 = FileTail(str(log))
    t2.resume(pos)
    got += _poll(t2)
    assert got == LINES[:7]
    assert any("cannot be told" in n for n in t2.notes)
