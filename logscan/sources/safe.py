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

from .. import rxcache

#: Most decimal digits of a number read from a log (a pid, a tensor-parallel size, a shape).
MAX_DIGITS = 18

_SURROGATE = rxcache.compile("[\ud800-\udfff]")
#: ANSI escape sequences (CSI, OSC, two-byte), removed from every line (``reader.clean``) and message
ANSI = rxcache.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
#: An ANSI CSI sequence whose ESC a log relay spelled out as text: rsyslog's default
#: $EscapeControlCharactersOnReceive writes a control byte as '#' and three octal digits, so
#: ESC is ``#033`` (AWS CloudWatch shows SageMaker / ECS container logs so: ``#033[2m``); a CSI
#: sequence with no intermediate bytes and a letter as its final byte (stricter than ANSI: it is text); removed
#: like a raw ANSI code
SYSLOG_ANSI = rxcache.compile(r"#033\[[0-9;?]{0,32}[A-Za-z]")
#: An ANSI CSI sequence whose ESC was written in caret notation: ``^[`` is how ``cat -v``,
#: ``less`` and a terminal's echo show the control byte 0x1b, so a reporter who copies such
#: output pastes ``^[[1;36m(VllmWorker rank=0 pid=21649)^[[0;0m ERROR ...`` (vllm-298,
#: vllm-project/vllm#19904) or ``^[[K`` (erase line). As strict as ``SYSLOG_ANSI``, it is text:
#: parameters of digits, ``;`` and ``?`` only, a letter as the final byte; with no parameter the
#: letter must not start a bracket expression (``^[[A-Z]``, a regex anchored on a class, stays),
#: and a POSIX class (``^[[:alpha:]]``) never matches (``:`` is no parameter byte here)
CARET_ANSI = rxcache.compile(r"\^\[\[(?:[0-9;?]{1,32}[A-Za-z]|[A-Za-z](?![-\]]))")


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


def clean_message(text: str) -> str:
    """A message decoded from a JSON wrapper, cleaned as ``reader.clean`` cleans a physical line.

    JSON escapes can carry what the reader removed from the raw bytes: ``\\r`` (``\\r\\n``
    becomes ``\\n``, a lone ``\\r`` a space), NUL (dropped), ANSI escape codes (removed) and lone
    surrogates (U+FFFD). Line breaks of a joined record stay; every output format escapes them.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", " ")
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if "#033[" in text:
        text = SYSLOG_ANSI.sub("", text)
    if "^[[" in text:
        text = CARET_ANSI.sub("", text)
    return safe_text(text)
