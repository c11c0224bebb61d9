"""Turn reports into text: the table, the lines under it, and JSON. All number formatting lives here.

Renderers take `report.RunResult` / `TraceReport` objects and return `str`; they never print. Output does
not depend on a terminal, on dict order or on locale: traces print in argument order, JSON keys sorted.
"""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from typing import Any

import orjson

from contexttrace.analysis.metrics import measured, round_half_up
from contexttrace.analysis.result_types import HealthReport, WeatherReport
from contexttrace.reports.trace import RunResult, TraceReport

#: tabulate's GitHub-style pipe table: `| a | b |` over `|---|---|`, as spec 004 shows it.
TABLE_FORMAT = "github"

#: Most skipped lines named one by one per trace on stderr; the rest are counted.
NOTES_SHOWN = 3


class OutputFormat(StrEnum):
    """The output the `--json` switch selects."""

    TABLE = "table"
    JSON = "json"


def fmt_int(value: int | None) -> str:
    """Format a count with thousands separators (``21390`` → ``"21,390"``); None → ``"-"``."""
    return "-" if value is None else f"{value:,}"


def fmt_percent(fraction: float | Fraction | None) -> str:
    """Format a 0–1 fraction as a whole percentage, rounded half up once (``0.1084`` → ``"11%"``); None → ``"-"``.

    A `Fraction` is rounded from its exact value; a float from the decimal it prints as (its shortest
    repr: 0.02505 is 2.505 %, not the binary 2.50499…), so 2.505 % shows as 3 %, as every view of the
    fill shows it (`metrics.round_half_up`). Python's `:.0%` would round the binary value half to even.

    >>> fmt_percent(0.1084), fmt_percent(0.02505), fmt_percent(Fraction(4999, 200_000)), fmt_percent(0.125)
    ('11%', '3%', '2%', '13%')
    """
    if fraction is None:
        return "-"
    exact = fraction if isinstance(fraction, Fraction) else Fraction(Decimal(repr(float(fraction))))
    return f"{round_half_up(exact * 100):.0f}%"


def _measured_cell(r: Any, value: Any, fmt: Any = fmt_int) -> str:
    """first / peak / growth / fill: `-` when no main call's prompt was measured (usage unreadable), not 0."""
    return "-" if r.calls and getattr(r, "unmeasured_calls", 0) >= r.calls else fmt(value)


def _safe(text: str) -> str:
    # Lone surrogates (CASES B19) cannot be written as UTF-8; replace them rather than crash.
    return text.encode("utf-8", "replace").decode("utf-8")


#: Column header → how to get the cell from a report. `fill` is dropped when no window was given.
_COLUMNS: list[tuple[str, Any]] = [
    ("trace", lambda r: r.trace),
    ("calls", lambda r: fmt_int(r.calls)),
    ("first", lambda r: _measured_cell(r, r.first)),
    ("peak", lambda r: _measured_cell(r, r.peak)),
    ("fill", lambda r: _measured_cell(r, r.fill, fmt_percent) + ("!" if r.fill is not None and r.fill > 1 else "")),
    ("growth", lambda r: _measured_cell(r, r.growth)),
    ("compact", lambda r: fmt_int(r.compact)),
    ("tools", lambda r: fmt_int(r.tools)),
    ("failed", lambda r: _failed_cell(r.failed, r.denied)),
    ("repeat", lambda r: fmt_int(r.repeat)),
    ("result chars", lambda r: fmt_int(r.result_chars)),
]

#: Extra columns other commands add at the end (issue 3: health and weather), header → cell function.
EXTRA_COLUMNS: list[tuple[str, Any]] = [
    ("health", lambda r: _health_cell(r.extra.get("health"))),
    ("weather", lambda r: _weather_cell(r.extra.get("weather"))),
]


#: The health and weather cells of a trace with nothing to grade (no main-thread model call): `–`, never
#: a grade; `--explain` and the JSON give the reason.
NOT_GRADED = "–"


def _failed_cell(failed: int, denied: int) -> str:
    """The `failed` cell: failed tool results, naming the refusals counted among them.

    >>> _failed_cell(6, 4), _failed_cell(2, 0)
    ('6 (4 denied)', '2')
    """
    return fmt_int(failed) + (f" ({fmt_int(denied)} denied)" if denied else "")


def _health_cell(h: HealthReport | None) -> str:
    """``"A 94"``; `NOT_GRADED` when there is no health, or it has no grade (nothing was measured)."""
    if not h or h.get("grade") is None or h.get("score") is None:
        return NOT_GRADED
    return f"{h['grade']} {h['score']}"


def _weather_cell(w: WeatherReport | None) -> str:
    """``"☀️ sunny"``; `NOT_GRADED` when there is no weather, or it has no level (nothing was measured)."""
    if not w or w.get("level") is None:
        return NOT_GRADED
    return f"{w.get('emoji') or ''} {w['level']}".strip()


#: Indent of the `--calls` lines under the table: four spaces make them a code block in markdown, so
#: pasted output never reads them (or the `|` of a compaction mark) as table rows.
SERIES_INDENT = "    "


def render_table(run: RunResult, with_window: bool, with_calls: bool = False) -> str:
    """Render the spec 004 table; with `--calls`, each trace's prompt series under it.

    Parameters
    ----------
    run
        Reports to show, in order.
    with_window
        Show the `fill` column (only when a window was given: the trace does not say it).
    with_calls
        After a blank line, one line per trace, indented by `SERIES_INDENT`:
        ``<trace>: prompt tokens per call: 1:16,386 2:18,119 ...`` (`_series`).

    Returns
    -------
    str
        The table (and series), ending without a newline; empty when there are no reports. Only data
        the user asked for: the notes about it are `render_table_notes`, for stderr.
    """
    if not run.reports:
        return ""
    columns = [c for c in _COLUMNS + EXTRA_COLUMNS if with_window or c[0] != "fill"]
    rows = [[cell(r) for _, cell in columns] for r in run.reports]
    lines = [_table(rows, [h for h, _ in columns])]
    if with_calls:
        lines.append("")
        lines.extend(f"{SERIES_INDENT}{r.trace}: prompt tokens per call: {_series(r)}" for r in run.reports)
    return _safe("\n".join(lines))


