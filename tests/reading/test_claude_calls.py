"""Every case of CASES.md that touches the `context trace` figures, with its right value.

The trigger lines of B01, B04, B05, B07, B16, B21, B22 and B27 are the files in tests/data/cases (copies of
the shared cases folder); the others are built inline from the case's description. Each expected value is
the case's own "Right value" (or worked out from the lines in the docstring).
"""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

from contexttrace.reading import drop_inherited_calls, read_trace
from contexttrace.reports.trace import build_report
from contexttrace.run.runner import analyze

from .conftest import CASES, assistant, jsonl, result


def one(path: str, window: int | None = None):
    [trace] = read_trace(path)
    return trace, build_report(trace, window)


def test_b01_split_lines_are_one_call():
    """B01: three lines of msg_01A are 1 call, prompt 6+1200+30000 = 31,206, output 400, 2 tool uses."""
    trace, rep = one(str(CASES / "B01.jsonl"))
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
    trace, rep = one(path)
    assert rep.calls == 1
    assert trace.calls["output_tokens"].to_list() == [172]


def test_b03_missing_or_empty_request_id_still_dedups(write):
    """B03: without requestId (absent or "") the B01 lines are still 1 call with output 400."""
    lines = [orjson.loads(x) for x in (CASES / "B01.jsonl").read_bytes().splitlines()]
    lines[0].pop("requestId")
    lines[1]["requestId"] = ""
    lines[2].pop("requestId")
    trace, rep = one(write("b03.jsonl", *lines))
    assert rep.calls == 1
    assert trace.calls["output_tokens"].to_list() == [400]


def test_b03_lines_without_message_id_are_never_merged(write):
    """B03: a line with neither message.id nor requestId counts on its own."""
    a = assistant(None, 1, 10, 100)
    path = write("t.jsonl", a, a)
    _, rep = one(path)
    assert rep.calls == 2


def test_b04_reused_message_id_with_different_usage_is_several_calls():
    """B04: one id 'relay' with three different input-side usages: 3 calls, output 280, a warning."""
    trace, rep = one(str(CASES / "B04.jsonl"))
    assert rep.calls == 3
    assert trace.calls["output_tokens"].sum() == 90 + 70 + 120
    assert any("message ids not unique" in w for w in rep.warnings)


def test_b05_sidechain_replay_counts_once_as_main():
    """B05: msg_05E is written on the main thread and replayed in a sidechain: 1 main call; msg_05F is a
    sidechain call; output 300 + 150 = 450."""
    trace, rep = one(str(CASES / "B05.jsonl"))
    assert rep.calls == 1
    assert rep.subagent_calls == 1
    assert trace.calls["output_tokens"].sum() == 450


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


def test_b07_synthetic_line_is_not_a_call():
    """B07: a <synthetic> isApiErrorMessage line adds no call, no context point, no model."""
    _, rep = one(str(CASES / "B07.jsonl"))
    assert rep.calls == 0
    assert rep.prompt_tokens == []
    assert rep.models == []
    assert rep.synthetic_errors == 1


def test_b07_synthetic_between_real_calls_keeps_first_right(write):
    """B07: first/growth ignore the synthetic line: first is 1,111, not 0."""
    synthetic = assistant("e1", 0, 0, 0, 0, model="<synthetic>", isApiErrorMessage=True)
    path = write("t.jsonl", synthetic, assistant("m1", 1, 10, 1100), assistant("m2", 1, 10, 2100))
    _, rep = one(path)
    assert (rep.first, rep.peak, rep.growth) == (1111, 2111, 1000)


def test_b09_subagent_file_attached_not_a_session(write):
    """B09: s9.jsonl plus s9/subagents/agent-ag9.jsonl (2 calls, one a warmup): one session, 2 subagent
    calls, none in the main series; the same calls inline as well are counted once."""
    main = write("p/s9.jsonl", assistant("m_main", 1, 100, 1000))
    side = [assistant("m_a", 1, 50, 500, 1, sidechain=True), assistant("m_b", 1, 60, 600, 30, sidechain=True)]
    for rec in side:
        rec["agentId"] = "ag9"
        rec["sessionId"] = "s9"
    write("p/s9/subagents/agent-ag9.jsonl", *side)
    run = analyze([main.rsplit("/", 1)[0]])
    assert len(run.reports) == 1
    [rep] = run.reports
    assert (rep.calls, rep.subagent_calls, rep.prompt_tokens) == (1, 2, [1101])
    # the same subagent calls also written inline in the main file: still 2
    write("p/s9.jsonl", assistant("m_main", 1, 100, 1000), *side)
    [rep] = analyze([main]).reports
    assert rep.subagent_calls == 2


