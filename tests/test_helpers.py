"""The helpers the tests rely on (`conftest.py`, `fuzzing.py`) do what they say: a helper that cannot see a
defect would let every test that calls it pass."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from contexttrace import read_trace

from . import fuzzing
from .conftest import assistant, jsonl, result


def test_jsonl_helper_roundtrip():
    """The helper writes one line per record, newline-terminated."""
    assert jsonl({"a": 1}, "x") == b'{"a":1}\nx\n'


def _trace(write):
    """A small trace with a row in each of its four tables."""
    prompt = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "go"}}
    path = write("t.jsonl", prompt, assistant("m1", 1, 2, 3, tools=[("t1", "Read", {"file_path": "a"})]), result("t1"))
    [trace] = read_trace(path)
    assert all(len(next(iter(trace.tables[t].values()))) == 1 for t in ("calls", "tool_uses", "tool_results"))
    return path, trace


def _drop(columns: dict, name: str) -> None:
    del columns[name]


def _add(columns: dict, name: str) -> None:
    columns["extra"] = [None] * len(columns[name])


def _lengthen(columns: dict, name: str) -> None:
    columns[name] = [*columns[name], columns[name][0]]


def _retype(columns: dict, name: str) -> None:
    columns[name] = ["not a count"] * len(columns[name])


@pytest.mark.parametrize(
    ("table", "column", "damage", "problem"),
    [
        pytest.param("calls", "model", _drop, "calls: column 'model' missing", id="missing-column"),
        pytest.param("tool_uses", "name", _add, "tool_uses: column 'extra' is outside the contract", id="extra"),
        pytest.param("tool_results", "is_error", _lengthen, "tool_results: columns of unequal lengths", id="length"),
        pytest.param(
            "calls",
            "input_tokens",
            _retype,
            "value(s) of the calls table its column's type cannot hold",
            id="value-of-another-type",
        ),
    ],
)
def test_frame_problems_finds_broken_columns(write, table, column, damage, problem):
    """Each way a reader could break a table's columns is named, with the table and the column; the
    untouched trace has no problem."""
    _, trace = _trace(write)
    assert fuzzing.trace_frame_problems(trace) == []
    _, broken = _trace(write)
    damage(broken.tables[table], column)
    problems = fuzzing.trace_frame_problems(broken)
    assert len(problems) == 1 and problem in problems[0], problems
    assert problems[0].startswith(f"{broken.name}: ")


def test_frame_problems_finds_broken_frames(write):
    """A frame already built with another dtype, columns in another order, a table missing, a table the
    contract does not name: each is a problem of its own."""
    _, trace = _trace(write)
    trace.tables["calls"] = trace.calls.with_columns(pl.col("seq").cast(pl.Int32))
    trace.tables["tool_uses"] = trace.tool_uses.select(reversed(trace.tool_uses.columns))
    del trace.tables["events"]
    trace.tables["notes"] = {"text": []}
    assert fuzzing.trace_frame_problems(trace) == [
        f"{trace.name}: table 'notes' is outside the contract",
        f"{trace.name}: calls: seq is Int32, not Int64",
        f"{trace.name}: tool_uses: columns in another order than the contract's",
        f"{trace.name}: events: missing",
    ]


def test_frame_problems_of_a_copy_reports_what_the_reader_built(write, monkeypatch):
    """`frame_problems` (what the fuzz properties call on a damaged copy) returns the problems of every
    trace the reader builds from it, named by the file read; a clean copy has none."""
    path, _ = _trace(write)
    assert fuzzing.frame_problems(Path(path)) == []
    real = read_trace

    def without_model(*args, **kwargs):
        traces = real(*args, **kwargs)
        for trace in traces:
            del trace.tables["calls"]["model"]
        return traces

    monkeypatch.setattr("contexttrace.read_trace", without_model)
    assert fuzzing.frame_problems(Path(path)) == [f"{path} (subagents: 0): {path}: calls: column 'model' missing"]