def render_table_notes(run: RunResult) -> list[str]:
    """Lines for stderr under the table: per trace, the tools whose results weighed most.

    Returns
    -------
    list of str
        ``<trace>: largest tool results (chars): Read 55,483, Edit 16,877`` per trace that has any
        (main thread, summed per tool name, up to five; exact character counts).
    """
    out = []
    for r in run.reports:
        if r.largest_results:
            parts = ", ".join(f"{x['tool']} {fmt_int(x['chars'])}" for x in r.largest_results)
            out.append(_safe(f"{r.trace}: largest tool results (chars): {parts}"))
    return out


def _series(r: TraceReport) -> str:
    """The prompt tokens of each main call as ``number:tokens``, numbered from 1, compactions marked.

    A compaction shows as ``| compact (trigger, pre N) |`` before the first call after it (at the end when
    no call followed).
    """
    marks: dict[int, list[str]] = {}
    trailing = []
    for ev in r.compaction_events:
        pre = f", pre {fmt_int(ev['pre_tokens'])}" if ev["pre_tokens"] is not None else ""
        label = f"| compact ({ev['trigger'] or '?'}{pre}) |"
        after = _first_call_after(ev)
        if after is None:
            trailing.append(label)
        else:
            marks.setdefault(after, []).append(label)
    parts: list[str] = []
    for number, tokens in enumerate(r.prompt_tokens, 1):
        parts.extend(marks.get(number, []))
        parts.append(f"{number}:{fmt_int(tokens)}")
    parts.extend(trailing)
    return " ".join(parts) if parts else "(no calls)"


def _first_call_after(event: dict[str, Any]) -> int | None:
    """The 1-based number of the first main call after a compaction event, or None when none followed."""
    call = event["call"]  # 1-based number among main calls (metrics.compaction_events)
    return None if call is None else int(call)


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

    Parameters
    ----------
    run
        Reports of any command; each has `path`, `trace`, `skipped_lines`, `line_notes`,
        `truncated_last_line`, `oversized_lines`, `warnings`, `fill`.

    Returns
    -------
    list of str
        `Error: <path>[:<line>]: <reason>[ (<exception type>)]` per failure (`TraceFailure.message`); per
        file read (a session file and each of its subagent files apart; all the runs of a stream-json file
        together) at most `NOTES_SHOWN` skipped lines named, then a count naming that file; a quiet note for
        an incomplete last line (a file still being written); each warning; how many files a directory
        scan left out.
    """
    out = [_safe(f"Error: {f.message}") for f in run.failures]
    notes_of: dict[str, list[Any]] = {}  # file -> its notes (a file's runs together)
    skipped_in: dict[str, int] = {}  # file -> lines skipped in it
    for r in run.reports:
        for note in r.line_notes:
            notes_of.setdefault(note.path, []).append(note)
        by_file = getattr(r, "skipped_by_file", None) or {r.path: r.skipped_lines - int(r.truncated_last_line)}
        for path, count in by_file.items():
            skipped_in[path] = skipped_in.get(path, 0) + count
    for path in dict.fromkeys([*notes_of, *skipped_in]):
        notes = notes_of.get(path, [])
        for note in notes[:NOTES_SHOWN]:
            out.append(_safe(f"{note.path}:{note.line}: {note.reason}" if note.line else f"{note.path}: {note.reason}"))
        counted = skipped_in.get(path, 0)
        named = min(len(notes), NOTES_SHOWN)
        if counted > named:
            out.append(_safe(f"{path}: {counted - named} more line(s) skipped ({counted} in all)"))
    out.extend(_safe(f"warning: {w}") for w in getattr(run, "warnings", []))
    for r in run.reports:
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
    if run.orphan_agent_files:
        out.append(f"{run.orphan_agent_files} subagent file(s) left out: their session file is not beside them")
    return out


# -- context usage (issue 4) -----------------------------------------------------------------------


def fmt_usd(value: float | None, lower_bound: bool = False, estimate: bool = True) -> str:
    """Format USD: two decimals from $1 up, four below; ``≈`` marks an estimate (our list-price cost),
    ``≥`` a lower bound (`usage.LOWER_BOUND_REASONS`), bare an exact or as-written figure; None → ``"-"``.

    Examples
    --------
    >>> fmt_usd(10.1136955), fmt_usd(0.003732), fmt_usd(2.5, lower_bound=True), fmt_usd(-0.2566, estimate=False)
    ('≈$10.11', '≈$0.0037', '≥ $2.50', '-$0.2566')
    """
    if value is None:
        return "-"
    text = f"{abs(value):,.2f}" if abs(value) >= 1 else f"{abs(value):.4f}"
    if not text.strip("0."):  # rounds to nothing: float noise (-4e-16) is neither negative nor $0.0000
        text, value = "0.00", 0.0
    mark = "≥ " if lower_bound else "≈" if estimate else ""
    return mark + ("-" if value < 0 else "") + "$" + text


def _output_cell(totals: dict[str, Any]) -> str:
    # Calls written before their final usage carry a streaming placeholder as output (FORMATS G2), unless a
    # result line's modelUsage gave the final count (`output_is_lower_bound` is then false).
    lower = totals.get("output_is_lower_bound", bool(totals.get("output_lower_bound_calls")))
    return ("≥ " if lower else "") + fmt_int(totals["output_tokens"])


def _usage_cells(label: str, totals: dict[str, Any], turns: int | None) -> list[str]:
    return [
        label,
        fmt_int(totals["calls"]),
        fmt_int(turns),
        *_token_cells(totals),
    ]


def _token_cells(totals: dict[str, Any]) -> list[str]:
    """fresh input, cache write, cache read, output, hit, cost USD: the cells every usage row shares."""
    return [
        fmt_int(totals["input_tokens"]),
        fmt_int(totals["cache_write_tokens"]),
        fmt_int(totals["cache_read_tokens"]),
        _output_cell(totals),
        fmt_percent(totals["cache_hit_ratio"]),
        _cost_cell(totals),
    ]


def _cost_cell(totals: dict[str, Any]) -> str:
    """``≥`` for a lower bound, ``≈`` for a priced estimate, a bare ``$0.00`` when nothing was priced."""
    cost = totals["cost_usd"]
    return fmt_usd(cost, totals["cost_is_lower_bound"], estimate=bool(cost))


_USAGE_HEADERS = ["trace", "calls", "turns", "fresh input", "cache write", "cache read", "output", "hit", "cost USD"]


def _table(rows: list[list[str]], headers: list[str], left: int = 1) -> str:
    """A pipe table, the first `left` columns left-aligned and the rest right-aligned."""
    # tabulate (and wcwidth under it) is imported here, not with the module: 35 ms of start-up that a
    # `--json` run never needs
    from tabulate import tabulate

    align = ["left"] * left + ["right"] * (len(headers) - left)
    return tabulate(rows, headers=headers, tablefmt=TABLE_FORMAT, disable_numparse=True, colalign=align)


def render_usage_table(run: RunResult, breakdown: bool = False, notes: bool = True) -> str:
    """Render `context usage`: one row per trace (all threads) and a "↳ subagents" row under it.

    Parameters
    ----------
    run
        `RunResult` whose reports are `usage.UsageReport`s.
    breakdown
        Also print, per trace, a table per model (when it made a call), per thread, per subagent (when it
        has one) and the turn readings; an empty table is left out, never drawn.
    notes
        Also print `render_usage_notes` after a blank line, each indented four spaces (a code block in
        markdown, so pasted output never reads a note as a table row). False when the caller prints
        them elsewhere (stderr).

    Returns
    -------
    str
        The table (and notes, breakdown), ending without a newline; empty when there are no reports.
        Token counts are exact (``≥`` when an output count is a streaming placeholder); USD are
        list-price estimates ``≈``, lower bounds ``≥`` (`usage.LOWER_BOUND_REASONS`), ``$0.00`` bare when
        nothing was priced.
    """
    if not run.reports:
        return ""
    rows = []
    for r in run.reports:
        rows.append(_usage_cells(r.trace, r.total, r.turn_figures["turns"]))
        if r.subagents["calls"]:
            rows.append(_usage_cells("  ↳ subagents", r.subagents, None))
    lines = [_table(rows, _USAGE_HEADERS)]
    note_lines = render_usage_notes(run) if notes else []
    if note_lines:
        lines.append("")
        lines.extend("    " + n for n in note_lines)
    if breakdown:
        for r in run.reports:
            lines.extend(_usage_breakdown(r))
    return _safe("\n".join(lines))


def render_usage_notes(run: RunResult) -> list[str]:
    """Lines that qualify the `context usage` figures, per trace (`_usage_notes`), for under the table or
    stderr: why a cost is a lower bound, what was assumed, and Claude Code's own figure beside ours."""
    return [_safe(n) for r in run.reports for n in _usage_notes(r)]