def test_b11_spike_is_flagged_and_compaction_effect_signed(write):
    """B11: contexts 101,778 / 211,034 / 108,228: the middle call is a spike (≥1.8× both neighbours and
    above a 200K window); peak without spikes is 108,228. A boundary whose pre_tokens exceeds the window is
    kept as metadata; its effect is after − before (signed)."""
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "sessionId": "s",
        "compactMetadata": {"trigger": "auto", "preTokens": 1364156},
    }
    path = write(
        "t.jsonl",
        assistant("m1", 0, 0, 101778),
        assistant("m2", 0, 0, 211034),
        assistant("m3", 0, 0, 108228),
        boundary,
        assistant("m4", 0, 0, 120000),
    )
    _, rep = one(path, window=200000)
    assert rep.spikes == [1]
    assert rep.peak == 211034
    assert rep.peak_without_spikes == 120000
    [ev] = rep.compaction_events
    assert ev["pre_tokens"] == 1364156
    assert (ev["context_before"], ev["context_after"], ev["effect_tokens"]) == (108228, 120000, 11772)
    assert ev["call"] == 4
    # Without --window, the spike alone does not make the window 1M: the grade sees a 200K window.
    from contexttrace.analysis.window import window_choice

    [t] = read_trace(path)
    assert window_choice(t) == (200_000, "default")


def test_b16_result_line_is_not_a_context_size():
    """B16: 2 calls, context series [12,005, 12,503]; the result's cumulative usage is never a call."""
    trace, rep = one(str(CASES / "B16.jsonl"))
    assert rep.format == "stream-json"
    assert rep.calls == 2
    assert rep.prompt_tokens == [12005, 12503]
    assert trace.result is not None and trace.result["total_cost_usd"] == 0.0191
    assert rep.tools == 1 and rep.result_chars == len("print('hi')\n")
    assert rep.surface is not None and rep.surface["tools"] == 2


def test_b16_partial_message_stream_events_not_counted(write):
    """B16: --include-partial-messages adds stream_event lines; they add no call."""
    event = {"type": "stream_event", "session_id": "s", "event": {"type": "message_start", "message": {"usage": {}}}}
    lines = (CASES / "B16.jsonl").read_bytes().splitlines()
    path = write("t.jsonl", lines[0], event, *lines[1:])
    _, rep = one(path)
    assert rep.calls == 2


def test_b18_u2028_inside_a_string_does_not_split_the_line(write):
    """B18: a tool result with a raw U+2028 between 'alpha' and 'beta' parses; its size is 10 chars."""
    text = "alpha\u2028beta"
    path = write("t.jsonl", assistant("m1", 1, 1, 1, tools=[("t1", "Read", {})]), result("t1", text))
    with open(path, "rb") as fh:
        raw = fh.read()
    assert "\u2028".encode() in raw
    _, rep = one(path)
    assert rep.skipped_lines == 0
    assert rep.result_chars == 10


def test_b19_lone_surrogates_count_and_render(write):
    """B19: escaped lone surrogates parse; the result counts as failed with a finite size (35 chars)."""
    line = (
        '{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result",'
        '"tool_use_id":"toolu_19","is_error":true,"content":"Error: bad byte \\udcb2 and half emoji \\ud83d"}]}}'
    )
    _, rep = one(write("t.jsonl", line))
    assert rep.failed == 1
    assert rep.result_chars == len("Error: bad byte \udcb2 and half emoji \ud83d")
    assert rep.skipped_lines == 0


