"""Stream-json against session transcripts (`reading/claude/dialects.py`): lines skipped by type,
threads, permission denials, and a transcript holding a stray stream-json key."""

from __future__ import annotations

import polars as pl

from contexttrace import read_trace
from contexttrace.reports.trace import build_report

from ..conftest import CASES, FUZZ, assistant, report_of, result, trace_and_report


def test_b16_partial_message_stream_events_not_counted(write):
    """B16: --include-partial-messages adds stream_event lines; they add no call."""
    event = {"type": "stream_event", "session_id": "s", "event": {"type": "message_start", "message": {"usage": {}}}}
    lines = (CASES / "B16.jsonl").read_bytes().splitlines()
    path = write("t.jsonl", lines[0], event, *lines[1:])
    _, rep = trace_and_report(path)
    assert rep.calls == 2


def test_fuzz_07_stray_stream_key_keeps_the_transcript_and_its_subagents():
    """07: one stray `parent_tool_use_id` in a transcript: still a transcript, its subagent file read, a warning."""
    rep = report_of(FUZZ / "07-stream-key-in-transcript-drops-subagents" / "s1.jsonl")
    assert rep.format == "transcript"
    assert rep.subagent_calls == 2
    assert any("stream-json keys" in w for w in rep.warnings)


def test_reader_stream_subagent_lines_are_their_own_thread(write):
    """stream-json lines with parent_tool_use_id belong to the subagent, by that id."""
    path = write(
        "run.jsonl",
        {"type": "system", "subtype": "init", "session_id": "s"},
        assistant("m1", 1, 1, 10, parent="", tools=[("task1", "Task", {"prompt": "go"})]),
        assistant("s1", 1, 1, 5, parent="task1", tools=[("r1", "Read", {"f": 1})]),
        result("r1", "sub", stream=True, parent_tool_use_id="task1"),
        result("task1", "report", stream=True),
    )
    [t] = read_trace(path)
    rep = build_report(t)
    assert (rep.calls, rep.subagent_calls, rep.tools, rep.result_chars) == (1, 1, 1, 6)
    assert t.calls.filter(pl.col("thread_kind") == "subagent")["thread"].to_list() == ["task1"]


def test_reader_permission_denials_mark_results_denied(write):
    """A stream-json result's permission_denials mark those tool results as denied."""
    path = write(
        "run.jsonl",
        {"type": "system", "subtype": "init", "session_id": "s"},
        assistant("m1", 1, 1, 1, parent="", tools=[("w1", "Write", {"file_path": "x"})]),
        result("w1", "Claude wants to write to x", is_error=True, stream=True),
        {"type": "result", "session_id": "s", "permission_denials": [{"tool_name": "Write", "tool_use_id": "w1"}]},
    )
    rep = build_report(read_trace(path)[0])
    assert (rep.failed, rep.denied) == (1, 1)


def test_reader_inline_sidechains_split_by_chain(write):
    """CLI 1.0.x inline sidechains without agentId: each chain (root = a line with no known parent) is
    its own subagent thread, named by its root's uuid."""

    def side(mid, uuid, parent, cr):
        rec = assistant(mid, 1, 1, cr, sidechain=True)
        rec.update(uuid=uuid, parentUuid=parent)
        return rec

    path = write(
        "t.jsonl",
        assistant("m0", 1, 1, 1),
        side("a1", "ua1", None, 10),
        side("b1", "ub1", None, 20),
        side("a2", "ua2", "ua1", 30),
        side("b2", "ub2", "ub1", 40),
    )
    [t] = read_trace(path)
    threads = t.calls.sort("seq")["thread"].to_list()
    assert threads == ["main", "sidechain-ua1", "sidechain-ub1", "sidechain-ua1", "sidechain-ub1"]
