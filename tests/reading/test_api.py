"""The reader on bad input, stream-json runs, threads and frame schemas."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contexttrace.errors import ContextTraceError, EmptyTraceError, TraceFormatError, TraceReadError
from contexttrace.reading import read_trace, result_size
from contexttrace.reading.contract import CALL_SCHEMA, EVENT_SCHEMA, TOOL_RESULT_SCHEMA, TOOL_USE_SCHEMA, polars_schema
from contexttrace.reports.trace import build_report
from contexttrace.run.runner import analyze

from .conftest import BAD, assistant, jsonl, result

ROOT = Path(__file__).resolve().parent.parent


def test_reader_truncated_last_line_is_skipped_quietly():
    """A live file's incomplete last line is skipped and flagged, the complete lines still count."""
    [t] = read_trace(str(BAD / "truncated_last_line.jsonl"))
    assert t.calls.height == 2
    assert t.truncated_last_line is True
    assert t.skipped_lines == 1
    assert t.line_notes == []


def test_reader_non_object_lines_are_skipped_and_named():
    """Arrays, numbers and strings are JSON but not records: 3 skipped, named with their line numbers."""
    [t] = read_trace(str(BAD / "non_object_lines.jsonl"))
    assert t.calls.height == 2
    assert t.skipped_lines == 3
    assert [(n.line, n.reason) for n in t.line_notes] == [
        (2, "not a JSON object (list)"),
        (3, "not a JSON object (int)"),
        (4, "not a JSON object (str)"),
    ]


def test_reader_not_json_lines_skipped_and_at_most_three_named():
    """Four noise lines: all counted, the first three named."""
    [t] = read_trace(str(BAD / "not_json_lines.jsonl"))
    assert t.calls.height == 2
    assert t.skipped_lines == 4
    assert [n.line for n in t.line_notes] == [1, 3, 4]


@pytest.mark.parametrize(
    ("name", "error"),
    [
        pytest.param("empty.jsonl", EmptyTraceError, id="empty"),
        pytest.param("blank_lines.jsonl", EmptyTraceError, id="blank-lines"),
        pytest.param("binary.jsonl", TraceReadError, id="binary"),
        pytest.param("no_known_records.jsonl", TraceFormatError, id="no-known-records"),
        pytest.param("does-not-exist.jsonl", TraceReadError, id="missing"),
    ],
)
def test_reader_unreadable_files_raise_with_path(name, error):
    """Files that are no trace raise a ContextTraceError naming the file."""
    with pytest.raises(error) as info:
        read_trace(str(BAD / name))
    assert info.value.path.endswith(name)
    assert name in str(info.value)


def test_reader_directory_given_as_file_raises():
    """A directory passed to read_trace is a read error, not a crash."""
    with pytest.raises(TraceReadError, match="directory"):
        read_trace(str(BAD))


def test_reader_bom_and_crlf():
    """A UTF-8 BOM on the first line and CRLF line ends are accepted without a skipped line."""
    [bom] = read_trace(str(BAD / "bom.jsonl"))
    [crlf] = read_trace(str(BAD / "crlf.jsonl"))
    assert (bom.calls.height, bom.skipped_lines) == (1, 0)
    assert (crlf.calls.height, crlf.skipped_lines) == (2, 0)


def test_reader_summary_only_file_is_a_zero_trace_when_named():
    """A transcript with only a summary line reads as a trace with no call."""
    [t] = read_trace(str(BAD / "summary_only.jsonl"))
    assert t.format == "transcript"
    assert t.calls.height == 0
    rep = build_report(t)
    assert (rep.calls, rep.first, rep.peak, rep.growth) == (0, 0, 0, 0)


def test_reader_summary_only_left_out_of_directory_scan(tmp_path):
    """In a directory scan a file with no model call is left out and counted."""
    (tmp_path / "a.jsonl").write_bytes((BAD / "summary_only.jsonl").read_bytes())
    (tmp_path / "b.jsonl").write_bytes(jsonl(assistant("m1", 1, 1, 1)))
    run = analyze([str(tmp_path)])
    assert [r.trace for r in run.reports] == [str(tmp_path / "b.jsonl")]
    assert run.left_out == 1


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


