"""The command line: output streams, exit codes, --json shape, --help for every command, the shim."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
import typer
from typer.testing import CliRunner

from contexttrace.cli.app import app

from .conftest import BAD, CASES, ROOT, SAMPLES

runner = CliRunner()
GOOD = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")


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


def test_cli_good_and_bad_trace():
    """The good trace prints on stdout, the bad one is named on stderr, exit 1."""
    out = runner.invoke(app, ["context", "trace", GOOD, str(BAD / "binary.jsonl")])
    assert out.exit_code == 1
    assert "b-ccl-thinking-sonnet45.jsonl" in out.stdout
    assert "binary.jsonl" not in out.stdout
    # the reason is the reader's to word (test_reader); here: named once, as an error
    assert out.stderr.count(f"Error: {BAD / 'binary.jsonl'}: ") == 1


def test_cli_table_columns_and_lines():
    """The table has the spec's columns in order; fill only with --window; the largest results on stderr."""
    out = runner.invoke(app, ["context", "trace", GOOD], catch_exceptions=False)
    header = out.stdout.splitlines()[0]
    cols = [c.strip() for c in header.strip("|").split("|")]
    assert cols[:10] == [
        "trace",
        "calls",
        "first",
        "peak",
        "growth",
        "compact",
        "tools",
        "failed",
        "repeat",
        "result chars",
    ]
    assert "largest tool results (chars): Read 55,483" in out.stderr
    with_window = runner.invoke(
        app, ["context", "trace", GOOD, "--window", "200000", "--calls"], catch_exceptions=False
    )
    cols = [c.strip() for c in with_window.stdout.splitlines()[0].strip("|").split("|")]
    assert cols[:6] == ["trace", "calls", "first", "peak", "fill", "growth"]
    row = [c.strip() for c in with_window.stdout.splitlines()[2].strip("|").split("|")]
    assert row[1:6] == ["36", "16,386", "72,484", "36%", "56,098"]
    assert "prompt tokens per call: 1:16,386 2:18,119 " in with_window.stdout


def test_cli_json_single_trace_is_a_list():
    """--json with one trace prints a list of one object; --calls adds prompt_tokens."""
    out = runner.invoke(app, ["context", "trace", GOOD, "--json"], catch_exceptions=False)
    data = orjson.loads(out.stdout)
    assert isinstance(data, list) and len(data) == 1
    assert "prompt_tokens" not in data[0]
    out = runner.invoke(app, ["context", "trace", GOOD, "--json", "--calls"], catch_exceptions=False)
    [obj] = orjson.loads(out.stdout)
    assert len(obj["prompt_tokens"]) == obj["calls"] == 36
    for key in (
        "subagent_calls",
        "compaction_calls",
        "compaction_events",
        "surface",
        "skipped_lines",
        "format",
        "session_id",
        "models",
    ):
        assert key in obj


def test_cli_json_bad_trace_left_out_exit_1():
    """With --json, an unreadable trace is left out of the list and reported on stderr."""
    out = runner.invoke(app, ["context", "trace", GOOD, "nope.jsonl", "--json"])
    assert out.exit_code == 1
    assert [o["trace"] for o in orjson.loads(out.stdout)] == [GOOD]
    assert "Error: nope.jsonl: no such file" in out.stderr


def test_cli_skipped_lines_named_on_stderr():
    """Skipped lines are named as path:line: reason on stderr, never on stdout."""
    path = str(BAD / "not_json_lines.jsonl")
    out = runner.invoke(app, ["context", "trace", path, "--json"], catch_exceptions=False)
    assert out.exit_code == 0
    assert f"{path}:1: not JSON" in out.stderr
    assert "1 more line(s) skipped (4 in all)" in out.stderr
    assert orjson.loads(out.stdout)[0]["skipped_lines"] == 4


