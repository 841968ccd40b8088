"""Cut text for display: at a word boundary, marked with an ellipsis, never silently mid-word."""
from __future__ import annotations

ELLIPSIS = "…"
_BREAKS = " \t,;:/|)]}>"


def clip(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its head cut at the last space (or
    ``, ; : / | ) ] } >``) in the last 40% of the room, then ``…``; the result has at most
    ``limit`` characters. A single token longer than that is cut hard, still marked."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS[:limit]
    room = limit - 1
    floor = int(room * 0.6)
    cut = max((i for i in range(room, floor - 1, -1) if i < len(text) and text[i] in _BREAKS), default=None)
    if cut is None:
        return text[:room] + ELLIPSIS
    head = text[:cut + 1] if text[cut] not in " \t" else text[:cut]
    return head.rstrip()[:room] + ELLIPSIS
