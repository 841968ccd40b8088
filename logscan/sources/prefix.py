"""Parse engine line prefixes into ``Record`` fields, using the prefix formats of the packs.

The formats themselves (vLLM's legacy ``INFO 06-15 00:04:48 api_server.py:177]``, the
bracketed ``[core.py:74]`` era, process tags like ``(EngineCore_DP0 pid=1)``, SGLang's
``[time TP0]``...) are data in ``patterns/<engine>/pack.toml``; this module only applies
them in order: wrappers (e.g. a docker-compose ``vllm  | `` prefix), up to three process tags,
then the first line format that matches.

Each of the three lists is tried as one alternation (``_First``): one ``regex`` call in C
instead of up to 20 calls from Python (the parse was half of the per-line cost of a prefiltered
line: ~40 ``match`` calls a line).
"""
from __future__ import annotations

import re
from typing import Optional

import regex

from .. import rxcache
from ..models import Record
from ..packs.loader import CompiledPrefix, PackSet
from .safe import bounded_int


#: lines parsed one pattern at a time before the alternations are compiled (~12 ms of ``regex``
#: compiling: a 20-line CI log would pay it for nothing; a large log earns it back in ~1000 lines)
LAZY = 256

#: a numbered backreference or group reference: it would change meaning inside a combined pattern
_NUMBERED_REF = re.compile(r"\\[1-9]|\\g<\d|\(\?\(\d")

#: a whole line a paste wrapped in Markdown inline code, `` `ROCm error: ...` `` (each line of a
#: GitHub comment quoted that way, llamacpp-189): the backticks are the paste's, not the engine's,
#: so both go before the prefixes are read (the indentation before the first one stays)
_INLINE_CODE = re.compile(r"([ \t]*)`([^`\n]{1,100000})`[ \t]*")


class _First:
    """The first of ``items`` (``CompiledPrefix``) whose regex matches at a position, in list
    order, found with one match of their alternation ``(?:A)(?P<_ls0>)|(?:B)(?P<_ls1>)|...``.

    An alternation tries its branches in order and, with nothing after it, keeps the first that
    matches, as a loop over the patterns does; branches share group names (``regex`` allows
    duplicate names; only one branch takes part in a match), an empty marker group names the
    branch. ``match(text, pos)`` returns ``(match, index of the item)`` or ``(None, -1)``. Patterns with
    numbered references, different flags, or a combination that does not compile are tried
    one by one instead; so are the first ``LAZY`` calls (the alternation is compiled after them).
    """

    def __init__(self, items: list):
        self.items = list(items)
        self._rx = None
        self._markers: list[str] = []
        self._calls = 0
        self._built = False  #: the alternation was built (or found impossible)
        self._last = 0  #: the branch that matched last: consecutive lines mostly share a format
        self._have: dict[tuple, tuple] = {}

    def build(self) -> None:
        """Compile the alternation (once); ``_rx`` stays None when the items cannot be combined."""
        if self._built:
            return
        self._built = True
        pats = [it.regex for it in self.items]
        if len(pats) < 2 or len({p.flags for p in pats}) != 1 or any(_NUMBERED_REF.search(p.pattern) for p in pats):
            return
        taken = set().union(*(p.groupindex for p in pats))
        self._markers = [f"_ls{i}" for i in range(len(pats))]
        if taken & set(self._markers):
            self._markers = []
            return
        src = "|".join(f"(?:{p.pattern})(?P<{m}>)" for p, m in zip(pats, self._markers))
        try:
            self._rx = rxcache.compile(src, pats[0].flags)
        except regex.error:
            self._rx, self._markers = None, []
            return
        self._nums = [self._rx.groupindex[m] for m in self._markers]

    def fields(self, m, names: tuple) -> dict:
        """The groups ``names`` of a match ``match`` returned (absent or not taking part: None);
        ``m.group(*names)`` rather than ``groupdict`` over every branch's groups."""
        if m.re is not self._rx:
            return m.groupdict()
        have = self._have.get(names)
        if have is None:
            have = self._have[names] = tuple(n for n in names if n in self._rx.groupindex)
        if len(have) > 1:
            return dict(zip(have, m.group(*have)))
        return {have[0]: m.group(have[0])} if have else {}

    def match(self, text: str, pos: int, nonempty: bool = False) -> tuple[Optional[object], int]:
        """The first item matching at ``pos`` (with ``nonempty``: the first whose match is not empty)."""
        if not self._built:
            self._calls += 1
            if self._calls > LAZY:
                self.build()
        if self._rx is not None:
            m = self._rx.match(text, pos, concurrent=False)
            if m is None:
                return None, -1
            if not nonempty or m.end() > pos:  # an empty match of an earlier branch: look one by one
                nums = self._nums
                if m.start(nums[self._last]) >= 0:
                    return m, self._last
                for i, g in enumerate(nums):
                    if m.start(g) >= 0:
                        self._last = i
                        return m, i
        for i, it in enumerate(self.items):
            m = it.regex.match(text, pos, concurrent=False)
            if m and (not nonempty or m.end() > pos):
                return m, i
        return None, -1