#: What each `usage.LOWER_BOUND_REASONS` entry says in a note.
_LOWER_BOUND_TEXT = {
    "unpriced_model": "a model is not priced",
    "output_placeholder": "output counts are streaming placeholders",
    "no_result_line": "the run has no result line (it ended early)",
    "missing_subagents": "subagents are missing",
    "unreadable_usage": "some calls' usage could not be read (counted as 0)",
}


def _usage_notes(r: Any) -> list[str]:
    out = []
    t = r.total
    if t["unpriced_models"]:
        out.append(
            f"{r.trace}: unpriced (model, or its fast-mode price, not in the price table of "
            f"{r.price_table_date}): {', '.join(t['unpriced_models'])}"
        )
    if t.get("output_is_lower_bound"):
        out.append(
            f"{r.trace}: output is a lower bound: {fmt_int(t['output_lower_bound_calls'])} of "
            f"{fmt_int(t['calls'])} calls were written before their final usage (no stop_reason) and no "
            "result line gives the final count"
        )
    if t["cache_write_assumed_5m_tokens"]:
        from_result = (r.result_only or {}).get("cache_write_assumed_5m_tokens", 0)
        lines_part = t["cache_write_assumed_5m_tokens"] - from_result
        parts = [f"{fmt_int(lines_part)} from calls with no 5m/1h split or a 0/0 one"] if lines_part else []
        parts += [f"{fmt_int(from_result)} from the result line's modelUsage"] if from_result else []
        out.append(
            f"{r.trace}: {fmt_int(t['cache_write_assumed_5m_tokens'])} cache-write tokens priced as 5-minute "
            f"writes (assumed 5m: {'; '.join(parts)})"
        )
    # subagents referenced but not found: a warning of the report (`metrics.missing_subagents_warning`),
    # printed once by `render_diagnostics`; the lower-bound note below gives its effect on the cost
    if t["lower_bound_reasons"]:
        why = "; ".join(_LOWER_BOUND_TEXT.get(x, x) for x in t["lower_bound_reasons"])
        out.append(f"{r.trace}: cost is a lower bound {fmt_usd(t['cost_usd'], lower_bound=True)}: {why}")
    parts = []
    extra = r.result_only
    if extra is not None and extra["cost_usd"]:
        parts.append(
            f"cost {_cost_cell(t)} = {_cost_cell(r.lines_total)} from the {fmt_int(r.lines_total['calls'])} "
            f"calls written + {_cost_cell(extra)} for tokens only the result line's modelUsage counts (final "
            "output counts, helper calls; thread unknown)"
        )
    rep = r.reported
    if rep and rep["reported_cost_usd"] is not None:
        parts.append(
            f"Claude Code's result line reports {fmt_usd(rep['reported_cost_usd'], estimate=False)}, ours "
            f"{_cost_cell(t)} (difference {fmt_usd(rep['cost_difference_usd'], estimate=False)}; reported, "
            "never added)"
        )
    if parts:
        out.append(f"{r.trace}: " + "; ".join(parts))
    return out


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"≈{value:.2f}"


