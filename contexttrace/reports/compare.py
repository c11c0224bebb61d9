"""Compare conditions: the same task run in several set-ups (spec 004, "Comparing context layers").

A *condition* is a named set of runs (a free workspace, one loaded with guidance, a task with and without
a skill). This module turns the runs' reports into what `context compare` shows: per condition and
metric the median and range over the runs, the difference of the medians against the baseline condition,
whether that difference is larger than the runs' own spread, with enough runs a rank test and a bootstrap
interval, the readings of spec 004's condition table, and what the conditions' start-up surfaces differ in.

It computes from the reports it is given (`run.conditions.analyze_conditions`, or the CLI's own run of
each condition's paths, builds them with `build_run`): it reads no trace. The statistics are
`reports.stats`', the start-up surfaces `reports.surface`'. It holds data, never text: numbers are
formatted and sentences written in `render.compare`. It never prints.
"""

from __future__ import annotations

import glob
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contexttrace.reading import Trace
from contexttrace.reading.urls import is_url
from contexttrace.reports.compare_sources import first_sources, startup_reading, startup_rows
from contexttrace.reports.results import DiagnosticsOfReport, RunResult, TraceReport, UsageReport
from contexttrace.reports.stats import (
    Number,
    median_difference_ci,
    noise_of,
    plain,
    rank_test,
    verdict,
    within_noise,
)
from contexttrace.reports.surface import mixed_agents, offers, surface_between, surface_within, typical_surface
from contexttrace.reports.trace import build_report
from contexttrace.reports.usage import build_usage

#: Version of the `context compare --json` object; bump it when a key changes meaning or goes away.
SCHEMA_VERSION = 3


class ConditionError(ValueError):
    """A condition, baseline or metric named on the command line cannot be used (a usage error)."""


# -- one run ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFigures(DiagnosticsOfReport):
    """Both reports of one run, the `context trace` figures and the `context usage` cost, and the rows of its first
    call (`compare_sources.first_sources`: `context sources`' split of `first`), built in one read.

    The attributes `render.render_diagnostics` reads (path, skipped lines, warnings, ...) are the trace
    report's, so a comparison's diagnostics print as `context trace`'s do.
    """

    report: TraceReport
    usage: UsageReport
    sources: dict[str, Any] | None = None  # `compare_sources.first_sources`; None: no measured call

    @property
    def warnings(self) -> list[str]:
        """The trace's warnings, then the cost's own (a subagent not found, a `modelUsage` not read)."""
        return self.report.warnings + [w for w in self.usage.warnings if w not in self.report.warnings]


def build_run(trace: Trace, window: int | None = None) -> RunFigures:
    """Build both reports of one trace: the `build` each condition's runs are read with (`runner.analyze`).

    Parameters
    ----------
    trace
        A trace from `read_trace` (after `drop_inherited_calls`).
    window
        `--window` in tokens, or None (the health score is then measured against the trace's own window).

    Returns
    -------
    RunFigures
        `trace.build_report`, `usage.build_usage` and the first call's `sources.build_sources` rows of the trace.
    """
    from contexttrace.reports.sources import build_sources  # not loaded by the other commands' start-up

    return RunFigures(build_report(trace, window), build_usage(trace, window), first_sources(build_sources(trace)))


# -- metrics ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """One figure compared across conditions: its key (JSON, CSV, `--metric`), unit and value of a run."""

    key: str
    unit: str  # tokens | calls | count | chars | usd | score
    value: Callable[[RunFigures], float | None]
    lower_bound: Callable[[RunFigures], bool] = lambda run: False  # the run's value is a lower bound (≥)


def _health_score(run: RunFigures) -> float | None:
    health = run.report.extra.get("health") or {}
    return health.get("score")


#: The metrics `context compare` knows, in the order they print; every one is shown by default.
METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric("calls", "calls", lambda r: r.report.calls),
        Metric("first", "tokens", lambda r: r.report.first),
        Metric("peak", "tokens", lambda r: r.report.peak),
        Metric("growth", "tokens", lambda r: r.report.growth),
        Metric("compact", "count", lambda r: r.report.compact),
        Metric("tools", "count", lambda r: r.report.tools),
        Metric("failed", "count", lambda r: r.report.failed),
        Metric("repeat", "count", lambda r: r.report.repeat),
        Metric("result_chars", "chars", lambda r: r.report.result_chars),
        Metric("cost_usd", "usd", lambda r: r.usage.total["cost_usd"], lambda r: r.usage.total["cost_is_lower_bound"]),
        Metric("health_score", "score", _health_score),
    )
}

