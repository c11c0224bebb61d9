"""A `select.views.View` in its `--format`: the table (with a totals row), GitHub markdown, CSV or JSON, and
the notes about it.

`context trace` and `context usage` print through here when they select, sort, group or total their traces
(`views.make_view`); a narrow terminal drops the least important columns first (`columns_to_drop`).
Renderers return `str` (or lines); they never print. Every number is formatted by `render.text`.
"""

from __future__ import annotations

from typing import Any

from contexttrace.render.checks import render_check_markdown
from contexttrace.render.explain import render_explain
from contexttrace.render.terminal import rich_table, rich_table_width
from contexttrace.render.text import fmt_int, fmt_usd, json_bytes, pipe_table, safe_text
from contexttrace.render.trace import (
    COLUMNS,
    EXTRA_COLUMNS,
    SERIES_INDENT,
    UNRECORDED,
    failed_cell,
    largest_results_line,
    prompt_series,
    unrecorded_line,
)
from contexttrace.render.usage import USAGE_HEADERS, render_usage_notes, side_rows, usage_breakdown, usage_cells
from contexttrace.reports.results import RunResult
from contexttrace.select.filters import in_zone

#: Columns a narrow terminal leaves out first, least important first; the others always stay.
TRACE_DROP_ORDER = ("result chars", "window", "growth", "first", "project", "repeated calls", "start", "failed",
                    "tools", "compact", "weather", "cost USD")  # fmt: skip
USAGE_DROP_ORDER = ("cache write", "fresh input", "turns", "project", "start", "hit", "cache read", "output")
#: The label of the totals row (bold in markdown).
TOTAL_LABEL = "total"
#: The start cell of a trace that records no moment (a stream-json run, standard input): unknown.
NO_START = "–"

#: `context trace` columns that add up → their totals cell (`filters.trace_totals`); others stay empty.
_TRACE_TOTAL_CELLS: dict[str, Any] = {
    "calls": lambda t: fmt_int(t["calls"]),
    "compact": lambda t: fmt_int(t["compact"]),
    "tools": lambda t: fmt_int(t["tools"]),
    "failed": lambda t: failed_cell(t["failed"], t["denied"]),
    "repeated calls": lambda t: fmt_int(t["repeat"]),
    "result chars": lambda t: fmt_int(t["result_chars"]),
    "cost USD": lambda t: fmt_usd(t.get("cost_usd"), bool(t.get("cost_is_lower_bound"))),
}


def fmt_start(record: dict[str, Any], tz: Any = None) -> str:
    """A record's `start` as local ``YYYY-MM-DD HH:MM`` in `tz` (None: the local zone); `NO_START` when the
    trace records none (never its file's modification time).

    >>> from zoneinfo import ZoneInfo
    >>> fmt_start({"start": "2026-02-12T16:02:25.284Z", "start_source": "timestamp"}, ZoneInfo("Europe/Paris"))
    '2026-02-12 17:02'
    """
    from datetime import UTC, datetime

    if not record.get("start"):
        return NO_START
    moment, zone = datetime.fromisoformat(record["start"]), ""
    try:
        moment = in_zone(moment, tz)
    except OverflowError:  # a start `tz` cannot show (year 9999 read east of UTC): shown in UTC, so marked
        moment, zone = moment.astimezone(UTC), " UTC"
    return moment.strftime("%Y-%m-%d %H:%M") + zone


def _grid(view: Any) -> tuple[list[str], list[list[str]], int]:
    """Headers, rows (the totals row last, if any) and how many leading columns are text (left-aligned)."""
    if view.kind == "trace":
        return _trace_grid(view)
    if view.kind == "usage":
        return _usage_grid(view)
    return _group_grid(view)


def _fact_cells(view: Any, record: dict[str, Any]) -> list[str]:
    if not view.options.scan:
        return []
    return [record.get("project") or "-", fmt_start(record, view.options.tz)]


def _fact_headers(view: Any) -> list[str]:
    return ["project", "start"] if view.options.scan else []


def _trace_grid(view: Any) -> tuple[list[str], list[list[str]], int]:
    columns = COLUMNS[1:]
    with_cost = any("cost_usd" in r for r in view.records)
    cost = [("cost USD", lambda r: fmt_usd(r.extra.get("cost_usd"), bool(r.extra.get("cost_is_lower_bound"))))]
    columns += (cost if with_cost else []) + EXTRA_COLUMNS
    headers = ["trace", *_fact_headers(view), *(h for h, _ in columns)]
    rows = [
        [label, *_fact_cells(view, rec), *(cell(r) for _, cell in columns)]
        for label, rec, r in zip(view.labels, view.records, view.reports, strict=True)
    ]
    if view.totals is not None:
        fill = [""] * len(_fact_headers(view))
        rows.append([TOTAL_LABEL, *fill, *(_TRACE_TOTAL_CELLS.get(h, lambda t: "")(view.totals) for h, _ in columns)])
    return headers, rows, 1 + len(_fact_headers(view))