def _duration(ms: int | None) -> str:
    return "-" if ms is None else f"{ms / 1000:,.0f}s"


def _usage_breakdown(r: Any) -> list[str]:
    """Per trace: the per-model, per-thread and per-agent tables (each only when it has a row: tabulate
    cannot draw an empty table with aligned columns, CASES B38) and the turn readings."""
    out = [""]
    if r.models:
        model_rows = [
            [
                m["model"],
                m.get("cost_source", "messages"),
                fmt_int(m["calls"]),
                fmt_int(m["input_tokens"]),
                fmt_int(m["cache_write_5m_tokens"]),
                fmt_int(m["cache_write_1h_tokens"]),
                fmt_int(m["cache_read_tokens"]),
                _output_cell(m),
                fmt_percent(m["cache_hit_ratio"]),
                _cost_cell(m),
            ]
            for m in r.models
        ]
        headers = ["model", "priced from", "calls", "fresh input", "write 5m", "write 1h", "cache read", "output"]
        headers += ["hit", "cost USD"]
        out.extend([f"{r.trace}: by model", "", _table(model_rows, headers, left=2), ""])
    if r.threads:
        thread_rows = [
            [
                t["thread"],
                t["thread_kind"],
                fmt_int(t["calls"]),
                *_token_cells(t),
            ]
            for t in r.threads
        ]
        headers = ["thread", "kind", "calls", "fresh input", "cache write", "cache read", "output", "hit", "cost USD"]
        out.extend([f"{r.trace}: by thread", "", _table(thread_rows, headers, left=2), ""])
    if r.agents:
        agent_rows = [
            [
                a["thread"],
                a["agent_type"] or "-",
                a["description"] or "-",
                fmt_int(a["calls"]),
                _output_cell(a),
                _cost_cell(a),
                _duration(a["duration_ms"]),
                "-" if a["returned_tokens"] is None else "≈" + fmt_int(round(a["returned_tokens"])),
                _ratio(a["return_ratio"]),
            ]
            for a in r.agents
        ]
        headers = ["agent", "type", "description", "calls", "output", "cost USD", "duration", "returned"]
        headers.append("return ratio")
        out.extend([f"{r.trace}: agents", "", _table(agent_rows, headers, left=3), ""])
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
        f"fixed prefix {'-' if f['fixed_prefix_tokens'] is None else '≈' + fmt_int(f['fixed_prefix_tokens'])}",
    ]
    out.append(f"{r.trace}: " + " · ".join(parts))
    return out


# --- `context trace --explain`: health breakdown, health bar, weather tooltip (issue 3) -------------------

#: Spec 000's five colours, one per grade (A green → F red); used only when colour is on.
GRADE_COLORS = {"A": "#a6e3a1", "B": "#94e2d5", "C": "#f9e2af", "D": "#fab387", "F": "#f38ba8"}
#: Spec 000's compaction-line colour.
COMPACTION_COLOR = "#f38ba8"
#: The breakdown bar: cells, and the glyphs for a full cell, a half cell and an empty one.
BREAKDOWN_CELLS = 10
BAR_FULL, BAR_HALF, BAR_EMPTY = "█", "▌", "░"
#: One health-bar point in colour (painted in its grade's colour); without colour a point is its grade letter.
HEALTH_POINT = "█"
#: The mark under the health bar where a compaction happened.
COMPACTION_MARK = "┆"
#: How the window was chosen, in words.
WINDOW_SOURCES = {
    "option": "from --window",
    "modelUsage": "from the result line's modelUsage",
    "default": "Claude Code's default; the trace does not say",
    "peak": "assumed: the peak exceeds 200,000",
    "model [1m]": "a model id ends in [1m]",
}
#: At most this many call numbers are listed per factor.
CALLS_SHOWN = 8


def _paint(text: str, hex_color: str, color: bool) -> str:
    if not color:
        return text
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"\x1b[38;2;{r};{g};{b}m{text}\x1b[0m"


def _breakdown_bar(value: int | None, grade: str | None, color: bool) -> str:
    if value is None or grade is None:  # an abstaining signal: no data, drawn apart from a low score
        return "·" * BREAKDOWN_CELLS
    full, half = divmod(value * BREAKDOWN_CELLS, 100)
    filled = BAR_FULL * full + (BAR_HALF if half >= 50 else "")
    return _paint(filled, GRADE_COLORS[grade], color) + BAR_EMPTY * (BREAKDOWN_CELLS - len(filled))


def _calls_text(calls: list[int]) -> str:
    shown = ", ".join(f"#{c}" for c in calls[:CALLS_SHOWN])
    more = f" and {len(calls) - CALLS_SHOWN} more" if len(calls) > CALLS_SHOWN else ""
    return f"call{'s' if len(calls) > 1 else ''} {shown}{more}"