#: Other spellings `--metric` accepts for a metric's key.
METRIC_ALIASES = {"cost": "cost_usd", "health": "health_score", "result-chars": "result_chars", "chars": "result_chars"}


def parse_metrics(values: Sequence[str] | None) -> list[str]:
    """The metric keys `--metric` names: comma-separated, repeatable, in the order given, each once.

    Parameters
    ----------
    values
        The option's values (``["first,peak", "calls"]``); None or empty means every metric of `METRICS`.

    Returns
    -------
    list of str
        Keys of `METRICS`.

    Raises
    ------
    ConditionError
        A name is neither a key nor an alias (`METRIC_ALIASES`); the message lists the names.

    Examples
    --------
    >>> parse_metrics(["first, peak", "cost,first"])
    ['first', 'peak', 'cost_usd']
    """
    names = [n.strip().lower() for v in values or [] for n in v.split(",") if n.strip()]
    if not names:
        return list(METRICS)
    out = []
    for name in names:
        key = METRIC_ALIASES.get(name, name)
        if key not in METRICS:
            known = ", ".join([*METRICS, *METRIC_ALIASES])
            raise ConditionError(f"unknown metric {name!r}; known: {known}")
        if key not in out:
            out.append(key)
    return out


# -- conditions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    """A named set of runs: the paths read for it (globs already expanded)."""

    name: str
    paths: tuple[str, ...]


def _has_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _expand(name: str, pattern: str) -> list[str]:
    if not _has_glob(pattern):
        return [pattern]
    matches = sorted(glob.glob(str(Path(pattern).expanduser()), recursive=True))
    if not matches:
        raise ConditionError(f"condition {name!r}: {pattern!r} matches nothing")
    return matches


def _exists(pattern: str) -> bool:
    """A condition's PATH names runs: standard input, a URL (checked when read), an existing file or
    directory, or a glob that matches."""
    if pattern == "-" or is_url(pattern):
        return True
    if _has_glob(pattern):
        return bool(glob.glob(str(Path(pattern).expanduser()), recursive=True))
    return Path(pattern).expanduser().exists()


def split_condition(option: str) -> tuple[str, str]:
    """A `--condition` value's NAME and PATH: split at the last ``=`` that leaves an existing PATH (a
    file, a directory, a glob that matches, a URL or ``-``), so a NAME may contain ``=``.

    Raises
    ------
    ConditionError
        No ``=`` leaves a NAME and an existing PATH (the message states the rule); a glob after the
        first ``=`` that matches nothing says so.

    >>> split_condition("temperature=0.2=.")
    ('temperature=0.2', '.')
    """
    parts = option.split("=")
    for cut in range(len(parts) - 1, 0, -1):
        name, pattern = "=".join(parts[:cut]).strip(), "=".join(parts[cut:]).strip()
        if name and pattern and _exists(pattern):
            return name, pattern
    name, _, pattern = option.partition("=")
    if name.strip() and _has_glob(pattern):
        _expand(name.strip(), pattern.strip())  # raises: the glob matches nothing
    raise ConditionError(
        f"--condition {option!r}: expected NAME=PATH, PATH an existing file or directory or a quoted glob that "
        "matches; NAME may contain '=' (the value is split at the last '=' that leaves an existing PATH)"
    )


def parse_conditions(options: Sequence[str], directories: Sequence[str] = ()) -> list[Condition]:
    """The conditions named by `--condition NAME=PATH` options and bare directory arguments.

    Parameters
    ----------
    options
        ``NAME=PATH`` values, PATH a file, a directory or a glob (``runs/loaded/*.jsonl``, expanded here,
        sorted; ``**`` reaches into subfolders), split by `split_condition` (a NAME may contain ``=``). The
        same NAME given again adds its paths to the condition.
    directories
        Directories, one condition each, named by the folder (``runs/free/`` is ``free``).

    Returns
    -------
    list of Condition
        The `--condition` ones in the order of their first mention, then the directories in order.

    Raises
    ------
    ConditionError
        A value with no ``=`` that leaves a name and an existing path, a glob matching nothing, a bare
        argument that is not a directory (a shell-expanded glob leaves its files as bare arguments: the
        message says to quote it), or two conditions with one name.

    Examples
    --------
    >>> [(c.name, c.paths) for c in parse_conditions(["free=.", "loaded=..", "free=/"])]
    [('free', ('.', '/')), ('loaded', ('..',))]
    """
    named: dict[str, list[str]] = {}
    for option in options:
        name, pattern = split_condition(option)
        named.setdefault(name, []).extend(_expand(name, pattern))
    for directory in directories:
        if not Path(directory).expanduser().is_dir():
            hint = (
                "; a bare argument names a directory (its folder name is the condition's name). For files "
                "use --condition NAME=PATH, and quote a glob (--condition loaded='runs/loaded/*.jsonl') so "
                "the shell does not expand it into bare arguments"
            )
            raise ConditionError(f"{directory!r} is not a directory{hint}")
        name = Path(directory).expanduser().resolve().name or directory
        if name in named:
            raise ConditionError(f"two conditions are named {name!r}; name them with --condition NAME=PATH")
        named[name] = [directory]
    return [Condition(name, tuple(paths)) for name, paths in named.items()]