def _usage_grid(view: Any) -> tuple[list[str], list[list[str]], int]:
    facts = _fact_headers(view)
    headers = [USAGE_HEADERS[0], *facts, *USAGE_HEADERS[1:]]
    rows = []
    for label, rec, r in zip(view.labels, view.records, view.reports, strict=True):
        first, *rest = usage_cells(label, r.total, r.turn_figures["turns"])
        if "tokens" in r.unrecorded:  # no token count at all: every figure but the turns is unknown
            rest = [cell if i == 1 else UNRECORDED for i, cell in enumerate(rest)]
        rows.append([first, *_fact_cells(view, rec), *rest])
        for side, part in side_rows(r):
            first, *rest = usage_cells(side, part, None)
            rows.append([first, *[""] * len(facts), *rest])
    if view.totals is not None:
        first, *rest = usage_cells(TOTAL_LABEL, view.totals["total"], view.totals["turns"])
        rows.append([first, *[""] * len(facts), *rest])
    return headers, rows, 1 + len(facts)


def _group_grid(view: Any) -> tuple[list[str], list[list[str]], int]:
    by = view.options.group_by
    headers = [by, "traces", *USAGE_HEADERS[1:]]
    rows = [
        [label, fmt_int(rec["traces"]), *usage_cells("", rec["total"], rec["turns"])[1:]]
        for label, rec in zip(view.labels, view.records, strict=True)
    ]
    if view.totals is not None:
        t = view.totals
        rows.append([TOTAL_LABEL, fmt_int(t["traces"]), *usage_cells("", t["total"], t["turns"])[1:]])
    return headers, rows, 1


def _without(headers: list[str], rows: list[list[str]], drop: Any) -> tuple[list[str], list[list[str]]]:
    keep = [i for i, h in enumerate(headers) if h not in drop]
    return [headers[i] for i in keep], [[row[i] for i in keep] for row in rows]


def table_width(text: str) -> int:
    """Columns the widest line of `text` takes, as tabulate measured them when it padded the cells: with
    `wcwidth` when it is installed (tabulate's optional wide-character support: an emoji counts two), else
    one per code point."""
    try:
        from wcwidth import wcswidth
    except ImportError:  # tabulate pads by len() then, and so does this
        return max((len(line) for line in text.splitlines()), default=0)
    return max((max(wcswidth(line), len(line)) for line in text.splitlines()), default=0)


def columns_to_drop(view: Any, width: int | None, styled: bool = False) -> list[str]:
    """The columns a terminal `width` columns wide cannot show, least important first (`TRACE_DROP_ORDER`,
    `USAGE_DROP_ORDER`): dropped one by one until the table fits or none is left to drop. A `styled` table
    (`terminal.rich_table`) fits when its headers wrapped to their longest word fit.

    Returns
    -------
    list of str
        Headers to leave out (empty when the table fits, `width` is None, or the view is not a table).
    """
    if width is None or not view.records or view.options.fmt != "table" or view.kind == "usage-group":
        return []
    headers, rows, left = _grid(view)
    order = TRACE_DROP_ORDER if view.kind == "trace" else USAGE_DROP_ORDER
    dropped: list[str] = []
    for header in [None, *(h for h in order if h in headers)]:
        if header is not None:
            dropped.append(header)
        kept_headers, kept_rows = _without(headers, rows, dropped)
        text_left = left - sum(h in dropped for h in headers[:left])
        if styled and rich_table_width(kept_headers, kept_rows, text_left) <= width:
            return dropped
        if not styled and table_width(pipe_table(kept_rows, kept_headers, left=text_left)) <= width:
            return dropped
    return dropped


def _escape_markdown(cell: str) -> str:
    """A cell safe inside a GitHub table: `|` escaped, no line break."""
    return cell.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: list[str], rows: list[list[str]], left: int, total: bool) -> str:
    """A GitHub-flavoured markdown table: cells escaped (`|`, backslashes, line breaks), the first `left`
    columns left-aligned and the rest right-aligned, the last row's label bold when it is a `total` row."""
    from tabulate import tabulate

    body = [[_escape_markdown(c) for c in row] for row in rows]
    if total and body:
        body[-1][0] = f"**{body[-1][0]}**"
    align = ["left"] * left + ["right"] * (len(headers) - left)
    return tabulate(body, headers=[_escape_markdown(h) for h in headers], tablefmt="pipe", disable_numparse=True,
                    colalign=align)  # fmt: skip