def render_health_panel(h: HealthReport, color: bool = False) -> list[str]:
    """Render spec 000's breakdown panel: one row per signal, name | bar | sub-score and grade | weight | why.

    Parameters
    ----------
    h
        A `health` object (`health.health_report`).
    color
        Paint each bar in its grade's colour (24-bit ANSI); False gives plain glyphs.

    Returns
    -------
    list of str
        A heading line, then five signal rows, indented by two spaces. The weight shown is the
        effective one (renormalised over the signals with data); a signal that abstains shows `–` and
        its reason, and a last line says the weights were renormalised. Without a grade (no model
        call), one line: `health –` and the reason.
    """
    if h["grade"] is None:
        return [f"  health – {h['reason']}"]
    source = h["window_source"]
    lines = [
        f"  health {h['grade']} {h['score']}/100 · window {fmt_int(h['window'])} tokens "
        f"({WINDOW_SOURCES.get(source, source)})"
    ]
    for sig in h["signals"]:
        bar = _breakdown_bar(sig["value"], sig["grade"], color)
        if sig["abstained"]:
            lines.append(f"    {sig['name']:<16} {bar}   –        abstains: {sig['why']}")
        else:
            weight = f"{sig['effective_weight']:.0%}"
            lines.append(f"    {sig['name']:<16} {bar} {sig['value']:>3} {sig['grade']}  {weight:>4}  {sig['why']}")
    idle = [sig for sig in h["signals"] if sig["abstained"]]
    if idle:
        spec = "/".join(f"{sig['weight']:.0%}".rstrip("%") for sig in h["signals"])
        lines.append(
            f"    weights: spec 000's {spec} (%), renormalised over the {len(h['signals']) - len(idle)} "
            "signals with data"
        )
    return lines


def render_health_bar(h: HealthReport, color: bool = False) -> list[str]:
    """Render the health bar: the grade at each 5 % of the session (21 points), compactions marked below.

    Returns
    -------
    list of str
        A heading naming the axis (time, or calls for stream-json), the bar (coloured blocks, or grade
        letters without colour; `·` for a point before the first model call, which has no grade), and a
        line with `COMPACTION_MARK` under the first point that counts each compaction, labelled with the
        number (from 1) of the call after it. Nothing when the trace has no grade.
    """
    points = h["timeline"]
    if not points:
        return []
    axis = "time" if h["timeline_axis"] == "time" else "calls (the trace has no timestamps)"
    if color:
        bar = "".join(
            "·" if p["grade"] is None else _paint(HEALTH_POINT, GRADE_COLORS[p["grade"]], True) for p in points
        )
    else:
        bar = "".join(p["grade"] or "·" for p in points)
    before = " (· before the first model call)" if any(p["grade"] is None for p in points) else ""
    lines = [f"  health bar, 0% → 100% of the session by {axis}, a point per 5%{before}:", f"    {bar}"]
    for c in h["compactions"]:
        col = c["percent"] * (len(points) - 1) // 100
        pre = f", pre {fmt_int(c['pre_tokens'])}" if c["pre_tokens"] is not None else ""
        mark = _paint(COMPACTION_MARK, COMPACTION_COLOR, color)
        where = f"before call #{c['next_call']}" if c["next_call"] is not None else "after the last call"
        lines.append(f"    {' ' * col}{mark} compaction ({c['trigger'] or '?'}{pre}) {where}, by {c['percent']}%")
    return lines


def render_weather_tooltip(w: WeatherReport, fill: Fraction | None = None) -> list[str]:
    """Render spec 002's tooltip: stats when sunny or fair, else the active factors and the calls to read.

    Returns
    -------
    list of str
        A heading (emoji, level, score, and the worst weather reached if at a worse level, with the
        call and the two signals that made it), then the stats line or
        one line per factor (highest severity first) and a "look at" line; last, the signals that
        abstained and why. Call numbers count main-thread model calls from 1, as `--calls` and the JSON
        do. Without weather (no model call), one line: `weather –` and the reason. `fill`, the exact
        prompt ÷ window when the caller has it, makes the stats' context percentage one rounding of the
        exact value (`stats.context_fill_frac` is already rounded to 4 decimals).
    """
    if w["level"] is None:
        return [f"  weather – {w['reason']}"]
    lines = [f"  weather {w['emoji']} {w['level']} {w['score']:.2f}"]
    worst = w.get("worst")
    if worst and worst["level"] != w["level"]:  # worse than now (a worst of the same level says nothing)
        where = f"after call #{worst['call']}"
        causes = f": {', '.join(worst['factors'][:2])}" if worst.get("factors") else ""
        lines[0] += f" (worst: {worst['emoji']} {worst['level']} {worst['score']:.2f} {where}{causes})"
    if w["level"] in ("sunny", "fair"):
        st = w["stats"]
        denied = st.get("tool_denials")
        parts = [
            f"context {fmt_percent(fill if fill is not None else st['context_fill_frac'])}",
            f"{fmt_int(st['tool_errors'])} tool errors" + (f" (+{denied} denied, not counted)" if denied else ""),
            f"cache hit {fmt_percent(st['cache_hit_frac'])}",
            "latency " + ("-" if st["latency_ratio"] is None else f"{st['latency_ratio']:.2f}× baseline"),
            f"{fmt_int(st['compactions'])} compaction{'' if st['compactions'] == 1 else 's'}",
        ]
        lines.append("    " + " · ".join(parts))
    else:
        called: list[int] = []
        for f in w["factors"]:
            lines.append(f"    {f['name']} {f['severity']:.2f}: {f['why']}")
            called.extend(c for c in f["calls"] if c not in called)
        if called:
            lines.append(f"    → look at {_calls_text(sorted(called))}")
    idle = [s for s in w["signals"] if s["severity"] is None]
    if idle:
        lines.append("    not judged: " + "; ".join(f"{s['name']} — {s['why']}" for s in idle))
    return lines


