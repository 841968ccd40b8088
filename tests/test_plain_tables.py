"""A piped table of printable ASCII cells is laid out without rich (start-up, issue 18): the
characters must be exactly those rich prints for it."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from logscan.formats import table

_cell = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=st.data(), ncols=st.integers(min_value=1, max_value=6), nrows=st.integers(min_value=0, max_value=6),
       indent=st.integers(min_value=0, max_value=4))
def test_the_plain_layout_is_the_rich_one(data, ncols, nrows, indent):
    rows = [data.draw(st.lists(_cell, min_size=ncols, max_size=ncols)) for _ in range(nrows + 1)]
    assert table._plain_ascii(rows)
    assert table.render_table(rows, terminal=False, indent=indent) == table._rich_table(rows, False, None, indent)


def test_cells_rich_must_measure_go_through_rich():
    rows = [["KERNEL", "COST CLASS"], ["全角カーネル", "native"]]
    assert not table._plain_ascii(rows)
    assert table.render_table(rows, terminal=False) == table._rich_table(rows, False, None, 2)
    assert not table._plain_ascii([["a\tb"]])
