"""`context tools`: per-tool readings on hand-built traces with known values, and every sample."""

from __future__ import annotations

import math

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.analysis.pricing import load_prices, price_of
from contexttrace.analysis.tokens import result_tokens
from contexttrace.cli.app import app
from contexttrace.reading import read_trace
from contexttrace.render.tools import render_tools_json, render_tools_table, tools_panel_of
from contexttrace.reports.schemas import SCHEMA_VERSIONS
from contexttrace.reports.tools import ERROR_CLASSES, build_tools, error_class, nearest_rank
from contexttrace.run.runner import analyze

from ..conftest import ROOT, SAMPLES, assert_keys_documented, assistant, json_keys, result

MODEL = "claude-sonnet-4-5"


def _ts(second: int) -> str:
    return f"2025-06-01T10:00:{second:02d}.000Z"


def _report(write, *records, name="t.jsonl"):
    (trace,) = read_trace(write(name, *records))
    return build_tools(trace)


def _row(report, tool, thread="main"):
    (row,) = [r for r in report.rows if r["tool"] == tool and r["thread"] == thread]
    return row


# -- error classes -----------------------------------------------------------------------------------------

CLASS_TEXTS = {
    "command_failed": "Exit code 1\nTraceback (most recent call last):",
    "user_rejected": "The user doesn't want to proceed with this tool use. The tool use was rejected",
    "edit_failed": "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
    "file_changed": "File has been modified since read, either by the user or by a linter.",
    "file_too_large": "File content (52830 tokens) exceeds maximum allowed tokens (25000). Please use offset",
    "file_not_found": "<tool_use_error>File does not exist.</tool_use_error>",
    "content_not_found": "<tool_use_error>String to replace not found in file.\nString: x</tool_use_error>",
    "timeout": "Command timed out after 2m 0.0s",
    "tool_not_found": "<tool_use_error>Error: No such tool available: AskUserQuestion</tool_use_error>",
    "denied": "Permission to use Bash with command rm -rf / has been denied.",
    "other": "Request failed with status code 403",
}


@pytest.mark.parametrize(("key", "text"), CLASS_TEXTS.items())
def test_error_class_of_each_text(key, text):
    assert error_class(text) == key


def test_error_class_table_is_in_spec_order_and_names_sources():
    keys = [k for k, *_ in ERROR_CLASSES]
    assert keys == ["command_failed", "user_rejected", "edit_failed", "file_changed", "file_too_large",
                    "file_not_found", "content_not_found", "timeout", "tool_not_found", "denied"]  # fmt: skip
    assert all(source for *_, source in ERROR_CLASSES)
    # first match wins: a failed command whose output says "No such file" is a failed command
    assert error_class("Exit code 2\nls: x: No such file or directory") == "command_failed"
    # a denial flagged by the reader whose text no pattern knows (a hook's words) is Denied, else Other
    assert error_class("blocked by my hook", denied=True) == "denied"
    assert error_class("blocked by my hook") == "other"
    # zsh writes the shell's ENOENT in lower case (samples/b-ccl-image-and-errors)
    assert error_class("(eval):1: no such file or directory: types/README.md") == "file_not_found"


def test_every_error_class_counted_in_a_trace(write):
    records = []
    for i, (key, text) in enumerate(CLASS_TEXTS.items()):
        records.append(assistant(f"m{i}", 1, 0, 100, tools=[(f"t{i}", "Bash", {"command": key})]))
        records.append(result(f"t{i}", text, is_error=True))
    records.append(assistant("end", 1, 0, 100))
    row = _row(_report(write, *records), "Bash")
    assert row["calls"] == 11
    assert row["error_classes"] == dict.fromkeys(CLASS_TEXTS, 1)
    # the reader flags the two refusals (user rejected, permission denied) as denials, apart from errors
    assert row["denials"] == 2
    assert row["errors"] == 9


def test_denial_is_not_an_error(write):
    r = _report(
        write,
        assistant("m1", 1, 0, 100, tools=[("t1", "Edit", {"file_path": "/a"})]),
        result("t1", "The user doesn't want to proceed with this tool use. The tool use was rejected", is_error=True),
        assistant("m2", 1, 0, 100, tools=[("t2", "Edit", {"file_path": "/a"})]),
        result("t2", "ok"),
        assistant("m3", 1, 0, 100),
    )
    row = _row(r, "Edit")
    assert (row["calls"], row["errors"], row["denials"]) == (2, 0, 1)
    assert row["error_classes"]["user_rejected"] == 1


