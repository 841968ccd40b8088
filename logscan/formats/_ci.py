"""Helpers shared by the CI formats: order checks worst first, make untrusted log text safe to show."""
from __future__ import annotations

import regex

#: Characters XML 1.0 cannot hold at all (even escaped): C0 controls but tab, LF, CR; surrogates; U+FFFE/F.
_XML_BAD = regex.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` with characters XML 1.0 forbids replaced by U+FFFD (the rest is escaped by ElementTree)."""
    return _XML_BAD.sub("\ufffd", text)


def one_line(text: str, limit: int = 300) -> str:
    """Collapse all whitespace (newlines included) to single spaces and cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
