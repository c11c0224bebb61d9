"""Tests of the health grade (spec 000): band edges, the composite, the timeline, and every real sample."""

from __future__ import annotations

from fractions import Fraction

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.analysis import health, health_scores
from contexttrace.analysis.health import health_grade
from contexttrace.analysis.health_timeline import health_timeline
from contexttrace.analysis.session import AXIS_CALLS, AXIS_TIME, Compaction, MainCall, SessionRows, ToolCall
from contexttrace.analysis.window import WindowChoice
from contexttrace.render.explain import render_health_bar, render_health_panel
from contexttrace.run.runner import analyze

from ..conftest import DATA, SAMPLES

F = Fraction


@pytest.mark.parametrize(
    ("fill", "score"),
    [
        pytest.param(None, 100, id="no-measured-prompt-spec-100"),
        pytest.param(F(4999, 10_000), 100, id="below-0.50"),
        pytest.param(F(1, 2), 80, id="at-0.50-exclusive"),
        pytest.param(F(6499, 10_000), 80, id="below-0.65"),
        pytest.param(F(65, 100), 60, id="at-0.65-exclusive"),
        pytest.param(F(4, 5), 40, id="at-0.80-exclusive"),
        pytest.param(F(8999, 10_000), 40, id="below-0.90"),
        pytest.param(F(9, 10), 20, id="at-0.90-exclusive"),
        pytest.param(F(13, 10), 20, id="over-window"),
        pytest.param(0.65, 60, id="float-0.65-as-the-spec"),
    ],
)
def test_fill_score_band_edges(fill, score):
    """Context Fill bands are `<` edges: the edge itself falls in the worse band; no measured prompt is the
    spec's "no data = healthy" 100."""
    assert health_scores.fill_score(fill) == score


@pytest.mark.parametrize(("count", "score"), [(0, 100), (1, 75), (2, 55), (3, 35), (4, 15), (9, 15)])
def test_compaction_score_counts(count, score):
    """Compactions: 0/1/2/3 exact, 4 and more are F."""
    assert health_scores.compaction_score(count) == score


@pytest.mark.parametrize(
    ("ratio", "score"),
    [
        pytest.param(None, 100, id="no-read-spec-100"),
        pytest.param(F(0), 100, id="no-reread"),
        pytest.param(F(1, 20), 100, id="at-0.05-inclusive"),
        pytest.param(F(501, 10_000), 80, id="above-0.05"),
        pytest.param(F(1, 10), 80, id="at-0.10-inclusive"),
        pytest.param(F(1, 5), 60, id="at-0.20-inclusive"),
        pytest.param(F(2001, 10_000), 40, id="above-0.20"),
        pytest.param(F(35, 100), 40, id="at-0.35-inclusive"),
        pytest.param(F(3501, 10_000), 20, id="above-0.35"),
        pytest.param(F(1, 2), 20, id="one-of-two"),
    ],
)
def test_reread_score_band_edges(ratio, score):
    """Re-read bands are `<=` edges: the edge itself falls in the better band; no Read call is the spec's 100."""
    assert health_scores.reread_score(ratio) == score


@pytest.mark.parametrize(
    ("rates", "score"),
    [
        pytest.param(None, 100, id="fewer-than-4-calls-spec-100"),
        pytest.param((F(0), F(0)), 100, id="clean"),
        pytest.param((F(0), F(1, 10)), 40, id="from-clean"),
        pytest.param((F(1, 5), F(1, 5)), 100, id="ratio-1.0-inclusive"),
        pytest.param((F(1, 5), F(21, 100)), 75, id="ratio-above-1"),
        pytest.param((F(1, 10), F(1, 5)), 75, id="ratio-2.0-inclusive"),
        pytest.param((F(1, 10), F(3, 10)), 55, id="ratio-3.0-inclusive"),
        pytest.param((F(1, 10), F(1, 2)), 35, id="ratio-5.0-inclusive"),
        pytest.param((F(1, 6), F(5, 6)), 35, id="ratio-5.0-exact-where-floats-say-5.000000000000001"),
        pytest.param((F(1, 10), F(51, 100)), 15, id="ratio-above-5"),
    ],
)
def test_error_acceleration_band_edges(rates, score):
    """Error acceleration: second ÷ first error rate, `<=` edges; clean → errors gives 40."""
    assert health_scores.error_acceleration_score(rates) == score


