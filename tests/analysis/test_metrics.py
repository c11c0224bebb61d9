"""Metric functions (`analysis/metrics.py`): repeats, compaction and microcompaction events, context
figures and spikes, durations, MCP servers, missing subagents, largest results, rounding."""

from __future__ import annotations

import io
from fractions import Fraction

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace import analyze, read_trace
from contexttrace.analysis import metrics, tool_figures
from contexttrace.analysis.metrics import is_spike
from contexttrace.render.trace import render_json
from contexttrace.reports.trace import build_report

from ..conftest import CASES, assistant, jsonl, report_of, result, trace_and_report

BOUNDARY = {
    "type": "system",
    "subtype": "compact_boundary",
    "sessionId": "s",
    "compactMetadata": {"trigger": "manual", "preTokens": 9},
}


def trace_of(*records):
    [t] = read_trace("mem.jsonl", fh=io.BytesIO(jsonl(*records)))
    return t


def calls_with(*steps):
    """Build one call per step (name, input, is_error), each followed by its result."""
    records = []
    for i, step in enumerate(steps):
        if step == "BOUNDARY":
            records.append(BOUNDARY)
            continue
        name, inp, err = step
        records.append(assistant(f"m{i}", 1, 1, 10 + i, tools=[(f"t{i}", name, inp)]))
        records.append(result(f"t{i}", "out", is_error=err))
    return trace_of(*records)


