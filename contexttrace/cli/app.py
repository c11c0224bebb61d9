"""The command-line interface's Typer apps: `contexttrace`, its `context` and `cache` groups, and `main`.

This package is the only one that imports typer. It holds no logic of its own: every figure comes from
`runner.analyze`, every character of a table or JSON from `render`. Each command is one thin function in
its own module (`cli/trace.py`, `cli/usage.py`, ...) over the options of `cli/options.py`, printed through
`cli/output.py`; a command imports what only it needs inside its function, so `context trace --json`
loads no other command's modules. This module only registers the commands, in the order `--help` lists them.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from contexttrace.cli.cache import cache_clear_command, cache_info_command
from contexttrace.cli.compare import compare_command
from contexttrace.cli.files import files_command
from contexttrace.cli.history import history_command
from contexttrace.cli.options import COMPARE_HELP, PATHS_HELP
from contexttrace.cli.report import report_command
from contexttrace.cli.schema import schema_command
from contexttrace.cli.sources import sources_command
from contexttrace.cli.tools import tools_command
from contexttrace.cli.trace import trace_command
from contexttrace.cli.usage import usage_command
from contexttrace.version import __version__

#: `-h` works as `--help` on every command (click passes the setting down to subcommands).
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    help="Show what an AI coding agent held in its context window, from recorded Claude Code, Codex CLI and "
    "Gemini CLI traces.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help: flags show no "<bool>" placeholder
    context_settings=CONTEXT_SETTINGS,
)
context_app = typer.Typer(
    help="Context-window figures of recorded traces.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)
app.add_typer(context_app, name="context")
cache_app = typer.Typer(
    help="The result store: what was read from each trace file, kept so that a re-run reads only what changed.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)
app.add_typer(cache_app, name="cache")


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
    """contexttrace: context-window figures from Claude Code, Codex CLI and Gemini CLI traces."""


context_app.command("trace", epilog=PATHS_HELP)(trace_command)
context_app.command("usage", epilog=PATHS_HELP)(usage_command)
context_app.command("tools", epilog=PATHS_HELP)(tools_command)
context_app.command("sources", epilog=PATHS_HELP)(sources_command)
context_app.command("files", epilog=PATHS_HELP)(files_command)
context_app.command("history")(history_command)
app.command("schema")(schema_command)
context_app.command("compare", epilog=COMPARE_HELP)(compare_command)
cache_app.command("info")(cache_info_command)
cache_app.command("clear")(cache_clear_command)
context_app.command("report", epilog=PATHS_HELP)(report_command)


def main() -> None:
    """Run the command-line interface (the `contexttrace` console script and `python cli.py`)."""
    app()
