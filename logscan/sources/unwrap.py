"""Unwrap container-runtime and structured log wrappers around engine lines.

Handles, line by line and auto-detected per line:

- Kubernetes CRI (``<RFC3339> stdout|stderr P|F <msg>``, kubelet's ``/var/log/pods`` files):
  ``P`` partial lines are joined with the following ones up to the ``F`` line.
- Docker's json-file driver (``{"log": "...\\n", "stream": "stdout", "time": "..."}``):
  entries without a trailing newline (Docker splits lines at 16 KiB) are joined.
- JSON log formatters (vLLM's ``VLLM_LOGGING_CONFIG_PATH`` with a JSON formatter, or
  python-json-logger): an object with ``message``/``msg`` becomes a plain vLLM-style line
  ``LEVEL [file:line] message`` so the same rules apply; Rust tracing JSON (TGI
  ``--json-output``: ``fields.message``, ``target``) becomes the compact line it replaces. A
  tracing message that holds line breaks (TGI's ``Shard complete standard error output:\n<the
  shard's stderr>``, launcher/src/main.rs 2.0.4 -> v3.3.7) becomes the lines the compact format
  prints for it: the first behind the compact prefix, each further one bare, all numbered with
  the JSON line, so the shard's traceback and its exception line are read as in compact mode.
  A tracing record cut before its end (a paste window that stops mid-record, as TGI issue
  pastes of ``--json-output`` do: the record's ``"target"`` key comes last, so a cut record has
  none) is salvaged the same way: its timestamp, level and the decoded part of its message,
  with the target of the last tracing record of the input (or none when no record gave one).

The line number of a joined record is that of its first physical line. A joined record
is capped at ``max_len`` characters (the rest dropped, flagged truncated).
"""
from __future__ import annotations

import json
from typing import Iterator, Optional

import regex

from .. import rxcache
from .safe import clean_message
from .triggers import JSON_KEYS

#: the message of a Rust tracing JSON record (``fields.message``): its line breaks are the compact
#: format's own (``feed`` splits them), unlike a JSON formatter's message joined into one record
_TRACING = "tracing"

#: the head of a Rust tracing JSON record (tracing-subscriber's json(): timestamp, level, fields
#: first, target after them); the message may be cut anywhere
_TRACING_HEAD = rxcache.compile(
    r'\{"timestamp":"(?P<ts>[^"\\]{10,40})","level":"(?P<level>TRACE|DEBUG|INFO|WARN|ERROR)","fields":\{"message":"(?P<msg>.*)', regex.S)
#: a tracing record's target key (the last record's target names a cut record's)
_TRACING_TARGET = rxcache.compile(r'"target":"(?P<target>[A-Za-z_][\w:]{0,80})"')
#: an escape the cut left unfinished (an odd backslash, or ``\\u`` with fewer than 4 digits)
_PARTIAL_ESCAPE = rxcache.compile(r'(?P<keep>(?<!\\)(?:\\\\)*)\\(?:u[0-9A-Fa-f]{0,3})?$')
#: the end of a JSON string body: an unescaped quote
_STRING_END = rxcache.compile(r'(?<!\\)(?:\\\\)*"')

_CRI = rxcache.compile(r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)) (?P<stream>stdout|stderr) (?P<tag>[PF]) ?(?P<msg>.*)", regex.S)


def _json_line(text: str) -> Optional[tuple[str, bool, str]]:
    """Return ``(message, complete, kind)`` for a Docker or JSON-formatter line, else None
    (``kind`` is ``_TRACING`` for a Rust tracing record, else ``""``).

    The message goes through ``safe.clean_message`` (JSON escapes can hold ``\\r``, NUL, ANSI codes
    and, with ``\\ud800``, a lone surrogate). A line that
    is not a JSON object, or one nested too deep or holding a number too long to parse, is None
    (kept as plain text).
    """
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("log"), str):  # docker json-file
        log = obj["log"]
        return clean_message(log.rstrip("\r\n")), log.endswith("\n"), ""
    msg = obj.get("message", obj.get("msg"))
    fields = obj.get("fields")
    if not isinstance(msg, str) and isinstance(fields, dict) and isinstance(fields.get("message"), str):
        # Rust tracing-subscriber JSON (TGI launcher --json-output): the compact line it replaces,
        # "<timestamp>  <LEVEL> <target>: <message>", so the engine's own line format applies
        target, ts = obj.get("target"), obj.get("timestamp")
        level = str(obj.get("level") or "INFO").upper()
        if isinstance(target, str) and isinstance(ts, str):
            return clean_message(f"{ts}  {level} {target}: {fields['message']}".rstrip("\n")), True, _TRACING
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
    return clean_message(f"{head}{loc}{msg}"), True, ""


