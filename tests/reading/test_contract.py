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
