"""Terminal tables through ``rich``: wrapped at word boundaries on a terminal, coloured only there.

Piped or redirected (stdout not a TTY), a table is plain text, as wide as its content, laid out
as before rich: two spaces of indent, two between columns, no trailing blanks, so ``grep`` and
``awk`` see one row per line. On a terminal, cells wrap at word boundaries to the terminal's
width (a word longer than its column is folded, never cut off), and the cost-class column is
coloured (``NO_COLOR`` and ``TERM=dumb`` are honoured by rich).
"""
from __future__ import annotations

import io
import sys
from typing import Optional



#: cost class -> rich style, on a terminal only
STYLES = {"native": "green", "portable": "cyan", "weight_only": "yellow", "activation_upcast": "orange3",
          "dequant_at_load": "dark_orange", "emulated": "bold red", "unknown": "dim"}
_PLAIN_WIDTH = 100_000  #: piped: never wrap


def on_terminal() -> bool:
    """Whether stdout is a terminal (the only place tables wrap and colour)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def render_table(rows: list[list[str]], *, terminal: Optional[bool] = None, width: Optional[int] = None,
                 indent: int = 2) -> list[str]:
    """``rows[0]`` is the header; returns the table's lines (no newline at their end).

    ``terminal`` defaults to ``on_terminal()``; ``width`` to the terminal's columns there.
    """
    tty = on_terminal() if terminal is None else terminal
    if not tty and _plain_ascii(rows):
        return _plain(rows, indent)
    return _rich_table(rows, tty, width, indent)


def _plain_ascii(rows: list[list[str]]) -> bool:
    """Every cell is printable ASCII (no tab, no control): a width is then its length."""
    return all(c.isascii() and c.isprintable() for r in rows for c in r)


def _plain(rows: list[list[str]], indent: int) -> list[str]:
    """The piped layout without rich (its import is most of a text report's start-up), the
    same characters as rich prints it for printable ASCII cells: columns as wide as their
    widest cell, two spaces between them, no trailing blanks (``tests/test_terminal_tables.py``
    compares the two on generated tables)."""
    n = len(rows[0])
    widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(n)]
    out = []
    for r in rows:
        cells = [(r[i] if i < len(r) else "").ljust(widths[i]) for i in range(n)]
        out.append(" " * indent + "  ".join(cells).rstrip())
    return out


def _rich_table(rows: list[list[str]], tty: bool, width: Optional[int], indent: int) -> list[str]:
    """The table laid out by rich (a terminal, or cells rich must measure: wide or control characters)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if tty:
        import shutil  # with rich only (a text scan's plain tables need neither: ~1.5 ms with bz2, lzma)

        width = width or shutil.get_terminal_size((100, 24)).columns
    else:
        width = _PLAIN_WIDTH
    table = Table(box=None, show_header=True, show_edge=False, pad_edge=False, padding=(0, 2, 0, 0),
                  header_style="bold" if tty else "", expand=False)
    header = rows[0]
    cost_cols = {i for i, h in enumerate(header) if h == "COST CLASS"}
    # on a terminal, a column is kept as wide as its longest word (up to 24) so words wrap whole,
    # as long as those widths fit; past that, rich folds long words rather than crop a column
    longest = [min(24, max((len(w) for r in rows for w in r[i].split()), default=1)) for i in range(len(header))]
    fits = tty and sum(longest) + 2 * (len(header) - 1) <= width - indent
    for i, h in enumerate(header):
        table.add_column(h, overflow="fold", no_wrap=not tty, min_width=longest[i] if fits else None)
    for r in rows[1:]:
        cells = []
        for i, c in enumerate(r):
            style = STYLES.get(c, "") if tty and i in cost_cols else ""
            cells.append(Text(c, style=style))
        table.add_row(*cells)
    buf = io.StringIO()
    console = Console(file=buf, width=max(20, width - indent), force_terminal=tty, color_system="auto" if tty else None,
                      no_color=not tty, highlight=False, emoji=False, markup=False, legacy_windows=False)
    console.print(table, crop=False)  # never lose a cell: a table wider than the terminal soft-wraps
    return [" " * indent + line.rstrip() for line in buf.getvalue().rstrip("\n").split("\n")]