@pytest.mark.parametrize(
    ("ratios", "score"),
    [
        pytest.param(None, 100, id="fewer-than-4-calls-spec-100"),
        pytest.param((F(0), F(1, 2)), 80, id="no-writes-first-half-spec-80"),
        pytest.param((F(0), F(0)), 80, id="no-writes-spec-80"),
        pytest.param((F(1, 2), F(9, 20)), 100, id="change-0.9-inclusive"),
        pytest.param((F(1, 2), F(4499, 10_000)), 75, id="below-0.9"),
        pytest.param((F(1, 2), F(7, 20)), 75, id="change-0.7-inclusive"),
        pytest.param((F(1, 2), F(1, 5)), 55, id="change-0.4-inclusive"),
        pytest.param((F(5, 6), F(1, 3)), 55, id="change-0.4-exact-where-floats-say-0.39999999999999997"),
        pytest.param((F(2, 5), F(3, 50)), 35, id="change-0.15-inclusive"),
        pytest.param((F(2, 5), F(599, 10_000)), 15, id="below-0.15"),
    ],
)
def test_tool_efficiency_band_edges(ratios, score):
    """Tool efficiency: second ÷ first productive share, `>=` edges; no productive call in the first half is
    the spec's 80 ("could be research phase")."""
    assert health_scores.tool_efficiency_score(ratios) == score


@pytest.mark.parametrize(
    ("score", "letter"),
    [(100, "A"), (85, "A"), (84.99, "B"), (70, "B"), (69.99, "C"), (55, "C"), (54.99, "D"), (40, "D"), (39.99, "F")],
)
def test_grade_band_edges(score, letter):
    """Grades are `>=` edges on the composite."""
    assert health_scores.grade(score) == letter


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param([100] * 5, (100, "A"), id="all-100"),
        pytest.param([100, 100, 100, 35, 15], (85, "A"), id="85.0-is-A"),
        pytest.param([100, 100, 80, 40, 35], (85, "B"), id="84.5-rounds-to-85-yet-B"),
        pytest.param([80, 100, 40, 55, 15], (70, "B"), id="70.0-is-B"),
        pytest.param([80, 100, 20, 40, 55], (70, "C"), id="69.5-rounds-to-70-yet-C"),
        pytest.param([40, 100, 40, 40, 35], (55, "D"), id="54.5-rounds-to-55-yet-D"),
        pytest.param([20, 15, 20, 15, 15], (18, "F"), id="floor"),
    ],
)
def test_composite_fixed_weights(values, expected):
    """The composite uses spec 000's fixed weights 40/25/15/10/10 and rounds half up (`Math.round`)."""
    assert health_scores.composite(values) == expected


def _tool(i: int, name: str = "Bash", error: bool = False, path: str | None = None, denied: bool = False) -> ToolCall:
    return ToolCall(
        seq=10 + i, name=name, file_path=path, is_error=error, denied=denied, result_seq=11 + i, call_index=0
    )


def _rows(tools: list[ToolCall], prompt: int = 1_000, compactions: int = 0) -> SessionRows:
    calls = [MainCall(1, 100_000, 0, None, None, None), MainCall(100, prompt, 0, None, None, None)]
    bounds = [Compaction(5 + k, "auto", 1) for k in range(compactions)]
    return SessionRows(calls=calls, tools=tools, compactions=bounds, times={}, axis=AXIS_CALLS)


def _hand_built_tools() -> list[ToolCall]:
    """24 tool calls, 12 per half (see `test_health_grade_composite_hand_built`)."""
    first = [_tool(i, "Edit", error=i == 0) for i in range(6)]
    first += [_tool(6 + k, "Read", error=k < 2, path=p) for k, p in enumerate("abcdab")]
    second = [_tool(12 + k, "Write") for k in range(3)]
    second += [
        _tool(15 + k, "Read", error=k < 2, path=p, denied=k == 2) for k, p in enumerate(["a", "c", "e", "f", "a"])
    ]
    second += [_tool(20 + k, "Bash", error=True) for k in range(4)]
    return first + second


def test_health_grade_composite_hand_built():
    """A hand-built session with enough data for every signal grades D 54.

    Last prompt 140,000 of 200,000 = 0.70 → fill 60. Two compactions → 55. File reads a b c d a b | a c e f a:
    5 re-reads of 11 = 0.4545 → 20. 24 tool calls, 12 per half: errors at 0, 6, 7 (first half, 3/12 = 0.25) and
    15, 16, 20–23 (second, 6/12 = 0.5); the refused read of e (17) is not an error: ratio 2.0 → 75. Productive:
    Edit 0–5 (first half 0.5), Write 12–14 (second 0.25): change 0.5 → 55. Composite 60·0.40 + 55·0.25 + 20·0.15
    + 75·0.10 + 55·0.10 = 24 + 13.75 + 3 + 7.5 + 5.5 = 53.75 → D, 54; every signal has data.
    """
    h = health_grade(_rows(_hand_built_tools(), prompt=140_000, compactions=2), 200_000)
    assert [s["value"] for s in h["signals"]] == [60, 55, 20, 75, 55]
    assert (h["grade"], h["score"], h["reason"]) == ("D", 54, None)
    assert (h["fill_percent"], h["compaction_count"]) == (70.0, 2)
    assert (h["reread_ratio"], h["error_acceleration"], h["tool_efficiency"]) == (0.4545, 2.0, 0.5)
    assert [s["has_data"] for s in h["signals"]] == [True] * 5
    assert [s["weight"] for s in h["signals"]] == [0.4, 0.25, 0.15, 0.1, 0.1]
    whys = [s["why"] for s in h["signals"]]
    assert whys[2] == "5 of 11 file reads re-read a file already read"
    assert whys[3] == (
        "tool error rate 25% of 12 calls in the first half, 50% of 12 in the second (1 denied, not counted as errors)"
    )


