"""`context sources` at the trace's own calibration, on every bundled real sample: `other` at most 10 % of
the context where the trace records complete output counts, else its parts named; the rows summing to
the measured context at the last and the peak call; the prefix split where the trace writes the
listings; the `/context` view; Codex CLI and Gemini CLI traces."""

from __future__ import annotations

from functools import partial

import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.reading import read_trace
from contexttrace.render.sources import OTHER_WORDS, render_sources_claude, render_sources_table, sources_panel_of
from contexttrace.reports.claude_context import autocompact_buffer
from contexttrace.reports.sources import OTHER_PARTS, build_sources
from contexttrace.run.runner import analyze

from ..conftest import SAMPLES

AGENT_TEAMS = SAMPLES / "b-ccl-agent-teams-opus47" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
COMPACTION = SAMPLES / "b-spotter-compaction"


def _paths():
    return sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())


@pytest.fixture(scope="module")
def at_last_and_peak():
    out = {}
    for at in ("last", "peak"):
        run = analyze(_paths(), build=partial(build_sources, at=at), workers=1)
        assert run.ok
        out[at] = {r.trace.split("samples/", 1)[1]: r for r in run.reports}
    return out


def _other(r):
    return next(x["tokens"] for x in r.sources if x["source"] == "other")


#: `other` ÷ context at the last and the peak call, per sample whose calls all wrote their final output
#: count (a `stop_reason`): at most 10 % (before calibration: 16.5 %, 15.3 %, 21.2 %, 0.6 %/7.5 %, ...).
COMPLETE_OUTPUTS = {
    "b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl": (4841, 4841),
    "b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl": (268, 268),
    "b-ccl-thinking-sonnet45.jsonl": (6611, 6611),
    "c-codex-0.111-exec-command.jsonl": (206, 206),
    "c-codex-0.41-small.jsonl": (0, 0),
    "c-codex-0.65-compaction.jsonl": (586, 4879),
    "d-gemini-sessions/chats/session-2025-12-12T21-46-7c761c30.json": (9, 16),
    "d-gemini-sessions/chats/session-2025-12-26T04-02-b68abb2e.json": (0, 0),
    "d-gemini-sessions/chats/session-2025-12-30T01-16-3f9ce747.json": (0, 0),
}


def test_other_is_at_most_a_tenth_where_output_counts_are_complete(at_last_and_peak):
    seen = {}
    for at in ("last", "peak"):
        for name, r in at_last_and_peak[at].items():
            if r.call is None:
                continue
            assert sum(x["tokens"] for x in r.sources) == r.context_tokens, (at, name)
            assert sum(r.other_parts.values()) == _other(r), (at, name)
            if r.output_lower_bound_calls == 0:
                assert _other(r) <= r.context_tokens / 10, (at, name, _other(r), r.context_tokens)
                seen.setdefault(name, []).append(_other(r))
    assert {k: tuple(v) for k, v in seen.items()} == COMPLETE_OUTPUTS


