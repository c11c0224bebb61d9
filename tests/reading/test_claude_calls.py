"""Model calls (`reading/claude/calls.py`): which lines are one call, which line a call keeps, what is no
call, and calls copied across sessions.

The trigger lines of B01, B04, B05, B07 and B29 are the files in tests/data/cases; the others are built
inline from the case's description. Each expected value is the case's own (docs/cases.md), or worked out
from the lines in the docstring."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from contexttrace import analyze, read_trace
from contexttrace.reading import drop_inherited_calls
from contexttrace.reading.claude.calls import C_KEPT, Calls
from contexttrace.reports.usage import build_usage

from ..conftest import CASES, assistant, report_of, result, trace_and_report

# -- which lines are one call, and which line it keeps -------------------------------------------------------


def test_b01_split_lines_are_one_call():
    """B01: three lines of msg_01A are 1 call, prompt 6+1200+30000 = 31,206, output 400, 2 tool uses."""
    trace, rep = trace_and_report(str(CASES / "B01.jsonl"))
    assert rep.calls == 1
    assert rep.prompt_tokens == [31206]
    assert trace.calls["output_tokens"].to_list() == [400]
    assert rep.tools == 2
    assert sorted(trace.tool_uses["name"].to_list()) == ["Grep", "Read"]
    assert trace.calls["n_lines"].to_list() == [3]


def test_b01_keeps_highest_output_line(write):
    """B01/G1: output grows over the lines of one id (3 → 172 → 90): the kept line is the one with 172."""
    path = write(
        "t.jsonl",
        assistant("m1", 5, 100, 1000, 3),
        assistant("m1", 5, 100, 1000, 172),
        assistant("m1", 5, 100, 1000, 90),
    )
    trace, rep = trace_and_report(path)
    assert rep.calls == 1
    assert trace.calls["output_tokens"].to_list() == [172]


def test_b03_missing_or_empty_request_id_still_dedups(write):
    """B03: without requestId (absent or "") the B01 lines are still 1 call with output 400."""
    lines = [orjson.loads(x) for x in (CASES / "B01.jsonl").read_bytes().splitlines()]
    lines[0].pop("requestId")
    lines[1]["requestId"] = ""
    lines[2].pop("requestId")
    trace, rep = trace_and_report(write("b03.jsonl", *lines))
    assert rep.calls == 1
    assert trace.calls["output_tokens"].to_list() == [400]


def test_b03_lines_without_message_id_are_never_merged(write):
    """B03: a line with neither message.id nor requestId counts on its own."""
    a = assistant(None, 1, 10, 100)
    path = write("t.jsonl", a, a)
    _, rep = trace_and_report(path)
    assert rep.calls == 2


def test_b04_reused_message_id_with_different_usage_is_several_calls():
    """B04: one id 'relay' with three different input-side usages: 3 calls, output 280, a warning."""
    trace, rep = trace_and_report(str(CASES / "B04.jsonl"))
    assert rep.calls == 3
    assert trace.calls["output_tokens"].sum() == 90 + 70 + 120
    assert any("message ids not unique" in w for w in rep.warnings)


def test_b05_sidechain_replay_counts_once_as_main():
    """B05: msg_05E is written on the main thread and replayed in a sidechain: 1 main call; msg_05F is a
    sidechain call; output 300 + 150 = 450."""
    trace, rep = trace_and_report(str(CASES / "B05.jsonl"))
    assert rep.calls == 1
    assert rep.subagent_calls == 1
    assert trace.calls["output_tokens"].sum() == 450


def test_b29_repeated_records_count_once(tmp_path):
    """B29: lines 9-16 repeat lines 1-8 (same uuids): calls 4, series [20,003, 20,352, 4,003, 4,203], compact 1
    (not 2), tools 1, failed 1, result chars 32, repeat 0; 8 records dropped and said; health and weather
    equal to the same file without the repeated lines; usage turns 3 and cost $0.039423."""
    rep = report_of(CASES / "B29.jsonl")
    assert (rep.calls, rep.prompt_tokens, rep.compact) == (4, [20003, 20352, 4003, 4203], 1)
    assert (rep.tools, rep.failed, rep.result_chars, rep.repeat) == (1, 1, 32, 0)
    assert any("8 repeated record(s) dropped" in w for w in rep.warnings)
    lines = (CASES / "B29.jsonl").read_bytes().splitlines(keepends=True)
    clean = tmp_path / "B29.jsonl"
    clean.write_bytes(b"".join(lines[:8] + lines[16:]))
    once = report_of(clean)
    assert rep.extra == once.extra  # health and weather
    [usage] = analyze([str(CASES / "B29.jsonl")], build=build_usage).reports
    assert usage.turn_figures["turns"] == 3
    assert round(usage.to_dict()["cost_usd"], 6) == 0.039423


def test_calls_keep_sets_the_kept_line_columns_only() -> None:
    """`Calls.keep`'s one unpacking writes each value at its `C_KEPT` column and leaves every other."""
    calls = Calls()
    row = [object() for _ in range(C_KEPT[-1] + 5)]
    before = list(row)
    calls.add("key", row, 0)
    values = tuple(f"v{i}" for i in range(len(C_KEPT)))
    calls.keep(0, values, 0)
    assert [row[c] for c in C_KEPT] == list(values)
    assert [v for i, v in enumerate(row) if i not in C_KEPT] == [v for i, v in enumerate(before) if i not in C_KEPT]