def test_health_grade_rounds_half_up():
    """The score is the composite rounded half up (Math.round), computed exactly in integers.

    Twenty tool calls: Edit ×5 and Read p0–p4 | Read p5–p8, Read p0 again and Bash ×5. File reads 10, one
    re-read: 0.10 → 80. Productive share 0.5 → 0: efficiency 15. Errors none: 100. Composite 40 + 25 + 80·0.15 +
    10 + 15·0.10 = 88.5 → 89 (half up), where Python's round() gives 88 (half to even).
    """
    tools = [_tool(i, "Edit") for i in range(5)] + [_tool(5 + k, "Read", path=f"p{k}") for k in range(5)]
    tools += [_tool(10 + k, "Read", path=f"p{k + 5}") for k in range(4)] + [_tool(14, "Read", path="p0")]
    tools += [_tool(15 + k) for k in range(5)]
    h = health_grade(_rows(tools), 200_000)
    assert [s["value"] for s in h["signals"]] == [100, 100, 80, 100, 15]
    assert (h["score"], h["grade"]) == (89, "A") and round(88.5) == 88


def test_denied_results_are_not_errors():
    """A refusal is kept as a tool call but never counts as an error; the reason names it."""
    tools = [_tool(i, denied=i == 15) for i in range(20)]
    error_rate = health_grade(_rows(tools), 200_000)["signals"][3]
    assert error_rate["value"] == 100  # as an error: 0 → 0.1, "from clean to errors", 40
    assert error_rate["why"].endswith("(1 denied, not counted as errors)")


@pytest.mark.parametrize(
    ("reads", "value", "has_data", "why"),
    [
        pytest.param(0, 100, False, "no Read call with a file_path: spec's 100", id="0-reads-spec-100"),
        pytest.param(1, 100, True, "0 of 1 file read re-read a file already read", id="1-read"),
        pytest.param(2, 20, True, "1 of 2 file reads re-read a file already read", id="1-of-2-is-F"),
        pytest.param(9, 60, True, "1 of 9 file reads re-read a file already read", id="1-of-9"),
    ],
)
def test_rereads_from_the_first_read(reads, value, has_data, why):
    """Re-reads scores any Read call with a path (spec 000, no minimum); none is the spec's 100, without data."""
    tools = [_tool(k, "Read", path="p0" if k == 1 else f"p{k}") for k in range(reads)]  # p0 read twice
    tools.append(_tool(reads, "Read"))  # a Read without a file_path is no file read
    h = health_grade(_rows(tools), 200_000)
    sig = h["signals"][2]
    assert (sig["value"], sig["has_data"], sig["why"]) == (value, has_data, why)
    assert h["reread_ratio"] == (None if not reads else round((reads > 1) / reads, 4))


@pytest.mark.parametrize(
    ("n", "errors", "value", "has_data", "why"),
    [
        pytest.param(0, (), 100, False, "no tool call: spec's 100", id="0-calls-spec-100"),
        pytest.param(1, (0,), 100, False, "1 tool call, fewer than 4: spec's 100", id="1-call-spec-100"),
        pytest.param(3, (2,), 100, False, "3 tool calls, fewer than 4: spec's 100", id="3-calls-spec-100"),
        pytest.param(
            4, (3,), 40, True, "tool error rate 0% of 2 calls in the first half, 50% of 2 in the second", id="4-calls"
        ),
        pytest.param(
            5, (0, 4), 100, True, "tool error rate 50% of 2 calls in the first half, 33% of 3 in the second", id="5"
        ),
    ],
)
def test_error_rate_halves_from_four_tool_calls(n, errors, value, has_data, why):
    """Error Rate compares the halves calls[:floor(n/2)] and calls[floor(n/2):] from 4 tool calls on; fewer is
    the spec's 100 ("too few calls to judge")."""
    tools = [_tool(i, error=i in errors) for i in range(n)]
    sig = health_grade(_rows(tools), 200_000)["signals"][3]
    assert (sig["value"], sig["has_data"], sig["why"]) == (value, has_data, why)