class PrefixParser:
    """Turns an unwrapped text line into a ``Record``; knows nothing engine-specific itself."""

    def __init__(self, packs: PackSet):
        self.wrappers: list[CompiledPrefix] = []
        self.processes: list[tuple[CompiledPrefix, object]] = []
        self.prefixes: list[CompiledPrefix] = []
        for pack in packs.packs.values():
            # a common wrapper (patterns/common-wrappers/) is in every pack's list: tried once
            self.wrappers += [w for w in pack.wrappers if not any(w is x for x in self.wrappers)]
            self.processes += [(p, pack.rank_regex) for p in pack.processes]
            self.prefixes += pack.prefixes
        self._wrappers = _First(self.wrappers)
        self._processes = _First([p for p, _ in self.processes])
        self._prefixes = _First(self.prefixes)
        #: ids of the prefix formats seen so far (an era hint for version inference)
        self.seen_formats: dict[str, int] = {}
        #: ids of the process tags and line format of the line parsed last
        self.last_formats: list[str] = []

    def prefix_at(self, text: str, pos: int = 0) -> bool:
        """Whether an engine's process tag or line prefix starts at ``pos`` (the test of an
        ``unless_own_prefix`` wrapper and of the hard-wrap joiner; no side effect)."""
        return (self._processes.match(text, pos)[0] is not None
                or self._prefixes.match(text, pos)[0] is not None)

    def after_wrappers(self, text: str) -> int:
        """Where the engine line begins once the wrappers are taken off (``parse`` and the
        hard-wrap joiner's start test; the inline-code handling is ``parse``'s)."""
        return self._unwrap(text)[0]

    def _unwrap(self, text: str) -> tuple[int, Optional[str]]:
        """``after_wrappers`` and the rank a wrapper names (its ``rank`` group: torch.distributed's
        ``[rank1]: ``, patterns/common-wrappers/torch.toml), the innermost one, or None."""
        pos, rank = 0, None
        for _ in range(3):
            m, w = self._wrappers.match(text, pos, nonempty=True)
            if m is None:
                break
            if (self.wrappers[w].spec.unless_own_prefix and not self.prefix_at(text, m.end())
                    and self.prefix_at(text, pos)):
                break  # the engine's own prefix begins with this shape (TGI's timestamp): keep it
            rank = self._wrappers.fields(m, ("rank",)).get("rank") or rank
            pos = m.end()
        return pos, rank

    def parse(self, source: str, line: int, text: str, truncated: bool = False,
              end_line: Optional[int] = None) -> Record:
        """Parse one line; a line with no known prefix keeps its whole text as the message.
        ``end_line``: the last physical line of a record joined from hard-wrapped pieces."""
        last: list[str] = []
        self.last_formats = last
        if text[-1:] in (" ", "\t"):
            text = text.rstrip(" \t")  # a paste's or an editor's trailing blanks end no sentence ('AssertionError   ')
        if text.endswith("`"):
            code = _INLINE_CODE.fullmatch(text)
            if code is not None:
                text = code.group(1) + code.group(2)
        pos, wrank = self._unwrap(text)
        wpos = pos
        if pos and text.endswith("`"):  # a code span inside a wrapper: '> `ROCm error: ...`' (llamacpp-189 quoted), '> `python3 -m ... --tp 2`' (sglang-280)
            code = _INLINE_CODE.fullmatch(text, pos)
            if code is not None:
                text = text[:pos] + code.group(1) + code.group(2)
        process = rank = None
        pid = None
        for _ in range(3):  # vLLM >= 0.11 nests three: (APIServer) (EngineCore_DP0) (Worker_TP3)
            m, k = self._processes.match(text, pos)
            if m is None:
                break
            tag, rank_re = self.processes[k]
            gd = self._processes.fields(m, ("process", "pid", "rank"))
            process = gd.get("process") or process
            if gd.get("pid"):
                pid = bounded_int(gd["pid"])
            # the innermost tag's rank wins: '(EngineCore_DP0 pid=1) (Worker_TP3 pid=2)' is TP3's line
            if gd.get("rank"):
                rank = gd["rank"]
            elif gd.get("process"):
                # the GIL kept (``concurrent=False``): a release here handed the interpreter to
                # the reader's search workers at every vLLM process tag (~50 us a line waiting
                # for it back, 742 lines of the 300 MB bench log; issue 18, speed35)
                rm = (rank_re.search(gd["process"], concurrent=False) if isinstance(rank_re, regex.Pattern)
                      else rank_re.search(gd["process"]))  # type: ignore[attr-defined]
                if rm:
                    rank = rm.group("rank")
            self.seen_formats[tag.spec.id] = self.seen_formats.get(tag.spec.id, 0) + 1
            last.append(tag.spec.id)
            pos = m.end()
        level = timestamp = fileinfo = fmt = None
        m, k = self._prefixes.match(text, pos)
        if m is not None:
            pf = self.prefixes[k]
            gd = self._prefixes.fields(m, ("level", "timestamp", "fileinfo", "rank"))
            level = gd.get("level")
            timestamp = gd.get("timestamp")
            fileinfo = gd.get("fileinfo")
            if gd.get("rank") and rank is None:
                rank = gd["rank"]
            fmt = pf.spec.id
            self.seen_formats[fmt] = self.seen_formats.get(fmt, 0) + 1
            last.append(fmt)
            pos = m.end()
        if rank is None:  # a wrapper's rank ('[rank1]: ' before a traceback line) when the engine's own tags name none
            rank = wrank
        # an indentation the wrappers took off with nothing of the engine's after it is the
        # message's own (a bare traceback's '  File ...' / '    raise ...' depth)
        indent = wpos - len(text[:wpos].rstrip(" \t")) if pos == wpos else 0
        return Record(
            source=source, line=line, message=text[pos:], level=level, timestamp=timestamp,
            fileinfo=fileinfo, process=process, rank=rank, pid=pid, prefix_format=fmt,
            truncated=truncated, end_line=end_line, indent=indent,
        )