# -- MCP -----------------------------------------------------------------------------------------------------


MCP_USES = [
    ("t1", "mcp__github__get_issue", {"n": 1}),
    ("t2", "mcp__github__list_prs", {}),
    ("t3", "mcp__github__get_issue", {"n": 2}),
]


def test_mcp_tools_grouped_by_server_and_listed_by_tool(write):
    r = _report(
        write,
        assistant("m1", 1, 0, 100, tools=MCP_USES),
        result("t1", "a" * 400),
        result("t2", "b" * 40, is_error=True),
        result("t3", "c" * 4),
        assistant("m2", 1, 0, 100),
    )
    group = _row(r, "mcp:github")
    assert (group["calls"], group["errors"], group["tokens_to_context"], group["parent"]) == (3, 1, 111, None)
    assert group["mcp_server"] == "github"
    issue = _row(r, "mcp__github__get_issue")
    assert (issue["calls"], issue["tokens_to_context"], issue["parent"]) == (2, 101, "mcp:github")
    assert r.mcp_server_guessed is True
    run = analyze([r.path], build=build_tools)
    plain = orjson.loads(render_tools_json(run))[0]["tools"]
    assert [t["tool"] for t in plain] == ["mcp:github"]
    by_tool = orjson.loads(render_tools_json(run, by_tool=True))[0]["tools"]
    assert [t["tool"] for t in by_tool] == ["mcp:github", "mcp__github__get_issue", "mcp__github__list_prs"]
    assert "↳ mcp__github__list_prs" in render_tools_table(run, by_tool=True)


# -- durations -------------------------------------------------------------------------------------------------


def test_durations_nearest_rank_from_timestamps(write):
    records = []
    for i, secs in enumerate([1, 2, 3, 4, 10]):  # tool_use at :i*11, result secs later
        start = i * 11
        records.append(assistant(f"m{i}", 1, 0, 100, tools=[(f"t{i}", "Bash", {})], timestamp=_ts(start)))
        records.append(result(f"t{i}", "ok", timestamp=_ts(start + secs)))
    records.append(assistant("end", 1, 0, 100, timestamp=_ts(59)))
    r = _report(write, *records)
    row = _row(r, "Bash")
    assert (row["timed_calls"], row["p50_duration_ms"], row["p95_duration_ms"]) == (5, 3000, 10_000)
    assert r.durations_known is True
    assert nearest_rank([1, 2, 3, 4], 50) == 2 and nearest_rank([7], 95) == 7


def test_stream_json_durations_are_unknown_never_zero(write):
    r = _report(
        write,
        assistant("m1", 1, 0, 100, parent="", tools=[("t1", "Read", {"file_path": "/a"})]),
        result("t1", "x" * 8, stream=True),
        assistant("m2", 1, 0, 100, parent=""),
    )
    assert r.format == "stream-json"
    row = _row(r, "Read")
    assert (row["timed_calls"], row["p50_duration_ms"], row["p95_duration_ms"]) == (0, None, None)
    assert r.durations_known is False
    assert any("no tool durations" in w for w in r.warnings)
    text = render_tools_table(analyze([r.path], build=build_tools))
    assert "durations: - (the trace has no timestamps" in text
    assert "≈0ms" not in text


# -- tokens, re-read tax, top consumers ------------------------------------------------------------------------


def test_result_tokens_text_and_images():
    assert result_tokens(4003, 0, 0, 0) == 1000
    assert result_tokens(0, 3, 1500 * 1000, 1) == 2000 + 2 * 1500  # one image sized 1500×1000, two unknown


def test_reread_tax_small_example(write):
    """A 4,000-char Read result (≈1,000 tokens) read again by the two main calls after it."""
    r = _report(
        write,
        assistant("m1", 10, 0, 1000, tools=[("t1", "Read", {"file_path": "/a"})]),
        result("t1", "x" * 4000),
        assistant("m2", 10, 0, 2000),
        assistant("m3", 10, 0, 3000),
    )
    row = _row(r, "Read")
    price = price_of(MODEL, load_prices())
    assert price is not None
    assert row["tokens_to_context"] == 1000
    assert row["reread_calls"] == 2
    assert row["reread_tax_usd"] == pytest.approx(1000 * 2 * price.cache_read / 1e6)
    assert row["input_tokens_to_context"] == len('{"file_path":"/a"}') // 4
    (top,) = r.top_consumers
    assert (top["tool"], top["tokens_to_context"], top["call"], top["persisted"]) == ("Read", 1000, 2, False)