def render_explain(run: RunResult, color: bool = False) -> str:
    """Render `--explain`: per trace, the health breakdown, the health bar and the weather tooltip.

    Parameters
    ----------
    run
        Reports from `report.build_report` (their `extra` holds `health` and `weather`).
    color
        Colour the bars (the CLI passes True only when stdout is a terminal and NO_COLOR is unset).

    Returns
    -------
    str
        One block per trace, separated by blank lines, ending without a newline.
    """
    blocks = []
    for r in run.reports:
        h: HealthReport | None = r.extra.get("health")
        w: WeatherReport | None = r.extra.get("weather")
        if h is None or w is None:
            continue
        last = next((p for p in reversed(getattr(r, "prompt_tokens", [])) if measured(p)), None)  # as ctx_pressure
        fill = Fraction(last, h["window"]) if last is not None and h.get("window") else None
        lines = [r.trace, *render_health_panel(h, color), *render_health_bar(h, color)]
        lines += render_weather_tooltip(w, fill)
        blocks.append("\n".join(lines))
    return _safe("\n\n".join(blocks))


# --- Formats and views for CI and daily use (issue 15): table, markdown, CSV, JSON of a `views.View` ------

#: Columns a narrow terminal leaves out first, least important first; the others always stay.
TRACE_DROP_ORDER = ("result chars", "growth", "first", "project", "repeat", "start", "failed", "tools", "compact",
                    "weather", "cost USD")  # fmt: skip
USAGE_DROP_ORDER = ("cache write", "fresh input", "turns", "project", "start", "hit", "cache read", "output")
#: The label of the totals row (bold in markdown).
TOTAL_LABEL = "total"
#: The mark of a start that is a file's modification time, not a timestamp of the trace (stream-json).
MTIME_MARK = "≈"

#: `context trace` columns that add up → their totals cell (`filters.trace_totals`); others stay empty.
_TRACE_TOTAL_CELLS: dict[str, Any] = {
    "calls": lambda t: fmt_int(t["calls"]),
    "compact": lambda t: fmt_int(t["compact"]),
    "tools": lambda t: fmt_int(t["tools"]),
    "failed": lambda t: _failed_cell(t["failed"], t["denied"]),
    "repeat": lambda t: fmt_int(t["repeat"]),
    "result chars": lambda t: fmt_int(t["result_chars"]),
    "cost USD": lambda t: fmt_usd(t.get("cost_usd"), bool(t.get("cost_is_lower_bound"))),
}


def fmt_start(record: dict[str, Any], tz: Any = None) -> str:
    """A record's `start` as local ``YYYY-MM-DD HH:MM`` in `tz` (None: the local zone), marked
    `MTIME_MARK` when it is the file's modification time; ``"-"`` without one.

    >>> from zoneinfo import ZoneInfo
    >>> fmt_start({"start": "2026-02-12T16:02:25.284Z", "start_source": "timestamp"}, ZoneInfo("Europe/Paris"))
    '2026-02-12 17:02'
    """
    from datetime import datetime

    if not record.get("start"):
        return "-"
    moment = datetime.fromisoformat(record["start"]).astimezone(tz)
    return (MTIME_MARK if record.get("start_source") == "file_mtime" else "") + moment.strftime("%Y-%m-%d %H:%M")


def _grid(view: Any, with_window: bool) -> tuple[list[str], list[list[str]], int]:
    """Headers, rows (the totals row last, if any) and how many leading columns are text (left-aligned)."""
    if view.kind == "trace":
        return _trace_grid(view, with_window)
    if view.kind == "usage":
        return _usage_grid(view)
    return _group_grid(view)


def _fact_cells(view: Any, record: dict[str, Any]) -> list[str]:
    if not view.options.scan:
        return []
    return [record.get("project") or "-", fmt_start(record, view.options.tz)]


def _fact_headers(view: Any) -> list[str]:
    return ["project", "start"] if view.options.scan else []


def _trace_grid(view: Any, with_window: bool) -> tuple[list[str], list[list[str]], int]:
    columns = [c for c in _COLUMNS[1:] if with_window or c[0] != "fill"]
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
    headers = [_USAGE_HEADERS[0], *facts, *_USAGE_HEADERS[1:]]
    rows = []
    for label, rec, r in zip(view.labels, view.records, view.reports, strict=True):
        first, *rest = _usage_cells(label, r.total, r.turn_figures["turns"])
        rows.append([first, *_fact_cells(view, rec), *rest])
        if r.subagents["calls"]:
            first, *rest = _usage_cells("  ↳ subagents", r.subagents, None)
            rows.append([first, *[""] * len(facts), *rest])
    if view.totals is not None:
        first, *rest = _usage_cells(TOTAL_LABEL, view.totals["total"], view.totals["turns"])
        rows.append([first, *[""] * len(facts), *rest])
    return headers, rows, 1 + len(facts)


def _group_grid(view: Any) -> tuple[list[str], list[list[str]], int]:
    by = view.options.group_by
    headers = [by, "traces", *_USAGE_HEADERS[1:]]
    rows = [
        [label, fmt_int(rec["traces"]), *_usage_cells("", rec["total"], rec["turns"])[1:]]
        for label, rec in zip(view.labels, view.records, strict=True)
    ]
    if view.totals is not None:
        t = view.totals
        rows.append([TOTAL_LABEL, fmt_int(t["traces"]), *_usage_cells("", t["total"], t["turns"])[1:]])
    return headers, rows, 1


def _without(headers: list[str], rows: list[list[str]], drop: Any) -> tuple[list[str], list[list[str]]]:
    keep = [i for i, h in enumerate(headers) if h not in drop]
    return [headers[i] for i in keep], [[row[i] for i in keep] for row in rows]


def _width(text: str) -> int:
    """Columns the widest line of `text` takes, as tabulate measured them when it padded the cells: with
    `wcwidth` when it is installed (tabulate's optional wide-character support: an emoji counts two), else
    one per code point."""
    try:
        from wcwidth import wcswidth
    except ImportError:  # tabulate pads by len() then, and so does this
        return max((len(line) for line in text.splitlines()), default=0)
    return max((max(wcswidth(line), len(line)) for line in text.splitlines()), default=0)


