"""Lines to builders (`reading/claude/feed.py`): one trace per stream-json run, and the line firewall."""

from __future__ import annotations

from contexttrace import read_trace

from ..conftest import assistant


def test_a_line_that_raises_is_skipped_and_named(monkeypatch, write):
    """A record no rule expected (here: the router raising) costs its line only, named with the exception."""
    from contexttrace import reading as reader

    real = reader.Builder._system

    def system(self, rec, line, src):
        if rec.subtype == "boom":
            raise KeyError("x")
        return real(self, rec, line, src)

    monkeypatch.setattr(reader.Builder, "_system", system)
    path = write("t.jsonl", assistant("m1", 1, 1, 1), {"type": "system", "subtype": "boom"}, assistant("m2", 1, 1, 2))
    [trace] = read_trace(path)
    assert trace.calls.height == 2
    assert trace.skipped_lines == 1
    assert "KeyError" in trace.line_notes[0].reason and trace.line_notes[0].line == 2


def test_reader_stream_runs_split_at_init_and_separators_go_to_next_run(write):
    """Two runs (two sessions) with a separator before each: named path#1/#2, each counts its own separator."""
    init = {"type": "system", "subtype": "init", "session_id": "s", "tools": ["Read"], "mcp_servers": []}
    res = {"type": "result", "subtype": "success", "session_id": "s", "total_cost_usd": 0.5}
    path = write(
        "run.jsonl",
        "=== Iteration 1 ===",
        init,
        assistant("m1", 1, 1, 100, parent=""),
        res,
        "=== Iteration 2 ===",
        {**init, "session_id": "s2"},
        assistant("m2", 1, 1, 200, parent=""),
        assistant("m3", 1, 1, 300, parent=""),
    )
    runs = read_trace(path)
    assert [r.name for r in runs] == [f"{path}#1", f"{path}#2"]
    assert [r.calls.height for r in runs] == [1, 2]
    assert [r.skipped_lines for r in runs] == [1, 1]
    assert [n.line for n in runs[1].line_notes] == [5]
    assert runs[0].result is not None and runs[1].result is None


def test_reader_stream_multi_turn_results_stay_in_one_run(write):
    """--input-format stream-json writes several results in one run: still one trace, last result kept."""
    init = {"type": "system", "subtype": "init", "session_id": "s"}
    r1 = {"type": "result", "session_id": "s", "total_cost_usd": 0.1}
    r2 = {"type": "result", "session_id": "s", "total_cost_usd": 0.3}
    path = write("run.jsonl", init, assistant("m1", 1, 1, 1, parent=""), r1, assistant("m2", 1, 1, 2, parent=""), r2)
    [t] = read_trace(path)
    assert t.calls.height == 2
    assert t.result_count == 2
    assert t.result is not None and t.result["total_cost_usd"] == 0.3
