"""A real log writer process for the ``logscan follow`` end-to-end test.

Writes the lines of a file to a log path in kubelet's CRI format, at a steady rate, like a
container runtime: each line under an exclusive ``flock`` of a lock file (the test's rotator
takes the same lock, so a rotation never lands in the middle of a line), reopening the log
(``O_APPEND|O_CREAT``) when its path names another inode (rename rotation). Lines longer
than ``--split`` characters are written as ``P`` partial records followed by an ``F`` one.

    python -m tests.helpers.log_writer SOURCE LOG LOCK --rate 300 --split 120 --progress FILE
"""
from __future__ import annotations

import argparse
import fcntl
import os
import time
from datetime import datetime, timezone


def cri_records(line: str, split: int) -> list[str]:
    """CRI records of one line: ``P`` parts of ``split`` characters, then the ``F`` part."""
    parts = [line[i:i + split] for i in range(0, len(line), split)] or [""]
    return [("P " if i < len(parts) - 1 else "F ") + p for i, p in enumerate(parts)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("log")
    ap.add_argument("lock")
    ap.add_argument("--rate", type=float, default=300.0, help="lines per second")
    ap.add_argument("--split", type=int, default=120)
    ap.add_argument("--progress", default=None, help="file that holds the number of lines written so far")
    a = ap.parse_args()
    progress = os.open(a.progress, os.O_WRONLY | os.O_CREAT, 0o644) if a.progress else -1
    with open(a.source, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    lock = os.open(a.lock, os.O_RDWR | os.O_CREAT, 0o644)
    fd = -1
    start = time.monotonic()
    for i, line in enumerate(lines):
        delay = start + i / a.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                st = os.stat(a.log)
                same = fd >= 0 and (st.st_dev, st.st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
            except FileNotFoundError:
                same = False
            if not same:
                if fd >= 0:
                    os.close(fd)
                fd = os.open(a.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            data = "".join(f"{now} stdout {r}\n" for r in cri_records(line, a.split))
            os.write(fd, data.encode("utf-8"))
            if progress >= 0:
                os.pwrite(progress, f"{i + 1:>10}\n".encode(), 0)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if fd >= 0:
        os.close(fd)


if __name__ == "__main__":
    main()
