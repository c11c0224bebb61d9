"""Text, JSON and the report panel of `context files`: one table per trace, its drop events under it.

Every number is formatted by `render.text` (`fmt_int`, `fmt_tokens`, `fmt_duration`, `fmt_decimal`);
estimates carry ≈, relevance two decimals. The reports come from `reports.files.build_files`; nothing here
computes a figure.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from contexttrace.analysis.placement import normalize_path
from contexttrace.render.text import fmt_decimal, fmt_duration, fmt_int, fmt_tokens, json_text, pipe_table, safe_text
from contexttrace.reports.files import DROPPED, REREAD_WARN, FilesReport
from contexttrace.reports.results import RunResult

HEADERS = ["level", "relevance", "file", "touches", "reads", "writes", "failed", "re-reads", "tokens read",
           "tokens written", "refs", "last seen", "in window"]  # fmt: skip


def short_path(path: str, cwd: str | None) -> str:
    """`path` (normalised: `placement.normalize_path`) relative to `cwd` when it lies under it, else as it is.

    >>> short_path("/p/src/a.py", "/p"), short_path("/q/b.py", "/p"), short_path("C:/w/a.py", "c:\\\\w")
    ('src/a.py', '/q/b.py', 'a.py')
    """
    if cwd:
        root = normalize_path(cwd).rstrip("/") + "/"
        if path.startswith(root):
            return path[len(root) :]
    return path


def fmt_age(ms: int | None) -> str:
    """An age: how long ago, as `text.fmt_duration` writes a duration (exact: timestamps); None → ``"-"``.

    >>> fmt_age(4_000), fmt_age(184_037), fmt_age(17_898_648), fmt_age(None)
    ('4.0s ago', '3m 4s ago', '4h 58m ago', '-')
    """
    return "-" if ms is None else f"{fmt_duration(ms)} ago"


def fmt_moment(ms: int | None) -> str:
    """A Unix epoch ms as UTC ``YYYY-MM-DD HH:MM:SS`` (the year in four digits); None → ``"-"``; a moment
    outside the years 1 to 9999 (which `files.parse_at` refuses) as its ms.

    >>> fmt_moment(0), fmt_moment(-62135596800000), fmt_moment(None)
    ('1970-01-01 00:00:00 UTC', '0001-01-01 00:00:00 UTC', '-')
    """
    if ms is None:
        return "-"
    try:
        d = datetime.fromtimestamp(ms / 1000, UTC)
    except (ValueError, OverflowError, OSError):
        return f"{ms} ms (Unix time)"
    return f"{d.year:04d}-{d:%m-%d %H:%M:%S} UTC"


def _last_seen(row: dict[str, Any]) -> str:
    call = f"call {row['last_seen_call']}" if row["last_seen_call"] else "-"
    return call if row["age_ms"] is None else f"{call}, {fmt_age(row['age_ms'])}"


def _cells(row: dict[str, Any], cwd: str | None) -> list[str]:
    rereads = fmt_int(row["rereads"]) + (" ⚠" if row["rereads"] >= REREAD_WARN else "")
    reads = fmt_int(row["reads"]) + (f" ({fmt_int(row['ranged_reads'])} ranged)" if row["ranged_reads"] else "")
    return [
        row["level"] or "-",
        fmt_decimal(row["relevance"], 2),
        short_path(row["path"], cwd),
        fmt_int(row["touches"]),
        reads,
        fmt_int(row["writes"]),
        fmt_int(row["failed"]),
        rereads,
        fmt_tokens(row["tokens_read"], estimated=True),
        fmt_tokens(row["tokens_written"], estimated=True),
        fmt_int(row["references"]),
        _last_seen(row),
        {True: "yes", False: "no", None: "-"}[row["in_window"]],
    ]


def drop_line(d: dict[str, Any], cwd: str | None) -> str:
    """One drop event in words: where the file's content left the window and what the agent did next."""
    where = f"call {d['call']}" if d["call"] is not None else "after the last call"
    when = f", {fmt_moment(d['ts_ms'])}" if d["ts_ms"] is not None else ""
    if d["read_again"]:
        n = d["calls_until_read"]
        later = f" ({n} call{'' if n == 1 else 's'} later)" if n is not None else ""
        then = f"read again at call {d['read_again_call']}{later}" if d["read_again_call"] else "read again"
    else:
        then = "not read again"
    if d["edited_without_reading"]:
        then += f"; edited without reading it again at call {d['edit_call']}"
    return f"{where} ({d['kind']}{when}): {short_path(d['path'], cwd)}: {then}"


