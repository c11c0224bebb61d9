"""Text, JSON and the report panel of `context tools`: one table per trace, the top context consumers under it.

Every number is formatted by `render.text` (`fmt_int`, `fmt_usd`, `fmt_duration`, `fmt_tokens`); estimates
carry ≈. The reports come from `reports.tools.build_tools`; nothing here computes a figure.
"""

from __future__ import annotations

from typing import Any

from contexttrace.render.text import fmt_duration, fmt_int, fmt_tokens, fmt_usd, json_text, pipe_table, safe_text
from contexttrace.reports.results import RunResult
from contexttrace.reports.tools import ERROR_CLASS_LABELS, THREAD_GROUP_MAIN, ToolsReport, sort_rows

HEADERS = ["thread", "tool", "error classes", "calls", "errors", "denied", "p50", "p95", "tokens → ctx",
           "input → ctx", "resent cost"]  # fmt: skip
#: The table of the server-side tools (`ToolsReport.server_tools`), under the tools table.
SERVER_HEADERS = ["thread", "server-side tool", "calls", "requests", "input → ctx", "cost USD"]
#: The line before that table: what a server-side tool is, and why it is apart.
SERVER_TITLE = "Server-side tools (run by the API inside a call; their results are in the calls' usage):"
#: Marks a result cut short: its full output was persisted to a file (a `<persisted-output>` preview), or the
#: tool cut it at a cap (`tool_results.capped`: toolUseResult.truncated / truncatedByTokenCap).
CUT_MARK = "⊘"


def _classes(row: dict[str, Any]) -> str:
    return ", ".join(f"{ERROR_CLASS_LABELS[k]} {n}" for k, n in row["error_classes"].items() if n) or "-"


def _tax(row: dict[str, Any]) -> str:
    return fmt_usd(row["reread_tax_usd"], lower_bound=row["reread_unpriced_calls"] > 0)


def _cells(row: dict[str, Any]) -> list[str]:
    tool = row["tool"] if row["parent"] is None else "  ↳ " + row["tool"]
    return [
        row["thread"],
        tool,
        _classes(row),
        fmt_int(row["calls"]),
        fmt_int(row["errors"]),
        fmt_int(row["denials"]),
        fmt_duration(row["p50_duration_ms"], estimate=True),
        fmt_duration(row["p95_duration_ms"], estimate=True),
        fmt_tokens(row["tokens_to_context"], estimated=True),
        fmt_tokens(row["input_tokens_to_context"], estimated=True),
        _tax(row),
    ]


#: The columns of the `context report` panel (`tools_panel_of`).
PANEL_COLUMNS = [
    {"key": "thread", "label": "thread"},
    {"key": "tool", "label": "tool"},
    {"key": "calls", "label": "calls", "numeric": True},
    {"key": "errors", "label": "errors", "numeric": True},
    {"key": "classes", "label": "error classes"},
    {"key": "p95", "label": "p95", "numeric": True},
    {"key": "tokens", "label": "tokens → context", "numeric": True},
    {"key": "tax", "label": "resent cost", "numeric": True},
]


def tools_panel_of(r: ToolsReport) -> dict[str, Any] | None:
    """The `context report` panel of one trace's tools: one row per tool and thread, sorted by calls (MCP
    tools under their server), then the server-side tools (marked so; only their calls are measured), the
    top context consumers as its note.

    Parameters
    ----------
    r
        From `reports.tools.build_tools`.

    Returns
    -------
    dict or None
        A table panel (docs/report.md: `id`, `title`, `kind`, `columns` = `PANEL_COLUMNS`, `rows`, `note`);
        None when the trace has no tool call, client or server-side.
    """
    rows = [
        {
            "thread": row["thread"],
            "tool": row["tool"],
            "calls": fmt_int(row["calls"]),
            "errors": fmt_int(row["errors"]),
            "classes": _classes(row),
            "p95": fmt_duration(row["p95_duration_ms"], estimate=True),
            "tokens": fmt_tokens(row["tokens_to_context"], estimated=True),
            "tax": _tax(row),
        }
        for row in sort_rows(r.rows, "calls")
        if row["parent"] is None
    ]
    rows += [
        {"thread": row["thread"], "tool": f"{row['tool']} (server-side)", "calls": fmt_int(row["calls"]),
         "errors": "-", "classes": "-", "p95": "-", "tokens": "-", "tax": "-"}
        for row in r.server_tools
    ]  # fmt: skip
    if not rows:
        return None
    top = "; ".join(
        f"{c['tool']}{' ' + c['target'] if c.get('target') else ''} ≈{fmt_int(c['tokens_to_context'])} tokens at "
        f"call {c['call']}"
        for c in r.top_consumers[:3]
    )
    note = f"Top context consumers (main thread): {top}" if top else None
    return {"id": "tools", "title": "Tools (context tools)", "kind": "table", "columns": PANEL_COLUMNS,
            "rows": rows, "note": note}  # fmt: skip