def columns_to_drop(view: Any, width: int | None, with_window: bool = False) -> list[str]:
    """The columns a terminal `width` columns wide cannot show, least important first (`TRACE_DROP_ORDER`,
    `USAGE_DROP_ORDER`): dropped one by one until the table fits or none is left to drop.

    Returns
    -------
    list of str
        Headers to leave out (empty when the table fits, `width` is None, or the view is not a table).
    """
    if width is None or not view.records or view.options.fmt != "table" or view.kind == "usage-group":
        return []
    headers, rows, left = _grid(view, with_window)
    order = TRACE_DROP_ORDER if view.kind == "trace" else USAGE_DROP_ORDER
    dropped: list[str] = []
    for header in [None, *(h for h in order if h in headers)]:
        if header is not None:
            dropped.append(header)
        kept_headers, kept_rows = _without(headers, rows, dropped)
        text_left = left - sum(h in dropped for h in headers[:left])
        if _width(_table(kept_rows, kept_headers, left=text_left)) <= width:
            return dropped
    return dropped


def _escape_markdown(cell: str) -> str:
    """A cell safe inside a GitHub table: `|` escaped, no line break."""
    return cell.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _markdown_table(headers: list[str], rows: list[list[str]], left: int, total: bool) -> str:
    from tabulate import tabulate

    body = [[_escape_markdown(c) for c in row] for row in rows]
    if total and body:
        body[-1][0] = f"**{body[-1][0]}**"
    align = ["left"] * left + ["right"] * (len(headers) - left)
    return tabulate(body, headers=[_escape_markdown(h) for h in headers], tablefmt="pipe", disable_numparse=True,
                    colalign=align)  # fmt: skip


