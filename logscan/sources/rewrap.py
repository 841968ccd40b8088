"""Rejoin lines a terminal hard-wrapped at its width before they are matched.

Users paste logs copied from a terminal, tmux or a web console (a cloud console's log view,
the GitHub Actions viewer copied as text), which cut every line longer than the window at
exactly ``W`` columns and put the rest on the next line(s), with no marker and no indentation
(xterm / tmux "copy" of wrapped lines without their wrap flag; ``tools/presentation_coverage.py``'s
``hard-wrap-*`` presentations). The piece after the cut carries no engine prefix, so it was read
as a line of its own and meant nothing: a ``Using MarlinLinearKernel for ...`` sentence, an
SGLang ``... for W8A8 Block FP8 kernel.`` line or an exception line was lost.

Two parts, both per input:

- ``WrapWidth`` learns the wrap width from line lengths (characters after ANSI codes, ``\r``
  and NUL are removed, before any wrapper is taken off): the longest length seen, at least
  ``MIN_WIDTH``, once ``CONFIRM`` lines of exactly that length were each followed by a line the
  join test accepts as their rest (a cut). A terminal cuts at exactly ``W``, so no line exceeds
  it; a longer line seen later moves the maximum and withdraws the width (streaming: the decision
  uses what has been seen so far). ``LineReader`` measures each chunk before it yields a line of
  it and, while a width holds, yields every line (a keyword cut in two is on neither piece, so
  the prefilter cannot select them; reports equal those without the prefilter).
- ``joiner`` is the join test: the next line is the rest of a line of the width unless it is
  blank or indented (or the line ended a sentence and the next begins with a blank), starts a line of its own (an engine's process tag or line prefix after the
  wrappers, a wrapper holding a digit such as an outer timestamp, ``_GENERIC_START``), begins as
  the line does (the next row of a table, the next of eight ranks' same message), or the line
  ends a table row or is a rule. So a line exactly ``W`` long that was not cut stands alone.
- ``Rewrapper`` joins: a line of the longest length is held (one record at most) until the next
  line; if the width holds and the join test accepts that line, it is appended, and held again
  while it is itself ``W`` long (a line cut in three or more pieces). The joined record keeps
  the first line's number (evidence points at the real line where the sentence starts) and
  reports its last (``end_of``); the lines it took are counted in ``joined``.

Facts: terminals wrap at the column count (xterm, tmux ``capture-pane`` without ``-J``, the
browser consoles); the join test's line starts are CPython's traceback shapes
(Lib/traceback.py: ``Traceback (most recent call last):``, ``  File "...", line N``) and the
packs' own prefix formats (patterns/*/pack.toml).
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from ..models import InputStats
from .lineclean import clean

#: narrowest width taken for a terminal's (80-column terminals exist; 60 leaves room for narrow panes)
MIN_WIDTH = 60
#: cuts seen (lines of exactly the width followed by a line that may be their rest) before the
#: width counts: one line cut in three pieces is two; a single cut proves nothing (a natural line
#: as long as the longest, followed by an unprefixed line, looks the same)
CONFIRM = 2
#: bytes of an input measured for a width; past them a width is looked for only while one holds
DETECT_BYTES = 4 << 20

#: bytes that make a line's character count differ from its byte count after ``clean``
_SPECIAL = (b"\x1b", b"\r", b"\x00", b"#033[")

#: starts of a line that no engine prefix announces: CPython's traceback (Lib/traceback.py), its
#: chained-exception sentences, an exception line ``pkg.SomeError: ...`` / ``KeyboardInterrupt``,
#: uvicorn's ``INFO:     ...``, the ``[rank0]:`` tag torch.distributed's elastic agent prints, a
#: native backtrace frame ``1       0x7f... lib.so(+0x51395)`` (TensorRT-LLM's ``TllmException``,
#: tensorrt_llm/common/tllmException.cpp) and IPython's ``Cell In[1], line 7`` (IPython/core/ultratb.py)
_GENERIC_START = re.compile(
    r"Traceback \(most recent call last\)|[ \t]*File \"|During handling of the above exception"
    r"|The above exception was the direct cause|[A-Za-z_][\w.]{0,200}(?:Error|Exception|Warning|Exit|Interrupt)(?::|$)"
    r"|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):[ \t]|\[rank\d{1,5}\]:"
    r"|\d{1,4}[ \t]+0x[0-9a-fA-F]{4,}[ \t]|Cell In\[\d+\]")


class WrapWidth:
    """The wrap width of one input as far as it was seen (``width``: None while there is none).

    ``joins(line, next_line)`` is the join test (``joiner``): a line of the longest length
    counts as a cut only when the line after it could be its rest, so a table whose rows all
    have one width, or one message repeated by eight ranks, is no wrap.
    """

    __slots__ = ("joins", "max", "evidence", "measured", "_cand", "_stats", "changes")

    def __init__(self, joins: Callable[[str, str], bool]) -> None:
        self.joins = joins
        self.max = 0  #: the longest line seen (characters)
        self.evidence = 0  #: lines of exactly that length followed by a line that may be their rest
        self.measured = 0  #: bytes measured (``measure``)
        self._cand: Optional[str] = None  #: the last line, when it is of the longest length
        self._stats = InputStats(source="")
        self.changes = 0  #: how often the state changed (a follow checkpoint is taken again after one)

    @property
    def width(self) -> Optional[int]:
        """The wrap width once ``CONFIRM`` cuts of the longest length were seen, else None."""
        return self.max if self.max >= MIN_WIDTH and self.evidence >= CONFIRM else None

    @property
    def probable(self) -> bool:
        """One more cut would confirm the width: a line of the longest length is worth holding."""
        return self.max >= MIN_WIDTH and self.evidence >= CONFIRM - 1

    def see(self, text: str) -> None:
        """Count one clean physical line (the order of the input)."""
        cand, self._cand = self._cand, None
        n = len(text)
        if cand is None and n < self.max:
            return
        self.changes += 1
        if cand is not None and len(cand) == self.max and self.joins(cand, text):
            self.evidence += 1
        if n >= self.max and n >= MIN_WIDTH:
            if n > self.max:
                self.max, self.evidence = n, 0
            self._cand = text

    def to_json(self) -> dict:
        """The state a follow checkpoint keeps (``restore`` takes it), so a restart reads the
        following lines as an uninterrupted follow would."""
        cand = self._cand if self._cand is not None and len(self._cand) <= 65536 else None
        return {"max": self.max, "evidence": self.evidence, "cand": cand}

    def restore(self, state: dict) -> None:
        """Take a ``to_json`` state; ``ValueError`` when it is not one."""
        mx, ev, cand = state.get("max"), state.get("evidence"), state.get("cand")
        if not (isinstance(mx, int) and isinstance(ev, int) and (cand is None or isinstance(cand, str))):
            raise ValueError(f"bad wrap state {state!r:.200}")
        self.max, self.evidence, self._cand = mx, ev, cand
        self.changes += 1

    def see_long(self) -> None:
        """A line longer than any terminal (cut by the reader): there is no width."""
        self.changes += 1
        self._cand = None
        self.max, self.evidence = 1 << 62, 0

    def wants(self) -> bool:
        """Whether the next bytes are to be measured: within ``DETECT_BYTES``, or while a width holds."""
        return self.measured < DETECT_BYTES or self.width is not None

    def see_raw(self, raw: bytes) -> None:
        """Count one physical line given as bytes (no newline); decoded only when it matters
        (a line that may be the longest, or the line after one)."""
        n = len(raw)
        if self._cand is None and (n < MIN_WIDTH or n < self.max):  # clean never lengthens a line
            return
        if raw.isascii() and not any(s in raw for s in _SPECIAL):
            self.see(raw.decode("ascii"))
        else:
            self.see(clean(raw, self._stats))

    def measure(self, buf: bytes, end: int) -> None:
        """Count the complete lines of ``buf[:end]`` (a reader's chunk), before any is yielded."""
        self.measured += end
        see = self.see_raw
        for raw in buf[:end].split(b"\n")[:-1]:
            if self._cand is not None or len(raw) >= self.max:
                see(raw)


class Rewrapper:
    """Joins hard-wrapped pieces, fed one clean physical line at a time (before ``Unwrapper``).

    ``feed(n, text, truncated)`` returns the records it completes, ``(first_line, text,
    truncated)``: none while a line of the width is held; ``flush()`` returns the held record
    (end of input, or a quiet spell in ``logscan follow``), so a line waits for one more line at
    most. A line of the longest length is held while ``width.probable``; it is joined when the
    width is confirmed and ``width.joins`` accepts the next line.
    """

    def __init__(self, width: WrapWidth, max_len: int = 1 << 20):
        self.width = width
        self.max_len = max_len
        self._held: Optional[list] = None  # [first line, parts, length, truncated, last piece's length, last line]
        self.joined = 0  #: lines appended to the line before them
        self._last: tuple[int, int] = (0, 0)  #: (first line, last line) of the last joined record

    @property
    def pending(self) -> bool:
        """True while a line of the width waits for the next line."""
        return self._held is not None

    def feed(self, n: int, text: str, trunc: bool = False) -> list[tuple[int, str, bool]]:
        out: list[tuple[int, str, bool]] = []
        held = self._held
        ww = self.width
        if held is not None:
            w = ww.width
            if w is not None and held[4] == w and ww.joins(held[1][0], text):
                self.joined += 1
                if held[2] < self.max_len:
                    piece = text[: self.max_len - held[2]]
                    held[1].append(piece)
                    held[2] += len(piece)
                    held[3] = held[3] or trunc or len(piece) < len(text)
                else:
                    held[3] = True
                held[4] = len(text)
                held[5] = n
                if len(text) == w and not trunc and ww.probable:
                    return out  # cut again: the next piece may follow
                return self.flush()
            out = self.flush()
        if len(text) == ww.max and not trunc and ww.probable:
            self._held = [n, [text], len(text), trunc, len(text), n]
            return out
        out.append((n, text, trunc))
        return out

    def flush(self) -> list[tuple[int, str, bool]]:
        """The held record, if any (the input ended or went quiet)."""
        held, self._held = self._held, None
        if held is None:
            return []
        if held[5] != held[0]:
            self._last = (held[0], held[5])
        return [(held[0], "".join(held[1]), held[3])]

    def end_of(self, line: int) -> Optional[int]:
        """The last physical line of the joined record that starts at ``line`` (the one the
        unwrapper hands on last), or None when that line stands alone."""
        first, last = self._last
        return last if first == line else None


#: the last character of a table or box row (nvidia-smi, rich tracebacks, Triton's model table):
#: a row ends there, a terminal's cut lands there only by chance
_ROW_END = frozenset("|│┃║+╮╯╗╝┐┘")
#: a line's kind: its indentation and its first word (or first sign)
_KIND = re.compile(r"[ \t]*(?:\w+|\S)")
#: an indented line (two blanks or a tab, then text): the source line CPython prints under a
#: traceback frame or a ``warnings.warn`` message (Lib/traceback.py, Lib/warnings.py
#: ``formatwarning``), an argument dump's field; a cut lands before two blanks only by chance
_INDENTED = re.compile(r"(?:  |\t)[ \t]*\S")


#: a sentence's first word: a capital, up to twenty letters, then a blank ('The argument', 'You are');
#: a dotted name cut after its dot goes on with no blank ('Fp8LinearMethod', 'Tensor.')
_SENTENCE_START = re.compile(r"[A-Z][a-z']{0,20} ")

#: the blank run that ends a line a console padded to its width (rich's Console pads every line it
#: prints; other-111: GPTQModel's log, 60+ blanks) rather than one a terminal cut: a cut lands
#: inside the text, and a paste's own trailing blanks are a few (the trailing-space presentation)
_PADDING = " " * 8


def joiner(parser) -> Callable[[str, str], bool]:
    """The join test of a ``WrapWidth`` and ``Rewrapper``: whether ``nxt`` may be the rest of
    ``line`` (a line of the width) cut by a terminal, read with ``parser`` (``PrefixParser``:
    its wrappers, process tags and line prefixes). Not when ``nxt`` is blank or starts a line of
    its own (an engine prefix or process tag after the wrappers, a wrapper holding a digit: a
    timestamp or a rank tag, or one of ``_GENERIC_START``), when ``line`` ends a table row, or
    when ``nxt`` begins as ``line`` does (its indentation and first word: the next row of a
    table, the next of a run of same-shaped lines)."""
    def joins(line: str, nxt: str) -> bool:
        if not nxt.strip() or line[-1:] in _ROW_END or _INDENTED.match(nxt) or len(set(line)) == 1:
            return False  # a blank, a table row, an indented line; a rule line ('-----') is whole
        if line.endswith(_PADDING):
            return False  # padded to the width with blanks (rich, curses consoles pad each line): whole
        if line[-1:] in ".!?" and (nxt[:1] in " \t" or _SENTENCE_START.match(nxt)):
            # a sentence ended and a line begins with a blank (TGI's ' rank=0' span line) or a new
            # sentence: a cut there would have joined two sentences with no blank between them
            # ('...can yield errors.The argument ...': lmdeploy-170's transformers warnings, one
            # 147 columns long, repeated, read as a terminal's width)
            return False
        a, b = _KIND.match(line), _KIND.match(nxt)
        if a is not None and b is not None and a.group() == b.group():
            return False
        pos = parser.after_wrappers(nxt)
        if pos and any(c.isdigit() for c in nxt[:pos]):
            return False
        return not parser.prefix_at(nxt, pos) and _GENERIC_START.match(nxt, pos) is None
    return joins
