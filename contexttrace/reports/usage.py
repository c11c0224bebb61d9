"""Usage, cost, turns and agents of one trace: the accounting readings of spec 001 (`context usage`).

`build_usage` gathers into a `UsageReport` what its sibling modules compute over a `Trace`'s tables (read
as plain rows through `Trace.view`, no Polars) and the packaged price table: `costs` (each call priced,
totals per thread kind, model and thread), `result_line` (Claude Code's own totals from a stream-json
`result` line, and the tokens only it counts), `turns` (turns, context velocity, the autocompact threshold)
and `agents` (subagent threads linked to their Task/Agent calls). Nothing here reads files (but the
packaged price table), prints or formats numbers.

Rules this module owns (docs/usage.md states each with its source and exact/≈):

* `total` covers every thread: the calls written, plus the tokens only a complete `modelUsage` counts
  (`result_only`); the result's counts complete the trace's and each model's figures, never a thread's.
* The stream-json `result` line's own totals are reported beside our figures (`reported`), never added.
* A cost is a lower bound when a reason of `costs.LOWER_BOUND_REASONS` applies: subagents named but not
  found (unless `modelUsage` counts their tokens), a stream-json run with no `result` line, and the
  reasons of each call (`costs.totals_of_rows`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contexttrace.analysis import metrics
from contexttrace.analysis.facts import trace_facts
from contexttrace.analysis.pricing import PriceTable, load_prices
from contexttrace.analysis.window import context_windows, window_choice
from contexttrace.reading.contract import THREAD_COMPACTION, THREAD_MAIN, THREAD_SUBAGENT
from contexttrace.reports.agents import agents_of_rows
from contexttrace.reports.costs import (
    add_totals,
    by_seq,
    models_of_rows,
    priced_rows,
    threads_of_rows,
    totals_of_rows,
    with_reasons,
)
from contexttrace.reports.result_line import (
    model_usage_rows,
    reported_totals,
    result_only_rows,
    result_only_totals,
    result_warnings,
)
from contexttrace.reports.results import UsageReport
from contexttrace.reports.turns import main_calls, main_events, turn_figures_of_rows, turns_of_rows

if TYPE_CHECKING:
    from contexttrace.reading import Trace


def build_usage(trace: Trace, window: int | None = None, table: PriceTable | None = None) -> UsageReport:
    """Compute every `context usage` reading of one trace.

    Parameters
    ----------
    trace
        A trace from `read_trace` (after `drop_inherited_calls`).
    window
        `--window` in tokens, or None (then `metrics.window_choice` decides).
    table
        A price table; None uses the packaged one.

    Returns
    -------
    UsageReport
        See the class and the functions it names for each figure's source.
    """
    table = table or load_prices()
    # Views, not frames: every figure below is a pass over plain rows.
    priced = priced_rows(trace.view("calls"), table)
    ordered = sorted(priced, key=by_seq)
    choice = window_choice(trace, window)
    events = main_events(trace.view("events"))
    calls = main_calls(trace.view("calls"))
    turns = turns_of_rows(trace, events, calls)
    usage_rows, usage_warnings = model_usage_rows(trace.result) if trace.has.run_totals else ([], [])
    extras = result_only_rows(priced, usage_rows, table)
    covered = frozenset(e["model"] for e in extras)  # models whose final counts the result gives
    result_only = result_only_totals(extras)
    missing = metrics.missing_subagents(trace)
    total, main, side = _totals(trace, priced, covered, result_only, missing)
    agents = agents_of_rows(trace, priced)
    agents_cost = sum(a["cost_usd"] for a in agents)
    returned = [a for a in agents if a["returned_tokens"] is not None]
    agent_out = sum(a["output_tokens"] for a in returned)
    return UsageReport(
        trace=trace.name,
        path=trace.path,
        format=trace.format,
        session_id=trace.session_id,
        window=choice.tokens,
        unrecorded=dict(trace.unrecorded),
        window_source=choice.source,
        price_table_date=table.date,
        total=total,
        main=main,
        subagents=side,
        models=models_of_rows(ordered, extras, covered),
        threads=threads_of_rows(ordered, result_only),
        turns=turns,
        turn_figures=turn_figures_of_rows(turns, choice.tokens, events, calls),
        agents=agents,
        agents_cost_share=agents_cost / total["cost_usd"] if agents and total["cost_usd"] else None,
        agents_return_ratio=sum(a["returned_tokens"] for a in returned) / agent_out if returned and agent_out else None,
        reported=reported_totals(trace.result, total["cost_usd"], table),
        skipped_lines=trace.skipped_lines,
        oversized_lines=trace.oversized_lines,
        truncated_last_line=trace.truncated_last_line,
        warnings=_warnings(trace, usage_warnings, missing, calls),
        line_notes=list(trace.line_notes),
        lines_total=totals_of_rows(priced),
        result_only=result_only,
        missing_subagents=missing,
        subagent_threads=_with_missing(
            totals_of_rows([r for r in priced if r["thread_kind"] == THREAD_SUBAGENT]), missing, result_only
        ),
        compaction_threads=totals_of_rows([r for r in priced if r["thread_kind"] == THREAD_COMPACTION]),
        facts=trace_facts(trace),
        time_buckets=time_buckets(priced, total) if result_only is None else [],
    )


#: The span of one `time_buckets` bucket: 15 minutes, so that every time zone's midnight (offsets are whole
#: quarter hours) falls on a bucket's edge and a bucket lies within one local day.
BUCKET_MS = 15 * 60 * 1000
#: Lower-bound reasons the whole trace tells, not its calls: each part of a split trace carries them.
TRACE_REASONS = ("missing_subagents", "no_result_line")


def time_buckets(priced: list[dict[str, Any]], total: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """The calls' usage per quarter hour of message time, so `--group-by day` can split a session at midnight.

    Parameters
    ----------
    priced
        Every thread's priced calls (`costs.priced_rows`), each with its `ts_ms` (epoch ms, or None).
    total
        The trace's `total`: the lower-bound reasons in `TRACE_REASONS` it carries go to every bucket.

    Returns
    -------
    list of (int, dict)
        In time order: a bucket's start (epoch ms UTC, a multiple of `BUCKET_MS`) and the `totals_of_rows`
        of the calls that started in it (exact token sums; cost ≈). Empty when a call has no timestamp
        (stream-json): such a trace is dated as a whole by its `start`.

    Examples
    --------
    >>> from contexttrace.reports.costs import totals_of_rows
    >>> [ms for ms, _ in time_buckets([], totals_of_rows([]))]
    []
    """
    if not priced or any(r.get("ts_ms") is None for r in priced):
        return []
    rows: dict[int, list[dict[str, Any]]] = {}
    for r in priced:
        rows.setdefault(r["ts_ms"] - r["ts_ms"] % BUCKET_MS, []).append(r)
    reasons = [x for x in TRACE_REASONS if x in total["lower_bound_reasons"]]
    return [(ms, with_reasons(totals_of_rows(rows[ms]), *reasons)) for ms in sorted(rows)]


def _with_missing(totals: dict[str, Any], missing: list[str], result_only: dict[str, Any] | None) -> dict[str, Any]:
    """`totals` of subagent threads, a lower bound when subagents are missing and no `modelUsage` counts them."""
    return with_reasons(totals, "missing_subagents") if missing and result_only is None else totals


def _totals(
    trace: Trace,
    priced: list[dict[str, Any]],
    covered: frozenset[str],
    result_only: dict[str, Any] | None,
    missing: list[str],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The trace's `total`, `main` and `subagents` totals, with the lower-bound reasons only the whole trace
    tells: subagents not found (unless `modelUsage` counts their tokens), no `result` line."""
    # The result's final counts complete the trace's and each model's figures, never a thread's: no line
    # says which thread the tokens only `modelUsage` counts belong to, so a thread's output stays ≥.
    total = add_totals(totals_of_rows(priced, covered), result_only)
    main = totals_of_rows([r for r in priced if r["thread_kind"] == THREAD_MAIN])
    side = totals_of_rows([r for r in priced if r["thread_kind"] in (THREAD_SUBAGENT, THREAD_COMPACTION)])
    if missing and result_only is None:  # else `modelUsage` counts their tokens: the cost is whole
        total, side = with_reasons(total, "missing_subagents"), with_reasons(side, "missing_subagents")
    if trace.has.run_totals and trace.result is None and priced:
        total = with_reasons(total, "no_result_line")
    return total, main, side


def _warnings(trace: Trace, usage_warnings: list[str], missing: list[str], calls: list[tuple[Any, ...]]) -> list[str]:
    """The report's warnings, in order: the reader's, the `result` line's numbers not used (`modelUsage`,
    `contextWindow` in the words `context trace` uses, the rest), subagents not found (the same warning as
    `context trace`'s, printed once), main calls whose usage could not be read."""
    warnings = [*trace.warnings, *usage_warnings, *context_windows(trace.result)[1]]
    warnings.extend(result_warnings(trace.result))
    unmeasured = sum(not metrics.measured(c[1]) for c in calls)
    notes = (metrics.missing_subagents_warning(missing), metrics.unmeasured_warning(unmeasured, len(calls)))
    warnings.extend(n for n in notes if n is not None)
    return warnings