def test_cli_no_path_reads_config_dir(monkeypatch, tmp_path):
    """With no path, the sessions under $CLAUDE_CONFIG_DIR/projects are read."""
    proj = tmp_path / "projects" / "-w"
    proj.mkdir(parents=True)
    (proj / "s.jsonl").write_bytes((SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes())
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    out = runner.invoke(app, ["context", "trace", "--json"], catch_exceptions=False)
    [obj] = orjson.loads(out.stdout)
    assert obj["calls"] == 36


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


def test_metrics_import_does_not_pull_cli_or_tables():
    """The library core imports neither typer nor tabulate (only cli.py and render.py do)."""
    code = (
        "import sys, contexttrace.analysis.metrics, contexttrace.reading; "
        "print('typer' in sys.modules, 'tabulate' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False False"


def test_trace_json_loads_only_what_it_uses():
    """`context trace --json` imports neither tabulate (it prints no table) nor the modules of the other
    commands (each command's function in `contexttrace/cli/` imports its reports and renderer when run):
    their import is start-up every `context trace` would pay (40 ms of CPU, benchmarks/README.md)."""
    code = (
        "import sys; from contexttrace.cli.app import main; "
        "sys.argv = ['contexttrace', 'context', 'trace', 'samples/b-ccl-thinking-sonnet45.jsonl', '--json', "
        "'--no-cache']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "names = ('tabulate', 'polars', 'contexttrace.reports.tools', 'contexttrace.reports.files', "
        "'contexttrace.reports.sources', 'contexttrace.render.tools', 'contexttrace.render.files', "
        "'contexttrace.render.sources', 'contexttrace.render.html.data', 'contexttrace.storage.history', "
        "'contexttrace.analysis.placement')\n"
        "print([m for m in names if m in sys.modules], file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert orjson.loads(proc.stdout)[0]["peak"] == 72484


def test_cli_good_trace_leaves_stderr_to_notes():
    """A clean trace prints its table on stdout and only the largest-results note on stderr, with or
    without --explain; with --json, stderr is empty."""
    for extra in ([], ["--explain"]):
        out = runner.invoke(app, ["context", "trace", GOOD, *extra], catch_exceptions=False)
        assert out.exit_code == 0
        assert out.stderr.splitlines() == [
            f"{GOOD}: largest tool results (chars): Read 55,483, Edit 16,877, Glob 2,437, TodoWrite 2,400, Bash 2,133"
        ]
    out = runner.invoke(app, ["context", "trace", GOOD, "--json"], catch_exceptions=False)
    assert (out.exit_code, out.stderr) == (0, "")


def test_cli_same_file_twice_prints_once():
    """A file named twice, or named and inside a named directory, is one trace; so is '-' twice."""
    session = SAMPLES / "b-spotter-compaction"
    main = str(next(session.glob("*.jsonl")))
    out = runner.invoke(app, ["context", "trace", str(session), main, "--json"], catch_exceptions=False)
    [obj] = orjson.loads(out.stdout)
    assert obj["calls"] == 139


def test_cli_skipped_line_notes_capped_per_file_across_runs():
    """27 separator lines spread over 27 runs of one file: three named, then one count for the file."""
    path = str(SAMPLES / "a-ralph-27runs-with-separators.jsonl")
    out = runner.invoke(app, ["context", "trace", path, "--json"], catch_exceptions=False)
    lines = out.stderr.splitlines()
    assert lines == [
        f"{path}:1: not JSON",
        f"{path}:105: not JSON",
        f"{path}:219: not JSON",
        f"{path}: 24 more line(s) skipped (27 in all)",
    ]


def test_cli_orphan_flat_agent_file_is_counted(tmp_path):
    """A flat agent-*.jsonl whose session is absent is left out and said so on stderr."""
    side = (SAMPLES / "b-ccl-flat-agent-files-v2037" / "agent-ea02459f.jsonl").read_bytes()
    (tmp_path / "agent-ea02459f.jsonl").write_bytes(side)
    out = runner.invoke(app, ["context", "trace", str(tmp_path), "--json"], catch_exceptions=False)
    assert orjson.loads(out.stdout) == []
    assert "1 subagent file(s) left out" in out.stderr


def test_parallel_analyze_from_an_unguarded_script(tmp_path):
    """A script without `if __name__ == "__main__":` can run a parallel analysis: workers are started as
    `python -m contexttrace.run.pool` and never import the caller's script (the spawn start method would
    re-run it and fail)."""
    script = tmp_path / "notes.py"
    script.write_text(
        "from contexttrace import analyze\n"
        f"run = analyze([{str(SAMPLES)!r}], workers=2)\n"
        "print(len(run.reports), sum(r.calls for r in run.reports))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    from contexttrace import analyze

    serial = analyze([str(SAMPLES)], workers=1)
    assert proc.stdout.split() == [str(len(serial.reports)), str(sum(r.calls for r in serial.reports))]


# -- help, -h, --version ---------------------------------------------------------------------------

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


# -- --window --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "tokens"),
    [
        ("200000", 200_000),
        ("200k", 200_000),
        ("200K", 200_000),
        ("1M", 1_000_000),
        ("1m", 1_000_000),
        ("1.5M", 1_500_000),
        ("10000000", 10_000_000),
    ],
)
def test_cli_window_accepts_suffixes(value, tokens):
    """--window takes plain tokens or k/M suffixes, up to the cap; the JSON window is the tokens."""
    out = runner.invoke(app, ["context", "trace", GOOD, "--window", value, "--json"], catch_exceptions=False)
    assert out.exit_code == 0
    assert orjson.loads(out.stdout)[0]["window"] == tokens


@pytest.mark.parametrize(
    "bad", ["0", "-5", "lots", "", "0k", "1.5", "200kk", "1e6", "10000001", "20M", "99999999999999999999"]
)
def test_cli_bad_window_is_a_usage_error(bad):
    """Garbage, fractions of a token, 0 and values above the cap are usage errors (exit 2) quoting the value."""
    for command in ("trace", "usage"):
        out = runner.invoke(app, ["context", command, GOOD, "--window", bad])
        assert out.exit_code == 2
        assert f"Invalid value for '--window': {bad!r}" in out.stderr
        assert out.stdout == ""


# -- colour ----------------------------------------------------------------------------------------

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


# -- what goes where -------------------------------------------------------------------------------


def test_cli_stdout_holds_only_the_table():
    """Without --calls, stdout is the pipe table alone (it pastes as markdown), its totals row last; notes go
    to stderr."""
    out = runner.invoke(app, ["context", "trace", GOOD, str(CASES / "B22.jsonl")], catch_exceptions=False)
    lines = out.stdout.splitlines()
    assert len(lines) == 5 and lines[-1].startswith("| total ")
    assert all(line.startswith("|") and line.endswith("|") for line in lines)
    assert "largest tool results" in out.stderr


def test_cli_calls_numbered_from_1_in_a_block():
    """--calls prints each call as number:tokens from 1, after a blank line, indented (a markdown code
    block), with the compaction marked before the first call after it."""
    session = SAMPLES / "b-spotter-compaction"
    out = runner.invoke(app, ["context", "trace", str(session), "--calls"], catch_exceptions=False)
    table, blank, series = out.stdout.rstrip("\n").partition("\n\n")
    assert blank and all(line.startswith("|") for line in table.splitlines())
    [line] = series.splitlines()
    assert line.startswith("    ") and line.split(": prompt tokens per call: ")[1].startswith("1:26,450 2:28,046 ")
    assert " 61:164,831 | compact (auto, pre 170,251) | 62:36,081 " in line
    assert line.endswith(" 139:" + line.rsplit(" 139:", 1)[1])  # 139 calls, the last numbered 139


def test_cli_failed_names_denials():
    """The failed cell names the refusals it counts (B22: 3 failed results, 2 of them denials)."""
    out = runner.invoke(app, ["context", "trace", str(CASES / "B22.jsonl")], catch_exceptions=False)
    header, _, row = out.stdout.splitlines()[:3]
    cells = dict(zip(header.strip("|").split("|"), row.strip("|").split("|"), strict=True))
    assert {k.strip(): v.strip() for k, v in cells.items()}["failed"] == "3 (2 denied)"


def test_cli_no_model_call_is_not_graded():
    """B38 (every request failed, no model call): health and weather show –, never A 100 / sunny.

    Needs the health and weather side of issue 10 (a grade of None when nothing was measured)."""
    out = runner.invoke(app, ["context", "trace", str(CASES / "B38.jsonl")], catch_exceptions=False)
    header, _, row = out.stdout.splitlines()[:3]
    cells = {k.strip(): v.strip() for k, v in zip(header.strip("|").split("|"), row.strip("|").split("|"), strict=True)}
    assert (cells["calls"], cells["health"], cells["weather"]) == ("0", "–", "–")


# -- nothing found ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["trace", "usage"])
def test_cli_nothing_found_names_where_it_looked(tmp_path, command):
    """An empty folder: exit 0, stdout empty, stderr names the folder."""
    out = runner.invoke(app, ["context", command, str(tmp_path)], catch_exceptions=False)
    assert (out.exit_code, out.stdout) == (0, "")
    assert out.stderr == f"no traces found in {tmp_path}\n"


def test_cli_nothing_found_names_default_roots(monkeypatch, tmp_path):
    """With no path, the message names the default roots searched, or says that none exists."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    out = runner.invoke(app, ["context", "trace"], catch_exceptions=False)
    assert (out.exit_code, out.stdout) == (0, "")
    assert out.stderr == "no traces found: neither ~/.config/claude/projects nor ~/.claude/projects exists\n"
    (tmp_path / ".claude" / "projects").mkdir(parents=True)
    out = runner.invoke(app, ["context", "trace"], catch_exceptions=False)
    assert out.stderr == f"no traces found under {tmp_path / '.claude' / 'projects'}\n"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    out = runner.invoke(app, ["context", "trace", "--json"], catch_exceptions=False)
    assert (out.exit_code, out.stdout) == (0, "[]\n")
    assert out.stderr == f"no traces found under {tmp_path / '.claude' / 'projects'} (from CLAUDE_CONFIG_DIR)\n"


def test_cli_config_dir_naming_projects_gets_a_hint(monkeypatch, tmp_path):
    """CLAUDE_CONFIG_DIR pointing at a projects folder itself: the message says to point it at the config folder."""
    projects = tmp_path / ".claude" / "projects"
    (projects / "projects").mkdir(parents=True)  # so the root searched exists and holds nothing
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(projects))
    out = runner.invoke(app, ["context", "trace"], catch_exceptions=False)
    assert out.exit_code == 0
    assert f"hint: CLAUDE_CONFIG_DIR={projects} ends in 'projects'; point it at Claude Code's config folder" in (
        out.stderr
    )
    (projects / "projects").rmdir()  # the usual case: projects/projects does not exist, an error
    out = runner.invoke(app, ["context", "trace"], catch_exceptions=False)
    assert f"hint: CLAUDE_CONFIG_DIR={projects} ends in 'projects'" in out.stderr


def test_usage_stdout_holds_only_the_table_notes_go_to_stderr():
    """`context usage` prints its notes (lower bounds, Claude Code's own cost) on stderr: stdout is the table."""
    out = CliRunner().invoke(app, ["context", "usage", str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl")])
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert lines and all(line.startswith("|") for line in lines)
    assert "Claude Code" in out.stderr or "≥" in out.stderr
