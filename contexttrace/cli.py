"""The command-line interface: parse options, call the library, echo what the renderers return.

Only this module imports typer. It holds no logic of its own: every figure comes from `runner.analyze`,
every character of output from `render`.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from . import __version__
from .errors import ExitCode
from .render import OutputFormat, render_diagnostics, render_explain, render_json, render_table, render_usage_table
from .runner import analyze
from .usage import build_usage

app = typer.Typer(
    help="Show what an AI coding agent held in its context window, from recorded Claude Code traces.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help: flags show no "<bool>" placeholder
)
context_app = typer.Typer(
    help="Context-window figures of recorded traces.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(context_app, name="context")

PathsArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[PATH]...",
        help="stream-json captures, session transcripts, directories of them, or - for standard input. "
        "None: the sessions under ~/.claude/projects (or $CLAUDE_CONFIG_DIR/projects).",
        show_default=False,
    ),
]
WindowOpt = Annotated[
    int | None,
    typer.Option(
        "--window",
        min=1,
        metavar="TOKENS",
        help="Context window in tokens. context trace: adds the fill column (peak / window); every command: "
        "the window health, weather and turns-until-autocompact are measured against.",
    ),
]
CallsOpt = Annotated[bool, typer.Option("--calls", help="Also print the prompt tokens of every call.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON list, one object per trace.")]
ExplainOpt = Annotated[
    bool,
    typer.Option(
        "--explain", help="Under the table, per trace: the health breakdown, the health bar and the weather factors."
    ),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"contexttrace {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """contexttrace: context-window figures from Claude Code traces."""


class _StderrProgress:
    """A progress bar on stderr for long runs; silent when stderr is not a terminal."""

    def __init__(self) -> None:
        self._bar: Any = None  # a rich Progress, made on first use (rich is imported only then)
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if total < 8 or not sys.stderr.isatty():
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress

            self._bar = Progress(console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("reading traces", total=total)
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


@context_app.command("trace")
def trace_command(
    paths: PathsArg = None,
    window: WindowOpt = None,
    calls: CallsOpt = False,
    json: JsonOpt = False,
    explain: ExplainOpt = False,
) -> None:
    """Per trace: model calls, first/peak prompt, fill, growth, compactions, tools, failed, repeats, result chars,
    health grade and weather."""
    fmt = OutputFormat.JSON if json else OutputFormat.TABLE
    progress = _StderrProgress()
    try:
        run = analyze(paths or [], window=window, progress=progress)
    finally:
        progress.close()
    for line in render_diagnostics(run):
        typer.echo(line, err=True)
    if fmt is OutputFormat.JSON:
        if explain:
            typer.echo("note: --explain prints under the table; the JSON holds health and weather", err=True)
        typer.echo(render_json(run, with_calls=calls))
    else:
        text = render_table(run, with_window=window is not None, with_calls=calls)
        if text:
            typer.echo(text)
            if explain:
                # Colour only for a person at a terminal (https://no-color.org): pipes and files get plain glyphs.
                color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
                typer.echo("\n" + render_explain(run, color=color))
        elif not run.failures:
            typer.echo("no traces found", err=True)
    if not run.ok:
        raise typer.Exit(ExitCode.TRACE_ERROR)


@context_app.command("usage")
def usage_command(
    paths: PathsArg = None,
    window: WindowOpt = None,
    breakdown: Annotated[
        bool,
        typer.Option("--breakdown", help="Also print per-model, per-thread and per-agent rows and the turn readings."),
    ] = False,
    json: JsonOpt = False,
) -> None:
    """Per trace: calls, turns, fresh input, cache write, cache read, output, cache hit ratio, cost USD, subagents."""
    fmt = OutputFormat.JSON if json else OutputFormat.TABLE
    progress = _StderrProgress()
    try:
        run = analyze(paths or [], window=window, progress=progress, build=build_usage)
    finally:
        progress.close()
    for line in render_diagnostics(run):
        typer.echo(line, err=True)
    if fmt is OutputFormat.JSON:
        typer.echo(render_json(run))
    else:
        text = render_usage_table(run, breakdown=breakdown)
        if text:
            typer.echo(text)
        elif not run.failures:
            typer.echo("no traces found", err=True)
    if not run.ok:
        raise typer.Exit(ExitCode.TRACE_ERROR)


def main() -> None:
    """Run the command-line interface (the `contexttrace` console script)."""
    app()
