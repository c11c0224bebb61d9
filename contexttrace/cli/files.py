"""`context files`: per file the main thread touched, whether it is still in the window (docs/files.md)."""

from __future__ import annotations

from functools import partial

import typer

from contexttrace.cli.options import (
    AllowEmptyOpt,
    ColorOpt,
    EngineOpt,
    FilesAtOpt,
    JsonOpt,
    NoCacheOpt,
    PathsArg,
    QuietOpt,
    ReadingsWindowOpt,
    SchedulerOpt,
    VerboseOpt,
)
from contexttrace.run.engine import EngineName


def files_command(
    paths: PathsArg = None,
    json: JsonOpt = False,
    at: FilesAtOpt = "last",
    window: ReadingsWindowOpt = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    allow_empty: AllowEmptyOpt = False,
) -> None:
    """Per file the main thread touched: touches, reads, writes, re-reads, tokens read and written, references,
    last seen, spec 003's relevance and level (DROPPED when its content left the window), whether it is in
    the window; then the drop events (docs/files.md)."""
    from contexttrace.cli.analyze import analyze_paths
    from contexttrace.cli.output import command_notes, print_reading
    from contexttrace.render.files import render_files_json, render_files_table
    from contexttrace.reports.files import At, build_files, parse_at

    try:
        moment: At = parse_at(at)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--at") from None
    build = partial(build_files, at=moment)
    with command_notes(quiet, verbose) as notes:
        run = analyze_paths(paths or [], window, color, not no_cache, engine, scheduler, build=build, notes=notes)
        text = (render_files_json if json else render_files_table)(run)
        print_reading(run, text, json, paths or [], notes, allow_empty)
