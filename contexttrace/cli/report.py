"""`context report`: one self-contained HTML page of the traces (docs/report.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from contexttrace.cli.options import (
    AllowEmptyOpt,
    ColorOpt,
    EngineOpt,
    NoCacheOpt,
    OpenOpt,
    PathsArg,
    QuietOpt,
    ReportBaselineOpt,
    ReportConditionOpt,
    ReportOutputOpt,
    SchedulerOpt,
    TraceWindowOpt,
    VerboseOpt,
)
from contexttrace.errors import ExitCode
from contexttrace.run.engine import EngineName

if TYPE_CHECKING:
    from contexttrace.cli.output import Notes


def report_command(
    paths: PathsArg = None,
    window: TraceWindowOpt = None,
    output: ReportOutputOpt = "contexttrace-report.html",
    open_page: OpenOpt = False,
    condition: ReportConditionOpt = None,
    baseline: ReportBaselineOpt = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    allow_empty: AllowEmptyOpt = False,
) -> None:
    """One self-contained HTML page (no network: styles, script, data and charts inline): an index of the
    traces, then per trace its header, context gauges, growth chart, health bar and breakdown, weather and
    largest tool results; with --condition, a comparison first. Needs the html extra: pip install
    'contexttrace[html]'."""  # fmt: skip
    from contexttrace.cli.analyze import analyze_paths
    from contexttrace.cli.output import command_notes, finish
    from contexttrace.render.html.charts import (  # light: finds the extra without importing it
        INSTALL_HINT,
        missing_extras,
    )
    from contexttrace.reports.results import RunResult

    missing = missing_extras()
    if missing:
        typer.echo(f"Error: context report needs {', '.join(missing)}; install them with: {INSTALL_HINT}", err=True)
        raise typer.Exit(ExitCode.USAGE)
    from contexttrace.render.html.compare_view import compare_view
    from contexttrace.render.html.data import build_page
    from contexttrace.render.html.page import render_page
    from contexttrace.render.html.section import build_section

    with command_notes(quiet, verbose) as notes:

        def read(some: list[str]) -> RunResult:
            return analyze_paths(some, window, color, not no_cache, engine, scheduler, build=build_section, notes=notes)

        comparison, names = None, None
        if condition:
            from contexttrace.reports.compare import ConditionError, parse_conditions, pick_baseline

            try:
                conditions = parse_conditions(condition, paths or [])
                pick_baseline(conditions, baseline)
            except ConditionError as exc:
                raise typer.BadParameter(str(exc)) from None
            results = [read(list(c.paths)) for c in conditions]
            run = RunResult(
                reports=[s for r in results for s in r.reports], failures=[f for r in results for f in r.failures]
            )
            comparison = compare_view(conditions, results, baseline)
            names = [c.name for c, r in zip(conditions, results, strict=True) for _ in r.reports]
        else:
            run = read(paths or [])
        if run.reports or run.failures:
            page = build_page(run, window=window, paths=paths or condition or [], compare=comparison, conditions=names)
            html = render_page(page)
            _write_page(html, output, len(run.reports), open_page, notes)
        finish(run, paths or [], notes=notes, allow_empty=allow_empty)


def _write_page(html: str, output: str, traces: int, open_page: bool, notes: Notes) -> None:
    """Write the page to `output` (``-``: standard output), say so on stderr, open it when asked."""
    if output == "-":
        typer.echo(html, nl=False)
        return
    try:
        Path(output).write_text(html, encoding="utf-8")
    except OSError as exc:
        typer.echo(f"Error: {output}: cannot write the report ({exc.strerror or exc})", err=True)
        raise typer.Exit(ExitCode.USAGE) from None
    size = len(html.encode("utf-8"))
    notes.add([f"wrote {output}: {traces} trace(s), {size / 1e6:.1f} MB"])
    if open_page:
        import webbrowser

        webbrowser.open(Path(output).resolve().as_uri())
