"""The `context trace` report of one trace: `build_report`.

`build_report` turns one read `Trace` into a `TraceReport` (plain values, no frames), using only the
pure functions of `analysis`; `reading_diagnostics` gives the other commands' reports their reading
diagnostics. The report types themselves, and the `RunResult` of a run, are in `reports.results`.
"""

from __future__ import annotations

from typing import Any

from contexttrace.analysis import metrics
from contexttrace.analysis.facts import trace_facts
from contexttrace.analysis.frame_rows import FrameRows
from contexttrace.analysis.health import health_of
from contexttrace.analysis.session import session_rows_of
from contexttrace.analysis.tool_figures import largest_results_of, tool_counts_of, tool_figures_of
from contexttrace.analysis.weather import weather_of
from contexttrace.analysis.window import context_windows, window_choice_of
from contexttrace.forked import elsewhere
from contexttrace.reading import Trace
from contexttrace.reports.results import TraceReport


def reading_diagnostics(trace: Trace, warnings: list[str]) -> dict[str, Any]:
    """The `ReadingDiagnostics` fields of a report on `trace` (its skipped and oversized lines, truncated last
    line, notes, skipped lines per file and facts), with the report's own `warnings`, as keyword arguments."""
    return {
        "skipped_lines": trace.skipped_lines,
        "oversized_lines": trace.oversized_lines,
        "truncated_last_line": trace.truncated_last_line,
        "warnings": warnings,
        "line_notes": list(trace.line_notes),
        "skipped_by_file": dict(trace.skipped_by_file),
        "facts": trace_facts(trace),
    }


#: The `TraceReport` fields `build_report` takes as they are from `metrics.tool_figures`.
TOOL_FIGURES = ("tools", "failed", "denied", "repeat", "repeat_same_result", "result_chars", "result_images",
                "result_image_bytes", "orphan_results", "persisted_results", "persisted_bytes")  # fmt: skip


#: From this many main-thread calls, a report's weather (≈ 4.6 µs a call, a third of the report) is computed by a
#: forked child while this process computes the rest, when the run has a second core (`forked.elsewhere`). On a
#: 303 MB transcript (18,718 main calls) the report took 0.29 s of CPU in one process.
FORK_MIN_CALLS = 5_000


def build_report(trace: Trace, window: int | None = None) -> TraceReport:
    """Compute every `context trace` figure of one trace.

    Parameters
    ----------
    trace
        A trace from `read_trace`.
    window
        The context window in tokens (`--window`), or None: then `fill` is measured against the trace's own
        window (`window.window_choice`: stated by the trace, else inferred), named in `window_source`.

    Returns
    -------
    TraceReport
        See the class; sources are named in each `metrics` function. `extra` carries `health`
        (`health.health_report`, spec 000) and `weather` (`weather.weather_report`, spec 002), both
        against the effective window (`metrics.window_choice`: `window` when given, else the trace's).
        The frames are read once (`FrameRows`) and the session rows built once for both. The weather of a
        trace of `FORK_MIN_CALLS` main calls or more may be computed by a forked child meanwhile
        (`forked.elsewhere`): the same values.
    """
    rows = FrameRows(trace)  # the frames read once into Python rows, shared by every figure
    series = [int(c[1]) for c in rows.main_calls]
    # Before any fork: it reads every tool input's text, a page each, which a forked child's pages would
    # copy (measured: 0.03 s alone, 0.09 s once forked, on the 303 MB transcript)
    tools = tool_figures_of(rows)
    session = session_rows_of(trace, rows)
    choice = window_choice_of(trace, [c[4] for c in rows.main_calls], [c[1] for c in rows.main_calls], window)
    with elsewhere(weather_of, session, choice.tokens, worth=len(series) >= FORK_MIN_CALLS) as weather:
        health = health_of(session, choice)
        ctx = metrics.context_figures(series, window)
        counts = metrics.thread_call_counts_of(rows.call_kinds)
        main_seqs = [c[0] for c in rows.main_calls]
        events = metrics.compaction_events_of(rows.bounds, main_seqs, series) if rows.bounds else []
        fill = metrics.fill_of(series, choice.tokens)
        figures: dict[str, Any] = {**{key: tools[key] for key in TOOL_FIGURES}, **metrics.durations(trace)}
        return TraceReport(
            trace=trace.name,
            path=trace.path,
            format=trace.format,
            session_id=trace.session_id,
            calls=counts["calls"],
            first=ctx["first"],
            peak=ctx["peak"],
            fill=fill,
            window=choice.tokens,
            growth=ctx["growth"],
            compact=len(events),
            **figures,
            largest_results=largest_results_of(rows.use_names, [(r[1], r[4]) for r in rows.main_results]),
            tool_calls=tool_counts_of([u[2] for u in rows.main_uses], (trace.surface or {}).get("mcp_servers")),
            subagent_calls=counts["subagent_calls"],
            compaction_calls=counts["compaction_calls"],
            compaction_events=events,
            microcompaction_events=metrics.microcompaction_events(rows.microcompactions, main_seqs),
            surface=trace.surface,
            skipped_lines=trace.skipped_lines,
            oversized_lines=trace.oversized_lines,
            truncated_last_line=trace.truncated_last_line,
            models=metrics.models_used_of(rows.call_models),
            cli_version=trace.cli_version,
            prompt_tokens=series,
            spikes=ctx["spikes"],
            peak_without_spikes=ctx["peak_without_spikes"],
            synthetic_errors=trace.synthetic_errors,
            inherited_calls=trace.inherited_calls,
            warnings=_warnings(trace, ctx["unmeasured"], len(series)),
            line_notes=list(trace.line_notes),
            skipped_by_file=dict(trace.skipped_by_file),
            extra={"health": health, "weather": weather()},  # (the child's, awaited last but for cheap fields)
            facts=trace_facts(trace),
            unmeasured_calls=ctx["unmeasured"],
            unrecorded=dict(trace.unrecorded),
            window_source=choice.source,
        )


def _warnings(trace: Trace, unmeasured: int, calls: int) -> list[str]:
    """The report's warnings: the reader's, then what its figures could not use (a `contextWindow` that is
    no window, `unmeasured` of the `calls` main calls whose prompt size is unknown, subagents named but not
    found)."""
    warnings = [*trace.warnings, *context_windows(trace.result)[1]]
    for note in (
        metrics.unmeasured_warning(unmeasured, calls),
        metrics.missing_subagents_warning(metrics.missing_subagents(trace)),
    ):
        if note is not None:
            warnings.append(note)
    return warnings
