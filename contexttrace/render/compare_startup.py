"""Start-up by source in `context compare`'s output: the table of each condition's first call split into
`context sources`' rows, its legend, the reading that names what the `first` difference is made of, and the
same rows for the report page.

The figures are `reports.compare_sources`'; this module formats them (`render.compare.fmt_figure`: whole
tokens, ``≈`` before every estimated figure but 0) and never computes one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from contexttrace.render.text import ESTIMATE_MARK, TABLE_FORMAT, fmt_figure
from contexttrace.reports.compare_sources import FIRST, PREFIX

#: The table's title (a markdown heading with `--format markdown`).
TITLE = "Start-up by source (the first call split as context sources splits it; medians over the runs)"

LEGEND = (
    "first: exact, the median first prompt. ≈ rows: text the trace records (memory files, skills, custom agents, "
    "deferred tools, MCP instructions, the first prompt, harness lines) at each run's own chars/token; system "
    "prompt + tools, not itemised: the median first less those rows, so it holds the system prompt, the tool "
    "schemas and whatever the trace does not record (a stream-json run's CLAUDE.md and -p prompt). A "
    "condition's Δ rows sum to its Δ first. docs/compare.md says how to read them."
)


def figure_cell(value: float | None, estimated: bool, signed: bool = False) -> str:
    """A start-up figure: whole tokens (`fmt_figure`), ``≈`` before an estimated one that is not 0; ``–`` for
    None.

    >>> figure_cell(4086, True), figure_cell(2375.5, True, signed=True), figure_cell(0, True), figure_cell(None, True)
    ('≈4,086', '≈+2,376', '0', '–')
    """
    text = fmt_figure(value, "tokens", signed)
    return (ESTIMATE_MARK + text) if estimated and value else text


def startup_cells(rows: Sequence[dict[str, Any]], baseline: str) -> tuple[list[str], list[list[str]]]:
    """The start-up table's headers and cells: a row per source; a column per condition (the baseline
    first), then a ``Δ NAME`` column per other condition.

    Parameters
    ----------
    rows
        `compare_sources.startup_rows` (source by source, the baseline's row first).
    baseline
        The baseline condition's name.

    Returns
    -------
    tuple of (list of str, list of list of str)
        The headers (``source``, the conditions, ``Δ NAME`` per other condition) and one row of cells per
        source: its label, its tokens per condition, its differences (`figure_cell`: ≈ on every estimated
        figure but 0, ``–`` where a condition has no run).
    """
    names = list(dict.fromkeys(r["condition"] for r in rows))
    others = [n for n in names if n != baseline]
    by_source: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_source.setdefault(r["source"], {})[r["condition"]] = r
    shown = _printed_sums(by_source)
    cells = []
    for source, per in by_source.items():
        any_row = next(iter(per.values()))
        line = [any_row["label"]]
        line += [figure_cell(shown.get((source, n, "tokens"), per[n]["tokens"]), per[n]["estimated"]) for n in names]
        line += [
            figure_cell(shown.get((source, n, "delta"), per[n]["delta"]), per[n]["estimated"], signed=True)
            for n in others
        ]
        cells.append(line)
    return ["source", *names, *(f"Δ {n}" for n in others)], cells


def _whole(value: float) -> int:
    """`value` rounded as `fmt_figure` rounds tokens (half away from 0)."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value)) if value else 0


def _printed_sums(by_source: dict[str, dict[str, dict[str, Any]]]) -> dict[tuple[str, str, str], int]:
    """The prefix row's figures as printed: per condition, its `first` (and Δ first) as printed less the
    other rows as printed, so that the printed rows add up to the printed `first` as the exact rows do
    (each row rounded on its own could leave them a token off). Keyed (source, condition, "tokens" or
    "delta"); a figure that is None stays as the row has it."""
    first, prefix = by_source.get(FIRST, {}), by_source.get(PREFIX, {})
    out: dict[tuple[str, str, str], int] = {}
    for name, row in prefix.items():
        for key in ("tokens", "delta"):
            total = first.get(name, {}).get(key)
            parts = [
                per[name][key] for source, per in by_source.items() if source not in (FIRST, PREFIX) and name in per
            ]
            if total is None or row[key] is None or any(p is None for p in parts):
                continue
            out[(PREFIX, name, key)] = _whole(total) - sum(map(_whole, parts))
    return out


def startup_table(rows: Sequence[dict[str, Any]], baseline: str, markdown: bool = False) -> str | None:
    """The start-up block under the readings: the title, the pipe table, the legend; None without rows."""
    if not rows:
        return None
    from tabulate import tabulate  # as in `render.compare`: start-up of the other commands

    headers, cells = startup_cells(rows, baseline)
    table = tabulate(
        cells,
        headers=headers,
        tablefmt=TABLE_FORMAT,
        disable_numparse=True,
        colalign=["left"] + ["right"] * (len(headers) - 1),
    )
    title = f"#### {TITLE}" if markdown else f"{TITLE}:"
    legend = f"_{LEGEND}_" if markdown else LEGEND
    return "\n".join([title, table, legend])


def startup_sentence(r: dict[str, Any]) -> str:
    """A ``startup_sources`` reading (`compare_sources.startup_reading`) as its sentence.

    >>> text = startup_sentence({"condition": "loaded", "baseline": "free", "first": 3000, "itemised": 2400,
    ...     "not_itemised": 600, "parts": [{"label": "memory files", "delta": 2400}]})
    >>> text.split(" = ")[1]
    'memory files ≈+2,400 (itemised in the trace: ≈+2,400, 80%) + system prompt + tools, not itemised ≈+600'
    >>> startup_sentence({"condition": "loaded", "baseline": "free", "first": 3000, "itemised": 0,
    ...     "not_itemised": 3000, "parts": []})[:95]
    'loaded − free, start-up by source: first +3,000, none of it in a row the trace itemises: all in'
    """
    head = f"{r['condition']} − {r['baseline']}, start-up by source: first {fmt_figure(r['first'], 'tokens', True)}"
    # as printed, the parts, the itemised sum and the rest add up to the printed first (`_printed_sums`)
    itemised_shown = sum(_whole(p["delta"]) for p in r["parts"])
    rest = figure_cell(_whole(r["first"]) - itemised_shown if r["parts"] else r["not_itemised"], True, signed=True)
    if not r["parts"]:
        if not r["first"]:
            return head + " and no row differs"
        return head + (
            ", none of it in a row the trace itemises: all in the system prompt + tools, not itemised "
            f"({rest}), where what the trace does not record lands (a stream-json run's CLAUDE.md)"
        )
    parts = ", ".join(f"{p['label']} {figure_cell(p['delta'], True, signed=True)}" for p in r["parts"])
    itemised = figure_cell(itemised_shown, True, signed=True)
    share = ""
    if r["first"] and r["itemised"] * r["first"] > 0:
        share = f", {round(100 * r['itemised'] / r['first'])}%"
    return f"{head} = {parts} (itemised in the trace: {itemised}{share}) + system prompt + tools, not itemised {rest}"


def startup_view(rows: Sequence[dict[str, Any]], baseline: str) -> dict[str, Any] | None:
    """The report page's start-up table (`compare_view`): `headers` and `rows` (cells as the text table
    prints them, the source's label first), `legend`; None without rows."""
    if not rows:
        return None
    headers, cells = startup_cells(rows, baseline)
    return {"title": TITLE, "headers": headers, "rows": cells, "legend": LEGEND}