@pytest.mark.parametrize(
    ("names", "value", "has_data", "why"),
    [
        pytest.param("EEE", 100, False, "3 tool calls, fewer than 4: spec's 100", id="3-calls-spec-100"),
        pytest.param(
            "BBBB",
            80,
            False,
            "no productive call (a file write or edit) in the first half, nor in the second: spec's 80",
            id="no-writes-spec-80",
        ),
        pytest.param(
            "BBEW",
            80,
            False,
            "no productive call (Write/Edit/MultiEdit) in the first half (2 in the second): spec's 80",
            id="no-first-half-writes-spec-80",
        ),
        pytest.param(
            "EBBB",
            15,
            True,
            "share of Write/Edit/MultiEdit 50% in the first half, 0% in the second",
            id="stopped-writing",
        ),
        pytest.param(
            "MBBW", 100, True, "share of Write/Edit/MultiEdit 50% in the first half, 50% in the second", id="same"
        ),
        # Codex CLI's apply_patch and Gemini CLI's write_file / replace are productive (`contract.EDIT_TOOLS`),
        # their shells are not; the reason names the edit tools the session used.
        pytest.param(
            "PXPX", 100, True, "share of apply_patch 50% in the first half, 50% in the second", id="codex-apply-patch"
        ),
        pytest.param(
            "XRXF", 100, True, "share of replace/write_file 50% in the first half, 50% in the second", id="gemini-edits"
        ),
        pytest.param(
            "GGXP",
            80,
            False,
            "no productive call (apply_patch) in the first half (1 in the second): spec's 80",
            id="codex-no-first-half-patch",
        ),
    ],
)
def test_tool_efficiency_no_data_values(names, value, has_data, why):
    """Tool Efficiency: fewer than 4 tool calls is the spec's 100, a first half without a productive call the
    spec's 80 (without data either way: `tool_efficiency` is null), else the change of the productive share."""
    full = {"E": "Edit", "W": "Write", "M": "MultiEdit", "B": "Bash"}
    full |= {"P": "apply_patch", "X": "exec_command", "G": "run_shell_command", "R": "replace", "F": "write_file"}
    h = health_grade(_rows([_tool(i, full[c]) for i, c in enumerate(names)]), 200_000)
    sig = h["signals"][4]
    assert (sig["value"], sig["has_data"], sig["why"]) == (value, has_data, why)
    assert (h["tool_efficiency"] is None) == (not has_data)


def test_fill_without_a_measured_prompt_is_the_spec_100():
    """Calls whose usage could not be read (prompt 0) measure nothing: Context Fill is the spec's no-data 100,
    `fill_percent` null; a later unmeasured call leaves the fill to the latest measured one."""
    calls = [MainCall(1, 0, 0, None, None, None), MainCall(2, 0, 0, None, None, None)]
    h = health_grade(SessionRows(calls, [], [], {}, AXIS_CALLS), 200_000)
    sig = h["signals"][0]
    assert (sig["value"], sig["has_data"], sig["measure"], h["fill_percent"]) == (100, False, None, None)
    assert sig["why"] == "no call's prompt size could be read (usage read as 0 on all 2): spec's 100"
    assert (h["grade"], h["score"]) == ("A", 100)
    calls = [MainCall(1, 170_000, 0, None, None, None), MainCall(2, 0, 0, None, None, None)]
    sig = health_grade(SessionRows(calls, [], [], {}, AXIS_CALLS), 200_000)["signals"][0]
    assert (sig["value"], sig["has_data"], sig["measure"]) == (40, True, 0.85)
    assert sig["why"] == "call #1's (the last with readable usage) prompt 170,000 of a 200,000-token window"


def test_no_data_signals_keep_their_weight():
    """Spec 000 composes the five signals with fixed weights, without data or not: fill 60 (0.70) and one
    compaction (75) with no tool call give 24 + 18.75 + 15 + 10 + 10 = 77.75 → B 78."""
    h = health_grade(_rows([], prompt=140_000, compactions=1), 200_000)
    assert [s["value"] for s in h["signals"]] == [60, 75, 100, 100, 100]
    assert [s["has_data"] for s in h["signals"]] == [True, True, False, False, False]
    assert [s["weight"] for s in h["signals"]] == [0.4, 0.25, 0.15, 0.1, 0.1]
    assert (h["grade"], h["score"]) == ("B", 78)


