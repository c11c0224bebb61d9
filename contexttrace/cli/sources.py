"""`context sources`: what filled the window at one call (docs/sources.md)."""

from __future__ import annotations

from functools import partial

import typer

from contexttrace.cli.options import (
    AllowEmptyOpt,
    ColorOpt,
    EngineOpt,
    JsonOpt,
    NoCacheOpt,
    PathsArg,
    QuietOpt,
    ReadingsWindowOpt,
    SchedulerOpt,
    SourcesAtOpt,
    SourcesViewOpt,
    StepsOpt,
    ThreadOpt,
    VerboseOpt,
)
from contexttrace.run.engine import EngineName


def sources_command(
    paths: PathsArg = None,
    json: JsonOpt = False,
    at: SourcesAtOpt = "last",
    steps: StepsOpt = False,
    view: SourcesViewOpt = "rows",
    thread: ThreadOpt = "main",
    window: ReadingsWindowOpt = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    allow_empty: AllowEmptyOpt = False,
) -> None:
    """What filled the window at one call: prefix, files, bash output, mcp results, agent returns, web, other
    results, prompts, harness, thinking, tool inputs, prose, summary, other, with the context reference and
    the estimator's line (docs/sources.md); `--view claude` prints them in Claude Code's /context words."""
    from contexttrace.cli.analyze import analyze_paths
    from contexttrace.cli.output import command_notes, print_reading
    from contexttrace.render.sources import VIEWS, render_sources_claude, render_sources_json, render_sources_table
    from contexttrace.reports.sources import build_sources, is_at_choice, unknown_thread

    if not is_at_choice(at):
        raise typer.BadParameter(f"{at!r}: last, peak or a call number from 1", param_hint="--at")
    if view not in VIEWS:
        raise typer.BadParameter(f"{view!r}: rows or claude", param_hint="--view")
    build = partial(build_sources, at=at, thread=thread)
    with command_notes(quiet, verbose) as notes:
        run = analyze_paths(paths or [], window, color, not no_cache, engine, scheduler, build=build, notes=notes)
        unknown = unknown_thread(run.reports, thread)
        if unknown:
            raise typer.BadParameter(unknown, param_hint="--thread")
        if json:
            text = render_sources_json(run)
        elif view == "claude":
            text = render_sources_claude(run)
        else:
            text = render_sources_table(run, steps=steps)
        print_reading(run, text, json, paths or [], notes, allow_empty)
