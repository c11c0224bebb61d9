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


# -- runs: one per session; a stray init is no run --------------------------------------------------------


def test_b35_init_with_the_run_session_continues_it():
    """B35: `init(S35)`, a call, a result, `init(S35)` again, a call, a result: one run of two calls, each
    init a turn's prompt (Claude Code writes one per message read on standard input), the last result kept."""
    from ..conftest import CASES

    [trace] = read_trace(str(CASES / "B35.jsonl"))
    assert trace.name == str(CASES / "B35.jsonl")
    assert trace.calls["prompt_tokens"].to_list() == [10_005, 10_035]
    prompts = trace.events.filter(kind="prompt")
    assert prompts["line"].to_list() == [1, 4]
    assert prompts["text_chars"].to_list() == [None, None]
    assert trace.result is not None and trace.result["total_cost_usd"] == 0.0409425
    assert trace.result_count == 2


def test_init_with_another_session_starts_a_run(write):
    """An init naming another session than the run's starts a new run; an init naming none does too."""
    init = {"type": "system", "subtype": "init", "session_id": "a"}
    path = write(
        "run.jsonl",
        init,
        assistant("m1", 1, 1, 1, parent=""),
        {**init, "session_id": "b"},
        assistant("m2", 1, 1, 2, parent=""),
        {"type": "system", "subtype": "init"},
        assistant("m3", 1, 1, 3, parent=""),
    )
    runs = read_trace(path)
    assert [r.calls.height for r in runs] == [1, 1, 1]
    assert all(r.events.filter(kind="prompt").height == 0 for r in runs)  # one init each: the -p rule holds


def test_continued_run_with_replayed_prompts_takes_no_init_prompt(write):
    """A continued run that writes its prompts as user lines (replayed) counts those, never the inits too."""
    init = {"type": "system", "subtype": "init", "session_id": "s"}
    prompt = {"type": "user", "session_id": "s", "parent_tool_use_id": None, "message": {"content": "go"}}
    m1, m2 = assistant("m1", 1, 1, 1, parent=""), assistant("m2", 1, 1, 2, parent="")
    path = write("run.jsonl", init, prompt, m1, init, prompt, m2)
    [trace] = read_trace(path)
    assert trace.events.filter(kind="prompt")["line"].to_list() == [2, 5]


def test_fuzz_16_lone_init_in_a_transcript_is_a_stray_line():
    """fuzz 16: one stream-json `system/init` pasted into a transcript: still one transcript with its six
    subagent files read (66 subagent calls), the line warned about as stray, no start-up surface."""
    from ..conftest import FUZZ, report_of

    folder = FUZZ / "16-stray-init-line-in-transcript"
    rep = report_of(folder)
    assert (rep.format, rep.calls, rep.subagent_calls) == ("transcript", 17, 66)
    assert rep.surface is None
    assert [w for w in rep.warnings if "stream-json keys" in w] == [
        "1 line(s) carry stream-json keys in a file read as a session transcript (430 line(s)): stray lines, "
        "read as the file's format"
    ]
    assert not any("not found" in w for w in rep.warnings)


def test_a_line_nested_deeper_than_the_reader_reads_says_so(write):
    """A line nested 100,000 deep is JSON the reader cannot read: its note says so (not "not JSON")."""
    deep = b"[" * 100_000 + b"]" * 100_000
    path = write("t.jsonl", assistant("m1", 1, 2, 3), deep, "not json", assistant("m2", 1, 2, 4))
    [trace] = read_trace(path)
    assert trace.calls.height == 2
    assert [(n.line, n.reason) for n in trace.line_notes] == [
        (2, "JSON nested deeper than the reader reads (about 1,000 levels)"),
        (3, "not JSON"),
    ]
