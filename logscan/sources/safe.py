"""The one boundary where untrusted text is made safe: valid UTF-8 and numbers parsed with bounds.

Every line logscan reads reaches the rest of the program through ``sources.reader.clean``
(bytes decoded as UTF-8 with replacement) and, for Docker json-file and JSON-formatter lines,
``sources.unwrap`` (a JSON string can hold ``\\ud800``, a lone surrogate, that no UTF-8
encoder accepts). ``safe_text`` is applied there, so that every string in a record, an
event, a report and every output format encodes as UTF-8: a lone surrogate becomes U+FFFD.

Numbers found in log text go through ``bounded_int``: ASCII digits only (``str.isdigit``
is true for ``²`` but ``int('²')`` fails) and at most ``MAX_DIGITS`` of them (``int`` of
more than 4300 digits raises ``ValueError``). A number outside these bounds is "not given",
never an exception.
"""
from __future__ import annotations

from typing import Optional

import regex

#: Most decimal digits of a number read from a log (a pid, a tensor-parallel size, a shape).
MAX_DIGITS = 18

_SURROGATE = regex.compile("[\ud800-\udfff]")


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate (U+D800..U+DFFF) replaced by U+FFFD; the same object when clean.

    Never raises. The result encodes as strict UTF-8.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def bounded_int(text: object, max_digits: int = MAX_DIGITS) -> Optional[int]:
    """The integer that ``text`` spells in ASCII decimal digits (optional sign, surrounding blanks), else None.

    ``"8"`` -> 8, ``" 12 "`` -> 12, ``"²"`` -> None, ``"9" * 5000`` -> None (more than
    ``max_digits`` digits), ``None`` -> None. An ``int`` is returned as is when it has at most
    ``max_digits`` digits. Never raises.
    """
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text if -(10 ** max_digits) < text < 10 ** max_digits else None
    if not isinstance(text, str):
        return None
    t = text.strip()
    digits = t[1:] if t[:1] in "+-" else t
    if not digits or len(digits) > max_digits or not digits.isascii() or not digits.isdigit():
        return None
    return int(t)