# -- what is no call, and usage that is not a count ----------------------------------------------------------


def test_b07_synthetic_line_is_not_a_call():
    """B07: a <synthetic> isApiErrorMessage line adds no call, no context point, no model."""
    _, rep = trace_and_report(str(CASES / "B07.jsonl"))
    assert rep.calls == 0
    assert rep.prompt_tokens == []
    assert rep.models == []
    assert rep.synthetic_errors == 1


def test_b07_synthetic_between_real_calls_keeps_first_right(write):
    """B07: first/growth ignore the synthetic line: first is 1,111, not 0."""
    synthetic = assistant("e1", 0, 0, 0, 0, model="<synthetic>", isApiErrorMessage=True)
    path = write("t.jsonl", synthetic, assistant("m1", 1, 10, 1100), assistant("m2", 1, 10, 2100))
    _, rep = trace_and_report(path)
    assert (rep.first, rep.peak, rep.growth) == (1111, 2111, 1000)


def test_b27_wrong_types_in_usage_are_read_defensively(write):
    """B27: usage fields of the wrong type read as 0; a non-dict message is no call; no crash."""
    odd = assistant("m1", "3", None, 100)
    path = write("t.jsonl", odd, {"type": "assistant", "message": "oops", "sessionId": "s"})
    _, rep = trace_and_report(path)
    assert rep.calls == 1
    assert rep.prompt_tokens == [100]


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


# -- calls copied across sessions ----------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_b06_resumed_session_copies_count_once(write, workers):
    """B06: sA holds msg_1..3; sB copies them (same ids, usage, timestamps) then adds msg_4.
    Across both files: 4 calls; sB owns only msg_4; its copied tool use is neither counted nor a repeat.
    With two processes a worker reads both and sends back only their call keys; sB is read again here."""

    def line(mid, sid, ts, cr, tools=()):
        rec = assistant(mid, 1, 10, cr, tools=tools)
        rec["sessionId"] = sid
        rec["timestamp"] = ts
        return rec

    read = [("tu1", "Read", {"file_path": "a.py"})]
    a = [
        line("msg_1", "sA", "2026-01-01T10:00:00.000Z", 1000, read),
        result("tu1", "x" * 10),
        line("msg_2", "sA", "2026-01-01T10:01:00.000Z", 2000),
        line("msg_3", "sA", "2026-01-01T10:02:00.000Z", 3000),
    ]
    b = [dict(r, sessionId="sB") for r in a] + [
        line("msg_4", "sB", "2026-01-02T09:00:00.000Z", 4000, [("tu4", "Read", {"file_path": "a.py"})])
    ]
    pa = write("proj/sA.jsonl", *a)
    write("proj/sB.jsonl", *b)
    run = analyze([str(pa.rsplit("/", 1)[0])], workers=workers)
    by = {r.session_id: r for r in run.reports}
    assert by["sA"].calls == 3
    assert by["sB"].calls == 1
    assert by["sB"].inherited_calls == 3
    assert by["sB"].prompt_tokens == [4011]
    assert by["sB"].tools == 1
    assert by["sB"].repeat == 0
    assert sum(r.calls for r in run.reports) == 4