def test_b20_oversized_line_without_usage_is_skipped_and_counted(write, tmp_path):
    """B20: a 50 MB file-history-snapshot line, then two assistant calls: both calls count."""
    big = b'{"type":"file-history-snapshot","messageId":"m0","snapshot":{"blob":"' + b"x" * (50 * 1024 * 1024) + b'"}}'
    path = write("t.jsonl", big, assistant("m1", 1, 1, 10), assistant("m2", 1, 1, 20))
    _, rep = one(path)
    assert rep.calls == 2
    assert rep.prompt_tokens == [12, 22]
    assert rep.skipped_lines == 0


def test_b21_result_content_shapes():
    """B21: text size = 11 ('line1\\nline2') + 16 ('Screenshot taken') + the persisted preview's length
    + 0 (unknown block); 1 image apart; the persisted preview is flagged with ≈ 46.4 KB."""
    trace, rep = one(str(CASES / "B21.jsonl"))
    preview = orjson.loads((CASES / "B21.jsonl").read_bytes().splitlines()[2])["message"]["content"][0]["content"]
    assert rep.result_chars == 11 + 16 + len(preview)
    assert rep.result_images == 1
    assert rep.persisted_results == 1
    assert rep.persisted_bytes == int(46.4 * 1024)
    assert trace.tool_results["unknown_blocks"].sum() == 1
    assert rep.orphan_results == 4


def test_b22_denials_are_failed_and_counted_apart():
    """B22: 4 results: missing is_error = success; 3 have is_error true, of which 2 are denials (a
    toolDenialKind, and the user-rejection text). Table `failed` keeps denials (issue 3); `denied` = 2."""
    _, rep = one(str(CASES / "B22.jsonl"))
    assert rep.failed == 3
    assert rep.denied == 2
    assert rep.failed - rep.denied == 1


def test_b24_repeats_canonical_input_parallel_reads(write):
    """B24: Read(a.py, limit 50) twice with keys in another order = 1 repeat; parallel reads of b.py and
    c.py in one message are not repeats."""
    path = write(
        "t.jsonl",
        assistant("m1", 1, 1, 10, tools=[("t1", "Read", {"file_path": "src/a.py", "limit": 50})]),
        result("t1", "aaa"),
        assistant("m2", 1, 1, 20, tools=[("t2", "Read", {"limit": 50, "file_path": "src/a.py"})]),
        result("t2", "aaa"),
        assistant(
            "m3", 1, 1, 30, tools=[("t3", "Read", {"file_path": "src/b.py"}), ("t4", "Read", {"file_path": "src/c.py"})]
        ),
    )
    _, rep = one(path)
    assert rep.tools == 4
    assert rep.repeat == 1


def test_b25_series_keeps_file_order_not_timestamp_order(write):
    """B25: three calls with identical timestamps and one line with none stay in file order."""
    lines = []
    for i, cr in enumerate((300, 100, 200)):
        rec = assistant(f"m{i}", 0, 0, cr)
        rec["timestamp"] = "2026-01-24T04:08:00.000Z"
        lines.append(rec)
    lines.insert(1, {"type": "permission-mode", "permissionMode": "default", "sessionId": "s25"})
    trace, rep = one(write("t.jsonl", *lines))
    assert rep.prompt_tokens == [300, 100, 200]
    assert trace.calls["ts_ms"].to_list() == [1769227680000] * 3


def test_b26_fill_over_window_is_flagged(write):
    """B26: a peak above the given window gives fill > 1, which the table marks with '!'."""
    from contexttrace.render.diagnostics import render_diagnostics
    from contexttrace.render.trace import render_table
    from contexttrace.reports.trace import RunResult

    _, rep = one(write("t.jsonl", assistant("m1", 0, 0, 310000)), window=200000)
    assert rep.fill == 1.55
    run = RunResult([rep])
    assert "155%!" in render_table(run, with_window=True)
    assert any("exceeds the window" in line for line in render_diagnostics(run))


def test_b27_unknown_line_types_are_ignored():
    """B27: six lines of new or unknown types around one assistant line: 1 call, nothing skipped."""
    _, rep = one(str(CASES / "B27.jsonl"))
    assert rep.calls == 1
    assert rep.prompt_tokens == [5101]
    assert rep.skipped_lines == 0


