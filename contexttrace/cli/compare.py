"""`context compare`: conditions (folders of runs) measured against a baseline (docs/compare.md)."""

from __future__ import annotations

import typer

from contexttrace.cli.options import (
    BaselineOpt,
    ColorOpt,
    CompareFormatOpt,
    CompareJsonOpt,
    CompareWindowOpt,
    ConditionOpt,
    DirsArg,
    EngineOpt,
    MetricOpt,
    NoCacheOpt,
    QuietOpt,
    SchedulerOpt,
    VerboseOpt,
)
from contexttrace.cli.output import command_notes
from contexttrace.errors import ExitCode
from contexttrace.run.engine import EngineName
from contexttrace.select.views import CompareFormat


def compare_command(
    directories: DirsArg = None,
    condition: ConditionOpt = None,
    baseline: BaselineOpt = None,
    metric: MetricOpt = None,
    window: CompareWindowOpt = None,
    json: CompareJsonOpt = False,
    fmt: CompareFormatOpt = CompareFormat.TABLE,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Per condition and metric: the median and range over its runs, the difference to the baseline
    (absolute and %), whether it is within the runs' own noise, and with 5 runs a side a Mann-Whitney p and
    a bootstrap CI; then spec 004's readings and what the conditions' start-up surfaces differ in."""
    from contexttrace.cli.analyze import analyze_paths
    from contexttrace.render.compare import render_compare, render_compare_notes
    from contexttrace.reports.compare import (
        ConditionError,
        build_run,
        compare,
        parse_conditions,
        parse_metrics,
        pick_baseline,
    )

    if json and fmt not in (CompareFormat.TABLE, CompareFormat.JSON):
        raise typer.BadParameter(f"--json and --format {fmt.value} ask for two formats; give one")
    fmt = CompareFormat.JSON if json else fmt
    try:
        conditions = parse_conditions(condition or [], directories or [])
        pick_baseline(conditions, baseline)
        metrics = parse_metrics(metric)
    except ConditionError as exc:
        raise typer.BadParameter(str(exc)) from None
    with command_notes(quiet, verbose) as notes:
        results = [
            analyze_paths(list(c.paths), window, color, not no_cache, engine, scheduler, build=build_run, notes=notes)
            for c in conditions
        ]
        comparison = compare(conditions, results, baseline=baseline, metrics=metrics)
        typer.echo(render_compare(comparison, fmt))
        notes.add(render_compare_notes(comparison, fmt))
        if not comparison.ok:
            raise typer.Exit(ExitCode.TRACE_ERROR)
