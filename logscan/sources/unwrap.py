"""Unwrap container-runtime and structured log wrappers around engine lines.

Handles, line by line and auto-detected per line:

- Kubernetes CRI (``<RFC3339> stdout|stderr P|F <msg>``, kubelet's ``/var/log/pods`` files):
  ``P`` partial lines are joined with the following ones up to the ``F`` line.
- Docker's json-file driver (``{"log": "...\\n", "stream": "stdout", "time": "..."}``):
  entries without a trailing newline (Docker splits lines at 16 KiB) are joined.
- JSON log formatters (vLLM's ``VLLM_LOGGING_CONFIG_PATH`` with a JSON formatter, or
  python-json-logger): an object with ``message``/``msg`` becomes a plain vLLM-style line
  ``LEVEL [file:line] message`` so the same rules apply.

The line number of a joined record is that of its first physical line. A joined record
is capped at ``max_len`` characters (the rest dropped, flagged truncated).
"""
from __future__ import annotations

import json
from typing import Iterator, Optional

import regex

_CRI = regex.compile(r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) (?P<stream>stdout|stderr) (?P<tag>[PF]) ?(?P<msg>.*)", regex.S)


def _json_line(text: str) -> Optional[tuple[str, bool]]:
    """Return ``(message, complete)`` for a Docker or JSON-formatter line, else None."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("log"), str):  # docker json-file
        log = obj["log"]
        return log.rstrip("\r\n"), log.endswith("\n")
    msg = obj.get("message", obj.get("msg"))
    if not isinstance(msg, str):
        return None
    level = obj.get("levelname") or obj.get("level") or ""
    fname = obj.get("filename") or obj.get("fileinfo") or ""
    lineno = obj.get("lineno")
    loc = f"[{fname}:{lineno}] " if fname and lineno is not None else ""
    proc = obj.get("vllm_process_name") or obj.get("processName")
    pid = obj.get("process")
    tag = f"({proc} pid={pid}) " if proc and isinstance(pid, int) else ""
    head = f"{tag}{str(level).upper()} " if level else tag
    return f"{head}{loc}{msg}", True


def unwrap(lines: Iterator[tuple[int, str, bool]], max_len: int = 1 << 20) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(first_line_number, engine_line, truncated)`` with wrappers removed and parts joined.

    An unterminated partial record at the end of the input (a CRI stream cut after a ``P``
    line) is still yielded, flagged truncated, so no line is lost.
    """
    pending: list[str] = []
    pending_line = 0
    pending_len = 0
    pending_trunc = False

    for n, text, trunc in lines:
        complete = True
        body = text
        if text[:1].isdigit() and len(text) > 30 and text[4:5] == "-":
            m = _CRI.match(text)
            if m:
                body = m.group("msg")
                complete = m.group("tag") == "F"
        elif text.startswith("{") and ('"log"' in text or '"message"' in text or '"msg"' in text):
            j = _json_line(text)
            if j is not None:
                body, complete = j
        if pending or not complete:
            if not pending:
                pending_line = n
            if pending_len < max_len:
                piece = body[: max_len - pending_len]
                pending.append(piece)
                pending_len += len(piece)
                pending_trunc = pending_trunc or trunc or len(piece) < len(body)
            else:
                pending_trunc = True
            if complete:
                yield pending_line, "".join(pending), pending_trunc
                pending, pending_len, pending_trunc = [], 0, False
            continue
        yield n, body, trunc
    if pending:
        yield pending_line, "".join(pending), True
