"""Read a Python ``repr`` of server arguments into a dict without evaluating it.

SGLang logs its resolved arguments once at start-up, as a dataclass repr up to 0.5.16
(``server_args=ServerArgs(model_path='m', tp_size=2, quantization=None, ...)``, from
``sglang/srt/entrypoints/engine.py``) and as a dict repr from 0.5.23
(``server_args={'model_path': 'm', 'tp_size': 2, ...}``, ``ServerArgs.resolved_dict()``).
The dump is one line of thousands of characters, often cut by a paste or a log shipper.

``parse_repr`` is a small tolerant tokenizer: it splits the top-level ``key=value`` /
``'key': value`` pairs by tracking quotes and bracket depth (no recursion, no ``eval``),
then turns each value into a Python object with ``ast.literal_eval`` when it is a literal
(strings, numbers, ``None``/``True``/``False``, lists, dicts, tuples) and keeps its text
otherwise (e.g. ``torch.bfloat16``, ``<enum ...>``, nested dataclass reprs). A truncated
dump yields every complete pair and marks the result truncated; the cut value is kept as
text under its key.
"""
from __future__ import annotations

import ast
from dataclasses import field
from typing import Any

from ..lazydc import dataclass  # processed on first use (start-up, issue 18)

#: Longest dump read (characters); SGLang 0.5.23 dumps are ~12 000 characters.
MAX_DUMP = 400_000
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}


@dataclass
class ParsedArgs:
    """Result of ``parse_repr``: the values by key, in dump order, and what went wrong.

    ``values``: key -> Python value (literal) or the raw text of a non-literal value.
    ``raw``: key -> the value's text as printed. ``truncated``: the dump ended before its
    closing bracket (a cut paste). ``shape``: ``dataclass`` (``ServerArgs(...)``), ``dict``
    (``{...}``) or ``unknown``.
    """

    values: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    truncated: bool = False
    shape: str = "unknown"


def _split_top(body: str) -> tuple[list[str], bool]:
    """Split ``body`` at top-level commas; returns the parts and whether the outer bracket closed."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            if depth == 0:
                parts.append(body[start:i])
                return parts, True
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    parts.append(body[start:])
    return parts, False


def _value(text: str) -> Any:
    text = text.strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def parse_repr(text: str) -> ParsedArgs:
    """Parse ``ServerArgs(k=v, ...)`` or ``{'k': v, ...}`` (the text after ``server_args=``).

    Never raises on bad input: unparsable pairs are skipped, a cut dump keeps its complete
    pairs (``truncated`` is set). Input longer than ``MAX_DUMP`` characters is cut first.
    """
    out = ParsedArgs()
    s = text[:MAX_DUMP].strip()
    if not s:
        return out
    if s.startswith("{"):
        out.shape, body, sep = "dict", s[1:], ":"
    else:
        paren = s.find("(")
        if paren < 0 or not s[:paren].strip().replace("_", "").isalnum():
            return out
        out.shape, body, sep = "dataclass", s[paren + 1:], "="
    parts, closed = _split_top(body)
    out.truncated = not closed or len(text) > MAX_DUMP
    for i, part in enumerate(parts):
        if not part.strip():
            continue
        if sep == "=":
            key, eq, val = part.partition("=")
            key = key.strip()
        else:
            kq, eq, val = part.partition(":")
            key = kq.strip().strip("'\"")
        if not eq or not key or not key.replace("_", "").replace("-", "").isalnum():
            continue
        cut = out.truncated and i == len(parts) - 1
        out.raw[key] = val.strip()
        out.values[key] = val.strip() if cut else _value(val)
    return out
