"""Compare conditions: the same task run in several set-ups (spec 004, "Comparing context layers").

A *condition* is a named set of runs (a free workspace, one loaded with guidance, a task with and without
a skill). This module turns the runs' reports into what `context compare` shows: per condition and
metric the median and range over the runs, the difference of the medians against the baseline condition,
whether that difference is larger than the runs' own spread, with enough runs a rank test and a bootstrap
interval, the readings of spec 004's condition table, and what the conditions' start-up surfaces differ in.

It holds data, never text: numbers are formatted and sentences written in `render_compare`. It never
prints. The statistics come from scipy (`rank_test`, `median_difference_ci`), imported only when a
comparison has enough runs for them, so no other command pays for the import (about 0.8 s).
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
from contexttrace.reports.trace import DiagnosticsOfReport, RunResult, TraceReport, build_report
from contexttrace.reports.usage import UsageReport, build_usage
from contexttrace.run.runner import analyze

#: Version of the `context compare --json` object; bump it when a key changes meaning or goes away.
SCHEMA_VERSION = 1

#: Runs needed on each side before the rank test and the bootstrap interval are given. With 4 + 4 runs
#: the smallest two-sided p a rank test can reach is 2/70 = 0.029, with 3 + 3 it is 0.1: below 5 + 5
#: (2/252 = 0.008) a p-value says more about N than about the conditions.
MIN_RUNS_FOR_TEST = 5

#: Resamples of the bootstrap interval, and the most splits the rank test enumerates exactly.
RESAMPLES = 9_999

#: Seed of every resampling, so the same runs give the same p-values and intervals.
SEED = 20_260_501

#: Coverage of the bootstrap interval of the median difference.
CI_LEVEL = 0.95


class ConditionError(ValueError):
    """A condition, baseline or metric named on the command line cannot be used (a usage error)."""


# -- one run ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFigures(DiagnosticsOfReport):
    """Both reports of one run: the `context trace` figures and the `context usage` cost, built in one read.

    The attributes `render.render_diagnostics` reads (path, skipped lines, warnings, ...) are the trace
    report's, so a comparison's diagnostics print as `context trace`'s do.
    """

    report: TraceReport
    usage: UsageReport

    @property
    def warnings(self) -> list[str]:
        """The trace's warnings, then the cost's own (a subagent not found, a `modelUsage` not read)."""
        return self.report.warnings + [w for w in self.usage.warnings if w not in self.report.warnings]


def build_run(trace: Trace, window: int | None = None) -> RunFigures:
    """Build both reports of one trace: the `build` that `context compare` passes to `runner.analyze`.

    Parameters
    ----------
    trace
        A trace from `reader.read_trace` (after `drop_inherited_calls`).
    window
        `--window` in tokens, or None (the health score is then measured against the trace's own window).

    Returns
    -------
    RunFigures
        `report.build_report` and `usage.build_usage` of the trace, read once.
    """
    return RunFigures(build_report(trace, window), build_usage(trace, window))


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
    """A named set of runs: the paths `runner.analyze` reads for it (globs already expanded)."""

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


def parse_conditions(options: Sequence[str], directories: Sequence[str] = ()) -> list[Condition]:
    """The conditions named by `--condition NAME=PATH` options and bare directory arguments.

    Parameters
    ----------
    options
        ``NAME=PATH`` values, PATH a file, a directory or a glob (``runs/loaded/*.jsonl``, expanded here,
        sorted; ``**`` reaches into subfolders). The same NAME given again adds its paths to the
        condition.
    directories
        Directories, one condition each, named by the folder (``runs/free/`` is ``free``).

    Returns
    -------
    list of Condition
        The `--condition` ones in the order of their first mention, then the directories in order.

    Raises
    ------
    ConditionError
        A value without ``NAME=``, an empty name or path, a glob matching nothing, a bare argument that is
        not a directory (a shell-expanded glob leaves its files as bare arguments: the message says to
        quote it), or two conditions with one name.

    Examples
    --------
    >>> [(c.name, c.paths) for c in parse_conditions(["free=a.jsonl", "loaded=b.jsonl", "free=c.jsonl"])]
    [('free', ('a.jsonl', 'c.jsonl')), ('loaded', ('b.jsonl',))]
    """
    named: dict[str, list[str]] = {}
    for option in options:
        name, eq, pattern = option.partition("=")
        name, pattern = name.strip(), pattern.strip()
        if not eq or not name or not pattern:
            raise ConditionError(f"--condition {option!r}: expected NAME=PATH (a file, directory or quoted glob)")
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


def analyze_conditions(
    conditions: Sequence[Condition],
    window: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> list[RunResult]:
    """Read every condition's runs (`runner.analyze` with `build_run`), one `RunResult` per condition.

    Conditions are read apart: a run is never compared with, nor dropped as a copy of, another condition's.
    """
    return [
        analyze(list(c.paths), window=window, progress=progress, workers=workers, build=build_run) for c in conditions
    ]


# -- statistics ------------------------------------------------------------------------------------


Number = float | int


def spread(values: Sequence[Number]) -> Number | None:
    """The runs' own spread: the interquartile range, Q3 − Q1, the width of the middle half of the runs
    (quartiles interpolated linearly between runs, `statistics.quantiles(method="inclusive")`, numpy's
    default). None with fewer than two runs: no spread was measured.

    Not max − min: the range widens with every run added (an outlier run sets it alone), so with 20 runs
    a side a shift of three standard deviations would still sit "within" it; the interquartile range
    stays about 1.35 standard deviations whatever the number of runs.

    >>> spread([3, 4, 4, 4, 44]), spread([10, 20]), spread([7])
    (0, 5, None)
    """
    if len(values) < 2:
        return None
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return _plain(q3 - q1)


def noise_of(baseline: Sequence[Number], values: Sequence[Number]) -> Number | None:
    """The noise a difference of medians is held against: the wider of the two conditions' spreads
    (`spread`), over the sides with two runs or more; None when neither side has two.

    >>> noise_of([10, 12, 20], [30]), noise_of([10], [30])
    (5, None)
    """
    spreads = [s for s in (spread(baseline), spread(values)) if s is not None]
    return max(spreads) if spreads else None


def within_noise(delta: Number, noise: Number | None) -> bool | None:
    """True when a difference of medians is not larger than the noise: ``|delta| <= noise`` (floats
    compared with a relative tolerance of 1e-9, so a cost's rounding never decides); None without noise.

    >>> within_noise(5, 5), within_noise(-6, 5), within_noise(0, 0), within_noise(3, None)
    (True, False, True, None)
    """
    if noise is None:
        return None
    return abs(delta) <= noise or math.isclose(abs(delta), noise, rel_tol=1e-9, abs_tol=1e-12)


def rank_test(baseline: Sequence[Number], values: Sequence[Number]) -> float | None:
    """Two-sided Mann–Whitney U p-value of `values` against `baseline` (scipy.stats.mannwhitneyu).

    Exact when the two samples can be split in at most `RESAMPLES` ways (up to 7 + 7 runs): every split
    is enumerated (a permutation test of U, which treats ties exactly). Larger samples use the normal
    approximation with the tie correction, scipy's own choice for them.

    Returns
    -------
    float or None
        The p-value (0–1); None with fewer than `MIN_RUNS_FOR_TEST` runs on either side.

    Examples
    --------
    >>> round(rank_test([1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]), 6)  # exact: 2 of C(12, 6) = 924 splits
    0.002165
    """
    if min(len(baseline), len(values)) < MIN_RUNS_FOR_TEST:
        return None
    import numpy as np
    from scipy.stats import PermutationMethod, mannwhitneyu

    if math.comb(len(baseline) + len(values), len(values)) <= RESAMPLES:
        method: Any = PermutationMethod(n_resamples=RESAMPLES, rng=np.random.default_rng(SEED))
    else:
        method = "asymptotic"
    p = float(mannwhitneyu(values, baseline, alternative="two-sided", method=method).pvalue)
    return None if math.isnan(p) else min(p, 1.0)


def median_difference_ci(baseline: Sequence[Number], values: Sequence[Number]) -> tuple[float, float] | None:
    """A `CI_LEVEL` bootstrap interval of median(values) − median(baseline) (scipy.stats.bootstrap).

    Each side is resampled apart (`RESAMPLES` times, seeded with `SEED`: the same runs give the same
    interval); percentile method, which stays defined when every resample gives the same median (counts
    often do), where BCa does not.

    Returns
    -------
    (float, float) or None
        (low, high) in the metric's unit; None with fewer than `MIN_RUNS_FOR_TEST` runs on either side.

    Examples
    --------
    >>> median_difference_ci([4, 4, 4, 4, 4], [6, 6, 6, 6, 6])
    (2.0, 2.0)
    """
    if min(len(baseline), len(values)) < MIN_RUNS_FOR_TEST:
        return None
    import warnings

    import numpy as np
    from scipy.stats import bootstrap

    def difference(base: Any, other: Any, axis: int = -1) -> Any:
        return np.median(other, axis=axis) - np.median(base, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning when every resample agrees: the interval is exact
        result = bootstrap(
            (np.asarray(baseline, dtype=float), np.asarray(values, dtype=float)),
            difference,
            n_resamples=RESAMPLES,
            confidence_level=CI_LEVEL,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(SEED),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return None if math.isnan(low) or math.isnan(high) else (low, high)


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
        `ci_high` (`median_difference_ci`), `lower_bound_runs` (runs whose value is a lower bound). Every
        figure None when it cannot be computed (no run with a value, the baseline's own row, too few runs).
    """
    values = _values(metric, runs)
    row: dict[str, Any] = {
        "condition": condition,
        "metric": metric.key,
        "unit": metric.unit,
        "runs": len(values),
        "median": _plain(statistics.median(values)) if values else None,
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "delta": None,
        "delta_pct": None,
        "noise": None,
        "within_noise": None,
        "p_value": None,
        "ci_low": None,
        "ci_high": None,
        "lower_bound_runs": sum(1 for r in runs if metric.value(r) is not None and metric.lower_bound(r)),
    }
    base = _values(metric, baseline_runs) if baseline_runs is not None else []
    if not values or not base:
        return row
    base_median = statistics.median(base)
    delta = _plain(row["median"] - base_median)
    noise = noise_of(base, values)
    ci = median_difference_ci(base, values)
    row.update(
        delta=delta,
        delta_pct=delta / base_median * 100 if base_median else None,
        noise=noise,
        within_noise=within_noise(delta, noise),
        p_value=rank_test(base, values),
        ci_low=_plain(ci[0]) if ci else None,
        ci_high=_plain(ci[1]) if ci else None,
    )
    return row


def _plain(value: Number) -> Number:
    """A whole number as an int (the median of an even count of runs, a bootstrap bound are floats), so
    JSON and CSV write ``3000``, not ``3000.0``; other values unchanged."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _values(metric: Metric, runs: Sequence[RunFigures]) -> list[Number]:
    out = []
    for run in runs:
        value = metric.value(run)
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            out.append(value)
    return out


# -- surface ---------------------------------------------------------------------------------------


#: What start-up offered, compared between runs (spec 004: "two runs that differ there are not the same
#: condition"): key -> kind. `count`: how many the `system/init` line lists; `names`: the names it lists;
#: `value`: one string. Transcripts record no init line: only `model` and `cli_version` are known there.
SURFACE_FIELDS: dict[str, str] = {
    "tools": "count",
    "skills": "count",
    "agents": "count",
    "slash_commands": "count",
    "mcp_servers": "names",
    "plugins": "names",
    "model": "value",
    "cli_version": "value",
    "permission_mode": "value",
}


def run_surface(report: TraceReport) -> dict[str, Any]:
    """The surface of one run: `SURFACE_FIELDS` from its `system/init` line (names sorted), the model
    (the init line's, else the first model called) and the CLI version; None for what it does not record.

    >>> from types import SimpleNamespace as R
    >>> run_surface(R(surface=None, models=["claude-opus-4-5"], cli_version="2.1.3"))["model"]
    'claude-opus-4-5'
    """
    init = report.surface or {}
    out: dict[str, Any] = {}
    for key, kind in SURFACE_FIELDS.items():
        value = init.get(key)
        out[key] = sorted(value) if kind == "names" and isinstance(value, list) else value
    out["model"] = init.get("model") or (report.models[0] if report.models else None)
    out["cli_version"] = report.cli_version
    return out


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def surface_groups(runs: Sequence[RunFigures], key: str) -> list[dict[str, Any]]:
    """The runs grouped by their value of one surface field: `value` and `runs` (trace ids), the largest
    group first (ties: the value seen first)."""
    groups: dict[Any, dict[str, Any]] = {}
    for run in runs:
        value = run_surface(run.report)[key]
        groups.setdefault(_key(value), {"value": value, "runs": []})["runs"].append(run.trace)
    return sorted(groups.values(), key=lambda g: -len(g["runs"]))  # stable: first seen wins a tie


def typical_surface(runs: Sequence[RunFigures]) -> dict[str, Any] | None:
    """A condition's surface: per field, the value most of its runs have (None without runs)."""
    if not runs:
        return None
    return {key: surface_groups(runs, key)[0]["value"] for key in SURFACE_FIELDS}


def surface_within(condition: str, runs: Sequence[RunFigures]) -> list[dict[str, Any]]:
    """Where a condition's runs differ among themselves: one entry per field with more than one value.

    Returns
    -------
    list of dict
        `condition`, `field`, `values` (`surface_groups`: each value with the trace ids of its runs).
    """
    out = []
    for key in SURFACE_FIELDS:
        groups = surface_groups(runs, key)
        if len(groups) > 1:
            out.append({"condition": condition, "field": key, "values": groups})
    return out


def surface_between(baseline: dict[str, Any] | None, other: dict[str, Any] | None) -> list[dict[str, Any]]:
    """What a condition's surface differs in from the baseline's: per field that differs, `field`,
    `baseline` (its value there) and `value` (this condition's); for names also `added` and `removed`.

    >>> for d in surface_between({"skills": 0, "mcp_servers": ["a"]}, {"skills": 1, "mcp_servers": ["a", "b"]}):
    ...     print(d)
    {'field': 'skills', 'baseline': 0, 'value': 1}
    {'field': 'mcp_servers', 'baseline': ['a'], 'value': ['a', 'b'], 'added': ['b'], 'removed': []}
    """
    if baseline is None or other is None:
        return []
    out = []
    for key, kind in SURFACE_FIELDS.items():
        if key not in baseline and key not in other:
            continue
        base, value = baseline.get(key), other.get(key)
        if _key(base) == _key(value):
            continue
        entry: dict[str, Any] = {"field": key, "baseline": base, "value": value}
        if kind == "names" and isinstance(base, list) and isinstance(value, list):
            entry["added"] = sorted(set(value) - set(base))
            entry["removed"] = sorted(set(base) - set(value))
        out.append(entry)
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
    they are. `readings` and `warnings` are data (`kind` plus figures); `render_compare` writes their
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
        One `RunResult` of `RunFigures` per condition, in the same order (`analyze_conditions`).
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
          (`condition`, `row`, `offers`: the MCP servers and plugins its start-up offered, `_offers`, which
          a free workspace does not);
        - ``startup``: per other condition, first − the baseline's: what its start-up costs on every call
          (`condition`, `baseline`, `row`);
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
            offers = _offers(next(c for c in comparison.conditions if c.name == base).surface)
            out.append({"kind": "baseline", "condition": base, "row": row, "offers": offers})
    for cond in comparison.conditions:
        if cond.name == base:
            continue
        if "first" in comparison.metrics:
            row = comparison.row(cond.name, "first")
            if row["delta"] is not None:
                out.append({"kind": "startup", "condition": cond.name, "baseline": base, "row": row})
        rows = [comparison.row(cond.name, m) for m in RUN_METRICS if m in comparison.metrics]
        rows = [r for r in rows if r["delta"] is not None]
        if rows:
            out.append({"kind": "run", "condition": cond.name, "baseline": base, "rows": rows})
    return out


def _offers(surface: dict[str, Any] | None) -> dict[str, list[str]]:
    """The MCP servers and plugins a surface lists: what a free workspace's start-up does not offer."""
    surface = surface or {}
    return {"mcp_servers": surface.get("mcp_servers") or [], "plugins": surface.get("plugins") or []}


def _warnings(comparison: Comparison) -> list[dict[str, Any]]:
    """What could make the comparison wrong without looking wrong, as data (`kind` plus figures):

    - ``no_runs``: a condition with no run to compare (`condition`, `paths`, `no_call`, `failures`);
    - ``no_call``: runs left out because they made no model call (`condition`, `runs`);
    - ``shared_run``: one trace in two conditions (`trace`, `conditions`);
    - ``surface_within``: a condition's runs differ in what start-up offered (`condition`, `field`,
      `values`; spec 004: "two runs that differ there are not the same condition");
    - ``baseline_offers``: the baseline offers MCP servers or plugins at start-up, which a free
      workspace does not: user-level settings load into every run (`condition`, `mcp_servers`, `plugins`);
    - ``same_start``: a condition starts as the baseline does (its `first` within the noise of the
      baseline's, or equal with one run each): if it was meant to load more, the baseline loaded the same
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
    offers = _offers(base.surface)
    if offers["mcp_servers"] or offers["plugins"]:
        out.append({"kind": "baseline_offers", "condition": base.name, **offers})
    if "first" in comparison.metrics:
        for cond in comparison.conditions:
            if cond is base:
                continue
            row = comparison.row(cond.name, "first")
            same = row["within_noise"] if row["within_noise"] is not None else row["delta"] == 0
            if row["delta"] is not None and same:
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
