"""The reading profiles (`Builder.words`, `Builder.inputs`): `context trace` and `context usage` read Claude
Code traces without the columns only `context files` and `context sources` read (`calls.path_words`,
`tool_uses.read_path`), `context usage` also without the tool inputs as JSON and the results' hashes; each
prints exactly what it prints with every column read."""

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

#: The columns each profile leaves null: `context trace`'s (no path words) and `context usage`'s (no inputs).
WORDLESS_NULL = {("calls", "path_words"), ("tool_uses", "read_path")}
INPUTLESS_NULL = {
    ("tool_uses", "input_json"),
    ("tool_uses", "input_chars"),
    ("tool_uses", "file_path"),
    ("calls", "tool_input_chars"),
    ("tool_results", "content_hash"),
    ("tool_results", "capped"),  # part reads only (decided by the Read's input): null; the others as read
}


@pytest.mark.parametrize(
    ("words", "inputs", "null"),
    [(False, True, WORDLESS_NULL), (False, False, WORDLESS_NULL | INPUTLESS_NULL), (True, False, INPUTLESS_NULL)],
)
def test_a_profile_leaves_only_its_columns_null(words, inputs, null):
    """Read with and without a profile's columns, every sample's tables are equal but those columns, which
    are null without them (`capped`: where the full read decides it by the input) and were filled with them
    (a sample's Bash commands `cat` a file, its text names paths, its Reads stop at the default limit)."""
    filled = dict.fromkeys(null, 0)
    for path in sorted(SAMPLES.glob("*.jsonl")):
        full, lean = read_trace(str(path)), read_trace(str(path), words=words, inputs=inputs)
        assert len(full) == len(lean)
        for a, b in zip(full, lean, strict=True):
            claude = a.format in (FORMAT_TRANSCRIPT, FORMAT_STREAM_JSON)  # (Codex's and Gemini's fill all)
            for table, columns in a.tables.items():
                for name, values in columns.items():
                    got = b.tables[table][name]
                    if (table, name) not in null or not claude:
                        assert got == values, (path.name, table, name)
                    elif name == "capped":
                        assert [x if y is not None else None for x, y in zip(values, got, strict=True)] == got
                        filled[table, name] += got.count(None)
                    else:
                        assert set(got) <= {None}, (path.name, table, name)
                        filled[table, name] += sum(v is not None for v in values)
    assert all(n > 0 for n in filled.values()), filled


def test_the_named_builds_of_trace_and_usage_read_the_lean_profile():
    """The builds the commands pass (`reports.builds`) are recognised by their names: `context trace` and
    `usage` read the lean profile, `context files` every column."""
    assert not work.reads_words(TRACE_BUILD) and not work.reads_words(USAGE_BUILD)
    assert work.reads_inputs(TRACE_BUILD) and not work.reads_inputs(USAGE_BUILD)
    files = NamedBuild("contexttrace.reports.files", "build_files")
    assert work.reads_words(files) and work.reads_inputs(files)


#: What `context trace` and `context usage` print, each way they print it, over every sample at once.
COMMANDS = [
    ["context", "trace", "--json", "--calls"],
    ["context", "trace", "--explain", "--wide", "--calls"],
    ["context", "trace", "--format", "csv"],
    ["context", "usage", "--json"],
    ["context", "usage", "--wide", "--breakdown"],
    ["context", "usage", "--group-by", "model"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_trace_and_usage_print_the_same_whatever_profile_they_read(args, monkeypatch):
    """Each command's output (stdout, stderr, exit code) is the same when the lean profile is read as when
    every column is (`run.work.WORDLESS_BUILDS` emptied): a column the profile drops that one of these
    outputs reads would differ here."""
    made: list[tuple[bool, bool]] = []  # each builder's profile: the lean run must read the lean profile
    init = Builder.__init__

    def counted(self: Builder, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append((self.words, self.inputs))

    monkeypatch.setattr(Builder, "__init__", counted)
    runner = CliRunner()
    argv = [*args, str(SAMPLES), "--no-cache"]
    env = {"COLUMNS": "200", "NO_COLOR": "1"}
    lean = runner.invoke(app, argv, env=env, catch_exceptions=False)
    assert set(made) == {(False, args[1] == "trace")}
    made.clear()
    monkeypatch.setattr(work, "WORDLESS_BUILDS", frozenset())
    monkeypatch.setattr(work, "INPUTLESS_BUILDS", frozenset())
    full = runner.invoke(app, argv, env=env, catch_exceptions=False)
    assert set(made) == {(True, True)}
    assert lean.stdout.strip()
    assert (lean.exit_code, lean.stdout, lean.stderr) == (full.exit_code, full.stdout, full.stderr)
