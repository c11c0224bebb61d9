"""`context sources`: what filled the window at one call (docs/sources.md)."""

from __future__ import annotations

from functools import partial

import typer

from contexttrace.cli.options import (
    ColorOpt,
    EngineOpt,
    JsonOpt,
    NoCacheOpt,
    PathsArg,
    ReadingsWindowOpt,
    SchedulerOpt,
    SourcesAtOpt,
    StepsOpt,
    ThreadOpt,
)
from contexttrace.run.engine import EngineName


def sources_command(
    paths: PathsArg = None,
    json: JsonOpt = False,
    at: SourcesAtOpt = "last",
    steps: StepsOpt = False,
    thread: ThreadOpt = "main",
    window: ReadingsWindowOpt = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
) -> None:
    """What filled the window at one call: prefix, files, bash output, mcp results, agent returns, web, other
    results, prompts, harness, thinking, tool inputs, prose, summary, other, with the context reference and
    the estimator's line (docs/sources.md)."""
    from contexttrace.cli.analyze import analyze_paths
    from contexttrace.cli.output import print_reading
    from contexttrace.render.sources import render_sources_json, render_sources_table
    from contexttrace.reports.sources import build_sources, is_at_choice, unknown_thread

    if not is_at_choice(at):
        raise typer.BadParameter(f"{at!r}: last, peak or a call number from 1", param_hint="--at")
    build = partial(build_sources, at=at, thread=thread)
    run = analyze_paths(paths or [], window, color, not no_cache, engine, scheduler, build=build)
    unknown = unknown_thread(run.reports, thread)
    if unknown:
        raise typer.BadParameter(unknown, param_hint="--thread")
    text = render_sources_json(run) if json else render_sources_table(run, steps=steps)
    print_reading(run, text, json, paths or [])
