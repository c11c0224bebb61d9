"""Tables for a colour terminal: Rich tables with numbers right-aligned, headers that wrap, health grades and
weather levels coloured.

`context trace` and `context usage` print these when standard output is a colour terminal and no
`--format` was asked for (`cli.output.show_view`); a pipe, a file, ``--format table``, ``NO_COLOR`` or
``--no-color`` get the plain pipe table (`text.pipe_table`), whose bytes scripts may read. Each function
returns text (with ANSI codes), never prints.
"""

from __future__ import annotations

from typing import Any

from contexttrace.render.text import GRADE_COLORS

#: The colour of each weather level (spec 002's order, calm to severe), as the grades run A to F.
WEATHER_COLORS = {
    "sunny": GRADE_COLORS["A"],
    "fair": GRADE_COLORS["B"],
    "cloudy": GRADE_COLORS["C"],
    "rainy": GRADE_COLORS["D"],
    "stormy": GRADE_COLORS["F"],
}
#: Columns whose cells are coloured: the health grade (``C 63``) and the weather (``🌤️ fair``).
GRADE_COLUMN = "health"
WEATHER_COLUMN = "weather"


def cell_style(header: str, cell: str) -> str | None:
    """The Rich style of one cell: a grade's or a weather level's colour, else None.

    >>> cell_style("health", "C 63"), cell_style("weather", "🌤️ fair"), cell_style("peak", "1,000")
    ('#f9e2af', '#94e2d5', None)
    """
    if header == GRADE_COLUMN and cell[:1] in GRADE_COLORS:
        return GRADE_COLORS[cell[:1]]
    if header == WEATHER_COLUMN:
        return WEATHER_COLORS.get(cell.rsplit(" ", 1)[-1])
    return None


def _table(headers: list[str], rows: list[list[str]], left: int, total: bool) -> Any:
    """The Rich table: text columns left, numbers right and never wrapped; a header wraps between words."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for i, header in enumerate(headers):
        widest = max([len(row[i]) for row in rows] + [len(word) for word in header.split()])
        if i < left:  # a label, a project, a start: never wrapped, the narrow-terminal rule drops columns instead
            table.add_column(header, justify="left", no_wrap=True, min_width=widest)
        else:
            table.add_column(header, justify="right", min_width=widest, overflow="fold")
    for n, row in enumerate(rows):
        last = total and n == len(rows) - 1
        cells = [Text(c, style=cell_style(h, c) or "") for h, c in zip(headers, row, strict=True)]
        table.add_row(*cells, style="bold" if last else None, end_section=n == len(rows) - 2 and total)
    return table


def _console(width: int, color: bool) -> Any:
    import io

    from rich.console import Console

    return Console(file=io.StringIO(), width=width, force_terminal=color, no_color=not color,
                   color_system="truecolor" if color else None, legacy_windows=False, highlight=False,
                   emoji=False, markup=False)  # fmt: skip


def rich_table_width(headers: list[str], rows: list[list[str]], left: int = 1) -> int:
    """The fewest columns `rich_table` needs: every header wrapped to its longest word, no cell wrapped."""
    table = _table(headers, rows, left, total=False)
    console = _console(10_000, color=False)
    return int(console.measure(table).minimum)


def rich_table(
    headers: list[str], rows: list[list[str]], left: int = 1, total: bool = False, width: int = 80, color: bool = True
) -> str:
    """Render a table for a terminal `width` columns wide.

    Parameters
    ----------
    headers, rows
        As `text.pipe_table` takes them: the cells already formatted (`render.text`).
    left
        How many leading columns are text (left-aligned); the others are numbers (right-aligned).
    total
        The last row is a totals row: set apart by a rule, in bold.
    width
        The terminal's columns: headers wrap to fit, numbers never do.
    color
        ANSI colour: grades and weather levels (`cell_style`), bold headers.

    Returns
    -------
    str
        The table's lines, no trailing newline or spaces.

    Examples
    --------
    >>> print(rich_table(["trace", "calls", "health"], [["a", "12", "A 90"]], color=False))
    trace   calls   health
    ──────────────────────
    a          12     A 90
    """
    console = _console(width, color)
    console.print(_table(headers, rows, left, total), crop=False)
    return "\n".join(line.rstrip() for line in console.file.getvalue().rstrip("\n").split("\n"))