def _notes(r: FilesReport) -> list[str]:
    cwd = r.facts.get("cwd")
    at = r.at
    if at["moment"] == "last":
        out = [f"at the last line ({fmt_moment(at['ts_ms'])})" if at["ts_ms"] is not None else "at the last line"]
    elif at["moment"] == "call":
        out = [f"at call {at['call']} (what its prompt held; {fmt_moment(at['ts_ms'])})"]
    else:
        out = [f"at {fmt_moment(at['ts_ms'])} (call {at['call'] or '-'} the last before it)"]
    out.append("relevance = min(1, exp(-0.693·age/20 min) + 0.3·ln(1 + refs)) (spec 003); "
               f"{DROPPED}: its last read content left the window")  # fmt: skip
    if any(row["failed"] for row in r.rows):
        out.append("failed: touches whose result was an error (a missing file, a refused edit): touches = reads + "
                   "writes + failed")  # fmt: skip
    if r.drop_events:
        out.append("Drop events (main thread):")
        out.extend(safe_text("  " + drop_line(d, cwd)) for d in r.drop_events)
    if r.subagent_touches:
        out.append(
            f"subagents touched files {fmt_int(r.subagent_touches)} times (not in these rows: their own windows)"
        )
    return out


def render_files_table(run: RunResult) -> str:
    """Render `context files`: one block per trace, separated by blank lines.

    Parameters
    ----------
    run
        `RunResult` whose reports are `files.FilesReport`s.

    Returns
    -------
    str
        Per trace: its name, the files table (by relevance, highest first; tokens ≈ chars / 4, relevance
        two decimals, last seen as a call and an age), the moment it describes, the relevance formula, and
        the drop events.
    """
    blocks = []
    for r in run.reports:
        lines = [safe_text(f"{r.trace}")]
        cwd = r.facts.get("cwd")
        if r.rows:
            lines.append(safe_text(pipe_table([_cells(row, cwd) for row in r.rows], HEADERS, left=3)))
        else:
            lines.append("no files touched on the main thread")
        lines.extend(_notes(r))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def render_files_json(run: RunResult) -> str:
    """Render `context files --json`: a JSON list, one object per trace (`FilesReport.to_dict`), raw numbers,
    keys in the report's order; always valid UTF-8."""
    return json_text([r.to_dict() for r in run.reports], sort_keys=False)


#: The report panel's columns (docs/report.md: `key`, `label`, `numeric`).
PANEL_COLUMNS = [
    {"key": "level", "label": "level"},
    {"key": "file", "label": "file"},
    {"key": "relevance", "label": "relevance", "numeric": True},
    {"key": "tokens", "label": "tokens read", "numeric": True},
    {"key": "touches", "label": "touches", "numeric": True},
    {"key": "rereads", "label": "re-reads", "numeric": True},
    {"key": "last_seen", "label": "last seen", "nowrap": True},
]


def files_panel_of(r: FilesReport) -> dict[str, Any] | None:
    """The `context report` panel of one trace's files: spec 003's table, badges, dropped files in amber.

    Parameters
    ----------
    r
        From `reports.files.build_files` (at the last line).

    Returns
    -------
    dict or None
        A table panel (docs/report.md: `id`, `title`, `kind`, `columns` = `PANEL_COLUMNS`, `rows`,
        `badge_key`, `amber_key`, `note`: the first five drop events); None when the main thread touched
        no file.
    """
    if not r.rows:
        return None
    cwd = r.facts.get("cwd")
    rows = [
        {
            "level": row["level"] or "-",
            "file": short_path(row["path"], cwd),
            "relevance": fmt_decimal(row["relevance"], 2),
            "tokens": fmt_tokens(row["tokens_read"], estimated=True),
            "touches": fmt_int(row["touches"]),
            "rereads": fmt_int(row["rereads"]),
            "last_seen": _last_seen(row),
            "dropped": row["level"] == DROPPED,
        }
        for row in r.rows
    ]
    drops = "; ".join(drop_line(d, cwd) for d in r.drop_events[:5])
    note = f"Drop events: {drops}" + (" …" if len(r.drop_events) > 5 else "") if drops else None
    return {"id": "files", "title": "Files (context files)", "kind": "table", "columns": PANEL_COLUMNS,
            "rows": rows, "badge_key": "level", "amber_key": "dropped", "note": note}  # fmt: skip


__all__ = ["drop_line", "files_panel_of", "fmt_age", "render_files_json", "render_files_table", "short_path"]
