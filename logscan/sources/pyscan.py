"""The prefilter's pure-Python engine: ``bytes.lower`` and ``bytes.find`` per literal (~80 MB/s).

Split from ``sources/prefilter.py`` (``Prefilter`` takes these methods as a mixin). Its hits are
the Hyperscan engine's (``sources/hsscan.py``), which the tests compare buffer by buffer.
"""
from __future__ import annotations

from .triggers import EXACT, UNSURE


class PythonSearch:
    """``Prefilter``'s pure-Python engine (a mixin: it reads the prefilter's literal plan)."""

    def _bytes_sniff(self, gate):
        import regex

        try:
            return [regex.compile(src, regex.V0) for src in self._sniff_sources(gate)]
        except (regex.error, UnicodeEncodeError):
            return None  # always open

    def _python_hits(self, buf: bytes) -> tuple[list[int], list[int]]:
        out: list[int] = []
        quiet: list[int] = []  # hits of quiet literals (not starts)
        low = buf.lower()
        for lit in self.literals:
            dest = quiet if lit in self._quiet else out
            i = low.find(lit)
            while i >= 0:
                dest.append(i)
                i = low.find(lit, i + len(lit))
        if self.gates:
            unsure = not buf.isascii() or (self._needs_unsure and any(b in buf for b in UNSURE))
            gated: list[tuple[int, int]] = []
            for gi, (_, lits) in enumerate(self.gates):
                sniff = self._sniffs[gi]
                if not unsure and sniff is not None and not any(rx.search(buf) for rx in sniff):
                    continue  # no line of this buffer can carry the engine's prefix
                for lit in lits:
                    i = low.find(lit)
                    while i >= 0:
                        gated.append((gi, i))
                        i = low.find(lit, i + len(lit))
            if gated:
                out += self._open_gates(buf, gated)
        for lit in self.sensitive + list(EXACT):
            dest = quiet if lit in self._quiet else out
            i = buf.find(lit)
            while i >= 0:
                dest.append(i)
                i = buf.find(lit, i + 1)
        i = buf.find(b"\r")
        while i >= 0:
            if buf[i + 1:i + 2] not in (b"\n", b""):
                out.append(i)
            i = buf.find(b"\r", i + 1)
        out.sort()
        if not quiet:
            return out, out
        return sorted(out + quiet), out
