"""`context history`: the recorded runs of a label, each metric with its change from the run before.

Returns `str`, never prints. Values are written as `text.fmt_metric` writes them, changes as
`text.fmt_change` (and the change in percent, one decimal).
"""

from __future__ import annotations

from typing import Any

from contexttrace.render.text import (
    fmt_change,
    fmt_int,
    fmt_metric,
    fmt_percent_change,
    json_text,
    pipe_table,
    safe_text,
)
from contexttrace.render.views import csv_value, markdown_table


def _history_cell(kind: str, m: dict[str, Any]) -> str:
    """A metric's cell: its value, then its change (``164,831 (+2,000, +1.2%)``; a grade ``C (was B)``)."""
    value, prior, change = m["value"], m["previous"], m["change"]
    text = fmt_metric(kind, value)
    if kind in ("grade", "level"):
        return text if prior is None or prior == value else f"{text} (was {prior})"
    if change is None:
        return text
    pct = f", {fmt_percent_change(m['change_frac'] * 100)}" if m["change_frac"] is not None and change else ""
    return f"{text} ({fmt_change(kind, change)}{pct})"


def render_history(rows: list[dict[str, Any]], names: list[str], fmt: str, tz: Any = None) -> str:
    """Render `history.history_rows`: one row per recorded run, each metric with its change.

    Parameters
    ----------
    rows, names
        From `history.history_rows`.
    fmt
        ``table``, ``markdown``, ``csv`` or ``json`` (`views.Format`).
    tz
        The zone `recorded` is shown in (None: local).

    Returns
    -------
    str
        Table and markdown: `label`, `run`, `recorded` (local ``YYYY-MM-DD HH:MM``), `commit` (12
        characters), `traces`, then per metric its value and, after the label's first run, the change
        (``164,831 (+2,000, +1.2%)``; a grade or level ``C (was B)``). CSV: the same with raw values,
        ``<metric>`` and ``<metric>_change`` columns. JSON: the rows as a list.
    """
    from datetime import datetime

    from contexttrace.select.thresholds import METRICS

    if fmt == "json":
        return json_text(rows)
    known = METRICS[rows[0]["command"]] if rows else {}
    if fmt == "csv":
        import csv
        import io

        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        changes = [c for n in names for c in (n, f"{n}_change")]
        writer.writerow(["label", "run", "recorded_at", "git_commit", "traces", *changes])
        for row in rows:
            cells = [row["label"], row["run"], row["recorded_at"], row["git_commit"], row["traces"]]
            for n in names:
                cells += [row["metrics"][n]["value"], row["metrics"][n]["change"]]
            writer.writerow([csv_value(c) for c in cells])
        return safe_text(out.getvalue().rstrip("\n"))
    if not rows:
        return ""
    headers = ["label", "run", "recorded", "commit", "traces", *names]
    body = []
    for row in rows:
        when = datetime.fromisoformat(row["recorded_at"]).astimezone(tz).strftime("%Y-%m-%d %H:%M")
        cells = [row["label"], str(row["run"]), when, (row["git_commit"] or "-")[:12], fmt_int(row["traces"])]
        body.append(cells + [_history_cell(known[n].kind, row["metrics"][n]) for n in names])
    if fmt == "markdown":
        return safe_text(markdown_table(headers, body, left=4, total=False))
    return safe_text(pipe_table(body, headers, left=4))
