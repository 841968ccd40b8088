"""The prefilter writes each literal as ``\\xNN`` escapes for Hyperscan (the same bytes as the
per-byte formatting it replaced, which cost ~30 ms of every start-up)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from logscan.sources.prefilter import _hex


@settings(max_examples=200, deadline=None, derandomize=True)
@given(lit=st.binary(max_size=64))
def test_hex_escapes_every_byte(lit):
    assert _hex(lit) == b"".join(b"\\x%02x" % c for c in lit)


def test_hex_of_a_keyword():
    assert _hex(b"Ab") == b"\\x41\\x62" and _hex(b"") == b""


def test_a_case_sensitive_keyword_holding_a_caseless_one_is_left_to_it():
    from logscan.sources.prefilter import Prefilter

    pf = Prefilter(["abc", "Kern"], "python", [], ["XabcY", "KERNEL", "Other", "abc", "zz", "ABC"])
    assert pf.sensitive == [b"Other", b"zz"]  # the rest hold (or are) a caseless literal
