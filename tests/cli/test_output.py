"""Colour on the command line (`cli/output.py`; the stderr progress bar of `cli/analyze.py`): only on a
terminal that shows it, not with NO_COLOR or TERM=dumb; --color and --no-color decide first."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from contexttrace.cli.analyze import StderrProgress
from contexttrace.cli.app import app

from ..conftest import GOOD, ROOT

runner = CliRunner()


ANSI = "\x1b["


class _Terminal:
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("flag", "env", "tty", "expected"),
    [
        pytest.param(None, {"TERM": "xterm-256color"}, True, True, id="terminal"),
        pytest.param(None, {"TERM": "xterm-256color"}, False, False, id="pipe"),
        pytest.param(None, {"TERM": "dumb"}, True, False, id="term-dumb"),
        pytest.param(None, {"TERM": "xterm", "NO_COLOR": "1"}, True, False, id="no-color-env"),
        pytest.param(None, {"TERM": "xterm", "NO_COLOR": ""}, True, True, id="no-color-empty"),
        pytest.param(True, {"TERM": "dumb", "NO_COLOR": "1"}, False, True, id="--color-wins"),
        pytest.param(False, {"TERM": "xterm"}, True, False, id="--no-color-wins"),
    ],
)
def test_cli_color_enabled(monkeypatch, flag, env, tty, expected):
    """Colour only on a terminal that shows it (not TERM=dumb, not NO_COLOR); --color/--no-color decide first."""
    import io

    from contexttrace.cli.output import color_enabled

    for name in ("TERM", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert color_enabled(flag, _Terminal() if tty else io.StringIO()) is expected


def test_cli_color_flags_override_detection():
    """--color paints the --explain bars even into a pipe; --no-color and the default there do not."""
    args = ["context", "trace", GOOD, "--explain"]
    assert ANSI in runner.invoke(app, [*args, "--color"], catch_exceptions=False).stdout
    assert ANSI not in runner.invoke(app, [*args, "--no-color"], catch_exceptions=False).stdout
    assert ANSI not in runner.invoke(app, args, catch_exceptions=False).stdout


def _on_terminal(args: list[str], **env: str) -> str:
    """Run the CLI with stdout on a pseudo-terminal; return what it wrote there."""
    import pty

    primary, secondary = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | env
    proc = subprocess.Popen(
        [sys.executable, "-m", "contexttrace", *args],
        cwd=ROOT,
        env=environ,
        stdout=secondary,
        stderr=subprocess.DEVNULL,
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode()


@pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="needs a pseudo-terminal")
def test_cli_terminal_colour_but_not_on_term_dumb():
    """On a terminal --explain is coloured, but not when TERM=dumb or NO_COLOR is set, nor with --no-color."""
    args = ["context", "trace", GOOD, "--explain"]
    assert ANSI in _on_terminal(args, TERM="xterm-256color")
    assert ANSI not in _on_terminal(args, TERM="dumb")
    assert ANSI not in _on_terminal(args, TERM="xterm-256color", NO_COLOR="1")
    assert ANSI not in _on_terminal([*args, "--no-color"], TERM="xterm-256color")


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("no_color", "flag", "colored"),
    [
        pytest.param("1", None, False, id="NO_COLOR"),
        pytest.param("", None, True, id="terminal"),
        pytest.param("1", True, True, id="--color-wins"),
        pytest.param("", False, False, id="--no-color"),
    ],
)
def test_progress_bar_follows_no_color(monkeypatch, no_color, flag, colored):
    """With NO_COLOR on a terminal the stderr progress bar still wrote ANSI colours (rich was told
    `no_color=False`); it now takes `color_enabled`'s decision for stderr, as the rest of the CLI does."""
    monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.setenv("TERM", "xterm-256color")
    stderr = _TTY()
    monkeypatch.setattr("sys.stderr", stderr)
    progress = StderrProgress(flag)
    progress(1, 8)
    try:
        assert progress._bar.console.no_color is (not colored)
    finally:
        progress.close()
    assert ("\x1b[3" in stderr.getvalue() or "\x1b[9" in stderr.getvalue()) is colored


def test_json_written_as_bytes_is_what_echo_writes(monkeypatch):
    """`context trace --json` and `context usage --json` write orjson's bytes to a UTF-8 stdout: the same
    bytes as the text path through `typer.echo` (taken where `binary_stdout` gives no byte stream)."""
    from contexttrace.cli import output

    for command in (["context", "trace"], ["context", "usage"]):
        args = [*command, str(ROOT / "samples"), "--json", "--no-cache"]
        fast = runner.invoke(app, args)
        with monkeypatch.context() as m:
            m.setattr(output, "binary_stdout", lambda: None)
            slow = runner.invoke(app, args)
        assert fast.exit_code == slow.exit_code == 0
        assert fast.stdout_bytes == slow.stdout_bytes
        assert fast.stdout_bytes.startswith(b"[\n  {") and fast.stdout_bytes.endswith(b"}\n]\n")


def test_binary_stdout_only_for_utf8_text(monkeypatch):
    """The byte stream is used only under a UTF-8 text stream: a Latin-1 stdout (PYTHONIOENCODING), or
    none at all, is written as text."""
    from contexttrace.cli.output import binary_stdout

    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", utf8)
    assert binary_stdout() is utf8.buffer
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="latin-1"))
    assert binary_stdout() is None
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert binary_stdout() is None
    monkeypatch.setattr(sys, "stdout", None)
    assert binary_stdout() is None
