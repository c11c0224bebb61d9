"""Records to rows (`reading/claude/builder.py`): the `result` line, counts out of range, tool inputs too
deep to encode, what a Task result carries."""

from __future__ import annotations

import orjson
import polars as pl
import pytest

from contexttrace import analyze, read_trace
from contexttrace.render.trace import render_json

from ..conftest import CASES, FUZZ, ROOT, SAMPLES, assistant, trace_and_report


def test_b16_result_line_is_not_a_context_size():
    """B16: 2 calls, context series [12,005, 12,503]; the result's cumulative usage is never a call."""
    trace, rep = trace_and_report(str(CASES / "B16.jsonl"))
    assert rep.format == "stream-json"
    assert rep.calls == 2
    assert rep.prompt_tokens == [12005, 12503]
    assert trace.result is not None and trace.result["total_cost_usd"] == 0.0191
    assert rep.tools == 1 and rep.result_chars == len("print('hi')\n")
    assert rep.surface is not None and rep.surface["tools"] == 2


@pytest.mark.parametrize(
    ("name", "column"),
    [("04-huge-int-in-compact-metadata.jsonl", "pre_tokens"), ("09-frames-int-above-int64.jsonl", "duration_ms")],
)
def test_fuzz_04_09_out_of_range_counts_are_unknown_with_a_warning(name, column):
    """04/09: a count above the 64-bit range is None in the frames, with a warning; --json renders."""
    [trace] = read_trace(str(FUZZ / name))
    values = [v for v in trace.events[column].to_list()]
    assert None in values and all(v is None or v < 2**53 for v in values)
    assert any("out of range" in w for w in trace.warnings)
    assert orjson.loads(render_json(analyze([str(FUZZ / name)])))


def test_fuzz_negative_counts_are_unknown(write):
    """The same kind, below the range: a negative duration is unknown, not a negative number of ms."""
    line = {"type": "system", "subtype": "turn_duration", "sessionId": "s", "durationMs": -5}
    [trace] = read_trace(write("t.jsonl", assistant("m1", 1, 1, 1), line))
    assert trace.events["duration_ms"].to_list() == [None]


def test_reader_task_result_carries_agent_id_and_duration():
    """The spotter sample's Task result names its subagent file (a2898e3) and its duration (141,871 ms)."""

    [t] = read_trace(str(next((SAMPLES / "b-spotter-compaction").glob("*.jsonl"))))
    rows = t.tool_results.filter(pl.col("agent_id").is_not_null()).select("agent_id", "agent_duration_ms").rows()
    assert rows == [("a2898e3", 141871)]


def test_input_too_deep_to_encode_has_the_same_text_every_run():
    """fuzz 06b: a Task input nested 990 deep, which neither orjson nor the stdlib encodes, gets a text of
    its own named by its line and tool use id, not by an object's address (it changed from run to run)."""
    [trace] = read_trace(str(ROOT / "tests" / "data" / "fuzz" / "06b-task-input-nested-990.jsonl"))
    assert trace.tool_uses["input_json"].to_list() == ["<input nested too deep: line 2, tool use toolu_1>"]
