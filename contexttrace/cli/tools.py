"""`context tools`: per tool, what its calls cost the context (docs/tools.md)."""

from __future__ import annotations

import typer

from contexttrace.cli.options import (
    AllowEmptyOpt,
    ByToolOpt,
    ColorOpt,
    EngineOpt,
    JsonOpt,
    NoCacheOpt,
    PathsArg,
    QuietOpt,
    ReadingsWindowOpt,
    SchedulerOpt,
    ToolsSortOpt,
    VerboseOpt,
)
from contexttrace.run.engine import EngineName


def tools_command(
    paths: PathsArg = None,
    json: JsonOpt = False,
    sort: ToolsSortOpt = "calls",
    by_tool: ByToolOpt = False,
    window: ReadingsWindowOpt = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    allow_empty: AllowEmptyOpt = False,
) -> None:
    """Per tool (MCP tools as mcp:<server>), main thread and subagents apart: calls, errors, denials, error
    classes, p50/p95 duration, tokens and input into the context and the re-read tax; then the largest
    single results (docs/tools.md)."""
    from contexttrace.cli.analyze import analyze_paths
    from contexttrace.cli.output import command_notes, print_reading
    from contexttrace.render.tools import render_tools_json, render_tools_table
    from contexttrace.reports.tools import SORT_KEYS, build_tools

    if sort not in SORT_KEYS:
        raise typer.BadParameter(f"{sort!r}: one of {', '.join(SORT_KEYS)}", param_hint="--sort")
    with command_notes(quiet, verbose) as notes:
        run = analyze_paths(paths or [], window, color, not no_cache, engine, scheduler, build=build_tools, notes=notes)
        text = (render_tools_json if json else render_tools_table)(run, sort=sort, by_tool=by_tool)
        print_reading(run, text, json, paths or [], notes, allow_empty)