def render_view_json(view: Any, newline: bool = False) -> bytes:
    """`render_view` of a view in the ``json`` format, as UTF-8 bytes: the records as a list, keys sorted
    (`json_bytes`); ``[]`` when there is none. `newline`: a line end after it, written by orjson (joined
    after, it copied the 8 MB of a large run's JSON once more: 4 ms)."""
    return json_bytes(view.records, newline=newline)


def render_view(
    view: Any,
    with_calls: bool = False,
    breakdown: bool = False,
    explain: bool = False,
    drop: Any = (),
    styled: int | None = None,
) -> str:
    """Render a `views.View` in its `--format`.

    Parameters
    ----------
    view
        From `views.make_view`.
    with_calls
        Table and markdown: each trace's prompt series under the table (markdown: a fenced code block).
    breakdown
        `context usage --breakdown`'s tables under the table.
    explain
        Markdown only: `--explain` in a fenced code block (the table format prints it apart, in colour).
    drop
        Headers to leave out (`columns_to_drop`).
    styled
        The table format only: a terminal's width in columns, to print the table for it in colour
        (`terminal.rich_table`); None: the plain pipe table.

    Returns
    -------
    str
        ``table``: the pipe table (`TABLE_FORMAT`; the totals row last), the series, the breakdown.
        ``markdown``: a GitHub-flavoured table with aligned columns and cells escaped, then after a blank
        line the notes as a list (`render_view_notes`) and the thresholds (`render_check_markdown`), then
        fenced blocks; nothing a markdown renderer could take for a table row. ``csv``: a header and one
        row per record, raw numbers (`render_csv`). ``json``: the records as a list (keys sorted).
        Empty when there is nothing to show (JSON: ``[]``).
    """
    fmt = view.options.fmt
    if fmt == "json":
        return render_view_json(view).decode()
    if fmt == "csv":
        return render_csv(view)
    if not view.records:
        return ""
    headers, rows, left = _grid(view)
    headers, rows = _without(headers, rows, drop)
    left -= sum(1 for h in drop if h in ("project", "start"))
    series = []
    if with_calls and view.kind == "trace":
        pairs = zip(view.labels, view.reports, strict=True)
        series = [f"{label}: prompt tokens per call: {prompt_series(r)}" for label, r in pairs]
    if fmt == "table":
        if styled is not None:
            lines = [rich_table(headers, rows, left=left, total=view.totals is not None, width=styled)]
        else:
            lines = [pipe_table(rows, headers, left=left)]
        if with_calls and view.kind == "trace":
            lines += ["", *(SERIES_INDENT + s for s in series)]
        if breakdown and view.kind == "usage":
            for r in view.reports:
                lines.extend(usage_breakdown(r))
        return safe_text("\n".join(lines))
    return safe_text("\n".join(_markdown_view(view, headers, rows, left, series, breakdown, explain)))


def _markdown_view(
    view: Any, headers: list[str], rows: list[list[str]], left: int, series: list[str], breakdown: bool, explain: bool
) -> list[str]:
    """The markdown output's lines: the table, the notes and thresholds as a list, then fenced blocks."""
    lines = [markdown_table(headers, rows, left, view.totals is not None)]
    items = [*render_view_notes(view, markdown=True), *render_check_markdown(view.check, view.options.thresholds)]
    if items:
        lines += ["", *(f"- {_escape_list_item(i)}" for i in items)]
    if series:
        lines += ["", "```text", *series, "```"]
    if breakdown and view.kind == "usage":
        blocks = [line for r in view.reports for line in usage_breakdown(r)]
        lines += ["", "```text", *blocks[1:], "```"]
    if explain and view.kind == "trace":
        lines += ["", "```text", render_explain(_run_of(view), color=False), "```"]
    return lines


def _escape_list_item(text: str) -> str:
    """A note safe as a markdown list item: `<` outside code spans written `&lt;` (it could open raw HTML);
    code spans (between backticks) kept as they are, since markdown shows their text literally.

    >>> _escape_list_item("health C < B (`health<B`)")
    'health C &lt; B (`health<B`)'
    """
    # Notes are our own text, so that is all: intraword `_`, as in `result_chars`, is not emphasis in GitHub's
    # markdown.
    parts = text.split("`")
    return "`".join(p if i % 2 else p.replace("<", "&lt;") for i, p in enumerate(parts))


def _run_of(view: Any) -> RunResult:
    return RunResult(reports=list(view.reports))


