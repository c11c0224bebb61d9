"""The typed results of the reports, apart from the code that builds them: what a run hands on and what the
result store decodes, so that a run served from the store imports no report builder and no analysis.

`TraceReport` (`context trace`, built by `reports.trace.build_report`), `UsageReport` (`context usage`, built
by `reports.usage.build_usage`), `ReadingDiagnostics` (the base of the `tools`, `sources` and `files`
reports), `DiagnosticsOfReport` (a mixin for objects that hold a `TraceReport`), `TraceFailure` (a trace that
could not be read or reported) and `RunResult` (a run's reports and failures, partial success first-class,
like pipx's `OperationResult`). Plain values only: no frames, nothing computed but from their own fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contexttrace.reading.model import LineNote  # a field of the reports: the result store decodes it by its type
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


@dataclass(frozen=True)
class UsageReport:
    """The `context usage` readings of one trace, ready to render (plain values, no frames).

    `total` covers every thread (what the trace cost): `lines_total`, the calls written (`main`, the main
    thread, plus `subagents`, the subagent and compaction-summariser threads), plus `result_only`, the
    tokens only a stream-json `result` line's `modelUsage` counts (None without a complete `modelUsage`);
    each is a `costs.token_totals` dict. Token figures are exact sums over distinct API responses (or as
    `modelUsage` writes them); USD figures are ≈ (list prices from the table dated `price_table_date`),
    lower bounds (≥) when `total["lower_bound_reasons"]` names a reason. `missing_subagents`: the ids of
    subagents named by Task/Agent results whose calls the trace lacks (`metrics.missing_subagents`; their
    cost is in no total unless a stream-json `modelUsage` counts it).
    """

    trace: str
    path: str
    format: str
    session_id: str | None
    window: int
    window_source: str
    price_table_date: str
    total: dict[str, Any]
    main: dict[str, Any]
    subagents: dict[str, Any]
    models: list[dict[str, Any]]
    threads: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    turn_figures: dict[str, Any]
    agents: list[dict[str, Any]]
    agents_cost_share: float | None
    agents_return_ratio: float | None
    reported: dict[str, Any] | None
    skipped_lines: int = 0
    oversized_lines: int = 0
    truncated_last_line: bool = False
    warnings: list[str] = field(default_factory=list)
    line_notes: list[LineNote] = field(default_factory=list)
    lines_total: dict[str, Any] = field(default_factory=dict)
    result_only: dict[str, Any] | None = None
    missing_subagents: list[str] = field(default_factory=list)
    #: `subagents` in its two parts, named apart: the subagent threads, and the compaction summariser's calls
    #: (each a `costs.token_totals` dict; their calls add up to `subagents["calls"]`)
    subagent_threads: dict[str, Any] = field(default_factory=dict)
    compaction_threads: dict[str, Any] = field(default_factory=dict)
    fill: float | None = None  # never set: lets `render.render_diagnostics` take these reports
    #: `label`, `project`, `cwd`, `start`, `start_source` (`facts.trace_facts`)
    facts: dict[str, Any] = field(default_factory=dict)
    #: The calls' usage by message time (`time_buckets`), for `--group-by day|week|month`; not in the JSON.
    time_buckets: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    #: figures the trace cannot give and why (`Trace.unrecorded`): their cells show `–`; not a JSON key
    unrecorded: dict[str, str] = field(default_factory=dict)

    def to_dict(self, with_calls: bool = False) -> dict[str, Any]:
        """Return the JSON object of this trace: every reading, raw numbers (`with_calls` is ignored)."""
        return {
            "schema_version": SCHEMA_VERSIONS["usage"],
            **self.facts,
            "trace": self.trace,
            "path": self.path,
            "format": self.format,
            "session_id": self.session_id,
            "window": self.window,
            "window_source": self.window_source,
            "price_table_date": self.price_table_date,
            "total": self.total,
            "lines_total": self.lines_total,
            "result_only": self.result_only,
            "main": self.main,
            "subagents": self.subagents,
            "subagent_threads": self.subagent_threads,
            "compaction_threads": self.compaction_threads,
            "cost_usd": self.total["cost_usd"],
            "cost_source": self.total["cost_source"],
            "cost_is_lower_bound": self.total["cost_is_lower_bound"],
            "lower_bound_reasons": self.total["lower_bound_reasons"],
            "unpriced_models": self.total["unpriced_models"],
            "missing_subagents": len(self.missing_subagents),
            "missing_subagent_ids": self.missing_subagents,
            "models": self.models,
            "threads": self.threads,
            "turns": self.turn_figures["turns"],
            "turn_figures": self.turn_figures,
            "turn_rows": self.turns,
            "agents": self.agents,
            "agents_cost_usd": self.subagents_cost_usd,
            "agents_cost_share": self.agents_cost_share,
            "agents_return_ratio": self.agents_return_ratio,
            "reported": self.reported,
            "skipped_lines": self.skipped_lines,
            "warnings": self.warnings,
        }

    @property
    def subagents_cost_usd(self) -> float:
        """USD (≈) of the subagent threads only (the compaction summariser apart)."""
        return float(sum(a["cost_usd"] for a in self.agents))


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