def test_no_model_call_grades_nothing():
    """Rows without a main-thread call: no grade, no score, the reason, no signal with data, same keys."""
    h = health_grade(SessionRows([], [_tool(0)], [Compaction(5, "auto", 1)], {}, AXIS_CALLS), 200_000)
    graded = health_grade(_rows([]), 200_000)
    assert (h["grade"], h["score"], h["reason"]) == (None, None, "no model call: nothing to grade")
    assert set(h) == set(graded)
    assert [(s["value"], s["has_data"], s["grade"]) for s in h["signals"]] == [(None, False, None)] * 5
    assert h["fill_percent"] is None and h["compaction_count"] is None


@pytest.mark.parametrize("path", ["cases/B38.jsonl", "fuzz/03-usage-breakdown-no-calls.jsonl"])
def test_trace_without_a_call_has_no_health(path):
    """B38 (every request failed) and a fuzz find with no call: health is null with the reason, not `A 100`."""
    run = analyze([str(DATA / path)], workers=1)
    h = run.reports[0].extra["health"]
    assert (h["grade"], h["score"], h["reason"]) == (None, None, health.NO_CALL_REASON)
    assert (h["timeline"], h["compactions"], h["window"], h["window_source"]) == ([], [], 200_000, "default")


def test_timeline_has_21_points_ending_at_the_grade():
    """The timeline has 21 points, 0 … 100 %, and its last point is the whole-trace grade."""
    run = analyze([str(SAMPLES / "b-spotter-compaction")], workers=1)
    h = run.reports[0].extra["health"]
    assert [p["percent"] for p in h["timeline"]] == list(range(0, 101, 5))
    assert (h["timeline"][-1]["score"], h["timeline"][-1]["grade"]) == (h["score"], h["grade"])
    assert h["timeline_axis"] == "time"
    # the compaction came before call 62, numbered from 1 as `--calls` and `compaction_events[].call` number it
    assert h["compactions"] == [{"trigger": "auto", "pre_tokens": 170251, "next_call": 62, "percent": 90}]
    assert [e["call"] for e in run.reports[0].compaction_events] == [62]


def test_timeline_point_before_the_first_call_is_ungraded():
    """On the time axis a point before the first model call has nothing to grade: score and grade None, where
    spec 000's "no data = healthy" made it A 100. Later points are graded; the last is the trace's grade.
    Point 10 (500 ms) counts the first call, 1,000 tokens: fill 100, compactions 100 → A 100."""
    tools = [_tool(0, "Read", path="a")]  # seq 10, its result 11: before the call
    calls = [MainCall(20, 1_000, 0, None, None, None), MainCall(30, 150_000, 0, None, None, None)]
    times = {10: 0.0, 11: 0.0, 20: 500.0, 30: 1_000.0}
    rows = SessionRows(calls, tools, [], times, AXIS_TIME)
    timeline = health_timeline(rows, 200_000)
    assert [(p["percent"], p["grade"], p["score"]) for p in timeline[:2]] == [(0, None, None), (5, None, None)]
    assert (timeline[10]["grade"], timeline[10]["score"]) == ("A", 100)
    # the end: fill 0.75 → 60, no compaction → 100, one Read, no re-read → 100, one tool call → the spec's 100
    # twice: 24 + 25 + 15 + 10 + 10 = 84 → B 84
    assert (timeline[-1]["grade"], timeline[-1]["score"]) == ("B", 84)
    assert (health_grade(rows, 200_000)["grade"], health_grade(rows, 200_000)["score"]) == ("B", 84)


