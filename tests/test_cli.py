"""The command line: output streams, exit codes, --json shape, --help for every command, the shim."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
import typer
from typer.testing import CliRunner

from contexttrace.cli import app

from .conftest import BAD, ROOT, SAMPLES

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
    assert "Error: " in out.stderr and "binary.jsonl: binary file" in out.stderr


def test_cli_table_columns_and_lines():
    """The table has the spec's columns in order; fill only with --window; the lines under it."""
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
    assert "largest tool results (chars): Read 55,483" in out.stdout
    with_window = runner.invoke(
        app, ["context", "trace", GOOD, "--window", "200000", "--calls"], catch_exceptions=False
    )
    cols = [c.strip() for c in with_window.stdout.splitlines()[0].strip("|").split("|")]
    assert cols[:6] == ["trace", "calls", "first", "peak", "fill", "growth"]
    row = [c.strip() for c in with_window.stdout.splitlines()[2].strip("|").split("|")]
    assert row[1:6] == ["36", "16,386", "72,484", "36%", "56,098"]
    assert "prompt tokens per call: 16386 " in with_window.stdout


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


@pytest.mark.parametrize("bad", ["0", "-5", "lots"])
def test_cli_bad_window_is_a_usage_error(bad):
    """--window must be a positive integer: exit 2 with a message."""
    out = runner.invoke(app, ["context", "trace", GOOD, "--window", bad])
    assert out.exit_code == 2


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


def test_cli_version():
    """--version prints the package version."""
    out = runner.invoke(app, ["--version"], catch_exceptions=False)
    assert out.stdout.startswith("contexttrace ")


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
        "import sys, contexttrace.metrics, contexttrace.reader; "
        "print('typer' in sys.modules, 'tabulate' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False False"


def test_cli_good_trace_leaves_stderr_empty():
    """A clean trace prints its table and nothing on stderr, with or without --explain."""
    for extra in ([], ["--explain"]):
        out = runner.invoke(app, ["context", "trace", GOOD, *extra], catch_exceptions=False)
        assert out.exit_code == 0
        assert out.stderr == ""


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
    out = runner.invoke(app, ["context", "trace", path], catch_exceptions=False)
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
    `python -m contexttrace._worker` and never import the caller's script (the spawn start method would
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
