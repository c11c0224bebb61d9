"""The command-line interface's Typer apps: `contexttrace`, its `context` and `cache` groups, and `main`.

This package is the only one that imports typer. It holds no logic of its own: every figure comes from
`runner.analyze`, every character of a table or JSON from `render`. Each command is one thin function in
its own module (`cli/trace.py`, `cli/usage.py`, ...) over the options of `cli/options.py`, printed through
`cli/output.py`; a command imports what only it needs inside its function, so `context trace --json`
loads no other command's modules. This module only registers the commands, in the order `--help` lists them.
"""

from __future__ import annotations

from contexttrace.cli import startup  # first: the collector paused while the rest is imported

# isort: split
import codecs
import sys
from collections.abc import Callable
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

#: Every command, in the order `--help` lists them: (group, name) -> (function, epilog). The group is
#: ``""`` for a command of `contexttrace` itself.
COMMANDS: dict[tuple[str, str], tuple[Callable[..., None], str | None]] = {
    ("context", "trace"): (trace_command, PATHS_HELP),
    ("context", "usage"): (usage_command, PATHS_HELP),
    ("context", "tools"): (tools_command, PATHS_HELP),
    ("context", "sources"): (sources_command, PATHS_HELP),
    ("context", "files"): (files_command, PATHS_HELP),
    ("context", "history"): (history_command, None),
    ("", "schema"): (schema_command, None),
    ("context", "compare"): (compare_command, COMPARE_HELP),
    ("cache", "info"): (cache_info_command, None),
    ("cache", "clear"): (cache_clear_command, None),
    ("context", "report"): (report_command, PATHS_HELP),
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"contexttrace {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """contexttrace: context-window figures from Claude Code, Codex CLI and Gemini CLI traces."""


def make_app(only: tuple[str, str] | None = None) -> typer.Typer:
    """The `contexttrace` Typer app with its `context` and `cache` groups and every command of `COMMANDS`,
    or only the command `only` names (its group kept, so its usage line, help and errors read the same).

    Typer turns every registered command's signature into options each time the app runs (a tenth of a
    small `context trace`'s time for the other ten commands), so `main` registers only the command the
    arguments name.
    """
    app = typer.Typer(
        help="Show what an AI coding agent held in its context window, from recorded Claude Code, Codex CLI "
        "and Gemini CLI traces.",
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,  # plain help: flags show no "<bool>" placeholder
        context_settings=CONTEXT_SETTINGS,
    )
    groups = {
        "context": typer.Typer(
            help="Context-window figures of recorded traces.",
            no_args_is_help=True,
            rich_markup_mode=None,
            context_settings=CONTEXT_SETTINGS,
        ),
        "cache": typer.Typer(
            help="The result store: what was read from each trace file, kept so that a re-run reads only what changed.",
            no_args_is_help=True,
            rich_markup_mode=None,
            context_settings=CONTEXT_SETTINGS,
        ),
    }
    for name, group in groups.items():
        app.add_typer(group, name=name)
    app.callback()(_main)
    for (group_name, name), (function, epilog) in COMMANDS.items():
        if only is None or only == (group_name, name):
            target = groups[group_name] if group_name else app
            target.command(name, epilog=epilog)(function)
    return app


app = make_app()
startup.resume()  # every module `main` needs before a command starts is imported


def lenient_streams() -> None:
    """Let stdout and stderr write what their encoding cannot hold as ``?`` (a `PYTHONIOENCODING=latin-1` or
    a legacy code page's terminal), not fail the run on the first ``≈``: a UTF-8 stream, one whose errors
    handler is already set, and one that is not a text stream Python can reconfigure are left as they are."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if getattr(stream, "errors", None) != "strict" or not encoding or not hasattr(stream, "reconfigure"):
            continue
        if codecs.lookup(encoding).name != "utf-8":
            stream.reconfigure(errors="replace")


def command_named(argv: list[str]) -> tuple[str, str] | None:
    """The command of `COMMANDS` the command line names by its first words (``context trace ...``,
    ``schema ...``), or None (an option first, a group alone, a name that is no command).

    >>> command_named(["context", "trace", "a.jsonl"]), command_named(["schema"]), command_named(["--version"])
    (('context', 'trace'), ('', 'schema'), None)
    """
    for key in (("", argv[0]) if argv else None, tuple(argv[:2]) if len(argv) >= 2 else None):
        if key in COMMANDS:
            return key  # type: ignore[return-value]
    return None


def main() -> None:
    """Run the Typer app (the command line after `storage.replay` found nothing to replay: `cli.main`)."""
    lenient_streams()
    only = command_named(sys.argv[1:])
    (app if only is None else make_app(only))()
