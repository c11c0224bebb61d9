"""The frame contract (`reading/contract.py`): the four tables a trace builds have exactly the schema's
columns and dtypes."""

from __future__ import annotations

import polars as pl

from contexttrace import read_trace
from contexttrace.reading.contract import CALL_SCHEMA, EVENT_SCHEMA, TOOL_RESULT_SCHEMA, TOOL_USE_SCHEMA, polars_schema

from ..conftest import assistant, result


def test_reader_frames_follow_the_schema(write):
    """Every frame has exactly the schema's columns and dtypes."""
    path = write("t.jsonl", assistant("m1", 1, 2, 3, tools=[("t1", "Read", {"a": 1})]), result("t1", "x"))
    [t] = read_trace(path)
    assert t.calls.schema == polars_schema(CALL_SCHEMA)
    assert t.tool_uses.schema == polars_schema(TOOL_USE_SCHEMA)
    assert t.tool_results.schema == polars_schema(TOOL_RESULT_SCHEMA)
    assert t.events.schema == polars_schema(EVENT_SCHEMA)
    assert (t.calls.schema["prompt_tokens"], t.calls.schema["model"]) == (pl.Int64, pl.String)
    assert t.tool_results.schema["denied"] == pl.Boolean


def test_a_value_its_column_cannot_hold_costs_its_cell_never_the_frame(write):
    """The last guard: a value the reader should have bounded (an int past 64 bits, a lone surrogate, a value
    of another type) is null in the frame, counted in a warning; the frame and its other cells build."""
    path = write("t.jsonl", assistant("m1", 1, 2, 3), assistant("m2", 4, 5, 6))
    [t] = read_trace(path)
    calls = t.tables["calls"]
    calls["output_tokens"][0] = 2**64
    calls["model"][1] = "x\ud800"
    calls["has_thinking"][1] = "yes"
    frame = t.calls
    assert frame["output_tokens"].to_list() == [None, 10]
    assert frame["model"].to_list() == ["claude-sonnet-4-5", None]
    assert frame["has_thinking"].to_list() == [False, None]
    assert frame["prompt_tokens"].to_list() == [6, 15]
    assert t.warnings == ["3 value(s) of the calls table its column's type cannot hold, read as unknown"]
