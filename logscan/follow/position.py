"""Where reading stopped in a followed file, in a form that survives a restart (``--state``).

A file is recognised by its inode while it keeps it (a rename), and by its first bytes (a
*fingerprint*) once it is gzipped or copied (``logscan.follow.tail`` says how it is used).
"""
from __future__ import annotations

from ..lazydc import dataclass  # processed on first use (start-up, issue 18)


#: Bytes of a file's consumed head kept to recognise it after a rename, a gzip or a copy.
FP_LEN = 1024
#: files read to their end whose head digests are kept (``Position.seen``)
SEEN = 64
#: newer files whose heads are kept in observed order (``Position.ahead``)
AHEAD = 8


@dataclass(frozen=True)
class Position:
    """Where reading stopped in one file: a line boundary.

    ``dev``/``ino`` identify the file while it keeps its inode (rename); ``fp`` is its first
    ``min(FP_LEN, offset)`` bytes (decompressed), which still identify it once gzipped or
    copied; ``offset`` counts bytes of (decompressed) content consumed.
    """

    dev: int
    ino: int
    fp: bytes
    offset: int
    #: head of the last non-empty rotated piece read before this file: pieces newer than it
    #: are unread (an empty piece cannot be recognised, but reading it again costs nothing)
    last: bytes = b""
    #: digests (``_digest``) of the heads of the last ``SEEN`` files read to their end: a
    #: rotated piece holding one of them is never read again, whatever its name says of its age
    seen: tuple[str, ...] = ()
    #: heads (up to ``FP_LEN`` bytes, a growing file's head so far) of the files newer than
    #: this one, oldest first, as the last poll saw them (rotated pieces, then the live file):
    #: the order of pieces not read yet once their names no longer tell it (the live file
    #: renamed to ``x.2`` beside a dated piece older than it)
    ahead: tuple[bytes, ...] = ()

    def to_json(self) -> dict:
        """JSON-able form (the fingerprints as hex)."""
        return {"dev": self.dev, "ino": self.ino, "fp": self.fp.hex(), "offset": self.offset,
                "last": self.last.hex(), "seen": list(self.seen), "ahead": [h.hex() for h in self.ahead]}

    @classmethod
    def from_json(cls, d: dict) -> "Position":
        """Inverse of ``to_json``; raises ``ValueError`` on a malformed dict."""
        try:
            seen = d.get("seen", [])
            if not isinstance(seen, list) or not all(isinstance(x, str) and len(x) <= 64 for x in seen):
                raise ValueError("'seen' is not a list of digests")
            ahead = d.get("ahead", [])
            if not isinstance(ahead, list) or not all(isinstance(x, str) and len(x) <= 2 * FP_LEN for x in ahead):
                raise ValueError("'ahead' is not a list of heads")
            return cls(int(d["dev"]), int(d["ino"]), bytes.fromhex(d["fp"]), int(d["offset"]),
                       bytes.fromhex(d.get("last", "")), tuple(seen[-SEEN:]),
                       tuple(bytes.fromhex(x) for x in ahead[-AHEAD:]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad position {d!r}: {exc}") from None