def _server_cells(row: dict[str, Any]) -> list[str]:
    return [
        row["thread"],
        row["tool"],
        fmt_int(row["calls"]),
        fmt_int(row["requests"]),
        fmt_tokens(row["input_tokens_to_context"], estimated=True),
        fmt_usd(row["cost_usd"]),
    ]


def render_tools_table(run: RunResult, sort: str = "calls", by_tool: bool = False) -> str:
    """Render `context tools`: one block per trace, separated by blank lines.

    Parameters
    ----------
    run
        `RunResult` whose reports are `tools.ToolsReport`s.
    sort
        The rows' order (`tools.SORT_KEYS`).
    by_tool
        Also show the rows of each MCP server's tools under it.

    Returns
    -------
    str
        Per trace: its name, the tools table (durations ≈: tool_use → tool_result; tokens ≈ chars / 4),
        the server-side tools' table when it used any (`SERVER_HEADERS`: calls, the web searches its
        usage bills and their ≈ list-price cost), the notes, and the top context consumers (tokens, the
        main-thread call that first carried them, ⊘ for a persisted or capped result).
    """
    blocks = []
    for r in run.reports:
        rows = [row for row in sort_rows(r.rows, sort) if by_tool or row["parent"] is None]
        lines = [safe_text(f"{r.trace}")]
        if rows:
            lines.append(pipe_table([_cells(row) for row in rows], HEADERS, left=3))
        else:
            lines.append("no client tool calls" if r.server_tools else "no tool calls")
        if r.server_tools:
            lines.append(SERVER_TITLE)
            lines.append(pipe_table([_server_cells(row) for row in r.server_tools], SERVER_HEADERS, left=2))
        lines.extend(_notes(r))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _notes(r: ToolsReport) -> list[str]:
    out = []
    if r.rows and not r.durations_known:
        out.append("durations: - (the trace has no timestamps on its tool calls; stream-json writes none)")
    elif r.rows:
        out.append("durations ≈: tool_use → tool_result, permission waits included")
    if r.mcp_server_guessed:
        out.append("mcp: server names split from tool names (no server list in the trace)")
    if r.top_consumers:
        out.append("Top context consumers (main thread):")
        for i, c in enumerate(r.top_consumers, 1):
            mark = f" {CUT_MARK} persisted" if c["persisted"] else f" {CUT_MARK} capped" if c["capped"] else ""
            call = f"call {c['call']}" if c["call"] is not None else "no call after it"
            cleared = ", cleared" if c["cleared"] else ""
            tokens = fmt_int(c["tokens_to_context"])
            target = f" {c['target']}" if c.get("target") else ""
            out.append(safe_text(f"  {i}. {c['tool']}{target} ≈{tokens} tokens{mark}, {call}{cleared}, "
                                 f"resent {fmt_int(c['reread_calls'])}× {fmt_usd(c['reread_tax_usd'])}"))  # fmt: skip
    return out


def render_tools_json(run: RunResult, sort: str = "calls", by_tool: bool = False) -> str:
    """Render `context tools --json`: a JSON list, one object per trace (`ToolsReport.to_dict`), rows in
    `sort` order, raw numbers."""
    out = []
    for r in run.reports:
        obj = r.to_dict(by_tool)
        keep = {id(row) for row in obj["tools"]}
        obj["tools"] = [row for row in sort_rows(r.rows, sort) if id(row) in keep]
        out.append(obj)
    return json_text(out, sort_keys=False)


__all__ = ["THREAD_GROUP_MAIN", "render_tools_json", "render_tools_table", "tools_panel_of"]
