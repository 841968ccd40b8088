"""Parse engine line prefixes into ``Record`` fields, using the prefix formats of the packs.

The formats themselves (vLLM's legacy ``INFO 06-15 00:04:48 api_server.py:177]``, the
bracketed ``[core.py:74]`` era, process tags like ``(EngineCore_DP0 pid=1)``, SGLang's
``[time TP0]``...) are data in ``patterns/<engine>/pack.toml``; this module only applies
them in order: wrappers (e.g. a docker-compose ``vllm  | `` prefix), up to three process tags,
then the first line format that matches.
"""
from __future__ import annotations

from ..models import Record
from ..packs.loader import CompiledPrefix, PackSet
from .safe import bounded_int


class PrefixParser:
    """Turns an unwrapped text line into a ``Record``; knows nothing engine-specific itself."""

    def __init__(self, packs: PackSet):
        self.wrappers: list[CompiledPrefix] = []
        self.processes: list[tuple[CompiledPrefix, object]] = []
        self.prefixes: list[CompiledPrefix] = []
        for pack in packs.packs.values():
            self.wrappers += pack.wrappers
            self.processes += [(p, pack.rank_regex) for p in pack.processes]
            self.prefixes += pack.prefixes
        #: ids of the prefix formats seen so far (an era hint for version inference)
        self.seen_formats: dict[str, int] = {}
        #: ids of the process tags and line format of the line parsed last
        self.last_formats: list[str] = []

    def parse(self, source: str, line: int, text: str, truncated: bool = False) -> Record:
        """Parse one line; a line with no known prefix keeps its whole text as the message."""
        pos = 0
        last: list[str] = []
        self.last_formats = last
        for _ in range(3):
            for w in self.wrappers:
                m = w.regex.match(text, pos)
                if m and m.end() > pos:
                    pos = m.end()
                    break
            else:
                break
        process = rank = None
        pid = None
        for _ in range(3):  # vLLM >= 0.11 nests three: (APIServer) (EngineCore_DP0) (Worker_TP3)
            for tag, rank_re in self.processes:
                m = tag.regex.match(text, pos)
                if m:
                    gd = m.groupdict()
                    process = gd.get("process") or process
                    if gd.get("pid"):
                        pid = bounded_int(gd["pid"])
                    if gd.get("rank"):
                        rank = gd["rank"]
                    elif process and rank is None:
                        rm = rank_re.search(process)  # type: ignore[attr-defined]
                        if rm:
                            rank = rm.group("rank")
                    self.seen_formats[tag.spec.id] = self.seen_formats.get(tag.spec.id, 0) + 1
                    last.append(tag.spec.id)
                    pos = m.end()
                    break
            else:
                break
        level = timestamp = fileinfo = fmt = None
        for pf in self.prefixes:
            m = pf.regex.match(text, pos)
            if m:
                gd = m.groupdict()
                level = gd.get("level")
                timestamp = gd.get("timestamp")
                fileinfo = gd.get("fileinfo")
                if gd.get("rank") and rank is None:
                    rank = gd["rank"]
                fmt = pf.spec.id
                self.seen_formats[fmt] = self.seen_formats.get(fmt, 0) + 1
                last.append(fmt)
                pos = m.end()
                break
        return Record(
            source=source, line=line, message=text[pos:], level=level, timestamp=timestamp,
            fileinfo=fileinfo, process=process, rank=rank, pid=pid, prefix_format=fmt,
            truncated=truncated,
        )
