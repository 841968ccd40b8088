"""The state file of ``logscan follow`` (``--state-file``): read it, write it atomically.

Version ``STATE_VERSION`` holds ``{"version": 1, "streams": {key: stream state}}``; the
write goes to a temporary file in the same directory, is fsynced, renamed over the old one,
and the directory is fsynced (a kill at any point leaves the old state or the new one).
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Callable, Optional

STATE_VERSION = 1


def load_state(path: Optional[str], note: Callable[[str], None]) -> dict:
    """The ``streams`` of the state file at ``path`` ({} when there is none, or when it cannot
    be used: ``note`` then says why, and reading starts from the beginning)."""
    if not path or not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise ValueError(f"not a logscan follow state (version {STATE_VERSION})")
        streams = data.get("streams", {})
        if not isinstance(streams, dict):
            raise ValueError("'streams' is not an object")
        return streams
    except RecursionError:  # a corrupt state nested deeper than json can parse
        note(f"state file {path} ignored: nested too deep; reading from the start")
        return {}
    except (OSError, ValueError) as exc:
        note(f"state file {path} ignored: {exc}; reading from the start")
        return {}


def write_state(path: str, data: str) -> None:
    """Write ``data`` (the JSON text) to ``path`` atomically; raises ``OSError`` when it cannot
    (the temporary file is removed). An fsync of the directory that fails is not an error."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".logscan-state.", dir=d)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:
        dfd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
