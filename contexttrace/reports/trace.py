"""Per-trace reports and the result of a run over many traces.

`build_report` turns one read `Trace` into a `TraceReport` (plain values, no frames), using only the
pure functions of `analysis.metrics`. `RunResult` holds the reports of a run and the traces that could not be
read, like pipx's `OperationResult`: partial success is first-class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contexttrace.analysis import metrics
from contexttrace.analysis.facts import trace_facts
from contexttrace.analysis.frame_rows import FrameRows
from contexttrace.analysis.health import health_of
from contexttrace.analysis.session import session_rows_of
from contexttrace.analysis.tool_figures import largest_results_of, tool_counts_of, tool_figures_of
from contexttrace.analysis.weather import weather_of
from contexttrace.analysis.window import context_windows, window_choice_of
from contexttrace.reading import LineNote, Trace
from contexttrace.reports.schemas import SCHEMA_VERSIONS


@dataclass(frozen=True)
class TraceReport:
    """The figures of one trace (spec 004), ready to render.

    Token figures are tokens, sizes are characters or bytes as their names say, `fill` is the peak as a
    fraction of the effective `window` (`window.window_choice`, its origin in `window_source`; None without a
    main call). Everything here is exact except where a key's docstring in
    `metrics.tool_figures` says ≈ (`persisted_bytes`).
    """

    trace: str
    path: str
    format: str
    session_id: str | None
    calls: int
    first: int
    peak: int
    fill: float | None
    window: int | None
    growth: int
    compact: int
    tools: int
    failed: int
    denied: int
    repeat: int
    repeat_same_result: int
    result_chars: int
    result_images: int
    result_image_bytes: int
    orphan_results: int
    persisted_results: int
    persisted_bytes: int
    largest_results: list[dict[str, Any]]
    tool_calls: dict[str, Any]
    duration_ms: int | None
    active_duration_ms: int | None
    subagent_calls: int
    compaction_calls: int
    compaction_events: list[dict[str, Any]]
    microcompaction_events: list[dict[str, Any]]
    surface: dict[str, Any] | None
    skipped_lines: int
    oversized_lines: int
    truncated_last_line: bool
    models: list[str]
    cli_version: str | None
    prompt_tokens: list[int]
    spikes: list[int]  # 0-based indexes into `prompt_tokens`; the JSON writes them as call numbers from 1
    peak_without_spikes: int
    synthetic_errors: int
    inherited_calls: int
    warnings: list[str] = field(default_factory=list)
    line_notes: list[LineNote] = field(default_factory=list)
    skipped_by_file: dict[str, int] = field(default_factory=dict)  # file -> lines skipped (`Trace`)
    extra: dict[str, Any] = field(default_factory=dict)
    #: `label`, `project`, `cwd`, `start`, `start_source` (`facts.trace_facts`)
    facts: dict[str, Any] = field(default_factory=dict)
    #: main calls whose prompt size is unknown (usage unreadable, `metrics.measured`), left out of
    #: first/peak/growth/fill; not a JSON key (the warning says it)
    unmeasured_calls: int = 0
    #: figures the trace cannot give and why (`Trace.unrecorded`): their cells show `–`; not a JSON key
    unrecorded: dict[str, str] = field(default_factory=dict)
    #: where `window` came from (`window.WindowChoice.source`: ``"option"``, ``"modelUsage"``, ...)
    window_source: str | None = None

    def to_dict(self, with_calls: bool = False) -> dict[str, Any]:
        """Return the JSON object of this trace: raw numbers, stable keys (`--calls` adds `prompt_tokens`)."""
        out = {
            "schema_version": SCHEMA_VERSIONS["trace"],
            "trace": self.trace,
            "path": self.path,
            "format": self.format,
            "session_id": self.session_id,
            "cli_version": self.cli_version,
            "models": self.models,
            "calls": self.calls,
            "first": self.first,
            "peak": self.peak,
            "fill": self.fill,
            "window": self.window,
            "window_source": self.window_source,
            "growth": self.growth,
            "compact": self.compact,
            "tools": self.tools,
            "failed": self.failed,
            "denied": self.denied,
            "repeat": self.repeat,
            "repeat_same_result": self.repeat_same_result,
            "result_chars": self.result_chars,
            "result_images": self.result_images,
            "result_image_bytes": self.result_image_bytes,
            "orphan_results": self.orphan_results,
            "persisted_results": self.persisted_results,
            "persisted_bytes": self.persisted_bytes,
            "largest_results": self.largest_results,
            "tool_calls": self.tool_calls,
            "duration_ms": self.duration_ms,
            "active_duration_ms": self.active_duration_ms,
            "subagent_calls": self.subagent_calls,
            "compaction_calls": self.compaction_calls,
            "compaction_events": self.compaction_events,
            "microcompact": len(self.microcompaction_events),
            "microcompact_tokens_saved": sum(e["tokens_saved"] or 0 for e in self.microcompaction_events),
            "microcompaction_events": self.microcompaction_events,
            "surface": self.surface,
            "skipped_lines": self.skipped_lines,
            "oversized_lines": self.oversized_lines,
            "truncated_last_line": self.truncated_last_line,
            "spikes": [i + 1 for i in self.spikes],  # call numbers from 1, as `--calls` and `call` number them
            "peak_without_spikes": self.peak_without_spikes,
            "synthetic_errors": self.synthetic_errors,
            "inherited_calls": self.inherited_calls,
            "warnings": self.warnings,
        }
        if with_calls:
            out["prompt_tokens"] = self.prompt_tokens
        out.update(self.facts)
        out.update(self.extra)
        return out


@dataclass(frozen=True, kw_only=True)
class ReadingDiagnostics:
    """What a command's per-trace report carries for `render.render_diagnostics` besides its readings: the
    reader's skipped lines and notes, warnings, the trace's facts; `fill`, `peak` and `window` stay at their
    defaults for the commands that have none. A base of `tools.ToolsReport`, `files.FilesReport` and
    `sources.SourcesReport` (keyword-only, so each report's own fields keep their order); filled
    from a trace by `reading_diagnostics`."""

    skipped_lines: int = 0
    oversized_lines: int = 0
    truncated_last_line: bool = False
    warnings: list[str] = field(default_factory=list)
    line_notes: list[LineNote] = field(default_factory=list)
    skipped_by_file: dict[str, int] = field(default_factory=dict)  # file -> lines skipped (`Trace`)
    #: `label`, `project`, `cwd`, `start`, `start_source` (`facts.trace_facts`)
    facts: dict[str, Any] = field(default_factory=dict)
    fill: float | None = None  # never set by these commands
    peak: int = 0
    window: int | None = None


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


class DiagnosticsOfReport:
    """A mixin for a command's per-trace object that holds a `TraceReport` as `report`: the attributes
    `render.render_diagnostics` reads (path, skipped lines, notes, warnings, fill, ...) are the report's,
    so the command prints its diagnostics as `context trace` does (`compare.RunFigures`,
    `render.html.data.TraceSection`)."""

    report: TraceReport

    @property
    def trace(self) -> str:
        return self.report.trace

    @property
    def path(self) -> str:
        return self.report.path

    @property
    def skipped_lines(self) -> int:
        return self.report.skipped_lines

    @property
    def skipped_by_file(self) -> dict[str, int]:
        return self.report.skipped_by_file

    @property
    def line_notes(self) -> list[LineNote]:
        return self.report.line_notes

    @property
    def truncated_last_line(self) -> bool:
        return self.report.truncated_last_line

    @property
    def oversized_lines(self) -> int:
        return self.report.oversized_lines

    @property
    def warnings(self) -> list[str]:
        return self.report.warnings

    @property
    def fill(self) -> float | None:
        return self.report.fill

    @property
    def peak(self) -> int:
        return self.report.peak

    @property
    def window(self) -> int | None:
        return self.report.window


@dataclass(frozen=True)
class TraceFailure:
    """A trace that could not be read or reported: its path (or run name), the line where known, and the
    one-line reason. `error` names the exception type when the failure was not one the library raises on
    purpose (a defect: the runner's firewall turned it into this trace's failure, and the run went on)."""

    path: str
    reason: str
    empty: bool = False  # the file holds no record at all (left out quietly by a directory scan)
    line: int | None = None  # 1-based line of `path` the failure is about, when known
    error: str | None = None  # the unexpected exception's type name (e.g. "TypeError"), else None

    @property
    def where(self) -> str:
        """`path:line`, or the path alone when no line is known."""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    @property
    def message(self) -> str:
        """The one-line error: `path[:line]: reason[ (ExceptionType)]`."""
        return f"{self.where}: {self.reason}" + (f" ({self.error})" if self.error else "")

    @classmethod
    def unexpected(cls, path: str, exc: BaseException, stage: str) -> TraceFailure:
        """The failure of one trace on an exception no rule expected (`stage`: "read", "report", ...)."""
        text = " ".join(str(exc).split())[:200] or "no message"
        return cls(path, f"could not {stage} this trace: {text}", line=getattr(exc, "line", None),
                   error=type(exc).__name__)  # fmt: skip


@dataclass
class RunResult:
    """What a run produced: reports in argument order, and the failures."""

    reports: list[Any] = field(default_factory=list)  # TraceReport for `context trace`; other commands' own
    failures: list[TraceFailure] = field(default_factory=list)
    left_out_files: list[str] = field(default_factory=list)  # files a directory scan found with no model call
    orphan_agent_files: int = 0  # flat agent-*.jsonl files whose session file was not found beside them
    warnings: list[str] = field(default_factory=list)  # about the run as a whole (not one trace)
    searched: list[str] = field(default_factory=list)  # where the traces were looked for (paths or roots)

    @property
    def left_out(self) -> int:
        """How many files a directory scan found with no model call (`left_out_files`), left out."""
        return len(self.left_out_files)

    @property
    def ok(self) -> bool:
        """True when every trace was read."""
        return not self.failures


#: The `TraceReport` fields `build_report` takes as they are from `metrics.tool_figures`.
TOOL_FIGURES = ("tools", "failed", "denied", "repeat", "repeat_same_result", "result_chars", "result_images",
                "result_image_bytes", "orphan_results", "persisted_results", "persisted_bytes")  # fmt: skip


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
        The frames are read once (`FrameRows`) and the session rows built once for both.
    """
    rows = FrameRows(trace)  # the frames read once into Python rows, shared by every figure
    series = [int(c[1]) for c in rows.main_calls]
    ctx = metrics.context_figures(series, window)
    tools = tool_figures_of(rows)
    counts = metrics.thread_call_counts_of(rows.call_kinds)
    main_seqs = [c[0] for c in rows.main_calls]
    events = metrics.compaction_events_of(rows.bounds, main_seqs, series) if rows.bounds else []
    session = session_rows_of(trace, rows)
    choice = window_choice_of(trace, [c[4] for c in rows.main_calls], [c[1] for c in rows.main_calls], window)
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
        extra={"health": health_of(session, choice), "weather": weather_of(session, choice.tokens)},
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
