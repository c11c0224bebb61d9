"""`health_timeline.health_timeline` (prefix sums, points that share a threshold or their measures graded once)
against the straightforward rule its docstring states: each point is `health_grade` of the rows cut at
that point (`SessionRows.cut` on the calls axis, `SessionRows.cut_at_time` on the time axis), on random
sessions: few and many calls, reads and re-reads, writes, failed and refused results read late, compactions,
and moments in and out of reading order."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.analysis.health import health_grade, health_measures, health_of
from contexttrace.analysis.health_scores import fill_fraction, has_data, score_of, sub_scores
from contexttrace.analysis.health_timeline import TIMELINE_STEPS, health_timeline
from contexttrace.analysis.metrics import round_half_up
from contexttrace.analysis.session import (
    AXIS_CALLS,
    AXIS_TIME,
    Compaction,
    MainCall,
    SessionRows,
    ToolCall,
    session_rows,
)
from contexttrace.analysis.window import WindowChoice
from contexttrace.errors import ContextTraceError
from contexttrace.reading import read_trace

from ..conftest import CASES, FUZZ, SAMPLES

_TOOL = st.tuples(
    st.sampled_from(["Read", "Read", "Edit", "Write", "Bash", "Grep"]),
    st.sampled_from(["a", "b", "c", None]),  # a Read's file_path
    st.booleans(),  # failed
    st.booleans(),  # a refusal
    st.sampled_from([None, 1, 1, 3, 30]),  # where its result is read: none, next line, later
)
_CALL = st.tuples(
    st.sampled_from([0, 1_000, 90_000, 120_000, 150_000, 175_000, 190_000]),  # prompt (0: unmeasured)
    st.lists(_TOOL, max_size=6),
    st.booleans(),  # a compaction after it
)


def _session(spec: list, axis: str, shuffle: list[int]) -> SessionRows:
    calls, tools, bounds, seq = [], [], [], 0
    for i, (prompt, asked, compacted) in enumerate(spec):
        seq += 1
        calls.append(MainCall(seq, prompt, 0, None, None, None))
        for name, path, failed, denied, later in asked:
            seq += 1
            result = None if later is None else seq + later
            tools.append(ToolCall(seq, name, path if name == "Read" else None, failed and not denied,
                                  failed and denied, result, i))  # fmt: skip
        if compacted:
            seq += 1
            bounds.append(Compaction(seq, "auto", None))
    times: dict[int, float] = {}
    if axis == AXIS_TIME:
        # moments mostly in reading order; `shuffle` moves some back (a line dated before an earlier one)
        last = seq + 40
        for k in range(1, last + 1):
            back = shuffle[k % len(shuffle)] if shuffle else 0
            times[k] = float(1_000 * k - 1_000 * back)
    return SessionRows(calls, tools, bounds, times, axis)


def _expected(rows: SessionRows, window: int) -> list[tuple]:
    """(score, grade, compactions) of each point by the rule: grade the rows cut there."""
    n = len(rows.calls)
    out = []
    for k in range(TIMELINE_STEPS + 1):
        if rows.axis == AXIS_TIME:
            start, end = min(rows.times.values()), max(rows.times.values())
            moment = end if k == TIMELINE_STEPS else start + (end - start) * k / TIMELINE_STEPS
            cut = rows.cut_at_time(moment)
        else:
            last = k * (n - 1) // TIMELINE_STEPS
            cut = rows.cut(rows.calls[last + 1].seq) if last < n - 1 else rows
        h = health_grade(cut, window)
        out.append((h["score"], h["grade"], len(cut.compactions)))
    return out


@settings(max_examples=300, deadline=None)
@given(
    spec=st.lists(_CALL, min_size=1, max_size=45),
    axis=st.sampled_from([AXIS_CALLS, AXIS_TIME]),
    shuffle=st.lists(st.sampled_from([0, 0, 0, 1, 5, 30]), max_size=5),
    window=st.sampled_from([200_000, 1_000_000]),
)
def test_timeline_equals_grading_each_cut(spec, axis, shuffle, window):
    """Every point of `health_timeline` is `health_grade` of the rows up to that point."""
    rows = _session(spec, axis, shuffle)
    got = [(p["score"], p["grade"], p["compactions"]) for p in health_timeline(rows, window)]
    assert got == _expected(rows, window)


@settings(max_examples=300, deadline=None)
@given(
    spec=st.lists(_CALL, min_size=1, max_size=45),
    window=st.sampled_from([200_000, 240_000, 1_000_000]),
)
def test_grade_in_counts_equals_the_fraction_measures(spec, window):
    """`health_grade` (integer counts) gives what the exact `Fraction` measures give: `health_measures`'
    sub-scores, data flags and score (`health_scores.sub_scores`, `has_data`, `score_of`), and each ratio
    rounded half up from its `Fraction` (`metrics.round_half_up`)."""
    rows = _session(spec, AXIS_CALLS, [])
    got = health_grade(rows, window)
    m, _ = health_measures(rows, window)
    assert [s["value"] for s in got["signals"]] == sub_scores(m)
    assert [s["has_data"] for s in got["signals"]] == has_data(m)
    assert (got["score"], got["grade"]) == score_of(m)
    fill = fill_fraction(m)
    errors, writes = m.error_rates, m.write_shares
    assert got["fill_percent"] == (None if fill is None else round_half_up(fill * 100, 2))
    assert got["signals"][0]["measure"] == (None if fill is None else round_half_up(fill, 4))
    assert got["reread_ratio"] == (round_half_up(Fraction(m.rereads, m.reads), 4) if m.reads else None)
    assert got["error_acceleration"] == (round_half_up(errors[1] / errors[0], 4) if errors and errors[0] else None)
    assert got["tool_efficiency"] == (round_half_up(writes[1] / writes[0], 4) if writes and writes[0] else None)


@settings(max_examples=200, deadline=None)
@given(
    spec=st.lists(_CALL, min_size=1, max_size=45),
    axis=st.sampled_from([AXIS_CALLS, AXIS_TIME]),
    shuffle=st.lists(st.sampled_from([0, 0, 0, 1, 5, 30]), max_size=5),
)
def test_report_timeline_with_the_whole_grade_equals_the_timeline(spec, axis, shuffle):
    """`health_of` hands the whole session's grade to the timeline (its point that counts every row is not
    graded again): the same points as `health_timeline` grading every point."""
    rows = _session(spec, axis, shuffle)
    assert health_of(rows, WindowChoice(200_000, "default"))["timeline"] == health_timeline(rows, 200_000)


def test_timeline_of_every_file_equals_grading_each_cut():
    """On every sample, case and fuzz trace (both axes): every point of `health_timeline` is `health_grade` of
    the rows cut there."""
    axes = set()
    for path in [*sorted(SAMPLES.rglob("*.json*")), *sorted(CASES.rglob("*.json*")), *sorted(FUZZ.rglob("*.json*"))]:
        try:
            traces = read_trace(str(path))
        except ContextTraceError:  # no trace (a sidecar, a subagent's meta, a file made to be refused)
            continue
        for trace in traces:
            rows = session_rows(trace)
            if not rows.calls:
                continue
            axes.add(rows.axis)
            timeline = health_timeline(rows, 200_000)
            got = [(p["score"], p["grade"], p["compactions"]) for p in timeline]
            assert got == _expected(rows, 200_000), path
            assert health_of(rows, WindowChoice(200_000, "default"))["timeline"] == timeline, path
    assert axes == {AXIS_CALLS, AXIS_TIME}
