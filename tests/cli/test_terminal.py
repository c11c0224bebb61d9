"""What a person sees on a terminal: tables that fit, short trace labels, notes that do not bury the table,
colour only where it belongs. Each test runs the command under a pseudo-terminal of a fixed width (or, for
pipes, through CliRunner) and reads what it printed."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.render.diagnostics import group_notes

from ..conftest import ROOT, SAMPLES

runner = CliRunner()
COMPACTION = str(SAMPLES / "b-spotter-compaction")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_terminal(args: list[str], columns: int, **env: str) -> str:
    """Run `contexttrace args` with stdout and stderr on one pseudo-terminal `columns` wide; what it showed
    (ANSI codes kept, line ends as ``\\n``)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    environ.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", COLUMNS=str(columns), **env)
    proc = subprocess.Popen([sys.executable, "cli.py", *args], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=environ)  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the pseudo-terminal closes with the process (EIO on Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def visible(text: str) -> list[str]:
    """The lines as a person reads them: ANSI codes and the progress bar's cursor moves left out."""
    lines = (ANSI.sub("", line) for line in text.split("\n") if "reading traces" not in line)
    return [line for line in lines if line.strip()]


def width_of(line: str) -> int:
    from wcwidth import wcswidth

    return max(wcswidth(line), 0)


# -- item 7 and 9: the compaction sample's table fits 80 and 120 columns ---------------------------------


@pytest.mark.parametrize("columns", [80, 120])
def test_compaction_table_fits_the_terminal(columns):
    """On an 80- and a 120-column terminal the table fits in full (no line wraps), its first column is the
    short label, numbers are right-aligned under their headers, and the notes come after it."""
    lines = visible(on_terminal(["context", "trace", COMPACTION], columns))
    header, rule, row = lines[:3]
    assert header.split()[0] == "trace" and set(rule) == {"─"}
    assert row.startswith("spotter-dov/4d5611e5 ")  # not the 107-character path
    assert all(width_of(line) <= columns for line in (header, rule, row))
    # right-aligned: the peak's last digit sits under the header's last letter
    assert row.index("164,831") + len("164,831") == header.index("peak") + len("peak")
    assert "C 63" in row and "fair" in row
    # the notes come after the table, naming the trace by its label
    assert lines[3].startswith("spotter-dov/4d5611e5: largest tool results (chars): Read 288,932")
    assert lines[4].startswith("note: ") and f"{columns}-column terminal" in lines[4]
    if columns == 120:
        assert "start" in header.split() and "2026-02-12 16:02" in row


def test_terminal_table_is_coloured_and_plain_elsewhere():
    """A colour terminal gets the Rich table (the grade in its colour: C is #f9e2af); NO_COLOR, --no-color,
    --format table and a pipe get the plain pipe table."""
    coloured = on_terminal(["context", "trace", COMPACTION], 120)
    assert re.search(r"\x1b\[38;2;249;226;175m *C 63\x1b\[0m", coloured)
    assert "|" not in visible(coloured)[0]
    for text in (
        on_terminal(["context", "trace", COMPACTION], 120, NO_COLOR="1"),
        on_terminal(["context", "trace", COMPACTION, "--no-color"], 120),
        on_terminal(["context", "trace", COMPACTION, "--format", "table"], 120),
    ):
        assert "\x1b[38;2" not in text
        assert visible(text)[0].startswith("| trace ")
    piped = runner.invoke(app, ["context", "trace", COMPACTION], catch_exceptions=False).stdout
    assert piped.startswith("| trace ") and "\x1b" not in piped


def test_headers_wrap_and_numbers_do_not():
    """A narrow terminal wraps a header between its words (``result`` / ``chars``), never a number."""
    from contexttrace.render.terminal import rich_table, rich_table_width

    headers, rows = ["trace", "result chars", "cost USD"], [["a", "288,932", "≈$10.11"]]
    assert rich_table_width(headers, rows) < len("trace   result chars   cost USD")
    lines = rich_table(headers, rows, width=rich_table_width(headers, rows), color=False).splitlines()
    assert lines[0].split() == ["result", "cost"] and lines[1].split() == ["trace", "chars", "USD"]
    assert lines[-1].split() == ["a", "288,932", "≈$10.11"]


# -- item 7: labels are the shortest unique ending ------------------------------------------------------


def test_same_file_name_in_two_folders_is_labelled_by_its_folder(tmp_path):
    """Two runs named run.jsonl in runs/free and runs/loaded: labelled free/run.jsonl and loaded/run.jsonl,
    not by their absolute paths; the JSON keeps each full path."""
    for name in ("free", "loaded"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        shutil.copy(SAMPLES / "b-ccl-image-and-errors.jsonl", tmp_path / "runs" / name / "run.jsonl")
    out = runner.invoke(app, ["context", "trace", str(tmp_path / "runs"), "--no-totals"], catch_exceptions=False)
    labels = [line.split("|")[1].strip() for line in out.stdout.splitlines()[2:]]
    assert labels == ["free/run.jsonl", "loaded/run.jsonl"]
    records = orjson.loads(runner.invoke(app, ["context", "trace", str(tmp_path / "runs"), "--json"]).stdout)
    assert [r["trace"] for r in records] == [str(tmp_path / "runs" / n / "run.jsonl") for n in ("free", "loaded")]


# -- item 8: notes -------------------------------------------------------------------------------------------


def test_notes_after_the_table_grouped_and_counted_on_a_terminal():
    """Over every sample (43 traces) on a terminal the table comes first; then the skipped lines, three
    traces' largest tool results and a count of the other 39 (42 have some), and a line saying -v shows every note."""
    lines = visible(on_terminal(["context", "trace", str(SAMPLES)], 120))
    table_end = max(i for i, line in enumerate(lines) if line.startswith("total "))
    assert lines[0].split()[0] == "trace" and table_end > 40
    after = lines[table_end + 1 :]
    assert f"{SAMPLES}/a-ralph-27runs-with-separators.jsonl:1: not JSON" in after
    assert sum("largest tool results (chars)" in line for line in after) == 3
    assert "largest tool results of 39 more trace(s) not shown" in after
    assert after[-1].endswith("(-v shows every note, -q none)")
    assert all(width_of(line) <= 240 for line in after)  # no note longer than two lines


def test_verbose_shows_every_note_and_quiet_none():
    """-v: every trace's largest tool results, nothing counted away; -q: no note at all (these samples have
    no error), the table unchanged."""
    lines = visible(on_terminal(["context", "trace", str(SAMPLES), "-v"], 120))
    assert sum("largest tool results (chars)" in line for line in lines) == 42
    assert not any("-v shows every note" in line for line in lines)
    quiet = runner.invoke(app, ["context", "trace", str(SAMPLES), "-q"], catch_exceptions=False)
    loud = runner.invoke(app, ["context", "trace", str(SAMPLES)], catch_exceptions=False)
    assert (quiet.exit_code, quiet.stderr, quiet.stdout) == (0, "", loud.stdout)
    assert "largest tool results" in loud.stderr


def test_quiet_keeps_errors_and_breaches(tmp_path):
    """-q keeps what says why the command fails: an unreadable trace, a breach, nothing found."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n")
    out = runner.invoke(app, ["context", "trace", str(bad), COMPACTION, "-q"], catch_exceptions=False)
    assert out.exit_code == 1 and out.stderr.startswith("Error: ") and "largest tool results" not in out.stderr
    out = runner.invoke(app, ["context", "trace", COMPACTION, "-q", "--fail-on", "peak>100000"])
    assert out.exit_code == 3
    assert out.stderr.splitlines() == [
        "breach: samples/b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl: peak 164,831 > 100000 "
        "(--fail-on peak>100000)".replace("samples/", str(SAMPLES) + "/"),
        "1 threshold breach: exit 3",
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    out = runner.invoke(app, ["context", "usage", str(empty), "-q"])
    assert (out.exit_code, out.stderr) == (1, f"no traces found in {empty}\n")
    out = runner.invoke(app, ["context", "trace", COMPACTION, "-q", "-v"])
    assert out.exit_code == 2 and "give one" in out.stderr


def test_the_same_long_warning_of_many_traces_is_one_line():
    """18 traces with the same 400-character warning: one line naming how many traces, cut to 200 characters
    on an 80-column terminal (two lines of 120 columns on a wider one), and the count line."""
    text = "runs differ in model: " + "x" * 380
    lines = [f"runs/r{i}.jsonl: warning: {text}" for i in range(18)] + ["note: something else"]
    out = group_notes(lines, 80)
    assert out[0].startswith("18 traces (runs/r0.jsonl, ...): warning: runs differ in model: xxx")
    assert len(out[0]) == 200 and out[0].endswith("…")
    assert len(group_notes(lines, 150)[0]) == 300
    assert out[1] == "note: something else"
    assert out[2] == "19 note(s): 1 shortened, 17 grouped or left out (-v shows every note, -q none)"
    assert group_notes(["a: warning: short"], 80) == ["a: warning: short"]


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
def test_a_stdout_that_cannot_hold_the_signs_prints_question_marks(tmp_path, encoding):
    """A stdout in a legacy encoding (`PYTHONIOENCODING=latin-1`, a Windows code page) cannot hold ≈ or the
    weather's signs: they print as ``?`` and the run ends as usual (it failed with a UnicodeEncodeError); the
    JSON stays valid; a second run (replayed from the store) prints the same bytes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXTTRACE_")}
    env.update(PYTHONPATH=str(ROOT), PYTHONIOENCODING=encoding, COLUMNS="200", NO_COLOR="1",
               CONTEXTTRACE_CACHE_DIR=str(tmp_path / "store"))  # fmt: skip
    sample = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "cli.py", "context", *args], cwd=ROOT, env=env, capture_output=True)

    table = run("trace", sample, "--no-cache")
    assert table.returncode == 0 and table.stderr.count(b"Traceback") == 0
    row = next(line for line in table.stdout.decode(encoding).splitlines() if "b-ccl-thinking" in line)
    assert row.split("|")[-2].strip() == "?? sunny" and "A 94" in row
    as_json = run("trace", sample, "--json")
    assert as_json.returncode == 0 and orjson.loads(as_json.stdout.decode(encoding))[0]["calls"] == 36
    again = run("trace", sample, "--json")
    assert (again.returncode, again.stdout, again.stderr) == (0, as_json.stdout, as_json.stderr)