#: CSV columns per record kind: a JSON key, or (header, getter) for a nested figure.
CSV_COLUMNS: dict[str, list[Any]] = {
    "trace": ["trace", "label", "project", "start", "start_source", "path", "format", "session_id", "calls", "first",
              "peak", "fill", "window", "growth", "compact", "tools", "failed", "denied", "repeat", "result_chars",
              ("health", lambda r: (r.get("health") or {}).get("grade")),
              ("health_score", lambda r: (r.get("health") or {}).get("score")),
              ("weather", lambda r: (r.get("weather") or {}).get("level")),
              ("weather_score", lambda r: (r.get("weather") or {}).get("score"))],
    "usage": ["trace", "label", "project", "start", "start_source", "path", "format", "session_id",
              *(("" if k == "turns" else "total.") + k for k in (
                  "calls", "turns", "input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens",
                  "output_is_lower_bound", "cache_hit_ratio", "cost_usd", "cost_is_lower_bound"))],
    "usage-group": ["group_by", "group", "traces", "turns",
                    *("total." + k for k in ("calls", "input_tokens", "cache_write_tokens", "cache_read_tokens",
                                              "output_tokens", "output_is_lower_bound", "cache_hit_ratio", "cost_usd",
                                              "cost_is_lower_bound"))],
}  # fmt: skip


def csv_value(value: Any) -> Any:
    """A value as a CSV cell writes it: None empty, booleans ``true``/``false``, the rest as it is."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def render_csv(view: Any) -> str:
    """Render a view as CSV: a header row, then one row per record (no totals row), raw numbers.

    Headers are JSON keys (``total.cost_usd`` for a nested one; ``health``, ``weather`` the grade and
    level). Empty cells are nulls; booleans ``true``/``false``; fractions as fractions (``fill`` 0.82).
    `context trace` adds ``cost_usd`` and ``cost_is_lower_bound`` when it priced its traces.
    """
    import csv
    import io

    columns = list(CSV_COLUMNS[view.kind])
    if view.kind == "trace" and any("cost_usd" in r for r in view.records):
        columns += ["cost_usd", "cost_is_lower_bound"]
    getters = []
    for col in columns:
        if isinstance(col, tuple):
            getters.append(col)
        elif "." in col:
            outer, inner = col.split(".", 1)
            getters.append((col, lambda r, o=outer, i=inner: (r.get(o) or {}).get(i)))
        else:
            getters.append((col, lambda r, k=col: r.get(k)))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([name for name, _ in getters])
    for rec in view.records:
        writer.writerow([csv_value(get(rec)) for _, get in getters])
    return safe_text(out.getvalue().rstrip("\n"))


def render_view_notes(view: Any, markdown: bool = False, by_label: bool = False) -> list[str]:
    """Notes about a view, for stderr (or, with `markdown`, the list under the table).

    Returns
    -------
    list of str
        How many traces the selection kept; how many `--since`/`--until` could not place (no start
        recorded: left out); then, under a table only (JSON and
        CSV hold these figures), per trace the largest tool results (`context trace`; named as the
        diagnostics name it on stderr, by the table's label in markdown or with `by_label`) or the cost notes (`context
        usage`, `render_usage_notes`).
    """
    out = []
    sel = view.options.selection
    if not sel.empty:
        out.append(f"{fmt_int(len(view.selected.kept))} of {fmt_int(view.total_records)} traces selected "
                   f"({_selection_text(sel, view.options.tz)})")  # fmt: skip
    if view.selected.undated:
        out.append(f"--since/--until could not place {fmt_int(view.selected.undated)} trace(s): no start "
                   "recorded (stream-json runs without timestamps, standard input); left out")  # fmt: skip
    if view.options.fmt not in ("table", "markdown"):
        return [safe_text(x) for x in out]
    if view.kind == "trace":
        for label, r in zip(view.labels, view.reports, strict=True):
            line = largest_results_line(label if markdown or by_label else r.trace, r)
            out.extend([line] if line is not None else [])
    elif view.kind == "usage":
        out.extend(render_usage_notes(_run_of(view)))
    if view.kind in ("trace", "usage"):
        for label, r in zip(view.labels, view.reports, strict=True):
            line = unrecorded_line(label if markdown else r.trace, r)
            out.extend([line] if line is not None else [])
    return [safe_text(x) for x in out]


def _selection_text(sel: Any, tz: Any) -> str:
    from datetime import datetime

    def when(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, tz).strftime("%Y-%m-%d %H:%M")

    parts = []
    if sel.since_ms is not None:
        parts.append(f"since {when(sel.since_ms)}")
    if sel.until_ms is not None:
        parts.append(f"before {when(sel.until_ms)}")
    if sel.projects:
        parts.append("project " + ", ".join(sel.projects))
    if sel.sessions:
        parts.append("session " + ", ".join(sel.sessions))
    return "; ".join(parts)
