"""The comparison that opens `context report -c NAME=PATH ...`'s page: each metric per condition, as `context
compare` computes and prints it, and the chart's points (each run, each median).

Pure: no HTML, no chart library, nothing printed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from contexttrace.render.compare import label, verdict_cell
from contexttrace.render.compare_startup import startup_view
from contexttrace.render.text import fmt_figure, fmt_p, fmt_percent_change
from contexttrace.reports import compare as cmp
from contexttrace.reports.results import RunResult

#: The columns of the chart's points.
POINT_COLUMNS = ("metric", "condition", "value", "trace", "href", "kind")


def compare_view(
    conditions: Sequence[Any], results: Sequence[RunResult], baseline: str | None = None, first_number: int = 1
) -> dict[str, Any]:
    """The comparison section: each metric per condition, the runs as points and the median marked.

    Parameters
    ----------
    conditions
        `compare.Condition`s (`compare.parse_conditions`).
    results
        One run of `TraceSection`s per condition, in the same order (`runner.analyze` with `build_section`).
    baseline
        The baseline condition's name; None: the first.
    first_number
        The page number of the first condition's first trace (the sections are the conditions' runs in
        order), so each point links to its run's section.

    Returns
    -------
    dict
        `baseline`, `conditions` (name, paths, runs, runs with no call, failures), `rows` (`compare.metric_row`'s
        figures per metric and condition, formatted as `context compare` prints them), `warnings` (their
        kinds), `startup` (`compare_startup.startup_view`: the first call's rows per condition and their
        differences, None without them), `datasets` for the chart: `runs` (one row per run and metric:
        `metric`, `condition`, `value`, `trace`, `href`, `kind` "run") and the medians (`kind` "median"), and
        `height` (px).
    """
    figures = [
        RunResult(
            reports=[cmp.RunFigures(s.report, s.usage, s.first_sources) for s in r.reports], failures=list(r.failures)
        )
        for r in results
    ]
    comparison = cmp.compare(conditions, figures, baseline=baseline)
    return {
        "baseline": comparison.baseline,
        "conditions": [
            {
                "name": g.name,
                "paths": list(g.paths),
                "runs": len(g.runs),
                "no_call": len(g.no_call),
                "failures": g.failures,
            }
            for g in comparison.conditions
        ],
        "rows": [_row(r) for r in comparison.rows],
        "warnings": [w.get("kind", "") for w in comparison.warnings],
        "startup": startup_view(comparison.startup, comparison.baseline),
        "datasets": {"runs": _points(comparison, _page_numbers(results, first_number))},
        "height": 26 * len(comparison.conditions) + 24,
    }


def _page_numbers(results: Sequence[RunResult], first_number: int) -> dict[int, int]:
    """id of each run's report → its section's number in the page (the conditions' runs, in order)."""
    numbers: dict[int, int] = {}
    k = first_number
    for r in results:
        for s in r.reports:
            numbers[id(s.report)] = k
            k += 1
    return numbers


def _points(comparison: cmp.Comparison, numbers: dict[int, int]) -> dict[str, list[Any]]:
    """The chart's points, columnar: per metric and condition each run's value (linking to its section),
    then the median; a run without the figure is left out."""
    points: dict[str, list[Any]] = {k: [] for k in POINT_COLUMNS}

    def add(*values: Any) -> None:
        for key, value in zip(POINT_COLUMNS, values, strict=True):
            points[key].append(value)

    for key in comparison.metrics:
        metric = cmp.METRICS[key]
        for group in comparison.conditions:
            for run in group.runs:
                value = metric.value(run)
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    continue
                add(label(key), group.name, value, run.report.trace, f"#t{numbers.get(id(run.report), 0)}", "run")
            row = comparison.row(group.name, key)
            if row["median"] is not None:
                add(label(key), group.name, row["median"], f"median of {row['runs']} run(s)", "", "median")
    return points


def _row(r: dict[str, Any]) -> dict[str, Any]:
    """One metric and condition as the page's table shows it (`compare.metric_row`'s figures, formatted)."""
    return {
        "metric": label(r["metric"]),
        "condition": r["condition"],
        "runs": r["runs"],
        "median": fmt_figure(r["median"], r["unit"]),
        "range": "–" if r["min"] is None else f"{fmt_figure(r['min'], r['unit'])}–{fmt_figure(r['max'], r['unit'])}",
        "delta": fmt_figure(r["delta"], r["unit"], signed=True),
        "delta_pct": "–" if r["delta_pct"] is None else fmt_percent_change(r["delta_pct"], 0),
        "verdict": verdict_cell(r) if r["delta"] is not None else "",
        "p": fmt_p(r["p_value"]),
    }
