"""The reading profile (`Builder.words`): `context trace` and `context usage` read Claude Code traces without
the columns only `context files` and `context sources` read (`calls.path_words`, `tool_uses.read_path`), and
print exactly what they print with every column read."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from contexttrace import read_trace
from contexttrace.cli.app import app
from contexttrace.reading.claude.builder import Builder
from contexttrace.reading.contract import FORMAT_STREAM_JSON, FORMAT_TRANSCRIPT
from contexttrace.reports.builds import TRACE_BUILD, USAGE_BUILD, NamedBuild
from contexttrace.run import work

from ..conftest import SAMPLES

#: The columns the lean profile leaves null.
LEAN_NULL = {("calls", "path_words"), ("tool_uses", "read_path")}


def test_the_lean_profile_leaves_only_its_columns_null():
    """Read with and without the profile's columns, every sample's tables are equal but those columns, which
    are null without them and were filled with them (a sample's Bash commands `cat` a file, its text names
    paths)."""
    filled = dict.fromkeys(LEAN_NULL, 0)
    for path in sorted(SAMPLES.glob("*.jsonl")):
        full, lean = read_trace(str(path)), read_trace(str(path), words=False)
        assert len(full) == len(lean)
        for a, b in zip(full, lean, strict=True):
            for table, columns in a.tables.items():
                for name, values in columns.items():
                    if (table, name) in LEAN_NULL and a.format in (FORMAT_TRANSCRIPT, FORMAT_STREAM_JSON):
                        assert set(b.tables[table][name]) <= {None}, (path.name, table, name)
                        filled[table, name] += sum(v is not None for v in values)
                    else:
                        assert b.tables[table][name] == values, (path.name, table, name)
    assert all(n > 0 for n in filled.values()), filled


def test_the_named_builds_of_trace_and_usage_read_the_lean_profile():
    """The builds the commands pass (`reports.builds`) are recognised by their names: `context trace` and
    `usage` read the lean profile, `context files` every column."""
    assert not work.reads_words(TRACE_BUILD) and not work.reads_words(USAGE_BUILD)
    assert work.reads_words(NamedBuild("contexttrace.reports.files", "build_files"))


#: What `context trace` and `context usage` print, each way they print it, over every sample at once.
COMMANDS = [
    ["context", "trace", "--json", "--calls"],
    ["context", "trace", "--explain", "--wide", "--calls"],
    ["context", "trace", "--format", "csv"],
    ["context", "usage", "--json"],
    ["context", "usage", "--wide"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_trace_and_usage_print_the_same_whatever_profile_they_read(args, monkeypatch):
    """Each command's output (stdout, stderr, exit code) is the same when the lean profile is read as when
    every column is (`run.work.WORDLESS_BUILDS` emptied): a column the profile drops that one of these
    outputs reads would differ here."""
    made: list[bool] = []  # each builder's profile: the lean run must read the lean profile
    init = Builder.__init__

    def counted(self: Builder, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(self.words)

    monkeypatch.setattr(Builder, "__init__", counted)
    runner = CliRunner()
    argv = [*args, str(SAMPLES), "--no-cache"]
    env = {"COLUMNS": "200", "NO_COLOR": "1"}
    lean = runner.invoke(app, argv, env=env, catch_exceptions=False)
    assert made and not any(made)
    made.clear()
    monkeypatch.setattr(work, "WORDLESS_BUILDS", frozenset())
    full = runner.invoke(app, argv, env=env, catch_exceptions=False)
    assert made and all(made)
    assert lean.stdout.strip()
    assert (lean.exit_code, lean.stdout, lean.stderr) == (full.exit_code, full.stdout, full.stderr)