def test_reread_stops_at_compaction(write):
    r = _report(
        write,
        assistant("m1", 10, 0, 1000, tools=[("t1", "Read", {"file_path": "/a"})]),
        result("t1", "x" * 400),
        assistant("m2", 10, 0, 2000),
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s",
         "compactMetadata": {"trigger": "auto", "preTokens": 2010}},
        assistant("m3", 10, 0, 300),
    )  # fmt: skip
    assert _row(r, "Read")["reread_calls"] == 1


def test_persisted_result_marked_in_consumers(write):
    preview = "<persisted-output>\nOutput too large (45.2KB). Full output saved to: /tmp/x.txt\n" + "y" * 2000
    run = analyze(
        [
            write(
                "p.jsonl",
                assistant("m1", 10, 0, 100, tools=[("t1", "Bash", {"command": "cat big"})]),
                result("t1", preview + "\n</persisted-output>"),
                assistant("m2", 10, 0, 100),
            )
        ],
        build=build_tools,
    )
    (top,) = run.reports[0].top_consumers
    assert top["persisted"] is True
    assert "⊘ persisted" in render_tools_table(run)


def test_cli_json_and_sort(write):
    path = write(
        "c.jsonl",
        assistant("m1", 1, 0, 100, tools=[("t1", "Read", {}), ("t2", "Bash", {}), ("t3", "Bash", {})]),
        result("t1", "x" * 4000),
        result("t2", "Exit code 1", is_error=True),
        result("t3", "ok"),
        assistant("m2", 1, 0, 100),
    )
    out = CliRunner().invoke(app, ["context", "tools", path, "--json", "--no-cache", "--sort", "tokens"])
    assert out.exit_code == 0, out.output
    (obj,) = orjson.loads(out.stdout)
    assert obj["schema_version"] == SCHEMA_VERSIONS["tools"]
    assert [t["tool"] for t in obj["tools"]] == ["Read", "Bash"]
    out = CliRunner().invoke(app, ["context", "tools", path, "--no-cache", "--sort", "errors"])
    assert out.exit_code == 0
    assert out.stdout.index("| Bash") < out.stdout.index("| Read")
    bad = CliRunner().invoke(app, ["context", "tools", path, "--sort", "nope"])
    assert bad.exit_code != 0


# -- samples -----------------------------------------------------------------------------------------------------


def _sample_paths():
    return sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())


@pytest.mark.parametrize("path", _sample_paths())
def test_every_sample_runs(path):
    run = analyze([path], build=build_tools)
    assert run.ok and run.reports
    assert render_tools_table(run, by_tool=True)
    for obj in orjson.loads(render_tools_json(run, by_tool=True)):
        assert obj["schema_version"] == SCHEMA_VERSIONS["tools"]
        for row in obj["tools"]:
            assert row["errors"] + row["denials"] <= row["results"]
            assert sum(row["error_classes"].values()) >= row["errors"]


