"""What one command shows of a run: which records, in what order, the totals, the threshold breaches.

`make_view` is the one step between `runner.analyze` and `render`: it turns the reports into their JSON
records (the contract `schemas` describes), keeps those `--since/--until/--project/--session` admit
(`filters.select`), groups them (`--group-by`), orders them (`--sort`), adds up the totals row and checks
`--fail-on` (`thresholds.check`). `exit_code` gives the command's code. Every command that prints traces
(`context trace`, `context usage`) goes through it, so each option means the same everywhere. It never
prints and never formats a number.

What crosses to the CLI and to `render` is typed here: `ViewOptions` (the parsed options), `View` (generic
in its report type: `View[TraceReport]` for `context trace`, `View[UsageReport]` for `context usage`), the
record kinds (`ReportKind`, `ViewKind`) and `Record`, one JSON record (a plain dict at runtime, keyed as
its kind's schema says).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from enum import StrEnum
from typing import Any, Generic, Literal, TypeVar, overload

from contexttrace.errors import ExitCode
from contexttrace.reading import Trace
from contexttrace.reports.builds import TRACE_BUILD, USAGE_BUILD
from contexttrace.reports.results import RunResult, TraceReport, UsageReport
from contexttrace.reports.schemas import SCHEMA_VERSIONS
from contexttrace.select.filters import (
    GroupBy,
    Selected,
    Selection,
    group_usage,
    select,
    sort_order,
    trace_totals,
    unique_labels,
    usage_totals,
)
from contexttrace.select.thresholds import METRICS, CheckResult, Metric, Threshold, check

#: What a command's reports are: ``trace`` (`TraceReport`) or ``usage`` (`UsageReport`).
ReportKind = Literal["trace", "usage"]
#: What a view's records are, by their `schemas` name: a report kind, or ``usage-group`` (the rows of
#: ``context usage --group-by``).
ViewKind = Literal["trace", "usage", "usage-group"]
#: One JSON record as ``--json`` prints it: raw numbers, the keys of its kind's schema (`schemas`).
Record = dict[str, Any]
#: The report type a view shows.
ReportT = TypeVar("ReportT", TraceReport, UsageReport)


class Format(StrEnum):
    """`--format`: a pipe table for the terminal, GitHub-flavoured markdown for a CI job summary, CSV
    (raw numbers, one row per trace), or JSON (`--json`)."""

    TABLE = "table"
    MARKDOWN = "markdown"
    CSV = "csv"
    JSON = "json"


class CompareFormat(StrEnum):
    """`context compare --format` (`render.compare`). `table` and `markdown` print the same pipe table; markdown
    makes the titles under it headings."""

    TABLE = "table"
    MARKDOWN = "markdown"
    CSV = "csv"
    JSON = "json"


@dataclass(frozen=True)
class ViewOptions:
    """The options every trace-printing command shares, parsed (`cli.options.view_options` reads the flags)."""

    fmt: Format = Format.TABLE
    thresholds: tuple[Threshold, ...] = ()
    selection: Selection = field(default_factory=Selection)
    sort: str | None = None
    descending: bool = False
    totals: bool = True
    tz: tzinfo | None = None  # None: local time
    group_by: GroupBy | None = None  # `context usage` only
    scan: bool = False  # a folder (or the default roots) was read: show the project and start columns
    with_calls: bool = False  # `--calls`: JSON records carry `prompt_tokens`


@dataclass
class View(Generic[ReportT]):
    """A command's output before rendering.

    `kind` is ``trace``, ``usage`` or ``usage-group`` (the `schemas` name of the records). `records`
    are the JSON records in display order; for ``trace``/``usage`` `reports` holds the report objects
    in the same order (empty for groups). `labels` name each record in the table and in breaches.
    `totals` is the totals row (None when not shown: one record, `--no-totals`, CSV and JSON never show it):
    `filters.trace_totals` or `filters.usage_totals`.
    """

    kind: ViewKind
    options: ViewOptions
    records: list[Record]
    labels: list[str]
    reports: list[ReportT] = field(default_factory=list)
    totals: Record | None = None
    check: CheckResult = field(default_factory=lambda: CheckResult([], []))
    selected: Selected = field(default_factory=Selected)
    total_records: int = 0  # records before the selection
    #: the per-trace records selected, in display order (the groups' traces, for `usage-group`): what
    #: `--db` records
    traces: list[Record] = field(default_factory=list)


@overload
def make_view(run: RunResult, kind: Literal["trace"], options: ViewOptions) -> View[TraceReport]: ...
@overload
def make_view(run: RunResult, kind: Literal["usage"], options: ViewOptions) -> View[UsageReport]: ...
@overload
def make_view(run: RunResult, kind: ReportKind, options: ViewOptions) -> View[Any]: ...
def make_view(run: RunResult, kind: ReportKind, options: ViewOptions) -> View[Any]:
    """Select, group, sort, total and check the reports of a run.

    Parameters
    ----------
    run
        From `runner.analyze`: `TraceReport`s (``context trace``) or `UsageReport`s (``context usage``).
    kind
        ``trace`` or ``usage``: what the reports are.
    options
        The shared options.

    Returns
    -------
    View
        Selection first (on each trace), then grouping (``usage`` with `group_by`: records become the
        group rows, kind ``usage-group``), then the order (`--sort`; else argument order, groups by
        group), then thresholds on what is shown (each trace, or each group) and the totals row.

    Raises
    ------
    ValueError
        An unknown `--sort` key for this output (the message lists the valid ones).
    """
    records: list[Record] = [r.to_dict(options.with_calls) for r in run.reports]
    selected = select(records, options.selection)
    reports = [run.reports[i] for i in selected.kept]
    records = [records[i] for i in selected.kept]
    traces = records
    shown: ViewKind = kind
    if kind == "usage" and options.group_by:
        buckets = [getattr(r, "time_buckets", []) for r in reports]
        shown, reports = "usage-group", []
        records = group_usage(records, options.group_by, options.tz, SCHEMA_VERSIONS["usage-group"], buckets)
        labels = [_group_label(r["group"]) for r in records]
    else:
        labels = unique_labels(records)
    if options.sort:
        order = sort_order(records, shown, options.sort, options.descending)
        records, labels = [records[i] for i in order], [labels[i] for i in order]
        reports = [reports[i] for i in order] if reports else reports
        traces = records if shown != "usage-group" else traces
    show_totals = options.totals and len(records) > 1 and options.fmt in (Format.TABLE, Format.MARKDOWN)
    totals = None
    if show_totals:
        totals = trace_totals(records) if shown == "trace" else usage_totals(records)
        if shown == "usage-group":  # a trace split over two days is one trace
            totals["traces"] = len(traces)
    return View(
        kind=shown,
        options=options,
        records=records,
        labels=labels,
        reports=reports,
        totals=totals,
        check=check(records, labels, options.thresholds),
        selected=selected,
        total_records=len(run.reports),
        traces=traces,
    )


#: The label of a group with no key (a trace with no date, no project, a model row with no name).
NO_GROUP = "(none)"


def _group_label(key: str | None) -> str:
    return NO_GROUP if key is None else key


def selected_run(run: RunResult, view: View[Any]) -> RunResult:
    """Return `run` with only the reports `view` shows, in the view's order.

    For the renderers that take a run (`render.render_explain`); failures and the run's notes are kept.
    """
    return replace(run, reports=list(view.reports))


def exit_code(run: RunResult, view: View[Any] | None = None) -> ExitCode:
    """Return a command's exit code.

    Returns
    -------
    ExitCode
        ``TRACE_ERROR`` (1) when a trace could not be read, whatever else happened (a trace that was not
        read was not checked either); else ``THRESHOLD`` (3) when `view` breached a `--fail-on`
        threshold; else ``OK`` (0). A command that checks no threshold passes no view.
    """
    if not run.ok:
        return ExitCode.TRACE_ERROR
    if view is not None and not view.check.ok:
        return ExitCode.THRESHOLD
    return ExitCode.OK


def metrics_of(kind: ViewKind) -> Mapping[str, Metric]:
    """Return the metrics `--fail-on` and `--sort` know for a record kind, by name (`thresholds.METRICS`)."""
    return METRICS[kind]


def needs_cost(options: ViewOptions) -> bool:
    """Return True when `context trace` must price its traces: a ``cost`` threshold or ``--sort cost``."""
    sort = (options.sort or "").strip().lower()
    return sort == "cost" or any(t.metric.name == "cost" for t in options.thresholds)


def build_report_with_cost(trace: Trace, window: int | None = None) -> TraceReport:
    """Build a `context trace` report that also carries the trace's cost.

    Parameters
    ----------
    trace
        One trace, as `runner.analyze` hands it to its `build`.
    window
        `--window` in tokens, or None (as `reports.trace.build_report` takes it).

    Returns
    -------
    TraceReport
        `build_report`'s report with `extra["cost_usd"]` (≈ USD at list prices, every thread, as `context
        usage` prints it: `build_usage(...).total`) and `extra["cost_is_lower_bound"]`. A module-level
        function, so worker processes can run it; the two builds are imported when it is first called.
    """
    report: TraceReport = TRACE_BUILD(trace, window)
    total = USAGE_BUILD(trace, window).total
    report.extra["cost_usd"] = total["cost_usd"]
    report.extra["cost_is_lower_bound"] = total["cost_is_lower_bound"]
    return report