def pick_baseline(conditions: Sequence[Condition], name: str | None) -> str:
    """The baseline condition's name: `name` when given (it must be a condition), else the first.

    Raises
    ------
    ConditionError
        `name` is not one of the conditions, or there are fewer than two conditions.
    """
    names = [c.name for c in conditions]
    if len(names) < 2:
        raise ConditionError(
            "compare needs at least two conditions (--condition NAME=PATH, or one directory per condition)"
        )
    if name is None:
        return names[0]
    if name not in names:
        raise ConditionError(f"--baseline {name!r} is not a condition; the conditions are {', '.join(names)}")
    return name


# -- one metric -----------------------------------------------------------------------------------


def metric_row(
    condition: str, metric: Metric, runs: Sequence[RunFigures], baseline_runs: Sequence[RunFigures] | None
) -> dict[str, Any]:
    """One row of the comparison: a condition's figures for one metric, against the baseline's runs.

    Parameters
    ----------
    condition
        The condition's name.
    metric
        What is measured.
    runs
        The condition's runs (those with a model call).
    baseline_runs
        The baseline condition's runs; None for the baseline's own row (no difference is computed).

    Returns
    -------
    dict
        `condition`, `metric`, `unit`, `runs` (runs with a value), `median`, `min`, `max`, `delta`
        (median − the baseline's median), `delta_pct` (delta in % of the baseline's median; None when that
        is 0), `noise` (`noise_of`), `within_noise` (`within_noise`), `p_value` (`rank_test`), `ci_low`,
        `ci_high` (`median_difference_ci`), `verdict` (`stats.verdict`: one rule over Δ, the noise and p),
        `lower_bound_runs` (runs whose value is a lower bound). Every
        figure None when it cannot be computed (no run with a value, the baseline's own row, too few runs).
    """
    values = _values(metric, runs)
    row: dict[str, Any] = {
        "condition": condition,
        "metric": metric.key,
        "unit": metric.unit,
        "runs": len(values),
        "median": plain(statistics.median(values)) if values else None,
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "delta": None,
        "delta_pct": None,
        "noise": None,
        "within_noise": None,
        "p_value": None,
        "ci_low": None,
        "ci_high": None,
        "verdict": None,
        "lower_bound_runs": sum(1 for r in runs if metric.value(r) is not None and metric.lower_bound(r)),
    }
    base = _values(metric, baseline_runs) if baseline_runs is not None else []
    if not values or not base:
        return row
    base_median = statistics.median(base)
    delta = plain(row["median"] - base_median)
    noise = noise_of(base, values)
    ci = median_difference_ci(base, values)
    p = rank_test(base, values)
    row.update(
        delta=delta,
        delta_pct=delta / base_median * 100 if base_median else None,
        noise=noise,
        within_noise=within_noise(delta, noise),
        p_value=p,
        ci_low=plain(ci[0]) if ci else None,
        ci_high=plain(ci[1]) if ci else None,
        verdict=verdict(delta, noise, p),
    )
    return row


def _values(metric: Metric, runs: Sequence[RunFigures]) -> list[Number]:
    """The runs' values of one metric, in run order, leaving out the runs without one (None or NaN)."""
    out = []
    for run in runs:
        value = metric.value(run)
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            out.append(value)
    return out


# -- the comparison --------------------------------------------------------------------------------


