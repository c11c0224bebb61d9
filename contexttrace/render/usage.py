"""The text of `context usage`: one row per trace (and its subagents), the notes that qualify the costs,
and with `--breakdown` the per-model, per-thread and per-agent tables and the turn readings.

Renderers take `RunResult`s of `results.UsageReport`s and return `str` (or lines); they never print. Token
counts are exact (``≥`` when an output count is a streaming placeholder); USD are list-price estimates
``≈``, lower bounds ``≥``; every number is formatted by `render.text`.
"""

from __future__ import annotations

from typing import Any

from contexttrace.analysis.window import window_origin
from contexttrace.render.text import (
    ESTIMATE_MARK,
    LOWER_BOUND_MARK,
    fmt_decimal,
    fmt_duration,
    fmt_int,
    fmt_percent,
    fmt_ratio,
    fmt_usd,
    fmt_value,
    pipe_table,
    safe_text,
)
from contexttrace.reports.results import RunResult

#: The headers of the `context usage` table (and of its totals and group rows).
USAGE_HEADERS = ["trace", "calls", "turns", "fresh input", "cache write", "cache read", "output", "hit", "cost USD"]

#: What each `usage.LOWER_BOUND_REASONS` entry says in a note.
LOWER_BOUND_TEXT = {
    "unpriced_model": "a model is not priced",
    "output_placeholder": "output counts are streaming placeholders",
    "no_result_line": "the run has no result line (it ended early)",
    "missing_subagents": "subagents are missing",
    "unreadable_usage": "some calls' usage could not be read (counted as 0)",
}


def output_cell(totals: dict[str, Any]) -> str:
    """The `output` cell: output tokens, ``≥`` before them when they are a lower bound.

    Calls written before their final usage carry a streaming placeholder as output, unless a result line's
    modelUsage gave the final count (`output_is_lower_bound` is then false).
    """
    lower = totals.get("output_is_lower_bound", bool(totals.get("output_lower_bound_calls")))
    return (LOWER_BOUND_MARK if lower else "") + fmt_int(totals["output_tokens"])


def cost_cell(totals: dict[str, Any]) -> str:
    """The `cost USD` cell: ``≥`` for a lower bound, ``≈`` for a priced estimate, a bare ``$0.00`` when
    nothing was priced."""
    cost = totals["cost_usd"]
    return fmt_usd(cost, totals["cost_is_lower_bound"], estimate=bool(cost))


def token_cells(totals: dict[str, Any]) -> list[str]:
    """The cells every usage row shares: fresh input, cache write, cache read, output, hit, cost USD."""
    return [
        fmt_int(totals["input_tokens"]),
        fmt_int(totals["cache_write_tokens"]),
        fmt_int(totals["cache_read_tokens"]),
        output_cell(totals),
        fmt_percent(totals["cache_hit_ratio"]),
        cost_cell(totals),
    ]


def usage_cells(label: str, totals: dict[str, Any], turns: int | None) -> list[str]:
    """One row of the `context usage` table (`USAGE_HEADERS`): `label`, calls, turns, then `token_cells`.

    Parameters
    ----------
    label
        The first cell (the trace, ``  ↳ subagents``, ``total``, a group).
    totals
        A usage total (`results.UsageReport.total` and the like: token sums, `cache_hit_ratio`, `cost_usd`).
    turns
        Human turns, or None (``-``: the subagents row).
    """
    return [label, fmt_int(totals["calls"]), fmt_int(turns), *token_cells(totals)]


def render_usage_table(run: RunResult, breakdown: bool = False, notes: bool = True) -> str:
    """Render `context usage`: one row per trace (all threads) and a "↳ subagents" row under it.

    Parameters
    ----------
    run
        `RunResult` whose reports are `results.UsageReport`s.
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
        rows.append(usage_cells(r.trace, r.total, r.turn_figures["turns"]))
        rows.extend(usage_cells(label, part, None) for label, part in side_rows(r))
    lines = [pipe_table(rows, USAGE_HEADERS)]
    note_lines = render_usage_notes(run) if notes else []
    if note_lines:
        lines.append("")
        lines.extend("    " + n for n in note_lines)
    if breakdown:
        for r in run.reports:
            lines.extend(usage_breakdown(r))
    return safe_text("\n".join(lines))


def render_usage_notes(run: RunResult) -> list[str]:
    """Lines that qualify the `context usage` figures, per trace, for under the table or stderr.

    Returns
    -------
    list of str
        Per trace: the models not priced, an output that is a lower bound, cache writes priced as
        5-minute writes, why the cost is a lower bound, the cost of tokens only the result line counts,
        and Claude Code's own cost beside ours (reported, never added).
    """
    return [safe_text(n) for r in run.reports for n in _usage_notes(r)]


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
        why = "; ".join(LOWER_BOUND_TEXT.get(x, x) for x in t["lower_bound_reasons"])
        out.append(f"{r.trace}: cost is a lower bound {fmt_usd(t['cost_usd'], lower_bound=True)}: {why}")
    parts = _cost_sources(r)
    if parts:
        out.append(f"{r.trace}: " + "; ".join(parts))
    return out


def _cost_sources(r: Any) -> list[str]:
    """Where the cost came from: the calls written and the result line's extra tokens; the reported cost."""
    t, parts = r.total, []
    extra = r.result_only
    if extra is not None and extra["cost_usd"]:
        parts.append(
            f"cost {cost_cell(t)} = {cost_cell(r.lines_total)} from the {fmt_int(r.lines_total['calls'])} "
            f"calls written + {cost_cell(extra)} for tokens only the result line's modelUsage counts (final "
            "output counts, helper calls; thread unknown)"
        )
    rep = r.reported
    if rep and rep["reported_cost_usd"] is not None:
        parts.append(
            f"Claude Code's result line reports {fmt_usd(rep['reported_cost_usd'], estimate=False)}, ours "
            f"{cost_cell(t)} (difference {fmt_usd(rep['cost_difference_usd'], estimate=False)}; reported, "
            "never added)"
        )
    return parts


