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
from contexttrace.reading.claude.calls import C_KEPT, CALL_ROW, COMPACTION_COLUMNS, Calls
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
    """`Calls.keep`'s one slice writes each value at its `C_KEPT` column and leaves every other."""
    calls = Calls()
    row = [object() for _ in range(len(CALL_ROW))]
    before = list(row)
    calls.add("key", row, 0)
    values = tuple(f"v{i}" for i in range(len(C_KEPT)))
    calls.keep(0, values, 0)
    assert len(row) == len(CALL_ROW) and [row[c] for c in C_KEPT] == list(values)
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


# -- placeholder lines and compaction passes inside a response ----------------------------------------------


def test_b39_placeholder_then_real_line_is_one_call():
    """B39: each call written first with all-zero usage, then with its real usage, under one message id:
    two calls of two lines each, their input side and text from the real lines, no warning."""
    trace, rep = trace_and_report(str(CASES / "B39.jsonl"))
    assert (rep.calls, rep.prompt_tokens, rep.warnings) == (2, [20_003, 20_303], [])
    calls = trace.calls
    assert calls["n_lines"].to_list() == [2, 2]
    assert calls["line"].to_list() == [2, 5]  # a call's first line is its placeholder's
    assert calls["output_tokens"].to_list() == [120, 80]
    assert calls["text_chars"].to_list() == [2, 2]  # "hi", "ok": the placeholder's copy is not counted again
    assert calls["stop_reason"].to_list() == ["end_turn", "end_turn"]


def test_placeholder_after_the_real_line_adds_nothing(write):
    """A placeholder line written after its call's real line joins that call: nothing of it is counted."""
    real = assistant("m1", 5, 10, 100, 40)
    real["message"]["content"] = [{"type": "text", "text": "hello"}]
    late = assistant("m1", 0, 0, 0, 0)
    late["message"]["content"] = [{"type": "text", "text": "hello"}]
    trace, rep = trace_and_report(write("t.jsonl", real, late))
    assert (rep.calls, rep.prompt_tokens, rep.warnings) == (1, [115], [])
    assert trace.calls.select("n_lines", "output_tokens", "text_chars").row(0) == (2, 40, 5)


def test_placeholder_without_a_real_line_stays_a_call_of_unread_usage(write):
    """A placeholder whose real line never came (the file cut) is still a call: its usage reads 0."""
    trace, rep = trace_and_report(write("t.jsonl", assistant("m1", 5, 10, 100), assistant("m2", 0, 0, 0)))
    assert rep.calls == 2
    assert trace.calls["prompt_tokens"].to_list() == [115, 0]


def test_placeholders_of_a_reused_id_keep_the_b04_rule(write):
    """B04 still holds with placeholders: the same id with two real input sides is two calls, warned."""
    lines = [assistant("g", 0, 0, 0), assistant("g", 1, 2, 3), assistant("g", 0, 0, 0), assistant("g", 4, 5, 6)]
    _, rep = trace_and_report(write("t.jsonl", *lines))
    assert rep.calls == 2
    assert any("message ids not unique" in w for w in rep.warnings)


def test_b33_compaction_pass_is_read_beside_the_answer():
    """B33: the reader keeps the pass's usage on the call (top-level usage stays the answer's) and a
    compaction event just before the call, its pre-size the pass's prompt."""
    trace, rep = trace_and_report(str(CASES / "B33.jsonl"))
    call = trace.calls.row(0, named=True)
    assert (call["prompt_tokens"], call["input_tokens"], call["output_tokens"]) == (23_000, 23_000, 1_000)
    passes = {c: call[c] for c in COMPACTION_COLUMNS}
    assert passes == {
        "compaction_input_tokens": 180_000,
        "compaction_cache_write_tokens": 0,
        "compaction_cache_write_1h_tokens": 0,
        "compaction_cache_read_tokens": 0,
        "compaction_output_tokens": 3_500,
        "compaction_prompt_tokens": 180_000,
    }
    [event] = trace.events.filter(kind="compact_boundary").to_dicts()
    assert (event["trigger"], event["pre_tokens"], event["line"]) == ("auto", 180_000, 2)
    assert event["seq"] < call["seq"]
    assert rep.compact == 1


def test_iterations_of_the_answer_only_add_nothing(write):
    """`usage.iterations` holding only the answer's own entry (as every real transcript writes it): no pass."""
    line = assistant("m1", 1, 2, 3, 4)
    line["message"]["usage"]["iterations"] = [{"type": "message", "input_tokens": 1, "output_tokens": 4}]
    trace, rep = trace_and_report(write("t.jsonl", line))
    assert trace.calls["compaction_input_tokens"].to_list() == [0]
    assert rep.compact == 0


def test_compaction_pass_counts_that_are_not_counts_read_as_zero_and_warned(write):
    """A pass whose counts are not counts adds 0 of them, counted in the usage warning."""
    line = assistant("m1", 1, 2, 3, 4)
    line["message"]["usage"]["iterations"] = [
        {"type": "compaction", "input_tokens": "x", "output_tokens": -1, "cache_read_input_tokens": 50}
    ]
    trace, rep = trace_and_report(write("t.jsonl", line))
    call = trace.calls.row(0, named=True)
    assert (call["compaction_input_tokens"], call["compaction_output_tokens"], call["compaction_prompt_tokens"]) == (
        0,
        0,
        50,
    )
    assert any("2 usage field(s) not a count" in w for w in rep.warnings)


def test_placeholders_and_passes_read_in_two_parts_as_in_one(write):
    """A file read in two parts at every cut gives the trace one read gives, with placeholder lines and a
    call holding a compaction pass on either side of the cut."""
    import pickle

    from contexttrace.reading import read_tail

    passes = [{"type": "compaction", "input_tokens": 90_000, "output_tokens": 700}]
    lines = []
    for i in range(4):
        stamp = {"timestamp": f"2026-01-01T00:00:{i:02d}Z"}
        lines.append(assistant(f"m{i}", 0, 0, 0, 0, **stamp))
        real = assistant(f"m{i}", 1, 2, 3 + i, 9, **stamp)
        if i == 2:
            real["message"]["usage"]["iterations"] = passes
        lines += [real, real]
    path = write("s.jsonl", *lines)
    [whole] = read_trace(path)
    assert whole.calls.height == 4
    with open(path, "rb") as fh:
        data = fh.read()
    for start in [i + 1 for i, b in enumerate(data) if b == 10 and i + 1 < len(data)]:
        tail = pickle.loads(pickle.dumps(read_tail(path, start)))
        [got] = read_trace(path, tail=tail)
        for table in ("calls", "tool_uses", "tool_results", "events"):
            assert got.frame(table).equals(whole.frame(table)), (start, table)
        assert got.warnings == whole.warnings
