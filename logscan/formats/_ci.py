"""Helpers shared by the CI formats: order checks worst first, make untrusted log text safe to show."""
from __future__ import annotations

from .. import rxcache
from .clip import clip

#: Characters XML 1.0 cannot hold at all (even escaped): C0 controls but tab, LF, CR; surrogates; U+FFFE/F.
_XML_BAD = rxcache.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` with characters XML 1.0 forbids replaced by U+FFFD (the rest is escaped by ElementTree)."""
    return _XML_BAD.sub("\ufffd", text)


def reasons_text(reasons: list[str], lines: bool = False, limit: int = 300, most: int = 20) -> str:
    """A check's reasons (``Check.reasons``: the engine's own words, e.g. each kernel's refusal for
    ``KERNEL_NOT_FOUND``): ``reasons: a; b`` or, with ``lines``, ``reasons:`` then one ``  - a`` line
    each. Each is flattened and cut to ``limit`` characters, at most ``most`` of them; empty string
    when there are none. The caller escapes the result for its format."""
    if not reasons:
        return ""
    shown = [one_line(r, limit) for r in reasons[:most]]
    if len(reasons) > most:
        shown.append(f"... {len(reasons) - most} more")
    return "reasons:" + "".join("\n  - " + r for r in shown) if lines else "reasons: " + "; ".join(shown)


def one_line(text: str, limit: int = 300) -> str:
    """Collapse all whitespace (newlines included) to single spaces and cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return clip(flat, limit)
