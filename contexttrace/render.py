"""Turn reports into text: the table, the lines under it, and JSON. All number formatting lives here.

Renderers take `report.RunResult` / `TraceReport` objects and return `str`; they never print. Output does
not depend on a terminal, on dict order or on locale: traces print in argument order, JSON keys sorted.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import orjson
from tabulate import tabulate

from .report import RunResult, TraceReport

#: tabulate's GitHub-style pipe table: `| a | b |` over `|---|---|`, as spec 004 shows it.
TABLE_FORMAT = "github"

#: Most skipped lines named one by one per trace on stderr; the rest are counted.
NOTES_SHOWN = 3


class OutputFormat(str, Enum):
    """The output the `--json` switch selects."""

    TABLE = "table"
    JSON = "json"


def fmt_int(value: int | None) -> str:
    """Format a count with thousands separators (``21390`` → ``"21,390"``); None → ``"-"``."""
    return "-" if value is None else f"{value:,}"


def fmt_percent(fraction: float | None) -> str:
    """Format a 0–1 fraction as a whole percentage (``0.1084`` → ``"11%"``); None → ``"-"``."""
    return "-" if fraction is None else f"{fraction * 100:.0f}%"


def _safe(text: str) -> str:
    # Lone surrogates (CASES B19) cannot be written as UTF-8; replace them rather than crash.
    return text.encode("utf-8", "replace").decode("utf-8")


#: Column header → how to get the cell from a report. `fill` is dropped when no window was given.
_COLUMNS: list[tuple[str, Any]] = [
    ("trace", lambda r: r.trace),
    ("calls", lambda r: fmt_int(r.calls)),
    ("first", lambda r: fmt_int(r.first)),
    ("peak", lambda r: fmt_int(r.peak)),
    ("fill", lambda r: fmt_percent(r.fill) + ("!" if r.fill is not None and r.fill > 1 else "")),
    ("growth", lambda r: fmt_int(r.growth)),
    ("compact", lambda r: fmt_int(r.compact)),
    ("tools", lambda r: fmt_int(r.tools)),
    ("failed", lambda r: fmt_int(r.failed)),
    ("repeat", lambda r: fmt_int(r.repeat)),
    ("result chars", lambda r: fmt_int(r.result_chars)),
]

#: Extra columns other commands add at the end (issue 3: health and weather), header → cell function.
EXTRA_COLUMNS: list[tuple[str, Any]] = []


def render_table(run: RunResult, with_window: bool, with_calls: bool = False) -> str:
    """Render the spec 004 table, then per trace the largest tool results and (with `--calls`) the series.

    Parameters
    ----------
    run
        Reports to show, in order.
    with_window
        Show the `fill` column (only when a window was given: the trace does not say it).
    with_calls
        Add the line "prompt tokens per call", with compaction boundaries marked in it.

    Returns
    -------
    str
        The table and its lines, ending without a newline; empty when there are no reports.
    """
    if not run.reports:
        return ""
    columns = [c for c in _COLUMNS + EXTRA_COLUMNS if with_window or c[0] != "fill"]
    rows = [[cell(r) for _, cell in columns] for r in run.reports]
    align = ["left"] + ["right"] * (len(columns) - 1)
    lines = [tabulate(rows, headers=[h for h, _ in columns], tablefmt=TABLE_FORMAT, disable_numparse=True, colalign=align)]
    for r in run.reports:
        if r.largest_results:
            parts = ", ".join(f"{x['tool']} {fmt_int(x['chars'])}" for x in r.largest_results)
            lines.append(f"{r.trace}: largest tool results (chars): {parts}")
        if with_calls:
            lines.append(f"{r.trace}: prompt tokens per call: {_series(r)}")
    return _safe("\n".join(lines))


def _series(r: TraceReport) -> str:
    marks: dict[int, list[str]] = {}
    trailing = []
    for ev in r.compaction_events:
        pre = f", pre {fmt_int(ev['pre_tokens'])}" if ev["pre_tokens"] is not None else ""
        label = f"| compact ({ev['trigger'] or '?'}{pre}) |"
        if ev["call_index"] is None:
            trailing.append(label)
        else:
            marks.setdefault(ev["call_index"], []).append(label)
    parts: list[str] = []
    for i, v in enumerate(r.prompt_tokens):
        parts.extend(marks.get(i, []))
        parts.append(str(v))
    parts.extend(trailing)
    return " ".join(parts) if parts else "(no calls)"


def render_json(run: RunResult, with_calls: bool = False) -> str:
    """Render every report as a JSON list (one object per trace, also for one), keys sorted, raw numbers.

    Returns
    -------
    str
        Indented JSON; lone surrogates in strings are replaced so the output is always valid UTF-8.
    """
    data = [r.to_dict(with_calls) for r in run.reports]
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:
        return orjson.dumps(_clean(data), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return _safe(value)
    if isinstance(value, dict):
        return {_safe(str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def render_diagnostics(run: RunResult) -> list[str]:
    """Lines for stderr: unreadable traces, skipped lines (`path:line: reason`), warnings.

    Returns
    -------
    list of str
        `Error: <path>: <reason>` per failure; per trace at most `NOTES_SHOWN` skipped lines named, then
        a count; a quiet note for an incomplete last line (a file still being written); each warning.
    """
    out = [_safe(f"Error: {f.path}: {f.reason}") for f in run.failures]
    for r in run.reports:
        for note in r.line_notes[:NOTES_SHOWN]:
            out.append(_safe(f"{note.path}:{note.line}: {note.reason}" if note.line else f"{note.path}: {note.reason}"))
        named = min(len(r.line_notes), NOTES_SHOWN)
        counted = r.skipped_lines - (1 if r.truncated_last_line else 0)
        if counted > named:
            out.append(_safe(f"{r.trace}: {counted - named} more line(s) skipped ({counted} in all)"))
        if r.truncated_last_line:
            out.append(_safe(f"{r.trace}: last line incomplete (file still being written?), skipped"))
        if r.oversized_lines:
            out.append(_safe(f"{r.trace}: {r.oversized_lines} oversized line(s) with no usage skipped unread"))
        for w in r.warnings:
            out.append(_safe(f"{r.trace}: warning: {w}"))
        if r.fill is not None and r.fill > 1:
            out.append(_safe(f"{r.trace}: warning: peak {fmt_int(r.peak)} exceeds the window {fmt_int(r.window)}"))
    if run.left_out:
        out.append(f"{run.left_out} file(s) with no model call left out")
    return out


# -- context usage (issue 4) -----------------------------------------------------------------------


def fmt_usd(value: float | None, lower_bound: bool = False) -> str:
    """Format USD: cents from $0.01 up, 4 decimals below; ``≥`` marks a lower bound; None → ``"-"``.

    Examples
    --------
    >>> fmt_usd(10.1136955), fmt_usd(0.003732), fmt_usd(2.5, lower_bound=True), fmt_usd(-0.2566)
    ('$10.11', '$0.0037', '≥ $2.50', '-$0.26')
    """
    if value is None:
        return "-"
    text = f"{abs(value):,.2f}" if abs(value) >= 0.01 or value == 0 else f"{abs(value):.4f}"
    return ("≥ " if lower_bound else "") + ("-" if value < 0 else "") + "$" + text


def _usage_cells(label: str, totals: dict[str, Any], turns: int | None) -> list[str]:
    return [
        label,
        fmt_int(totals["calls"]),
        fmt_int(turns),
        fmt_int(totals["input_tokens"]),
        fmt_int(totals["cache_write_tokens"]),
        fmt_int(totals["cache_read_tokens"]),
        fmt_int(totals["output_tokens"]),
        fmt_percent(totals["cache_hit_ratio"]),
        fmt_usd(totals["cost_usd"], totals["cost_is_lower_bound"]),
    ]


_USAGE_HEADERS = ["trace", "calls", "turns", "fresh input", "cache write", "cache read", "output", "hit", "cost USD"]


def _table(rows: list[list[str]], headers: list[str], left: int = 1) -> str:
    align = ["left"] * left + ["right"] * (len(headers) - left)
    return tabulate(rows, headers=headers, tablefmt=TABLE_FORMAT, disable_numparse=True, colalign=align)


def render_usage_table(run: RunResult, breakdown: bool = False) -> str:
    """Render `context usage`: one row per trace (all threads) and a "↳ subagents" row under it.

    Parameters
    ----------
    run
        `RunResult` whose reports are `usage.UsageReport`s.
    breakdown
        Also print, per trace, a table per model, a table per subagent and the turn readings.

    Returns
    -------
    str
        The table and its lines (unpriced models, the stream-json result's own cost beside ours, assumed
        cache splits), ending without a newline; empty when there are no reports. Token counts are
        exact; USD are list-price estimates (``≥`` when a model is unpriced).
    """
    if not run.reports:
        return ""
    rows = []
    for r in run.reports:
        rows.append(_usage_cells(r.trace, r.total, r.turn_figures["turns"]))
        if r.subagents["calls"]:
            rows.append(_usage_cells("  ↳ subagents", r.subagents, None))
    lines = [_table(rows, _USAGE_HEADERS)]
    for r in run.reports:
        lines.extend(_usage_notes(r))
    if breakdown:
        for r in run.reports:
            lines.extend(_usage_breakdown(r))
    return _safe("\n".join(lines))


def _usage_notes(r: Any) -> list[str]:
    out = []
    if r.total["unpriced_models"]:
        out.append(
            f"{r.trace}: unpriced models (not in the price table of {r.price_table_date}): "
            f"{', '.join(r.total['unpriced_models'])}; cost is a lower bound"
        )
    if r.total["cache_write_assumed_5m_tokens"]:
        out.append(
            f"{r.trace}: {fmt_int(r.total['cache_write_assumed_5m_tokens'])} cache-write tokens without a 5m/1h "
            "split, counted as 5-minute (assumed)"
        )
    rep = r.reported
    if rep and rep["reported_cost_usd"] is not None:
        out.append(
            f"{r.trace}: Claude Code's result line reports {fmt_usd(rep['reported_cost_usd'])}; ours "
            f"{fmt_usd(r.total['cost_usd'], r.total['cost_is_lower_bound'])} from the calls written "
            f"(difference {fmt_usd(rep['cost_difference_usd'])}; reported, never added)"
        )
    return out


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _duration(ms: int | None) -> str:
    return "-" if ms is None else f"{ms / 1000:,.0f}s"


def _usage_breakdown(r: Any) -> list[str]:
    out = ["", f"{r.trace}: by model"]
    model_rows = [
        [
            m["model"],
            fmt_int(m["calls"]),
            fmt_int(m["input_tokens"]),
            fmt_int(m["cache_write_5m_tokens"]),
            fmt_int(m["cache_write_1h_tokens"]),
            fmt_int(m["cache_read_tokens"]),
            fmt_int(m["output_tokens"]),
            fmt_percent(m["cache_hit_ratio"]),
            fmt_usd(m["cost_usd"] if not m["cost_is_lower_bound"] else None),
        ]
        for m in r.models
    ]
    headers = ["model", "calls", "fresh input", "write 5m", "write 1h", "cache read", "output", "hit", "cost USD"]
    out.append(_table(model_rows, headers))
    thread_rows = [
        [
            t["thread"],
            t["thread_kind"],
            fmt_int(t["calls"]),
            fmt_int(t["input_tokens"]),
            fmt_int(t["cache_write_tokens"]),
            fmt_int(t["cache_read_tokens"]),
            fmt_int(t["output_tokens"]),
            fmt_percent(t["cache_hit_ratio"]),
            fmt_usd(t["cost_usd"], t["cost_is_lower_bound"]),
        ]
        for t in r.threads
    ]
    out.append(f"{r.trace}: by thread")
    headers = ["thread", "kind", "calls", "fresh input", "cache write", "cache read", "output", "hit", "cost USD"]
    out.append(_table(thread_rows, headers, left=2))
    if r.agents:
        agent_rows = [
            [
                a["thread"],
                a["agent_type"] or "-",
                a["description"] or "-",
                fmt_int(a["calls"]),
                fmt_int(a["output_tokens"]),
                fmt_usd(a["cost_usd"], a["cost_is_lower_bound"]),
                _duration(a["duration_ms"]),
                "-" if a["returned_tokens"] is None else "≈" + fmt_int(round(a["returned_tokens"])),
                _ratio(a["return_ratio"]),
            ]
            for a in r.agents
        ]
        out.append(f"{r.trace}: agents")
        headers = ["agent", "type", "description", "calls", "output", "cost USD", "duration", "returned"]
        headers.append("return ratio")
        out.append(_table(agent_rows, headers, left=3))
    f = r.turn_figures
    velocity = f["context_velocity_tokens"]
    until = f["turns_until_autocompact"]
    median = f["median_calls_per_turn"]
    parts = [
        f"turns {fmt_int(f['turns'])}",
        f"median calls/turn {'-' if median is None else f'{median:g}'}",
        f"context {fmt_int(f['context_tokens'])} of {fmt_int(r.window)} ({r.window_source})",
        f"velocity {'-' if velocity is None else fmt_int(round(velocity)) + '/turn'}",
        f"autocompact at {fmt_int(f['autocompact_threshold_tokens'])} ({f['autocompact_threshold_source']})",
        f"turns until autocompact {'-' if until is None else f'≈{until:.1f}'}",
        f"band {f['context_band'] or '-'}",
        f"fixed prefix ≈{fmt_int(f['fixed_prefix_tokens'])}",
    ]
    out.append(f"{r.trace}: " + " · ".join(parts))
    return out