def render_view(
    view: Any,
    with_window: bool = False,
    with_calls: bool = False,
    breakdown: bool = False,
    explain: bool = False,
    drop: Any = (),
) -> str:
    """Render a `views.View` in its `--format`.

    Parameters
    ----------
    view
        From `views.make_view`.
    with_window
        Show `context trace`'s `fill` column.
    with_calls
        Table and markdown: each trace's prompt series under the table (markdown: a fenced code block).
    breakdown
        `context usage --breakdown`'s tables under the table.
    explain
        Markdown only: `--explain` in a fenced code block (the table format prints it apart, in colour).
    drop
        Headers to leave out (`columns_to_drop`).

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
        return _json_list(view.records)
    if fmt == "csv":
        return render_csv(view)
    if not view.records:
        return ""
    headers, rows, left = _grid(view, with_window)
    headers, rows = _without(headers, rows, drop)
    left -= sum(1 for h in drop if h in ("project", "start"))
    series = []
    if with_calls and view.kind == "trace":
        pairs = zip(view.labels, view.reports, strict=True)
        series = [f"{label}: prompt tokens per call: {_series(r)}" for label, r in pairs]
    if fmt == "table":
        lines = [_table(rows, headers, left=left)]
        if with_calls and view.kind == "trace":
            lines += ["", *(SERIES_INDENT + s for s in series)]
        if breakdown and view.kind == "usage":
            for r in view.reports:
                lines.extend(_usage_breakdown(r))
        return _safe("\n".join(lines))
    lines = [_markdown_table(headers, rows, left, view.totals is not None)]
    items = [*render_view_notes(view, markdown=True), *render_check_markdown(view.check, view.options.thresholds)]
    if items:
        lines += ["", *(f"- {_escape_list_item(i)}" for i in items)]
    if with_calls and view.kind == "trace":
        lines += ["", "```text", *series, "```"]
    if breakdown and view.kind == "usage":
        blocks = [line for r in view.reports for line in _usage_breakdown(r)]
        lines += ["", "```text", *blocks[1:], "```"]
    if explain and view.kind == "trace":
        lines += ["", "```text", render_explain(_run_of(view), color=False), "```"]
    return _safe("\n".join(lines))


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


def _json_list(records: list[dict[str, Any]]) -> str:
    try:
        return orjson.dumps(records, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:
        return orjson.dumps(_clean(records), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


#: CSV columns per record kind: a JSON key, or (header, getter) for a nested figure.
_CSV_COLUMNS: dict[str, list[Any]] = {
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


def _csv_value(value: Any) -> Any:
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

    columns = list(_CSV_COLUMNS[view.kind])
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
        writer.writerow([_csv_value(get(rec)) for _, get in getters])
    return _safe(out.getvalue().rstrip("\n"))


def render_view_notes(view: Any, markdown: bool = False) -> list[str]:
    """Notes about a view, for stderr (or, with `markdown`, the list under the table).

    Returns
    -------
    list of str
        How many traces the selection kept; traces left out for having no date; that stream-json runs
        are dated by their file's modification time (`MTIME_MARK`); then, under a table only (JSON and
        CSV hold these figures), per trace the largest tool results (`context trace`; named as the
        diagnostics name it on stderr, by the table's label in markdown) or the cost notes (`context
        usage`, `render_usage_notes`).
    """
    out = []
    sel = view.options.selection
    if not sel.empty:
        out.append(f"{fmt_int(len(view.selected.kept))} of {fmt_int(view.total_records)} traces selected "
                   f"({_selection_text(sel, view.options.tz)})")  # fmt: skip
    if view.selected.undated:
        out.append(f"{fmt_int(view.selected.undated)} trace(s) with no date (standard input) left out by "
                   "--since/--until")  # fmt: skip
    dated = view.dated_by_mtime if view.kind != "usage-group" else view.selected.dated_by_mtime
    if dated and (view.options.scan or sel.by_time or view.options.group_by in ("day", "week", "month")):
        out.append(f"{MTIME_MARK}start: {fmt_int(dated)} stream-json run(s) have no timestamps: dated by their "
                   "file's modification time (when it was last written)")  # fmt: skip
    if view.options.fmt not in ("table", "markdown"):
        return [_safe(x) for x in out]
    if view.kind == "trace":
        for label, r in zip(view.labels, view.reports, strict=True):
            if r.largest_results:
                parts = ", ".join(f"{x['tool']} {fmt_int(x['chars'])}" for x in r.largest_results)
                out.append(f"{label if markdown else r.trace}: largest tool results (chars): {parts}")
    elif view.kind == "usage":
        out.extend(render_usage_notes(_run_of(view)))
    return [_safe(x) for x in out]


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


def fmt_metric(kind: str, value: Any) -> str:
    """A metric's value as a threshold message shows it: counts and tokens with separators, fractions with
    four significant digits, USD as `fmt_usd`, grades and levels as they are.

    >>> fmt_metric("tokens", 164831), fmt_metric("fraction", 0.824155), fmt_metric("usd", 2.5), fmt_metric("grade", "C")
    ('164,831', '0.8242', '≈$2.50', 'C')
    """
    if value is None:
        return "-"
    if kind in ("count", "tokens"):
        return fmt_int(value)
    if kind == "fraction":
        return f"{value:.4g}"
    if kind == "usd":
        return fmt_usd(value)
    return str(value)


def _unchecked_text(u: Any) -> str:
    t = u.threshold
    if u.reason == "not_graded":
        what = "health not graded" if t.metric.kind == "grade" else "no weather"
        return f"{u.trace}: {what} (nothing measured: no main-thread model call), not a breach of {t.text}"
    if u.reason == "no_value":
        why = " (fill needs --window)" if t.metric.name == "fill" else ""
        return f"{u.trace}: no {t.metric.name}{why}, not checked against {t.text}"
    shown = fmt_usd(u.value, lower_bound=True) if t.metric.kind == "usd" else "≥ " + fmt_metric(t.metric.kind, u.value)
    return f"{u.trace}: {t.metric.name} {shown} is a lower bound; the true figure may breach {t.text}"


def _breach_value(b: Any) -> str:
    """A breach's value as `fmt_metric` writes it, ``≥`` when it is a lower bound (a cost)."""
    value = fmt_metric(b.threshold.metric.kind, b.value)
    return "≥ " + value.lstrip("≈") if b.lower_bound else value


def render_check(check: Any) -> list[str]:
    """Lines for stderr: each breach (trace, metric, value, threshold), then what could not be checked.

    Returns
    -------
    list of str
        ``breach: <trace>: <metric> <value> <op> <threshold> (--fail-on <expr>)`` per breach, then
        ``note: …`` per record a threshold could not decide (`thresholds.Unchecked`), then a summary line
        when anything breached (the command exits 3).
    """
    out = []
    for b in check.breaches:
        t = b.threshold
        out.append(f"breach: {b.trace}: {t.metric.name} {_breach_value(b)} {t.op} {t.shown} (--fail-on {t.text})")
    out.extend(f"note: {_unchecked_text(u)}" for u in check.unchecked)
    if check.breaches:
        n = len(check.breaches)
        out.append(f"{n} threshold breach{'es' if n > 1 else ''}: exit 3")
    return [_safe(x) for x in out]


def render_check_markdown(check: Any, thresholds: Any) -> list[str]:
    """List items for the markdown output: a line per breach, or that every threshold held; nothing
    without thresholds."""
    if not thresholds:
        return []
    names = ", ".join(f"`{t.text}`" for t in thresholds)
    if check.ok:
        return [f"✅ thresholds held: {names}"]
    out = [f"❌ {len(check.breaches)} threshold breach{'es' if len(check.breaches) > 1 else ''} ({names})"]
    for b in check.breaches:
        t = b.threshold
        out.append(f"❌ {b.label or b.trace}: {t.metric.name} {_breach_value(b)} {t.op} {t.shown}")
    return out


# --- context history (issue 15) ---------------------------------------------------------------------------


def _signed(kind: str, change: float) -> str:
    """A change with its sign: ``+2,000``, ``-0.05``, ``+$0.12``, ``±0``."""
    if change == 0:
        return "±0"
    sign = "+" if change > 0 else "-"
    if kind == "usd":
        return sign + fmt_usd(abs(change), estimate=False)
    if kind == "fraction":
        return f"{sign}{abs(change):.4g}"
    return sign + (fmt_int(abs(round(change))) if float(change).is_integer() else f"{abs(change):,.4g}")


def _history_cell(kind: str, m: dict[str, Any]) -> str:
    value, prior, change = m["value"], m["previous"], m["change"]
    text = fmt_metric(kind, value)
    if kind in ("grade", "level"):
        return text if prior is None or prior == value else f"{text} (was {prior})"
    if change is None:
        return text
    pct = f", {m['change_frac'] * 100:+.1f}%" if m["change_frac"] is not None and change else ""
    return f"{text} ({_signed(kind, change)}{pct})"


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
        return _json_list(rows)
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
            writer.writerow([_csv_value(c) for c in cells])
        return _safe(out.getvalue().rstrip("\n"))
    if not rows:
        return ""
    headers = ["label", "run", "recorded", "commit", "traces", *names]
    body = []
    for row in rows:
        when = datetime.fromisoformat(row["recorded_at"]).astimezone(tz).strftime("%Y-%m-%d %H:%M")
        cells = [row["label"], str(row["run"]), when, (row["git_commit"] or "-")[:12], fmt_int(row["traces"])]
        body.append(cells + [_history_cell(known[n].kind, row["metrics"][n]) for n in names])
    if fmt == "markdown":
        return _safe(_markdown_table(headers, body, left=4, total=False))
    return _safe(_table(body, headers, left=4))
