"""Quoted source lines of a Python traceback (docs/traceback-frames.md "Quoted source lines").

CPython's ``traceback.print_exception`` prints, under each frame header ``File "p.py", line N, in
f``, the frame's source line, indented deeper (``    raise ValueError("... not supported ...")``).
That line is code the process was running, not a statement it logged: a rule reading it as one
would take a quoted ``raise ValueError("FP8 not supported")`` for a refusal. ``QuotedSource`` tells
such a line: the next record of the same process (source, process tag, pid) after a frame header,
at most ``GAP`` lines below it (ranks interleave), indented deeper than the header and not itself a
frame (the depth counts blanks an outer wrapper took off an unprefixed line, ``Record.indent``:
the ``indent`` wrapper strips a bare traceback's indentation, vllm-317). Only rules that read code on purpose (``Rule.source_line``: a serving-loop frame such as
``engine_core.run_busy_loop()``) and identity rules (a path names the engine) may read it.
"""
from __future__ import annotations

from .. import lazyre

#: a frame header as CPython prints it, with its indentation
#: (``line N, `` may be missing in a pasted log: ``packs.model_rules.FRAME_SHAPE``; then the header
#: ends with the function)
FRAME_HEAD = lazyre.compile(r'(?P<indent>\s{0,12})File "[^"]{1,1000}",(?: line \d{1,7}, in \S| in [^\s(]{1,160}\s*$)')
#: lines below its frame header within which a process's quoted source line may come (ranks interleave)
GAP = 16
_MAX_OPEN = 4096


class QuotedSource:
    """Per-process memory of the last frame header; ``quoted(rec)`` says whether a record is the
    quoted source line under it (each record is given once, in line order)."""

    def __init__(self) -> None:
        self._open: dict[tuple, tuple[int, int]] = {}
        self._last = 0  #: line of the last record given

    def to_json(self) -> list:
        """The frame headers still waiting for their code line (those within ``GAP`` lines of the
        last record; older ones can no longer match), as ``[source, process, pid, line, depth]``
        lists: what a pipeline checkpoint keeps so that a restore tells the same lines."""
        return [[k[0], k[1], k[2], v[0], v[1]] for k, v in self._open.items() if self._last - v[0] <= GAP]

    def restore(self, items: list) -> None:
        """Take back ``to_json``'s lists. Raises ``ValueError`` on any other shape."""
        for it in items:
            if (not isinstance(it, list) or len(it) != 5 or not isinstance(it[0], str)
                    or not (it[1] is None or isinstance(it[1], str)) or not (it[2] is None or type(it[2]) is int)
                    or type(it[3]) is not int or type(it[4]) is not int):
                raise ValueError(f"bad quoted-source entry {it!r:.200}")
            self._open[(it[0], it[1], it[2])] = (it[3], it[4])
            self._last = max(self._last, it[3])

    def quoted(self, rec) -> bool:
        """Whether ``rec`` (a ``Record``) is the source line quoted under its process's last frame."""
        msg = rec.message
        key = (rec.source, rec.process, rec.pid)
        self._last = rec.line
        if 'File "' in msg:
            m = FRAME_HEAD.match(msg)
            if m:
                if len(self._open) >= _MAX_OPEN:
                    self._open.clear()
                self._open[key] = (rec.line, rec.indent + len(m.group("indent")))
                return False
        if not self._open:
            return False
        got = self._open.pop(key, None)
        if got is None or rec.line - got[0] > GAP or not msg.strip():
            return False
        return rec.indent + len(msg) - len(msg.lstrip()) > got[1]