def test_reading_and_reports_never_import_polars():
    """Workers read and build reports without Polars (its import is a third of a worker's start-up)."""
    code = (
        "import sys; from contexttrace.run.work import read_built; "
        "from contexttrace.reports.trace import build_report; "
        "from contexttrace.reports.usage import build_usage; from contexttrace.discover.local import find_traces; "
        "[s] = find_traces(['samples/b-spotter-compaction']); "
        "[(t, r)] = read_built(s, build_report, 200000); u = build_usage(t); "
        "assert r.calls == 139 and u.total['calls'] == 152, (r.calls, u.total['calls']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'polars'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_reader_stream_runs_split_at_init_and_separators_go_to_next_run(write):
    """Two runs with a separator before each: named path#1/#2, each counts its own separator."""
    init = {"type": "system", "subtype": "init", "session_id": "s", "tools": ["Read"], "mcp_servers": []}
    res = {"type": "result", "subtype": "success", "session_id": "s", "total_cost_usd": 0.5}
    path = write(
        "run.jsonl",
        "=== Iteration 1 ===",
        init,
        assistant("m1", 1, 1, 100, parent=""),
        res,
        "=== Iteration 2 ===",
        init,
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


def test_reader_stdin(monkeypatch):
    """'-' reads standard input (bytes), the format detected from content."""
    data = jsonl({"type": "system", "subtype": "init", "session_id": "s"}, assistant("m1", 1, 1, 7, parent=""))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    run = analyze(["-"])
    assert [(r.trace, r.format, r.calls, r.first) for r in run.reports] == [("-", "stream-json", 1, 9)]


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


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param("abc", (3, 0, 0, 0), id="string"),
        pytest.param(None, (0, 0, 0, 0), id="missing"),
        pytest.param([{"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}], (4, 0, 0, 0), id="text-blocks"),
        pytest.param([{"type": "image", "source": {"data": "QUJDRA=="}}], (0, 1, 4, 0), id="image-padded"),
        pytest.param([{"type": "tool_reference"}, "x"], (0, 0, 0, 2), id="unknown"),
        pytest.param({"weird": 1}, (0, 0, 0, 1), id="dict"),
    ],
)
def test_result_size_shapes(content, expected):
    """result_size measures every content shape without crashing."""
    assert result_size(content) == expected


@given(st.lists(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)), max_size=8))
def test_reader_never_fails_otherwise(lines):
    """On arbitrary lines the reader returns traces or raises a ContextTraceError, never anything else."""
    data = b"\n".join(line.replace(b"\n", b" ") for line in lines)
    try:
        traces = read_trace("mem.jsonl", fh=io.BytesIO(data))
    except ContextTraceError:
        return
    for t in traces:
        rep = build_report(t)
        assert rep.peak >= rep.first >= 0
        assert rep.growth == rep.peak - rep.first


@given(
    st.lists(
        st.tuples(
            st.integers(0, 5),
            st.integers(0, 10**6),
            st.integers(0, 10**6),
            st.booleans(),
            st.sampled_from(["Read", "Bash"]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_metric_invariants(rows):
    """peak ≥ first, growth = peak − first, failed ≤ tools, repeat ≤ tools, fill ≥ 0."""
    records = []
    for i, (inp, cw, cr, fail, tool) in enumerate(rows):
        records.append(assistant(f"m{i}", inp, cw, cr, tools=[(f"t{i}", tool, {"x": inp})]))
        records.append(result(f"t{i}", "r" * inp, is_error=fail))
    [t] = read_trace("mem.jsonl", fh=io.BytesIO(jsonl(*records)))
    rep = build_report(t, window=200000)
    assert rep.peak >= rep.first
    assert rep.growth == rep.peak - rep.first
    assert rep.failed <= rep.tools and rep.repeat <= rep.tools
    assert rep.fill is not None and rep.fill >= 0


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


def test_reader_task_result_carries_agent_id_and_duration():
    """The spotter sample's Task result names its subagent file (a2898e3) and its duration (141,871 ms)."""
    from .conftest import SAMPLES

    [t] = read_trace(str(next((SAMPLES / "b-spotter-compaction").glob("*.jsonl"))))
    rows = t.tool_results.filter(pl.col("agent_id").is_not_null()).select("agent_id", "agent_duration_ms").rows()
    assert rows == [("a2898e3", 141871)]


@pytest.mark.parametrize(
    "text",
    [
        "This command requires approval",
        "This Bash command contains multiple operations. The following part requires approval: rm -rf x",
        "ls in '~/.claude' was blocked. For security, Claude Code may only list files in the allowed directories",
        "Claude requested permissions to use WebSearch, but you haven't granted it yet.",
        "The user doesn't want to take this action right now. STOP what you are doing",
    ],
)
def test_reader_permission_refusal_texts_are_denials(write, text):
    """Refusal texts the real samples show (print mode, rejections) are denied, not tool failures."""
    path = write("t.jsonl", assistant("m1", 1, 1, 1, tools=[("t1", "Bash", {})]), result("t1", text, is_error=True))
    rep = build_report(read_trace(path)[0])
    assert (rep.failed, rep.denied) == (1, 1)


def test_reader_tool_failure_text_is_not_a_denial(write):
    """An ordinary tool error is failed but not denied."""
    path = write(
        "t.jsonl", assistant("m1", 1, 1, 1, tools=[("t1", "Bash", {})]), result("t1", "Exit code 1", is_error=True)
    )
    rep = build_report(read_trace(path)[0])
    assert (rep.failed, rep.denied) == (1, 0)


def test_directory_scan_reports_unreadable_files_and_skips_empty_ones(tmp_path):
    """A binary .jsonl found by a directory scan is a failure (exit 1); an empty one is only left out."""
    (tmp_path / "good.jsonl").write_bytes(jsonl(assistant("m1", 1, 1, 1)))
    (tmp_path / "bin.jsonl").write_bytes((BAD / "binary.jsonl").read_bytes())
    (tmp_path / "empty.jsonl").write_bytes(b"")
    run = analyze([str(tmp_path)])
    assert [r.trace for r in run.reports] == [str(tmp_path / "good.jsonl")]
    assert [(f.path, f.reason) for f in run.failures] == [
        (str(tmp_path / "bin.jsonl"), "binary file (NUL bytes), not a JSONL trace")
    ]
    assert run.left_out == 1


def test_directory_scan_sorts_the_whole_tree_by_path(tmp_path):
    """Sessions print sorted by full path, not directory by directory."""
    for rel in ("b.jsonl", "a/x.jsonl", "c/y.jsonl"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(jsonl(assistant(rel, 1, 1, 1)))
    run = analyze([str(tmp_path)])
    assert [r.trace.removeprefix(str(tmp_path) + "/") for r in run.reports] == ["a/x.jsonl", "b.jsonl", "c/y.jsonl"]


def test_implausible_usage_values_are_zero_and_warned(write):
    """Negative, huge (2**70) or string usage counts read as 0, with one warning naming how many."""
    line = (
        '{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"x","usage":'
        '{"input_tokens":1180591620717411303424,"cache_creation_input_tokens":-5,'
        '"cache_read_input_tokens":"7","output_tokens":3}}}'
    )
    [t] = read_trace(write("t.jsonl", line))
    assert t.calls["prompt_tokens"].to_list() == [0]
    assert t.warnings == ["3 usage field(s) not a count of tokens (negative, huge or not a number), read as 0"]


def test_deeply_nested_lines_never_stop_the_run(write):
    """A line nested too deep to decode is a skipped line; a tool input deeper than orjson encodes still
    gets a canonical text; neither stops the trace nor the others."""
    deep_line = '{"type":"user","sessionId":"s","x":' + "[" * 1500 + "]" * 1500 + "}"
    deep_input = {"a": 1}
    for _ in range(300):
        deep_input = {"a": deep_input}
    deep_call = json.dumps(assistant("m1", 1, 1, 1, tools=[("t1", "Read", deep_input)]))  # orjson stops at 255
    path = write("t.jsonl", deep_line, deep_call)
    [t] = read_trace(path)
    assert (t.calls.height, t.skipped_lines) == (1, 1)
    assert t.tool_uses["input_json"].to_list()[0].startswith('{"a":{"a":')


def test_input_too_deep_to_encode_has_the_same_text_every_run():
    """fuzz 06b: a Task input nested 990 deep, which neither orjson nor the stdlib encodes, gets a text of
    its own named by its line and tool use id, not by an object's address (it changed from run to run)."""
    [trace] = read_trace(str(ROOT / "tests" / "data" / "fuzz" / "06b-task-input-nested-990.jsonl"))
    assert trace.tool_uses["input_json"].to_list() == ["<input nested too deep: line 2, tool use toolu_1>"]


def test_invalid_utf8_byte_keeps_the_line(write):
    """A raw byte that is not UTF-8 reads as one replacement character; the line still counts."""
    line = (
        b'{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result",'
        b'"tool_use_id":"t","is_error":true,"content":"caf\xe9"}]}}'
    )
    rep = build_report(read_trace(write("t.jsonl", line, assistant("m1", 1, 1, 1)))[0])
    assert (rep.failed, rep.result_chars, rep.skipped_lines) == (1, 4, 0)


def test_nested_subagent_files_without_their_session_are_counted(tmp_path):
    """`<session>/subagents/agent-*.jsonl` with no `<session>.jsonl` beside it: left out and counted."""
    side = tmp_path / "s8" / "subagents"
    side.mkdir(parents=True)
    (side / "agent-x1.jsonl").write_bytes(jsonl(assistant("m1", 1, 1, 1, sidechain=True)))
    run = analyze([str(tmp_path)])
    assert (run.reports, run.orphan_agent_files) == ([], 1)