def test_compaction_sample_figures_from_the_frames():
    """samples/b-spotter-compaction: the main thread's Read row, computed here from the frames."""
    path = str(SAMPLES / "b-spotter-compaction")
    (report,) = analyze([path], build=build_tools).reports
    (trace,) = analyze([path], build=lambda t, w: t).reports
    uses = trace.tool_uses.to_dicts()
    results = {r["tool_use_id"]: r for r in trace.tool_results.to_dicts()}
    reads = [u for u in uses if u["name"] == "Read" and u["thread_kind"] == "main"]
    row = _row(report, "Read")
    assert row["calls"] == len(reads) == 31
    assert row["tokens_to_context"] == sum(results[u["tool_use_id"]]["result_chars"] // 4 for u in reads) == 72_223
    durations = sorted(results[u["tool_use_id"]]["ts_ms"] - u["ts_ms"] for u in reads)
    assert row["p50_duration_ms"] == durations[math.ceil(0.5 * len(durations)) - 1] == 5
    assert row["p95_duration_ms"] == durations[math.ceil(0.95 * len(durations)) - 1] == 231
    side = [u for u in uses if u["name"] == "Read" and u["thread_kind"] != "main"]
    side_row = _row(report, "Read", thread="subagents")
    assert side_row["calls"] == len(side) == 16
    assert side_row["errors"] == sum(results[u["tool_use_id"]]["is_error"] is True for u in side) == 8
    bash = _row(report, "Bash")
    failed = [results[u["tool_use_id"]] for u in uses if u["name"] == "Bash" and u["thread_kind"] == "main"]
    assert bash["calls"] == 67
    assert bash["errors"] == sum(r["is_error"] is True for r in failed) == 5
    assert bash["error_classes"]["command_failed"] == 2
    # the largest single result and its call: the first main call after it landed
    calls = sorted(c["seq"] for c in trace.calls.to_dicts() if c["thread_kind"] == "main")
    main_results = [r for r in results.values() if r["thread_kind"] == "main"]
    biggest = max(main_results, key=lambda r: r["result_chars"])
    top = report.top_consumers[0]
    assert top["tool_use_id"] == biggest["tool_use_id"]
    assert top["tokens_to_context"] == biggest["result_chars"] // 4 == 7699
    assert top["call"] == 1 + sum(s < biggest["seq"] for s in calls) == 6


def test_every_json_key_is_snake_case_and_documented():
    """Every key `context tools --json --by-tool` emits over the samples is snake_case and in docs/tools.md."""
    run = analyze(_sample_paths(), build=build_tools)
    keys = json_keys(orjson.loads(render_tools_json(run, by_tool=True)))
    assert_keys_documented(keys, (ROOT / "docs" / "tools.md").read_text(), at_least=40)


def test_a_result_cut_at_a_cap_is_marked(write):
    """A result whose toolUseResult says the tool cut it (Glob's `truncated`, a `truncatedByTokenCap`) is
    `capped` among the top consumers and marked ⊘ capped; a persisted preview stays ⊘ persisted; a whole
    result has no mark."""
    preview = "<persisted-output>\nOutput too large (46.4KB). Full output saved to: /tmp/x.txt\n" + "p" * 400
    path = write(
        "cap.jsonl",
        assistant("m1", 1, 0, 100, tools=[("g", "Glob", {}), ("c", "Grep", {}), ("b", "Bash", {}), ("r", "Read", {})]),
        result("g", "a" * 4000, toolUseResult={"filenames": [], "numFiles": 100, "truncated": True}),
        result("c", "c" * 3000, toolUseResult={"truncatedByTokenCap": True}),
        result("b", preview),
        result("r", "r" * 1000, toolUseResult={"type": "text", "truncated": False}),
        assistant("m2", 1, 0, 100),
    )
    report = build_tools(read_trace(path)[0])
    marks = {c["tool"]: (c["capped"], c["persisted"]) for c in report.top_consumers}
    assert marks == {"Glob": (True, False), "Grep": (True, False), "Bash": (False, True), "Read": (False, False)}
    text = render_tools_table(analyze([path], build=build_tools))
    assert "Glob ≈1,000 tokens ⊘ capped" in text and "Grep ≈750 tokens ⊘ capped" in text
    assert "Bash ≈" in text and "⊘ persisted" in text and "Read ≈250 tokens, call 2" in text


def test_the_report_panel_of_the_compaction_sample(write):
    """`context report`'s tools panel (`render.tools.tools_panel_of`): one row per tool and thread, MCP tools under
    their server only, sorted by calls (Bash 67 first: the figures of `test_compaction_sample_read_row`'s
    table), the top consumers in the note; no panel for a trace without a tool call."""
    path = sorted((SAMPLES / "b-spotter-compaction").glob("*.jsonl"))[0]
    trace = read_trace(str(path), [])[0]
    panel = tools_panel_of(build_tools(trace))
    assert panel is not None and panel["id"] == "tools" and panel["kind"] == "table"
    first = panel["rows"][0]
    assert (first["thread"], first["tool"], first["calls"], first["errors"]) == ("main", "Bash", "67", "5")
    assert first["classes"] == "Command Failed 2, Other 3" and first["tokens"] == "≈12,780"
    calls = [int(r["calls"]) for r in panel["rows"]]
    assert calls == sorted(calls, reverse=True) and sum(calls) == sum(
        r["calls"] for r in build_tools(trace).rows if r["parent"] is None
    )
    assert panel["note"].startswith(
        "Top context consumers (main thread): Read lib/spotter_web/live/pane_list_live.ex ≈7,699 tokens at call 6"
    )
    assert tools_panel_of(build_tools(read_trace(write("none.jsonl", assistant("m1", 1, 0, 100)))[0])) is None


def test_a_grep_at_its_limit_and_a_read_at_its_default_are_capped(write):
    """Issue 13 review, finding 12: a Grep that stopped at its `appliedLimit` (content mode: `numLines` 40 =
    `appliedLimit` 40; files mode: `numFiles` 100 = 100) is ⊘ capped, one below its limit (12 of 40) is not;
    a Read without `limit` that returned lines 1–2,000 of a 9,000-line file stopped at its default limit
    (capped), the same part asked for with `limit: 2000` is not, nor a whole file (50 of 50 lines)."""
    part = {"type": "text", "file": {"filePath": "/p/big.py", "numLines": 2000, "startLine": 1, "totalLines": 9000}}
    whole = {"type": "text", "file": {"filePath": "/p/a.py", "numLines": 50, "startLine": 1, "totalLines": 50}}
    tools = [
        ("g1", "Grep", {"pattern": "x", "head_limit": 40}),
        ("g2", "Grep", {"pattern": "y", "head_limit": 40}),
        ("g3", "Grep", {"pattern": "z"}),
        ("r1", "Read", {"file_path": "/p/big.py"}),
        ("r2", "Read", {"file_path": "/p/big.py", "limit": 2000}),
        ("r3", "Read", {"file_path": "/p/a.py"}),
    ]
    path = write(
        "limits.jsonl",
        assistant("m1", 1, 0, 100, tools=tools),
        result("g1", "g" * 400, toolUseResult={"mode": "content", "numLines": 40, "appliedLimit": 40}),
        result("g2", "g" * 100, toolUseResult={"mode": "content", "numLines": 12, "appliedLimit": 40}),
        result("g3", "g" * 300, toolUseResult={"mode": "files_with_matches", "numFiles": 100, "appliedLimit": 100}),
        result("r1", "r" * 800, toolUseResult=part),
        result("r2", "r" * 700, toolUseResult=part),
        result("r3", "r" * 600, toolUseResult=whole),
        assistant("m2", 1, 0, 100),
    )
    t = read_trace(path)[0]
    capped = dict(zip(t.tool_results["tool_use_id"].to_list(), t.tool_results["capped"].to_list(), strict=True))
    assert capped == {"g1": True, "g2": False, "g3": True, "r1": True, "r2": False, "r3": False}
    report = build_tools(t)
    assert [(c["tool_use_id"], c["capped"]) for c in report.top_consumers] == [
        ("r1", True), ("r2", False), ("r3", False), ("g1", True), ("g3", True)]  # fmt: skip
    assert "Read /p/big.py ≈200 tokens ⊘ capped" in render_tools_table(analyze([path], build=build_tools))


def test_the_samples_capped_results():
    """On every bundled sample, the results cut at a cap are exactly the one Grep of
    a-ralph-subagent-opus45-haiku45 that stopped at its head_limit (`numLines` 40 = `appliedLimit` 40); its
    other limited Grep (`numLines` 0 of 100), the 14 Globs (`truncated: false`) and the 59 partial Reads (each
    with a `limit`) are not."""
    capped = []
    for path in _sample_paths():
        for report in analyze([path], build=lambda t, window=None: t).reports:
            r = report.tool_results
            capped += [(report.name.split("/")[-1], tid) for tid in r.filter(r["capped"])["tool_use_id"].to_list()]
    assert capped == [("a-ralph-subagent-opus45-haiku45.jsonl#1", "toolu_01BUdfaCqrR8pTtKKBp1GoTk")]


# -- server-side tools ------------------------------------------------------------------------------------------


def _server_line(uuid: str, parent: str | None, block: dict, web_searches: int, **extra) -> dict:
    """An assistant line of one API response (message msg_web) that ran a server-side web search: Claude Code
    writes one content block per line, each with the response's usage."""
    usage = {
        "input_tokens": 12,
        "cache_creation_input_tokens": 2100,
        "cache_read_input_tokens": 14000,
        "output_tokens": 310,
        "server_tool_use": {"web_search_requests": web_searches, "web_fetch_requests": 0},
    }
    message = {"id": "msg_web", "model": MODEL, "role": "assistant", "content": [block], "usage": usage}
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s-web", "requestId": "req_web",
            "timestamp": _ts(2), "message": message, **extra}  # fmt: skip


SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01A", "name": "web_search",
          "input": {"query": "Python 3.14 what's new"}}  # fmt: skip
SEARCH_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01A", "content": [
    {"type": "web_search_result", "url": "https://docs.python.org/3.14/whatsnew/3.14.html",
     "title": "What's new in Python 3.14", "encrypted_content": "EqgfCioIARgB" * 40, "page_age": "2025"}]}  # fmt: skip


def _web_search_trace(write) -> str:
    """A session whose only tool is one server-side web search: the server_tool_use block, its
    web_search_tool_result, then the answer, all in one response whose usage bills one search."""
    prompt = {"type": "user", "uuid": "u0", "sessionId": "s-web", "timestamp": _ts(0),
              "message": {"role": "user", "content": "What changed in Python 3.14?"}}  # fmt: skip
    answer = {"type": "text", "text": "Python 3.14 adds template strings (PEP 750)."}
    return write(
        "web-search.jsonl",
        prompt,
        _server_line("u1", "u0", SEARCH, 1),
        _server_line("u2", "u1", SEARCH_RESULT, 1),
        _server_line("u3", "u2", answer, 1),
    )


def test_server_side_web_search_is_listed_apart(write):
    """A trace whose only tool was a server-side web search: `context tools` says it has no client tool call
    and lists the search under the server-side tools (its call, the request its usage bills, ≈ list-price
    cost); the JSON has it in `server_tools`, never in `tools`, and no duration warning."""
    path = _web_search_trace(write)
    out = CliRunner().invoke(app, ["context", "tools", path, "--no-cache"], catch_exceptions=False)
    assert out.exit_code == 0
    assert out.stdout.splitlines()[1:] == [
        "no client tool calls",
        "Server-side tools (run by the API inside a call; their results are in the calls' usage):",
        "| thread   | server-side tool   |   calls |   requests |   input → ctx |   cost USD |",
        "|----------|--------------------|---------|------------|---------------|------------|",
        "| main     | web_search         |       1 |          1 |            ≈8 |   ≈$0.0100 |",
    ]
    assert "no tool durations" not in out.stderr
    as_json = CliRunner().invoke(app, ["context", "tools", path, "--no-cache", "--json"], catch_exceptions=False)
    (obj,) = orjson.loads(as_json.stdout)
    assert obj["tools"] == [] and obj["warnings"] == []
    assert obj["server_tools"] == [{"thread": "main", "tool": "web_search", "calls": 1, "input_tokens_to_context": 8,
                                    "requests": 1, "cost_usd": 0.01}]  # fmt: skip
    (trace,) = read_trace(path)
    assert trace.tool_uses.select("tool_use_id", "name", "server_side").rows() == [("srvtoolu_01A", "web_search", True)]
    panel = tools_panel_of(build_tools(trace))
    assert panel is not None and [r["tool"] for r in panel["rows"]] == ["web_search (server-side)"]