def test_b27_wrong_types_in_usage_are_read_defensively(write):
    """B27: usage fields of the wrong type read as 0; a non-dict message is no call; no crash."""
    odd = assistant("m1", "3", None, 100)
    path = write("t.jsonl", odd, {"type": "assistant", "message": "oops", "sessionId": "s"})
    _, rep = one(path)
    assert rep.calls == 1
    assert rep.prompt_tokens == [100]


def test_b28_config_dir_replaces_default_roots(monkeypatch, tmp_path):
    """B28: CLAUDE_CONFIG_DIR (comma-separated) replaces the default roots instead of adding to them."""
    from contexttrace.discover.local import default_roots

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{tmp_path}/a, {tmp_path}/b")
    assert default_roots() == [tmp_path / "a" / "projects", tmp_path / "b" / "projects"]


def test_jsonl_helper_roundtrip():
    """The helper writes one line per record, newline-terminated."""
    assert jsonl({"a": 1}, "x") == b'{"a":1}\nx\n'


def test_b26_one_m_suffix_in_init_model_sets_the_window(write):
    """B26: a stream-json init naming `claude-opus-4-6[1m]` means a 1M window, even with a peak under 200K."""
    from contexttrace.analysis.window import window_choice

    init = {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-opus-4-6[1m]"}
    [t] = read_trace(write("r.jsonl", init, assistant("m1", 0, 0, 185000, parent="", model="claude-opus-4-6")))
    assert window_choice(t) == (1_000_000, "model [1m]")
    [plain] = read_trace(write("p.jsonl", assistant("m1", 0, 0, 185000, parent="", model="claude-opus-4-6")))
    assert window_choice(plain) == (200_000, "default")
    [big] = read_trace(write("b.jsonl", assistant("m1", 0, 0, 310000, model="claude-opus-4-6")))
    assert window_choice(big) == (1_000_000, "peak")


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


def test_b23_mcp_tool_names_group_by_longest_known_server(write):
    """B23: full names are counted as they are; with the init's server list the longest matching server
    wins (exact); without it, the first `__` after `mcp__` splits (flagged as a guess)."""
    names = ["mcp__plugin_acme_docs__search_pages", "mcp__a__b__fetch", "mcp__github__get_issue", "mcp_x_y"]
    tools = [(f"t{i}", n, {}) for i, n in enumerate(names)]
    servers = [{"name": "plugin_acme_docs", "status": "connected"}, {"name": "a__b"}, {"name": "github"}]
    init = {"type": "system", "subtype": "init", "session_id": "s", "mcp_servers": servers}
    [t] = read_trace(write("r.jsonl", init, assistant("m1", 1, 1, 1, parent="", tools=tools)))
    counts = build_report(t).tool_calls
    assert counts["by_tool"] == dict.fromkeys(sorted(names), 1)
    assert counts["by_mcp_server"] == {"a__b": 1, "github": 1, "plugin_acme_docs": 1}
    assert counts["mcp_server_guessed"] is False
    [bare] = read_trace(write("t.jsonl", assistant("m1", 1, 1, 1, tools=tools)))
    counts = build_report(bare).tool_calls
    assert counts["by_mcp_server"] == {"a": 1, "github": 1, "plugin_acme_docs": 1}
    assert counts["mcp_server_guessed"] is True


def test_b25_wall_and_active_duration(write):
    """B25: wall = max − min whatever the line order; active leaves out the 2-hour idle gap: 60 + 30 s."""
    stamps = [
        "2026-01-24T04:08:00.000Z",
        "2026-01-24T04:09:00.000Z",
        "2026-01-24T06:09:00.000Z",
        "2026-01-24T06:09:30.000Z",
    ]
    lines = []
    for i, ts in enumerate(stamps):
        rec = assistant(f"m{i}", 0, 0, 10)
        rec["timestamp"] = ts
        lines.append(rec)
    lines[0], lines[1] = lines[1], lines[0]  # out of order in the file
    _, rep = one(write("t.jsonl", *lines))
    assert (rep.duration_ms, rep.active_duration_ms) == (7290000, 90000)


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