@dataclass
class ConditionResult:
    """One condition of a comparison: its runs and what was left out of them."""

    name: str
    paths: list[str]
    runs: list[RunFigures]  # runs with a main-thread model call, in reading order
    no_call: list[str] = field(default_factory=list)  # trace ids of runs with no model call (left out)
    failures: int = 0  # traces that could not be read or reported (named on stderr)
    surface: dict[str, Any] | None = None  # `typical_surface`


@dataclass
class Comparison:
    """Everything `context compare` shows: rows for the table, readings, surface differences, warnings.

    `rows` is a plain list of flat dicts (`metric_row`), metric by metric and, within a metric, the
    baseline's row then the other conditions' in order: a table, CSV or any other renderer prints them as
    they are. `readings` and `warnings` are data (`kind` plus figures); `render.compare` writes their
    sentences.
    """

    baseline: str
    metrics: list[str]
    conditions: list[ConditionResult]
    rows: list[dict[str, Any]]
    readings: list[dict[str, Any]]
    surface_within: list[dict[str, Any]]
    surface_between: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    startup: list[dict[str, Any]] = field(default_factory=list)  # `compare_sources.startup_rows`

    @property
    def ok(self) -> bool:
        """True when every trace was read and every condition has a run to compare."""
        return all(c.failures == 0 and c.runs for c in self.conditions)

    def row(self, condition: str, metric: str) -> dict[str, Any]:
        """The row of one condition and metric."""
        return next(r for r in self.rows if r["condition"] == condition and r["metric"] == metric)


def compare(
    conditions: Sequence[Condition],
    results: Sequence[RunResult],
    baseline: str | None = None,
    metrics: Sequence[str] | None = None,
) -> Comparison:
    """Compare conditions: per metric, each condition's median and range and its difference to the baseline.

    Parameters
    ----------
    conditions
        From `parse_conditions`.
    results
        One `RunResult` of `RunFigures` per condition, in the same order (`run.conditions.analyze_conditions`).
    baseline
        The condition the others are measured against; None: the first.
    metrics
        Keys of `METRICS` (`parse_metrics`); None: all.

    Returns
    -------
    Comparison
        Runs with no main-thread model call are left out of every figure (`ConditionResult.no_call`): a run
        that never called the model would pull every median to 0.

    Raises
    ------
    ConditionError
        `baseline` is not a condition, or there are fewer than two.
    """
    base_name = pick_baseline(conditions, baseline)
    keys = list(metrics) if metrics else list(METRICS)
    groups = [_condition_result(c, r) for c, r in zip(conditions, results, strict=True)]
    base = next(g for g in groups if g.name == base_name)
    ordered = [base] + [g for g in groups if g is not base]  # within a metric, the baseline's row first
    rows = [metric_row(g.name, METRICS[key], g.runs, None if g is base else base.runs) for key in keys for g in ordered]
    comparison = Comparison(
        baseline=base_name,
        metrics=keys,
        conditions=groups,
        rows=rows,
        readings=[],
        surface_within=[d for g in groups for d in surface_within(g.name, g.runs)],
        surface_between=[
            {"condition": g.name, "baseline": base.name, "differences": surface_between(base.surface, g.surface)}
            for g in groups
            if g is not base and g.runs and base.runs
        ],
        warnings=[],
        startup=startup_rows([(g.name, [r.sources for r in g.runs]) for g in groups if "first" in keys], base_name),
    )
    comparison.readings = readings(comparison)
    comparison.warnings = _warnings(comparison)
    return comparison


def _condition_result(condition: Condition, result: RunResult) -> ConditionResult:
    runs = [r for r in result.reports if r.report.calls > 0]
    no_call = [r.trace for r in result.reports if r.report.calls == 0]
    return ConditionResult(
        name=condition.name,
        paths=list(condition.paths),
        runs=runs,
        no_call=no_call,
        failures=len(result.failures),
        surface=typical_surface(runs),
    )


#: Metrics of spec 004's reading "the difference is what the skill cost or saved over the run".
RUN_METRICS = ("peak", "calls", "cost_usd")


