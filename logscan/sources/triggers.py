"""Bytes that make the prefilter keep a line besides the pack keywords (shared by both engines).

A line is kept when its bytes may read differently once decoded and cleaned (``reader.clean``
removes NUL, ANSI colour codes and a lone ``\\r``; ``#033[`` is an ESC spelled out by rsyslog,
``safe.SYSLOG_ANSI``, ``^[[`` one in caret notation, ``safe.CARET_ANSI``), or when it starts a
record that the unwrapper joins or rewrites (``sources/unwrap.py``): a Kubernetes CRI partial
line, or a JSON record. The unwrapper reads a line as JSON only when it starts with ``{`` *and*
holds one of ``JSON_KEYS``, so those keys, searched as literals, find every line it rewrites (a superset: the key anywhere in the line).
They replaced the two-byte ``\\n{``, which alone cost Hyperscan's literal matcher ~0.3 ms/MB
(a literal that short forbids its fast path; issue 18).
"""
from __future__ import annotations

#: Kubernetes CRI partial lines (``<time> stdout P <text>``): the record continues on the next line
CRI_PARTIAL = (b" stdout P", b" stderr P")
#: bytes ``reader.clean`` removes (they can hide a keyword)
DIRTY = (b"\x00", b"\x1b", b"#033[", b"^[[")
#: keys that make the unwrapper read a ``{`` line as a JSON record (Docker json-file ``log``,
#: Python JSON formatters ``message``/``msg``; ``unwrap.Unwrapper.feed``)
JSON_KEYS = ('"log"', '"message"', '"msg"')
JSON_KEY_BYTES = tuple(k.encode("ascii") for k in JSON_KEYS)
#: bytes on which a str-mode and a bytes-mode (or Hyperscan) regex may disagree even in ASCII
#: text (Python's str ``\s`` takes the information separators): a buffer holding one opens
#: every gate whose sniff reads ``\s``/``\S``; the exact per-line check then decides
UNSURE = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")
#: every byte-exact trigger, searched case-sensitively by both engines
EXACT = CRI_PARTIAL + DIRTY + JSON_KEY_BYTES
