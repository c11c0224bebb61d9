"""One trace's part of `context report`'s page, built from the trace: its reports, its cost, its chart data
and the panels of `context sources`, `context tools` and `context files`.

`build_section` is the `build` that `runner.analyze` runs on each trace (in a worker process when the run
is parallel), so everything the page needs from the `Trace` is taken here and the frames are not sent back.
Must not import jinja2, altair or vl-convert (the workers never need them), nor print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contexttrace.analysis.counts import result_count
from contexttrace.reading import Trace
from contexttrace.reading.titles import session_title
from contexttrace.render.files import files_panel_of
from contexttrace.render.html.growth import growth_datasets
from contexttrace.render.sources import sources_panel_of
from contexttrace.render.text import fmt_usd
from contexttrace.render.tools import tools_panel_of
from contexttrace.reports.compare_sources import first_sources
from contexttrace.reports.files import build_files
from contexttrace.reports.results import DiagnosticsOfReport, TraceReport, UsageReport
from contexttrace.reports.sources import SourcesReport, build_sources
from contexttrace.reports.tools import build_tools
from contexttrace.reports.trace import build_report
from contexttrace.reports.usage import build_usage


@dataclass
class TraceSection(DiagnosticsOfReport):
    """One trace's part of the page: its `TraceReport`, the cost, and the chart data only the trace holds.

    The attributes `render_diagnostics` reads (`path`, `trace`, `line_notes`, ...) are the report's, so a
    run of sections prints its diagnostics as `context trace` does.
    """

    report: TraceReport
    usage: UsageReport
    cost: dict[str, Any]
    threshold: dict[str, Any]
    axis: str  # "time" (transcripts with timestamps) or "calls" (stream-json: call numbers)
    start_ms: int | None
    reported_duration_ms: int | None  # stream-json: the result line's duration_ms
    datasets: dict[str, dict[str, list[Any]]]
    notes: list[str] = field(default_factory=list)
    panels: list[dict[str, Any]] = field(default_factory=list)
    title: str | None = None  # `titles.session_title`: its custom or AI title, else its first prompt, shortened
    first_sources: dict[str, Any] | None = None  # `compare_sources.first_sources`: the rows of the first call


def build_section(trace: Trace, window: int | None = None) -> TraceSection:
    """Build one trace's section of the report page (the `build` of `runner.analyze` for `context report`).

    Parameters
    ----------
    trace
        A trace from `reading.read_trace`.
    window
        `--window` in tokens, or None (then the trace's own window, `window.window_choice`).

    Returns
    -------
    TraceSection
        `report` (`build_report`, exact), `cost` (`build_usage`'s total: ≈ list prices, ≥ a lower bound),
        `threshold` (the autocompact threshold: observed, or ≈ from the window), the chart datasets
        (`growth_datasets`), the panels (`trace_panels`), the session's `title` (`session_title`) and the
        first call's rows (`compare_sources.first_sources`, from the sources panel's report).
        Every figure drawn comes from these; none is re-derived differently.
    """
    report = build_report(trace, window)
    usage = build_usage(trace, window)
    total = usage.total
    cost = {
        "usd": total["cost_usd"],
        "lower_bound": bool(total["cost_is_lower_bound"]),
        "reasons": list(total.get("lower_bound_reasons") or []),
        "text": fmt_usd(total["cost_usd"], total["cost_is_lower_bound"], estimate=bool(total["cost_usd"])),
        "reported_usd": (usage.reported or {}).get("total_cost_usd"),
    }
    figures = usage.turn_figures
    threshold = {
        "tokens": figures["autocompact_threshold_tokens"],
        "source": figures["autocompact_threshold_source"],
    }
    datasets, axis, notes = growth_datasets(trace, report, threshold)
    sources = build_sources(trace)
    duration, _ = result_count(trace.result, "duration_ms")  # bounded like every result-line count
    return TraceSection(
        report=report,
        usage=usage,
        cost=cost,
        threshold=threshold,
        axis=axis,
        start_ms=trace.timestamps_ms[0] if trace.timestamps_ms else None,
        reported_duration_ms=duration,
        datasets=datasets,
        notes=notes,
        panels=trace_panels(trace, sources),
        title=session_title(trace.path),
        first_sources=first_sources(sources),
    )


def trace_panels(trace: Trace, sources: SourcesReport | None = None) -> list[dict[str, Any]]:
    """The panels of one trace's section, in this order: `context sources` at the last call (`sources`, when
    already built: `build_sources(trace)`), `context tools`, `context files` at the last line (docs/report.md
    "Panels"); a command with nothing to show adds none.

    Returns
    -------
    list of dict
        Table panels (`sources_panel_of`, `tools_panel_of`, `files_panel_of`), as plain values.
    """
    panels = (
        sources_panel_of(sources if sources is not None else build_sources(trace)),
        tools_panel_of(build_tools(trace)),
        files_panel_of(build_files(trace)),
    )
    return [p for p in panels if p]
