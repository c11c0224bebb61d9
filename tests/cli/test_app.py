"""The command tree (`cli/app.py`): --help and -h on every command, --version, and the `cli.py` shim."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest
import typer
from typer.testing import CliRunner

from contexttrace.cli.app import app

from ..conftest import GOOD, ROOT

runner = CliRunner()


def _commands(group, prefix: tuple[str, ...] = ()):
    # Typer 0.26+ vendors Click, so walk the command tree without importing click.
    yield prefix
    if hasattr(group, "commands"):
        for name, cmd in group.commands.items():
            yield from _commands(cmd, (*prefix, name))


@pytest.mark.parametrize("path", list(_commands(typer.main.get_command(app))), ids=lambda p: " ".join(p) or "root")
def test_cli_help_for_every_command(path):
    """Every command and group answers --help with exit 0."""
    out = runner.invoke(app, [*path, "--help"], catch_exceptions=False)
    assert out.exit_code == 0
    assert "Usage" in out.stdout


def test_shim_from_repo_root():
    """`python cli.py context trace <sample> --json` works from the repository root."""
    proc = subprocess.run(
        [sys.executable, "cli.py", "context", "trace", "samples/b-ccl-thinking-sonnet45.jsonl", "--json"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(proc.stdout)[0]["peak"] == 72484


COMMANDS = list(_commands(typer.main.get_command(app)))


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "root")
def test_cli_short_help_option(path):
    """-h answers as --help does, on every command and group."""
    short = runner.invoke(app, [*path, "-h"], catch_exceptions=False)
    assert short.exit_code == 0
    assert short.stdout == runner.invoke(app, [*path, "--help"], catch_exceptions=False).stdout
    assert "-h, --help" in short.stdout


@pytest.mark.parametrize("command", ["trace", "usage"])
def test_cli_help_usage_line_is_clean(command):
    """The usage line shows `[PATH]...` and no help text shows a Python type such as `<list[str]>`."""
    text = runner.invoke(app, ["context", command, "--help"], prog_name="contexttrace", catch_exceptions=False).stdout
    assert text.splitlines()[0] == f"Usage: contexttrace context {command} [OPTIONS] [PATH]..."
    assert "[[" not in text and "<list" not in text and "<int>" not in text and "<bool>" not in text
    assert "PATH: stream-json captures" in text


def test_cli_usage_help_names_the_columns_it_prints():
    """`context usage --help` lists exactly the columns the usage table prints, in order."""
    import re

    text = runner.invoke(app, ["context", "usage", "--help"], catch_exceptions=False).stdout
    summary = " ".join(text.split("\n\n")[1].split())  # the first paragraph, unwrapped
    listed = re.split(r", | and ", re.sub(r" \([^)]*\)", "", summary.split(": ", 1)[1].rstrip(".")))
    table = runner.invoke(app, ["context", "usage", GOOD], catch_exceptions=False).stdout
    printed = [c.strip() for c in table.splitlines()[0].strip("|").split("|")]
    assert listed == printed[1:]  # "trace" is the row, not a figure


def test_cli_version():
    """--version prints the installed package's version and exits 0."""
    from importlib.metadata import version

    from contexttrace import __version__

    out = runner.invoke(app, ["--version"], catch_exceptions=False)
    assert out.exit_code == 0
    assert out.stdout == f"contexttrace {__version__}\n"
    assert __version__ == version("contexttrace")


def test_help_of_history_schema_and_the_shared_options():
    """`context history --help` and `schema --help` describe themselves; the shared options show on both
    trace and usage."""
    for args in (["context", "history", "--help"], ["schema", "--help"]):
        assert runner.invoke(app, args, catch_exceptions=False).exit_code == 0
    for command in ("trace", "usage"):
        text = runner.invoke(app, ["context", command, "--help"], catch_exceptions=False).stdout
        for flag in ("--fail-on", "--format", "--output", "--since", "--until", "--timezone", "--project",
                     "--session", "--sort", "--desc", "--no-totals", "--wide", "--db", "--label"):  # fmt: skip
            assert flag in text, (command, flag)