@pytest.mark.parametrize("where", ["closed", "full", "full-replayed", "read-only-replayed"])
@pytest.mark.parametrize("json", [False, True])
def test_a_stdout_that_takes_nothing_is_one_line_not_a_traceback(tmp_path, where, json):
    """Standard output closed by the shell (``>&-``), a full device (``/dev/full``) or a descriptor opened for
    reading, on a run or on a replay of its kept output: the run ends with exit code 1 and one line on stderr
    naming standard output and why (it was an AttributeError or OSError traceback), and that failed run is not
    kept; with ``-o FILE`` a closed stdout is no error and the file holds the report."""
    if "full" in where and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTEXTTRACE_")}
    env.update(PYTHONPATH=str(ROOT), CONTEXTTRACE_CACHE_DIR=str(tmp_path / "store"))
    redirect = {"closed": ">&-", "read-only-replayed": f"1<'{tmp_path / 'in.txt'}'"}.get(where, ">/dev/full")
    (tmp_path / "in.txt").write_text("")
    args = f"context trace {COMPACTION} --window 200000" + (" --json" if json else "")
    if not where.endswith("replayed"):
        args += " --no-cache"
    cmd = f"'{sys.executable}' cli.py {args}"

    def shell(line: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["bash", "-c", line], cwd=ROOT, env=env, capture_output=True)

    kept = shell(cmd) if where.endswith("replayed") else None  # the run whose output a replay writes
    done = shell(f"{cmd} {redirect}")
    why = {"closed": "it is closed", "read-only-replayed": "Bad file descriptor"}.get(where, "No space left on device")
    assert (done.returncode, done.stderr.decode()) == (1, f"Error: cannot write to standard output: {why}\n")
    if kept is not None:
        again = shell(cmd)
        assert (again.returncode, again.stdout, again.stderr) == (0, kept.stdout, kept.stderr)
    if where == "closed":
        out = tmp_path / "out.json"
        to_file = shell(f"{cmd} -o '{out}' {redirect}")
        assert to_file.returncode == 0 and b"Traceback" not in to_file.stderr
        report = orjson.loads(out.read_bytes()) if json else out.read_text()
        assert (report[0]["calls"] == 139) if json else "b-spotter-compaction" in report
