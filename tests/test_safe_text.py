"""The safe-text boundary and the per-format escaping rules, case by case (the fuzz suite covers the rest)."""
from __future__ import annotations

import pytest

from logscan.formats.escape import markdown_text, text_line
from logscan.formats.markdown import cell
from logscan.sources.safe import bounded_int, safe_text
from logscan.sources.unwrap import Unwrapper


@pytest.mark.parametrize("text,want", [("8", 8), (" 12 ", 12), ("-3", -3), ("²", None), ("٣", None), ("", None),
                                       ("9" * 18, int("9" * 18)), ("9" * 19, None), ("9" * 5000, None), ("1e3", None),
                                       (None, None), (7, 7), (10 ** 30, None), (True, None)])
def test_bounded_int(text, want):
    assert bounded_int(text) == want


def test_safe_text_replaces_only_surrogates_and_keeps_clean_text_as_is():
    clean = "héllo ✓ 🎉"
    assert safe_text(clean) is clean
    assert safe_text("a\ud800b\udfffc") == "a\ufffdb\ufffdc"


def test_docker_and_json_formatter_messages_leave_the_unwrapper_encodable():
    u = Unwrapper()
    for line in ('{"log": "Using MARLIN \\ud800\\n", "stream": "stdout"}',
                 '{"message": "x \\udc00", "levelname": "INFO", "processName": "\\ud800", "process": 1}'):
        [(_, text, _)] = u.feed(1, line)
        text.encode("utf-8")
        assert "\ufffd" in text


def test_a_json_line_nested_too_deep_is_kept_as_plain_text():
    line = '{"log": ' + "[" * 100_000 + "]" * 100_000 + "}"
    [(_, text, _)] = Unwrapper().feed(1, line)
    assert text == line


@pytest.mark.parametrize("raw,want", [
    ("evidence: x\n::error::INJ", "evidence: x\\n::error::INJ"),
    ("  ::set-output name=a::1", "  \\::set-output name=a::1"),
    ("x ##[add-mask]y", "x ##\\[add-mask]y"),
    ("bell\x07 esc\x1b[31m del\x7f nel\x85", "bell\\x07 esc\\x1b[31m del\\x7f nel\\x85"),
    ("bidi \u202e ls \u2028", "bidi \\u202e ls \\u2028"),
    ("a::b is fine mid-line", "a::b is fine mid-line"),
])
def test_text_line(raw, want):
    assert text_line(raw) == want


def test_markdown_escapes_links_images_and_autolinks():
    s = markdown_text("![x](https://a.example/p.png) [Fix](http://b) www.c.example (ok)")
    assert s == ("!\\[x\\](https\u200b://a.example/p.png) \\[Fix\\](http\u200b://b) www\u200b.c.example (ok)")
    # the control character shows as \x1b (its backslash escaped for Markdown, so it renders as typed)
    assert cell("a|b <i> `c` [d](e)\x1b") == "a\\|b &lt;i&gt; &#96;c&#96; \\[d\\](e)\\\\x1b"


def test_json_wrapped_messages_are_cleaned_as_raw_lines_are():
    """README: ANSI codes and \\r are removed, NUL dropped; a JSON escape must not bring them back."""
    [(_, text, _)] = Unwrapper().feed(1, '{"log": "a\\r\\nb\\rc\\u0000d\\u001b[31me\\n", "stream": "stdout"}')
    assert text == "a\nb cde"