def readings(comparison: Comparison) -> list[dict[str, Any]]:
    """Spec 004's condition table as readings, when the conditions allow them.

    Returns
    -------
    list of dict
        `kind` and the rows (`metric_row`) each is made of:

        - ``baseline``: the baseline's `first`, the harness's own start-up when it ran in a free workspace
          (`condition`, `row`, `offers`: the MCP servers and plugins its start-up offered, `surface.offers`, which
          a free workspace does not);
        - ``startup``: per other condition, first − the baseline's: what its start-up costs on every call
          (`condition`, `baseline`, `row`); then ``startup_sources``, what that difference is made of
          (`compare_sources.startup_reading`);
        - ``run``: per other condition, the differences of `RUN_METRICS` (those compared): what it cost or
          saved over the run (`condition`, `baseline`, `rows`).

        A reading needs its figures on both sides: a condition without runs, or a metric not compared,
        gives none.
    """
    out: list[dict[str, Any]] = []
    base = comparison.baseline
    if "first" in comparison.metrics:
        row = comparison.row(base, "first")
        if row["median"] is not None:
            offered = offers(next(c for c in comparison.conditions if c.name == base).surface)
            out.append({"kind": "baseline", "condition": base, "row": row, "offers": offered})
    for cond in comparison.conditions:
        if cond.name == base:
            continue
        if "first" in comparison.metrics:
            row = comparison.row(cond.name, "first")
            if row["delta"] is not None:
                out.append({"kind": "startup", "condition": cond.name, "baseline": base, "row": row})
            by_source = startup_reading(comparison.startup, cond.name, base)
            out.extend([by_source] if by_source else [])
        rows = [comparison.row(cond.name, m) for m in RUN_METRICS if m in comparison.metrics]
        rows = [r for r in rows if r["delta"] is not None]
        if rows:
            out.append({"kind": "run", "condition": cond.name, "baseline": base, "rows": rows})
    return out


def _warnings(comparison: Comparison) -> list[dict[str, Any]]:
    """What could make the comparison wrong without looking wrong, as data (`kind` plus figures):

    - ``no_runs``: a condition with no run to compare (`condition`, `paths`, `no_call`, `failures`);
    - ``no_call``: runs left out because they made no model call (`condition`, `runs`);
    - ``shared_run``: one trace in two conditions (`trace`, `conditions`);
    - ``surface_within``: a condition's runs differ in what start-up offered (`condition`, `field`,
      `values`; spec 004: "two runs that differ there are not the same condition");
    - ``baseline_offers``: the baseline offers MCP servers or plugins at start-up, which a free
      workspace does not: user-level settings load into every run (`condition`, `mcp_servers`, `plugins`);
    - ``mixed_agents``: the runs come from more than one agent (Claude Code, Codex CLI, Gemini CLI): their
      tokenizers count the same text differently and their windows differ (`agents`: per condition its
      agents, `windows`: the distinct effective windows in tokens, smallest first);
    - ``same_start``: a condition starts as the baseline does (its `first` verdict ``same`` or
      ``within_noise``, `stats.verdict`): if it was meant to load more, the baseline loaded the same
      (spec 004's traps: a CLAUDE.md above the working directory, a user-level ~/.claude/CLAUDE.md)
      (`condition`, `baseline`, `row`, `same_surface`).
    """
    out: list[dict[str, Any]] = []
    for cond in comparison.conditions:
        if not cond.runs:
            out.append(
                {
                    "kind": "no_runs",
                    "condition": cond.name,
                    "paths": cond.paths,
                    "no_call": len(cond.no_call),
                    "failures": cond.failures,
                }
            )
        elif cond.no_call:
            out.append({"kind": "no_call", "condition": cond.name, "runs": cond.no_call})
    seen: dict[str, list[str]] = {}
    for cond in comparison.conditions:
        for run in cond.runs:
            seen.setdefault(run.trace, []).append(cond.name)
    out.extend({"kind": "shared_run", "trace": t, "conditions": c} for t, c in seen.items() if len(c) > 1)
    out.extend({"kind": "surface_within", **d} for d in comparison.surface_within)
    base = next(c for c in comparison.conditions if c.name == comparison.baseline)
    offered = offers(base.surface)
    if offered["mcp_servers"] or offered["plugins"]:
        out.append({"kind": "baseline_offers", "condition": base.name, **offered})
    mixed = mixed_agents(comparison.conditions)
    if mixed:
        out.append(mixed)
    if "first" in comparison.metrics:
        for cond in comparison.conditions:
            if cond is base:
                continue
            row = comparison.row(cond.name, "first")
            if row["verdict"] in ("same", "within_noise"):
                same_surface = not surface_between(base.surface, cond.surface)
                out.append(
                    {
                        "kind": "same_start",
                        "condition": cond.name,
                        "baseline": base.name,
                        "row": row,
                        "same_surface": same_surface,
                    }
                )
    return out