def test_other_names_its_parts_where_output_counts_are_lower_bounds(at_last_and_peak):
    """The compaction sample's 139 calls were all written while streaming: `other` at its last call is
    13.7 % (34 % before calibration), named by part in the table."""
    r = at_last_and_peak["last"]["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    assert (r.output_lower_bound_calls, _other(r), r.context_tokens) == (139, 14488, 106060)
    assert r.other_parts == {"hidden_thinking": 0, "streamed_output": 11788, "unrecorded": 2700}
    peak = at_last_and_peak["peak"]["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    assert (peak.call, _other(peak)) == (61, 1207)  # 26 % before calibration
    text = render_sources_table(analyze([str(COMPACTION)], build=build_sources))
    assert ("other ≈14,488, no row can claim it: ≈11,788 output of calls written while streaming (their counts "
            "lower bounds); ≈2,700 what the harness adds") in text  # fmt: skip
    assert "rows at the trace's own calibration: results 2.79 chars/token (fit), prompts 2.61 (overall fit)" in text
    for rr in at_last_and_peak["last"].values():
        assert set(rr.other_parts) == set(OTHER_PARTS)


def test_the_prefix_is_split_where_the_trace_writes_the_listings(at_last_and_peak):
    """CLI 2.1.114 writes the skill listing (5,614 characters) and the deferred tools (731 characters of
    `addedLines`) as attachments before the first call: their own rows, out of the prefix, at the
    trace's prompts rate (1.37 chars/token: the overall fit)."""
    r = at_last_and_peak["last"]["b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"]
    rows = {x["source"]: x["tokens"] for x in r.sources}
    rate = r.calibration["prompts"]["chars_per_token"]
    assert (rate, r.calibration["prompts"]["source"]) == (1.3737, "overall")
    assert (rows["skills"], rows["deferred_tools"]) == (int(5614 / rate), int(731 / rate)) == (4086, 532)
    assert rows["prefix"] == 66603 - sum(v for k, v in rows.items() if k != "prefix") == 22370
    text = render_sources_table(analyze([str(AGENT_TEAMS)], build=build_sources))
    assert "| skills " in text and "| deferred tools " in text and "| memory files" not in text


def test_stream_json_names_its_start_up(at_last_and_peak):
    r = at_last_and_peak["last"]["a-ralph-subagent-opus45-haiku45.jsonl#1"]
    assert r.surface["mcp_servers"] == ["gymnastics", "playwright"]
    text = render_sources_table(analyze([str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl")], build=build_sources))
    assert ("start-up (system/init): 57 tools, MCP servers gymnastics, playwright, 4 agents, 0 skills; their "
            "sizes are not in the trace") in text  # fmt: skip


def test_autocompact_buffer_by_cli_version():
    assert [autocompact_buffer(v) for v in ("1.0.98", "2.0.57", "2.1.0", "2.1.114", None, "x")] == [
        45_000, 45_000, 33_000, 33_000, 33_000, 33_000]  # fmt: skip


def test_claude_view_of_the_compaction_sample():
    """`--view claude`: the header as /context writes it, the categories in its order, free space =
    200,000 − 106,060 − 33,000 (CLI 2.1.39), Messages every row after the prefix."""
    out = CliRunner().invoke(app, ["context", "sources", str(COMPACTION), "--view", "claude", "--no-cache"],
                             env={"COLUMNS": "200"})  # fmt: skip
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[2] == "claude-opus-4-6 · 106,060/200,000 tokens (53%) · window: default"
    cats = [ln.split("|")[1].strip() for ln in lines[5:14]]
    assert cats == ["System prompt + System tools", "System tools (deferred)", "MCP tools (instructions)",
                    "Custom agents", "Memory files", "Skills", "Messages", "Free space",
                    "Autocompact buffer"]  # fmt: skip
    assert "| Free space                   |  ≈60,940 |     30% |" in lines
    assert "| Messages                     |  ≈79,666 |     40% |" in lines
    assert lines[14].startswith("autocompact buffer ≈33,000: the constant /context shows for CLI 2.1.39")
    bad = CliRunner().invoke(app, ["context", "sources", str(COMPACTION), "--view", "nope"])
    assert bad.exit_code == 2


def test_claude_view_of_a_codex_trace_has_no_buffer():
    (trace,) = read_trace(str(SAMPLES / "c-codex-0.65-compaction.jsonl"))
    r = build_sources(trace)
    c = r.claude_context
    assert (c["window_tokens"], c["window_source"], c["autocompact_buffer_tokens"]) == (
        258_400, "model_context_window", None)  # fmt: skip
    assert c["free_tokens"] == 258_400 - 47_797 and sum(x["tokens"] for x in c["categories"]) == 258_400
    text = render_sources_claude(analyze([str(SAMPLES / "c-codex-0.65-compaction.jsonl")], build=build_sources))
    assert "autocompact buffer: - (not a Claude Code trace" in text


def test_codex_and_gemini_traces_are_split_or_say_why():
    """Codex and Gemini traces write exact counts per call: their rows are built; a Codex rollout from
    before 0.32 writes none, and says so."""
    run = analyze([str(SAMPLES / "c-codex-legacy-2025-08.jsonl"), str(SAMPLES / "d-gemini-sessions")],
                  build=build_sources)  # fmt: skip
    legacy, *gemini = run.reports
    assert legacy.call is None and any("records no token counts" in w for w in legacy.warnings)
    assert [r.call for r in gemini] == [5, 12, 8] and all(r.format == "gemini" for r in gemini)
    assert "no call to split" in render_sources_table(run)


def test_the_html_panel_uses_the_same_rows():
    run = analyze([str(AGENT_TEAMS)], build=build_sources)
    (r,) = run.reports
    panel = sources_panel_of(r)
    shown = {x["source"] for x in panel["rows"]}
    assert {"skills", "deferred tools", "system prompt + tools, not itemised in the trace"} <= shown
    parts = sum(1 for v in r.other_parts.values() if v) if _other(r) else 0
    assert len(panel["rows"]) == sum(1 for x in r.sources if x["tokens"]) + parts
    assert [x["source"] for x in panel["rows"][-parts:]] == [f"other: {OTHER_WORDS[k]}" for k, v in
                                                              r.other_parts.items() if v]  # fmt: skip


def test_codex_other_names_the_encrypted_compaction_summary(monkeypatch):
    """Just after a Codex compaction, what stays in `other` is the rollout's encrypted summary: the line says
    so in the rollout's terms (not Claude Code's system reminders), and the report page's panel alike."""
    monkeypatch.setenv("COLUMNS", "200")
    path = str(SAMPLES / "c-codex-0.65-compaction.jsonl")
    out = CliRunner().invoke(app, ["context", "sources", path, "--at", "120", "--no-cache"], catch_exceptions=False)
    assert out.exit_code == 0
    assert (
        "other ≈537, no row can claim it: ≈537 what the harness adds and the rollout does not write (message "
        "framing; after a compaction, its encrypted summary)"
    ) in out.stdout.splitlines()
    (r,) = analyze([path], build=partial(build_sources, at="120")).reports
    assert "other: what the harness adds and the rollout does not write (message framing; after a compaction, " \
        "its encrypted summary)" in [x["source"] for x in sources_panel_of(r)["rows"]]  # fmt: skip