def _cut_tracing(text: str, target: Optional[str]) -> Optional[str]:
    """The compact line a tracing JSON record cut before its end stands for, else None.

    ``text`` failed to parse as JSON; when it opens as a tracing record (``_TRACING_HEAD``) the
    message's JSON escapes are decoded up to the cut (a trailing partial escape dropped) and the
    line reads ``<timestamp>  <LEVEL> <target>: <message>`` (``<target>: `` left out when no earlier
    record of the input named one). A record whose message string did end (the cut fell in a later
    key) keeps the whole message.
    """
    m = _TRACING_HEAD.match(text)
    if m is None:
        return None
    body = m.group("msg")
    end = _STRING_END.search(body)
    if end is not None:
        body = body[: end.end() - 1]
    body = _PARTIAL_ESCAPE.sub(r"\g<keep>", body)  # a partial escape at the cut
    try:
        msg = json.loads(f'"{body}"', strict=False)
    except ValueError:  # an invalid escape inside: the raw text, escapes and all
        msg = body
    head = f"{m.group('ts')}  {m.group('level')} " + (f"{target}: " if target else "")
    return clean_message(f"{head}{msg}".rstrip("\n"))


class Unwrapper:
    """The stateful core of ``unwrap``, fed one physical line at a time (for a tail that never ends).

    ``feed(n, text, truncated)`` returns the complete records (0 or 1, a list of
    ``(first_line_number, engine_line, truncated)``); ``pending`` is True while ``P`` partial
    lines (or Docker entries without a newline) wait for their end; ``flush()`` returns the
    unterminated record, flagged truncated, so no line is lost.
    """

    def __init__(self, max_len: int = 1 << 20):
        self.max_len = max_len
        self._parts: list[str] = []
        self._line = 0
        self._len = 0
        self._trunc = False
        self._target: Optional[str] = None  #: the last tracing record's target (names a cut record's)

    @property
    def pending(self) -> bool:
        """True while a partial record waits for the line that completes it."""
        return bool(self._parts)

    def feed(self, n: int, text: str, trunc: bool = False) -> list[tuple[int, str, bool]]:
        """Unwrap one physical line; returns the records it completes (none while partial)."""
        complete = True
        body = text
        kind = ""
        if text[:1].isdigit() and len(text) > 30 and text[4:5] == "-":
            m = _CRI.match(text)
            if m:
                body = m.group("msg")
                complete = m.group("tag") == "F"
        elif text.startswith("{") and any(k in text for k in JSON_KEYS):  # the prefilter keeps these lines
            j = _json_line(text)
            if j is not None:
                body, complete, kind = j
            elif text.startswith('{"timestamp":"'):
                cut = _cut_tracing(text, self._target)
                if cut is not None:
                    body, kind = cut, _TRACING
            if kind == _TRACING or '"target":"' in text:
                t = _TRACING_TARGET.search(text)
                if t is not None:
                    self._target = t.group("target")
        elif '"target":"' in text:  # the tail of a record whose head was cut off the window
            t = _TRACING_TARGET.search(text)
            if t is not None:
                self._target = t.group("target")
        if not self._parts and complete:
            if kind == _TRACING and "\n" in body:
                return [(n, part, trunc) for part in body.split("\n")]
            return [(n, body, trunc)]
        if not self._parts:
            self._line = n
            self._parts.append("")  # marks "pending" even when the first part is empty
        if self._len < self.max_len:
            piece = body[: self.max_len - self._len]
            self._parts.append(piece)
            self._len += len(piece)
            self._trunc = self._trunc or trunc or len(piece) < len(body)
        else:
            self._trunc = True
        if not complete:
            return []
        out = [(self._line, "".join(self._parts), self._trunc)]
        self._parts, self._len, self._trunc = [], 0, False
        return out

    def flush(self) -> list[tuple[int, str, bool]]:
        """End of input: the unterminated partial record (flagged truncated), if any."""
        if not self._parts:
            return []
        out = [(self._line, "".join(self._parts), True)]
        self._parts, self._len, self._trunc = [], 0, False
        return out


def unwrap(lines: Iterator[tuple[int, str, bool]], max_len: int = 1 << 20) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(first_line_number, engine_line, truncated)`` with wrappers removed and parts joined.

    An unterminated partial record at the end of the input (a CRI stream cut after a ``P``
    line) is still yielded, flagged truncated, so no line is lost.
    """
    u = Unwrapper(max_len)
    for n, text, trunc in lines:
        yield from u.feed(n, text, trunc)
    yield from u.flush()
