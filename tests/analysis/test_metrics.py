"""Metric functions: repeats, compaction events, context figures, largest results."""

from __future__ import annotations

import io

import pytest

from contexttrace.analysis import metrics, tool_figures
from contexttrace.reading import read_trace
from contexttrace.reports.trace import build_report

from .conftest import assistant, jsonl, result

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