def test_server_side_tools_beside_client_tools(write):
    """Client tools stay in the table as before; a server-side fetch and a subagent's billed searches with
    no block in the trace get their own rows (requests only for web_search)."""
    fetch = {"type": "server_tool_use", "id": "srvtoolu_02", "name": "web_fetch", "input": {"url": "https://x.org"}}
    searching = assistant("m3", 1, 0, 100, sidechain=True, agentId="a1", timestamp=_ts(3))
    searching["message"]["usage"]["server_tool_use"] = {"web_search_requests": 3}
    path = write(
        "mixed.jsonl",
        assistant("m1", 1, 0, 100, tools=[("t1", "Read", {"file_path": "/a"})], timestamp=_ts(0)),
        result("t1", "x" * 400, timestamp=_ts(1)),
        _server_line("u9", None, fetch, 0),
        searching,
    )
    (trace,) = read_trace(path)
    assert trace.tool_uses.get_column("server_side").to_list() == [False, True]
    report = build_tools(trace)
    assert [(r["thread"], r["tool"], r["calls"]) for r in report.rows] == [("main", "Read", 1)]
    assert [(r["thread"], r["tool"], r["calls"], r["requests"], r["cost_usd"]) for r in report.server_tools] == [
        ("main", "web_fetch", 1, None, None), ("subagents", "web_search", 0, 3, 0.03)]  # fmt: skip
    text = render_tools_table(analyze([path], build=build_tools))
    assert "| main     | Read   | -               |       1 |" in text
    assert "| main      | web_fetch          |       1 |          - |            ≈5 |          - |" in text