def test_b06_no_copies_means_no_change(write):
    """drop_inherited_calls leaves traces alone when no call is shared."""
    p1 = write("a.jsonl", assistant("m1", 1, 1, 1))
    p2 = write("b.jsonl", assistant("m2", 1, 1, 1))
    traces = read_trace(p1) + read_trace(p2)
    assert drop_inherited_calls(traces) == traces


def test_b06_copied_events_go_with_the_copies(write):
    """B06: a compaction boundary and prompt inside the copied prefix belong to the original session."""

    def line(mid, sid, ts, cr):
        rec = assistant(mid, 1, 10, cr)
        rec.update(sessionId=sid, timestamp=ts)
        return rec

    boundary = {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto", "preTokens": 9}}
    a = [
        line("msg_1", "sA", "2026-01-01T10:00:00.000Z", 1000),
        dict(boundary, sessionId="sA", timestamp="2026-01-01T10:00:30.000Z"),
        line("msg_2", "sA", "2026-01-01T10:01:00.000Z", 2000),
    ]
    b = [dict(r, sessionId="sB") for r in a] + [line("msg_9", "sB", "2026-01-02T09:00:00.000Z", 5000)]
    write("p/sA.jsonl", *a)
    path_b = write("p/sB.jsonl", *b)
    run = analyze([path_b.rsplit("/", 1)[0]])
    by = {r.session_id: r for r in run.reports}
    assert (by["sA"].calls, by["sA"].compact) == (2, 1)
    assert (by["sB"].calls, by["sB"].compact, by["sB"].inherited_calls) == (1, 0, 2)
    assert any("copied from another session" in w for w in by["sB"].warnings)


def test_b06_rows_of_no_dropped_call_stay(write):
    """B06: a session that inherited calls keeps the rows that belong to no copied call: a tool use on a
    line without `message.id` and a tool result without `tool_use_id` (Polars' `is_in` gives null for a
    null key, and a filter drops null rows: both were lost before). And no Polars is imported for it."""

    def line(mid, sid, ts, cr, tools=()):
        rec = assistant(mid, 1, 10, cr, tools=tools)
        rec.update(sessionId=sid, timestamp=ts)
        return rec

    a = [line("msg_1", "sA", "2026-01-01T10:00:00.000Z", 1000, [("tu1", "Read", {"file_path": "a.py"})])]
    a.append(dict(result("tu1", "x" * 10), sessionId="sA", timestamp="2026-01-01T10:00:01.000Z"))
    no_id = line(None, "sB", "2026-01-02T09:00:00.000Z", 4000, [("tu9", "Bash", {"command": "ls"})])
    orphan = result("tu9", "listing", timestamp="2026-01-02T09:00:01.000Z")
    del orphan["message"]["content"][0]["tool_use_id"]
    b = [dict(r, sessionId="sB") for r in a] + [no_id, orphan]
    write("p/sA.jsonl", *a)
    folder = write("p/sB.jsonl", *b).rsplit("/", 1)[0]
    code = (
        "import sys, orjson; from contexttrace.run.runner import analyze\n"
        f"run = analyze([{folder!r}], workers=1)\n"
        "b = [t for t in run.reports if t.session_id == 'sB'][0]\n"
        "print(orjson.dumps([b.calls, b.inherited_calls, b.tools, b.result_chars, 'polars' in sys.modules]).decode())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert orjson.loads(out) == [1, 1, 1, len("listing"), False]
    [trace_b] = [t for t in drop_inherited_calls(read_trace(folder + "/sA.jsonl") + read_trace(folder + "/sB.jsonl"))
                 if t.session_id == "sB"]  # fmt: skip
    assert trace_b.tool_uses["tool_use_id"].to_list() == ["tu9"]
    assert trace_b.tool_results["tool_use_id"].to_list() == [None]
    assert trace_b.calls["message_id"].to_list() == [None]