def test_stream_json_timeline_runs_over_calls():
    """stream-json has no timestamps: its timeline counts calls, from the first call to all of them."""
    run = analyze([str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl")], workers=1)
    h = run.reports[0].extra["health"]
    assert h["timeline_axis"] == "calls"
    assert h["timeline"][0]["calls"] == 1 and h["timeline"][-1]["calls"] == 68
    assert "".join(p["grade"] for p in h["timeline"]) == "AAAAAAAAAAABBBBBBBBBC"


#: Every sample's grade, score, sub-scores (Context Fill, Compactions, Re-reads, Error Rate, Tool Efficiency)
#: and which of them had data (False: the spec's no-data value). Each composite was checked by hand with
#: spec 000's fixed weights 40/25/15/10/10, e.g. a-ralph#1: 40 + 25 + 9 + 10 + 1.5 = 85.5 → A 86; a-ralph#2:
#: 40 + 25 + 15 + 10 + 8 = 98 (no productive call in the first half: the spec's 80); subagent#1: 24 + 25 + 3 +
#: 10 + 3.5 = 65.5 → C 66; subagent#2: 40 + 25 + 9 + 10 + 8 = 92; image: 40 + 25 + 3 + 7.5 + 10 = 85.5 → A 86;
#: thinking: 40 + 25 + 15 + 4 + 10 = 94; flat: 40 + 25 + 3 + 10 + 5.5 = 83.5 → B 84; spotter: 32 + 18.75 + 3 +
#: 4 + 5.5 = 63.25 → C 63. a-ralph#3–#27 read 3 files with 3 tool calls: fewer than 4, the spec's 100 twice.
#: The sub-scores of the transcripts are re-derived from the raw lines by `_independent_subscores` below,
#: which shares no code with contexttrace (test_health_spec.py checks every sample and case against the
#: spec's code too).
_ALL, _NO_WRITES, _FEW = [True] * 5, [True, True, True, True, False], [True, True, True, False, False]
SAMPLE_HEALTH = [
    ("a-ralph-27runs-with-separators.jsonl#1", "A", 86, [100, 100, 60, 100, 15], _ALL),
    ("a-ralph-27runs-with-separators.jsonl#2", "A", 98, [100, 100, 100, 100, 80], _NO_WRITES),
    *[(f"a-ralph-27runs-with-separators.jsonl#{i}", "A", 100, [100] * 5, _FEW) for i in range(3, 28)],
    ("a-ralph-subagent-opus45-haiku45.jsonl#1", "C", 66, [60, 100, 20, 100, 35], _ALL),
    ("a-ralph-subagent-opus45-haiku45.jsonl#2", "A", 92, [100, 100, 60, 100, 80], _NO_WRITES),
    ("b-ccl-image-and-errors.jsonl", "A", 86, [100, 100, 20, 75, 100], _ALL),
    ("b-ccl-thinking-sonnet45.jsonl", "A", 94, [100, 100, 100, 40, 100], _ALL),
    ("b-ccv-inline-sidechains-v1098.jsonl", "A", 98, [100, 100, 100, 100, 80], [True, True, False, True, False]),
    (
        "b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "A",
        98,
        [100, 100, 100, 100, 80],
        [True, True, False, True, False],
    ),
    ("b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl", "B", 84, [100, 100, 20, 100, 55], _ALL),
    (
        "b-ccl-print-mode-sessions/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
        "A",
        100,
        [100] * 5,
        [True, True, False, False, False],
    ),
    (
        "b-ccl-print-mode-sessions/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl",
        "A",
        98,
        [100, 100, 100, 100, 80],
        _NO_WRITES,
    ),
    ("b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "C", 63, [80, 75, 20, 40, 55], _ALL),
    # Codex CLI rollouts: no tool reads one file by its path (the shell reads them), so Re-reads is the spec's
    # 100; apply_patch is the productive call. 0.111: errors 8 of 64 then 1 of 64, apply_patch 15 of 64 then
    # 17 of 64; 0.65: 40 + 18.75 + 15 + 7.5 + 7.5 = 88.75 → A 89 (1 compaction; errors 8 of 71 then 15 of 71,
    # a ratio of 1.875; apply_patch 16 of 71 then 13 of 71, a change of 0.8125).
    ("c-codex-0.111-exec-command.jsonl", "A", 100, [100] * 5, [True, True, False, True, True]),
    ("c-codex-0.41-small.jsonl", "A", 100, [100] * 5, [True, True, False, False, False]),
    ("c-codex-0.65-compaction.jsonl", "A", 89, [100, 75, 100, 75, 75], [True, True, False, True, True]),
    # Gemini CLI sessions: shell commands and a glob, no file read or edit; 3 tool calls (fewer than 4), or
    # 9 and 7 with no productive call in the first half (the spec's 80).
    (
        "d-gemini-sessions/chats/session-2025-12-12T21-46-7c761c30.json",
        "A",
        100,
        [100] * 5,
        [True, True, False, False, False],
    ),
    (
        "d-gemini-sessions/chats/session-2025-12-26T04-02-b68abb2e.json",
        "A",
        98,
        [100, 100, 100, 100, 80],
        [True, True, False, True, False],
    ),
    (
        "d-gemini-sessions/chats/session-2025-12-30T01-16-3f9ce747.json",
        "A",
        98,
        [100, 100, 100, 100, 80],
        [True, True, False, True, False],
    ),
]


@pytest.mark.parametrize(("name", "letter", "score", "subs", "data"), SAMPLE_HEALTH, ids=[s[0] for s in SAMPLE_HEALTH])
def test_sample_health(sample_reports, name, letter, score, subs, data):
    """Each real sample's grade, score, sub-scores and `has_data` are as checked by hand."""
    h = sample_reports[name].extra["health"]
    assert (h["grade"], h["score"], [s["value"] for s in h["signals"]]) == (letter, score, subs)
    assert [s["has_data"] for s in h["signals"]] == data
    weighted = sum(v * w for v, w in zip(subs, [40, 25, 15, 10, 10], strict=True))
    assert (2 * weighted + 100) // 200 == score


def test_codex_rollout_without_a_model_call_is_not_graded():
    """The 2025-08 Codex rollout records no token count, so no model call: health is `–` with the reason (named
    alone: a folder's scan leaves such a trace out)."""
    [report] = analyze([str(SAMPLES / "c-codex-legacy-2025-08.jsonl")], workers=1).reports
    h = report.extra["health"]
    assert (h["grade"], h["score"], h["reason"]) == (None, None, "no model call: nothing to grade")
    assert [s["has_data"] for s in h["signals"]] == [False] * 5


def test_agents_file_reads_and_edits_are_spec_reads_and_writes():
    """Gemini CLI's read_file is a Read (its path re-read counts), its write_file and replace are productive;
    Codex CLI's apply_patch is productive and its shell is not."""
    names = ["read_file", "read_file", "write_file", "read_file", "replace", "run_shell_command"]
    paths = ["a.py", "b.py", None, "a.py", None, None]
    tools = [_tool(i, n, path=p) for i, (n, p) in enumerate(zip(names, paths, strict=True))]
    h = health_grade(_rows(tools), 200_000)
    rereads, efficiency = h["signals"][2], h["signals"][4]
    assert (rereads["value"], rereads["has_data"], rereads["why"]) == (
        40, True, "1 of 3 file reads re-read a file already read",
    )  # fmt: skip
    assert (efficiency["value"], efficiency["why"]) == (
        100, "share of write_file/replace 33% in the first half, 33% in the second",
    )  # fmt: skip
    codex = [_tool(i, n) for i, n in enumerate(["apply_patch", "exec_command", "exec_command", "exec_command"])]
    sig = health_grade(_rows(codex), 200_000)["signals"][4]
    assert (sig["value"], sig["has_data"], sig["why"]) == (
        15, True, "share of apply_patch 50% in the first half, 0% in the second",
    )  # fmt: skip


def _band(value, edges, floor, better):
    for edge, sub in edges:
        if better(value, edge):
            return sub
    return floor


def _independent_subscores(path):
    """Spec 000 straight from the raw transcript lines (main, non-sidechain), sharing no code with the package."""
    prompts, seen_ids, tools, errors, denied, bounds = {}, [], [], {}, set(), 0
    for raw in path.read_bytes().splitlines():
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(rec, dict) or rec.get("isSidechain"):
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            bounds += 1
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        if rec.get("type") == "assistant" and isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>":
            u = msg["usage"]
            if msg.get("id") not in prompts:
                seen_ids.append(msg.get("id"))
            prompts[msg.get("id")] = (
                u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0)
            )
            for block in msg.get("content") or []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_use"
                    and block["id"] not in [t[0] for t in tools]
                ):
                    tools.append((block["id"], block["name"], (block.get("input") or {}).get("file_path")))
        if rec.get("type") == "user" and isinstance(msg.get("content"), list):
            for block in msg["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    errors[block.get("tool_use_id")] = bool(block.get("is_error"))
                    text = str(block.get("content"))
                    # The refusal texts CASES B22 and the samples show (a person's "no", an ungranted permission).
                    if (
                        rec.get("toolDenialKind")
                        or "The user doesn't want to" in text
                        or "requested permissions" in text
                        or "requires approval" in text
                        or "was blocked. For security" in text
                    ):
                        denied.add(block.get("tool_use_id"))
    fill = prompts[seen_ids[-1]] / 200_000
    reads = [t[2] for t in tools if t[1] == "Read" and t[2]]
    rereads = sum(1 for i, p in enumerate(reads) if p in reads[:i])
    err = [errors.get(t[0], False) and t[0] not in denied for t in tools]
    prod = [t[1] in ("Write", "Edit", "MultiEdit") for t in tools]
    mid = len(tools) // 2
    subs = [
        _band(fill, [(0.5, 100), (0.65, 80), (0.8, 60), (0.9, 40)], 20, lambda v, e: v < e),
        {0: 100, 1: 75, 2: 55, 3: 35}.get(bounds, 15),
        # no file read: the spec's 100
        _band(rereads / len(reads), [(0.05, 100), (0.1, 80), (0.2, 60), (0.35, 40)], 20, lambda v, e: v <= e)
        if reads
        else 100,
    ]
    for flags, kind in ((err, "err"), (prod, "prod")):
        if len(tools) < 4:  # too few calls to judge: the spec's 100
            subs.append(100)
            continue
        a, b = sum(flags[:mid]) / mid, sum(flags[mid:]) / (len(tools) - mid)
        if kind == "err":
            subs.append(
                100
                if a == b == 0
                else 40
                if a == 0
                else _band(b / a, [(1, 100), (2, 75), (3, 55), (5, 35)], 15, lambda v, e: v <= e)
            )
        else:  # no productive call in the first half: the spec's 80
            subs.append(
                80 if a == 0 else _band(b / a, [(0.9, 100), (0.7, 75), (0.4, 55), (0.15, 35)], 15, lambda v, e: v >= e)
            )
    return subs


@pytest.mark.parametrize("name", [s[0] for s in SAMPLE_HEALTH if s[0].startswith("b-")])
def test_sample_subscores_independently(name):
    """The transcripts' sub-scores agree with a from-scratch reading of their main file."""
    expected = next(s[3] for s in SAMPLE_HEALTH if s[0] == name)
    assert _independent_subscores(SAMPLES / name.split("#")[0]) == expected


def test_explain_panel_marks_the_spec_no_data_values():
    """The breakdown panel shows every signal with its sub-score, grade and spec 000's fixed weight; a signal
    where the spec's no-data value applied is marked `(no data)` before its reason."""
    tools = [_tool(i, "Read", path=f"p{i}") for i in range(30)]
    h = health.health_of(_rows(tools), WindowChoice(200_000, "default"))
    lines = render_health_panel(h)
    assert len(lines) == 6
    assert lines[0] == "  health A 98/100"  # the window and its source are on the fill line above the panel
    assert lines[1] == "    Context Fill     ██████████ 100 A   40%  last call's prompt 1,000 of a 200,000-token window"
    assert lines[5] == (
        "    Tool Efficiency  ████████░░  80 B   10%  (no data) no productive call (a file write or edit) in the "
        "first half, nor in the second: spec's 80"
    )


def test_explain_panel_without_a_call():
    """Nothing graded: one line with `–` and the reason, and no health bar."""
    h = health.health_of(SessionRows([], [], [], {}, AXIS_CALLS), WindowChoice(200_000, "default"))
    assert render_health_panel(h) == ["  health – no model call: nothing to grade"]
    assert render_health_bar(h) == []


def test_timeline_starts_at_the_first_prompt_not_at_an_event_count():
    """cases/B34: a prompt at 10:00:00, the first call at 10:00:05, a microcompaction that cleared one
    result. The time axis runs from the earliest main-thread moment (the prompt, its own timestamp), so
    the 0 % point is 2026-04-02T10:00:00Z and has no grade (before the first model call). The event rows'
    timestamps were once read from their last column (the count of cleared results): the axis started at
    ts_ms 1 (1970), and every prompt took the moment of the row before it."""
    run = analyze([str(SAMPLES.parent / "tests" / "data" / "cases" / "B34.jsonl")], workers=1)
    timeline = run.reports[0].extra["health"]["timeline"]
    assert run.reports[0].extra["health"]["timeline_axis"] == "time"
    assert [(p["ts_ms"], p["grade"]) for p in timeline[:2]] == [(1_775_124_000_000, None), (1_775_124_270_500, "A")]
    assert timeline[-1]["ts_ms"] == 1_775_129_410_000  # 11:30:10, the last line


_COUNT = st.integers(min_value=0, max_value=60)


@settings(max_examples=400, deadline=None)
@given(
    latest=st.one_of(st.none(), st.integers(min_value=1, max_value=400_000)),
    window=st.sampled_from([200_000, 1_000_000, 3]),
    compactions=st.integers(min_value=0, max_value=6),
    reads=_COUNT,
    rereads=_COUNT,
    tools=st.integers(min_value=0, max_value=40),
    halves=st.tuples(_COUNT, _COUNT, _COUNT, _COUNT),
)
def test_integer_scores_equal_the_five_functions(latest, window, compactions, reads, rereads, tools, halves):
    """`sub_scores` and `score_of_counts` (band edges compared by cross-multiplying) give what the five
    scoring functions give on exact `Fraction`s, at band edges too (rates like 1/10 vs 2/10)."""
    rereads = min(rereads, reads)
    mid, second = tools // 2, tools - tools // 2
    e1, e2, p1, p2 = (min(h, n) for h, n in zip(halves, (mid, second, mid, second), strict=True))
    enough = tools >= health_scores.MIN_TOOL_CALLS
    errors = (Fraction(e1, mid), Fraction(e2, second)) if enough else None
    writes = (Fraction(p1, mid), Fraction(p2, second)) if enough else None
    m = health_scores.HealthMeasures(1, latest, window, compactions, reads, rereads, errors, writes)
    expected = [
        health_scores.fill_score(None if latest is None else Fraction(latest, window)),
        health_scores.compaction_score(compactions),
        health_scores.reread_score(Fraction(rereads, reads) if reads else None),
        health_scores.error_acceleration_score(errors),
        health_scores.tool_efficiency_score(writes),
    ]
    assert health_scores.sub_scores(m) == expected
    counted = health_scores.score_of_counts(latest, window, compactions, reads, rereads, tools, (e1, e2), (p1, p2))
    assert counted == health_scores.composite(expected) == health_scores.score_of(m)