def usage_breakdown(r: Any) -> list[str]:
    """`--breakdown`'s lines for one trace: a blank line, then the per-model, per-thread and per-agent tables
    (each only when it has a row: tabulate cannot draw an empty table with aligned columns, so an empty one
    is left out) and the turn readings.

    Parameters
    ----------
    r
        A `results.UsageReport`.
    """
    out = [""]
    if r.models:
        out.extend([f"{r.trace}: by model", "", _models_table(r.models), ""])
    if r.threads:
        out.extend([f"{r.trace}: by thread", "", _threads_table(r.threads), ""])
    if r.agents:
        out.extend([f"{r.trace}: agents", "", _agents_table(r.agents), ""])
    out.append(f"{r.trace}: " + " · ".join(_turn_readings(r)))
    return out


def _models_table(models: list[dict[str, Any]]) -> str:
    rows = [
        [
            m["model"],
            m.get("cost_source", "messages"),
            fmt_int(m["calls"]),
            fmt_int(m["input_tokens"]),
            fmt_int(m["cache_write_5m_tokens"]),
            fmt_int(m["cache_write_1h_tokens"]),
            fmt_int(m["cache_read_tokens"]),
            output_cell(m),
            fmt_percent(m["cache_hit_ratio"]),
            cost_cell(m),
        ]
        for m in models
    ]
    headers = ["model", "priced from", "calls", "fresh input", "write 5m", "write 1h", "cache read", "output"]
    return pipe_table(rows, [*headers, "hit", "cost USD"], left=2)


def _threads_table(threads: list[dict[str, Any]]) -> str:
    rows = [[t["thread"], t["thread_kind"], fmt_int(t["calls"]), *token_cells(t)] for t in threads]
    headers = ["thread", "kind", "calls", "fresh input", "cache write", "cache read", "output", "hit", "cost USD"]
    return pipe_table(rows, headers, left=2)


def _agents_table(agents: list[dict[str, Any]]) -> str:
    """Per subagent: its calls, output and cost; its duration (exact); the tokens its results returned to
    the main thread (≈ chars ÷ 4) and their ratio to its output (≈)."""
    rows = [
        [
            a["thread"],
            a["agent_type"] or "-",
            a["description"] or "-",
            fmt_int(a["calls"]),
            output_cell(a),
            cost_cell(a),
            fmt_duration(a["duration_ms"]),
            "-" if a["returned_tokens"] is None else ESTIMATE_MARK + fmt_int(round(a["returned_tokens"])),
            fmt_ratio(a["return_ratio"], estimate=True),
        ]
        for a in agents
    ]
    headers = ["agent", "type", "description", "calls", "output", "cost USD", "duration", "returned"]
    return pipe_table(rows, [*headers, "return ratio"], left=3)


#: The rows under a trace's in the usage table: its subagent threads, and the compaction summariser apart
#: (`context trace`'s `subagent_calls` and `compaction_calls`), each only when it made a call.
SIDE_LABELS = (("  ↳ subagents", "subagent_threads"), ("  ↳ compaction summary", "compaction_threads"))


def side_rows(r: Any) -> list[tuple[str, dict[str, Any]]]:
    """The (label, totals) of each `SIDE_LABELS` row a usage report shows: those with calls."""
    return [
        (label, getattr(r, key)) for label, key in SIDE_LABELS if getattr(r, key, None) and getattr(r, key)["calls"]
    ]


#: A window source read from another agent's trace, in words (the others print as their key: `modelUsage`, ...).
SOURCE_WORDS = {"model table": "Gemini CLI's model table"}


def _turn_readings(r: Any) -> list[str]:
    """The turn readings: turns, calls per turn, context and velocity, the autocompact threshold, the band."""
    f = r.turn_figures
    src = r.window_source
    velocity = f["context_velocity_tokens"]
    median = f["median_calls_per_turn"]
    prefix = f["fixed_prefix_tokens"]
    return [
        f"turns {fmt_int(f['turns'])}",
        f"median calls/turn {'-' if median is None else fmt_value(median, 'calls')}",
        f"last call's context {fmt_int(f['context_tokens'])} of {fmt_int(r.window)} "
        f"({window_origin(src)}: {SOURCE_WORDS.get(src, src)})",
        f"velocity {'-' if velocity is None else fmt_int(round(velocity)) + '/turn'}",
        f"autocompact at {fmt_int(f['autocompact_threshold_tokens'])} ({f['autocompact_threshold_source']})",
        f"turns until autocompact {fmt_decimal(f['turns_until_autocompact'], 1, estimate=True)}",
        f"band {f['context_band'] or '-'}",
        f"fixed prefix {'-' if prefix is None else ESTIMATE_MARK + fmt_int(prefix)}",
    ]