R = ("Read", {"file_path": "a.py"}, None)
R_FAIL = ("Read", {"file_path": "a.py"}, True)
EDIT = ("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}, None)
GREP = ("Grep", {"pattern": "x"}, None)
LS = ("Bash", {"command": "ls"}, None)


@pytest.mark.parametrize(
    ("steps", "flags"),
    [
        pytest.param([R, R], [False, True], id="same-read-twice"),
        pytest.param([R, GREP, R], [False, False, True], id="non-writer-between"),
        pytest.param([R, EDIT, R], [False, False, False], id="read-after-edit"),
        pytest.param([R_FAIL, R], [False, False], id="retry-after-error"),
        pytest.param([R, R_FAIL, R], [False, True, True], id="earlier-success-still-counts"),
        pytest.param([R, "BOUNDARY", R], [False, False], id="compaction-boundary-between"),
        pytest.param([LS, LS], [False, True], id="same-bash-back-to-back"),
        pytest.param([LS, EDIT, LS], [False, False, False], id="bash-after-edit"),
        pytest.param([R, R, R], [False, True, True], id="three-times"),
    ],
)
def test_repeat_flags_rules(steps, flags):
    """Spec 004: identical name+input to an earlier non-failed call with no writer (and, our choice, no
    compaction boundary) strictly between."""
    t = calls_with(*steps)
    assert tool_figures.repeat_flags(t.tool_uses, t.tool_results, t.events)["is_repeat"].to_list() == flags


def test_repeat_ignores_subagent_calls():
    """A subagent's identical Read is on another thread: not a repeat, and not counted in tools."""
    t = trace_of(
        assistant("m1", 1, 1, 1, tools=[("t1", "Read", {"f": 1})]),
        result("t1", "x"),
        assistant("s1", 1, 1, 1, tools=[("t2", "Read", {"f": 1})], sidechain=True),
        result("t2", "x", isSidechain=True),
    )
    rep = build_report(t)
    assert (rep.tools, rep.repeat, rep.subagent_calls, rep.result_chars) == (1, 0, 1, 1)


def test_context_figures_empty_and_spikes():
    """No calls gives zeros; a lone spike in the middle is flagged and left out of peak_without_spikes."""
    assert metrics.context_figures([], 1000)["first"] == 0
    f = metrics.context_figures([100, 179, 100], None)
    assert f["spikes"] == [] and f["fill"] is None
    f = metrics.context_figures([100, 180, 100], None)
    assert f["spikes"] == [1] and f["peak_without_spikes"] == 100


def test_compaction_event_at_end_has_no_following_call():
    """A boundary after the last call gets call None and no effect."""
    t = trace_of(assistant("m1", 1, 1, 100), BOUNDARY)
    [ev] = metrics.compaction_events(t.events, t.calls)
    assert ev["call"] is None and ev["effect_tokens"] is None
    assert (ev["trigger"], ev["pre_tokens"], ev["post_tokens"]) == ("manual", 9, None)


def test_stream_compact_boundary_snake_case_with_spacing(write):
    """stream-json compact_metadata (snake case, any spacing) is read like the transcript's camel case."""
    line = (
        '{"type": "system", "subtype": "compact_boundary", "session_id": "s", '
        '"compact_metadata": {"trigger": "auto", "pre_tokens": 171000, "post_tokens": 30000}}'
    )
    path = write("r.jsonl", assistant("m1", 0, 0, 171000, parent=""), line, assistant("m2", 0, 0, 31000, parent=""))
    [t] = read_trace(path)
    rep = build_report(t)
    assert rep.compact == 1
    assert rep.compaction_events[0] | {} == {
        "trigger": "auto",
        "pre_tokens": 171000,
        "post_tokens": 30000,
        "call": 2,
        "line": 2,
        "context_before": 171000,
        "context_after": 31000,
        "effect_tokens": -140000,
    }


def test_largest_results_ranks_by_total_chars():
    """Chars summed per tool, largest first; orphan results count under '?'."""
    t = trace_of(
        assistant("m1", 1, 1, 1, tools=[("a", "Bash", {}), ("b", "Read", {}), ("c", "Bash", {"x": 1})]),
        result("a", "x" * 10),
        result("b", "y" * 15),
        result("c", "z" * 10),
        result("zz", "q" * 3),
    )
    assert tool_figures.largest_results(t.tool_uses, t.tool_results) == [
        {"tool": "Bash", "chars": 20},
        {"tool": "Read", "chars": 15},
        {"tool": "?", "chars": 3},
    ]


def test_repeat_same_result_tells_polling_apart():
    """B24: a repeat whose result equals the earlier one's is `same_result`; a poll with new output is not."""
    t = trace_of(
        assistant("m1", 1, 1, 1, tools=[("t1", "Read", {"f": 1})]),
        result("t1", "same text"),
        assistant("m2", 1, 1, 2, tools=[("t2", "Read", {"f": 1})]),
        result("t2", "same text"),
        assistant("m3", 1, 1, 3, tools=[("t3", "BashOutput", {"bash_id": "b"})]),
        result("t3", "line 1"),
        assistant("m4", 1, 1, 4, tools=[("t4", "BashOutput", {"bash_id": "b"})]),
        result("t4", "line 1\nline 2"),
    )
    flags = tool_figures.repeat_flags(t.tool_uses, t.tool_results, t.events)
    assert flags["is_repeat"].to_list() == [False, True, False, True]
    assert flags["same_result"].to_list() == [False, True, False, False]
    rep = build_report(t)
    assert (rep.repeat, rep.repeat_same_result) == (2, 1)


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
    _, rep = trace_and_report(path, window=200000)
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
    _, rep = trace_and_report(path)
    assert rep.tools == 4
    assert rep.repeat == 1


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
    _, rep = trace_and_report(write("t.jsonl", *lines))
    assert (rep.duration_ms, rep.active_duration_ms) == (7290000, 90000)


def test_b34_microcompaction_ends_already_had():
    """B34: calls 4, series [21,003, 29,003, 21,103, 29,103], compact 0, tools 2, failed 0, result chars 44,
    repeat 0 (the Read's result was cleared before it was fetched again); the microcompaction is reported on
    its own: count 1, 8,000 tokens saved, before call 3."""
    rep = report_of(CASES / "B34.jsonl")
    assert (rep.calls, rep.prompt_tokens, rep.compact) == (4, [21003, 29003, 21103, 29103], 0)
    assert (rep.tools, rep.failed, rep.result_chars, rep.repeat) == (2, 0, 44, 0)
    data = orjson.loads(render_json(analyze([str(CASES / "B34.jsonl")])))[0]
    assert (data["microcompact"], data["microcompact_tokens_saved"]) == (1, 8000)
    assert data["microcompaction_events"] == [
        {"call": 3, "line": 5, "trigger": "auto", "pre_tokens": 29023, "tokens_saved": 8000, "cleared_results": 1}
    ]


def test_b34_without_the_boundary_the_read_is_a_repeat(tmp_path):
    """The same file without its microcompact_boundary line: the second identical Read is a repeat (the rule
    is the boundary, not the file)."""
    lines = (CASES / "B34.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(x for x in lines if b"microcompact_boundary" not in x))
    assert report_of(path).repeat == 1


# prompts around the spike factor's edges and the 200,000 default window; 0 is an unmeasured call
_PROMPTS = st.lists(
    st.one_of(st.sampled_from([0, 0, 1_000, 1_800, 1_801, 100_000, 180_000, 200_000, 200_001, 360_000, 400_000]),
              st.integers(0, 600_000)),
    max_size=30,
)  # fmt: skip


def _figures_by_the_rule(series: list[int], window: int | None) -> dict:
    """`context_figures` as first written: each index tested against the window and `is_spike`."""
    at = [i for i, v in enumerate(series) if metrics.measured(v)]
    values = [series[i] for i in at]
    if not values:
        return metrics.context_figures(series, window)  # no measured call: no spike rule involved
    flagged = [k for k, v in enumerate(values) if (window is not None and v > window) or is_spike(values, k)]
    rest = [v for k, v in enumerate(values) if k not in set(flagged)]
    peak = max(values)
    return {"first": values[0], "peak": peak, "growth": peak - values[0], "fill": peak / window if window else None,
            "spikes": [at[k] for k in flagged], "peak_without_spikes": max(rest) if rest else 0,
            "unmeasured": len(series) - len(values)}  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(series=_PROMPTS, window=st.sampled_from([None, 150_000, 200_000, 1_000_000]))
def test_context_figures_flag_the_spikes_of_the_rule(series, window):
    """`context_figures` (spikes in one pass, the window's check only past it) equals the rule per index."""
    assert metrics.context_figures(series, window) == _figures_by_the_rule(series, window)


@settings(max_examples=1000, deadline=None)
@given(
    num=st.integers(0, 10**12),
    den=st.integers(1, 10**7),
    decimals=st.sampled_from([0, 1, 2, 4, 9]),
    times_100=st.booleans(),
)
def test_round_half_up_without_reducing(num, den, decimals, times_100):
    """`round_half_up` (the numerator and denominator used as they are) equals rounding the reduced
    exact value half up, on fractions, their multiples by 100 and integers."""
    from fractions import Fraction

    value: Fraction | int = Fraction(num, den) * 100 if times_100 else Fraction(num, den)
    for v in (value, num):
        exact = Fraction(v) * 10**decimals
        assert (
            metrics.round_half_up(v, decimals)
            == (exact.numerator * 2 + exact.denominator) // (2 * exact.denominator) / 10**decimals
        )


def test_missing_subagents_rule_finds_agents_by_thread_call_id_or_file():
    """An agent is found by a call thread carrying its id, a thread named by its Task call's id
    (stream-json), or its file read; only the others are missing, each once, in result order."""
    ids = ["a1", "a2", "a3", "a4", None, "a1", "a5"]
    calls = ["t1", "t2", "t3", "t4", "t5", "t6", "t7"]
    threads = {"main", "a1", "t2"}
    read = {"a3", "agent-a4.jsonl"}
    assert metrics.missing_subagents_of(ids, calls, threads, read) == ["a5"]
    assert metrics.missing_subagents_of(["b", "c", "b"], ["t1", "t2", "t3"], set(), set()) == ["b", "c"]
