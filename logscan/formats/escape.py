"""One escaping rule per output format for text that came from a log (untrusted).

A log line can hold anything: line breaks kept by a Docker or JSON wrapper, terminal control
codes, a GitHub workflow command (``::set-output``, ``::add-mask::``, the older ``##[cmd]``
form that the runner finds anywhere in a line), Markdown that renders as a link or an image.

- text (``text_line``): applied to every line of the text report. Control characters (C0,
  DEL, C1), line and paragraph separators and bidirectional overrides are shown as visible
  escapes (``\\n``, ``\\r``, ``\\x1b``, ``\\u202e``); ``##[`` becomes ``##\\[``; a line whose
  first non-blank characters are ``::`` gets a ``\\`` before them. The runner trims a line
  before looking for ``::`` (actions/runner ``ActionCommandManager``), so indentation alone
  would not protect it.
- Markdown (``markdown_text``): ``formats.markdown.cell`` adds it to its HTML, ``|`` and
  backtick escapes: ``[``, ``]`` and ``\\`` are backslash-escaped (CommonMark: any ASCII
  punctuation may be). Links, images and reference links all need brackets, so none survives;
  ``( ) !`` stay as they are (harmless without brackets). A zero-width space is put in
  ``://`` and ``www.`` so GitHub's autolinker makes no live link from log text.
- github, JSON, JUnit, SARIF: their own encoders (``formats.github.escape_data``, ``json``,
  ElementTree plus ``_ci.xml_safe``).
"""
from __future__ import annotations

import regex

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)

#: C0 controls (tab too), DEL, C1 controls, U+2028/2029 and the bidi embedding/override/isolate marks.
_CONTROL = rxcache.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_COMMAND_START = lazyre.compile(r"^(\s*)::")
_MD_PUNCT = lazyre.compile(r"([\\\[\]])")
_AUTOLINK = lazyre.compile(r"(?i)(?<=[a-z])(?=://)|(?<=\bwww)(?=\.)")


def _visible(m: regex.Match) -> str:
    c = m.group(0)
    named = _NAMED.get(c)
    if named:
        return named
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def visible_controls(text: str) -> str:
    """``text`` with every control character, line separator and bidi override shown as an escape."""
    return _CONTROL.sub(_visible, text)


def text_line(line: str) -> str:
    """One line of the text report, safe to print to a terminal or a CI log (see the module doc)."""
    return command_safe(visible_controls(line))


class TableLine(str):
    """A line a table renderer made from cells already passed through ``visible_controls``: it may
    hold the renderer's own colour codes (on a terminal), so ``text_line`` keeps them and applies
    only ``command_safe`` (a wrapped cell could still start a line with ``::``)."""


def report_line(line: str) -> str:
    """``text_line`` for log-derived lines; ``command_safe`` alone for a ``TableLine``."""
    return command_safe(line) if isinstance(line, TableLine) else text_line(line)


def command_safe(s: str) -> str:
    """``s`` with ``##[`` neutralised and a leading ``::`` escaped (no CI workflow command)."""
    if "##[" in s:
        s = s.replace("##[", "##\\[")
    if "::" in s:
        s = _COMMAND_START.sub(r"\1\\::", s, count=1)
    return s


def markdown_text(text: str) -> str:
    """Log text made inert for Markdown inline content: no link, image or autolink can form.

    Apply before HTML escaping (``&`` entities must not get a backslash).
    """
    s = _MD_PUNCT.sub(r"\\\1", text)
    return _AUTOLINK.sub("\u200b", s)
