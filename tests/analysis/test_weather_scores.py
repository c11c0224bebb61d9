"""`weather_worst.scores_after_each_call` and `worst_weather` (the score after every call, one list per signal)
against the straightforward rule: `compose` of the severities `signals_after` gives after each call, on
random sessions built to reach every signal (long failure runs, compactions, max_tokens stops, cache hits
around 0.5, raw and paced latencies) and on sessions where each signal stays at 0."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.analysis.session import AXIS_CALLS, Compaction, MainCall, SessionRows, ToolCall, session_rows
from contexttrace.analysis.weather_series import signal_series, signals_after
from contexttrace.analysis.weather_signals import SCORE_DECIMALS, SIGNALS, compose, curve, curve_of, round_score
from contexttrace.analysis.weather_worst import (
    SEVERITY_LISTS,
    latency_by_latency,
    latency_by_pace,
    latency_by_window,
    scores_after_each_call,
    severity_lists,
    worst_weather,
)
from contexttrace.errors import ContextTraceError
from contexttrace.reading import read_trace

from ..conftest import CASES, FUZZ, SAMPLES

_MODELS = st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-5", "claude-opus-4-7", "not-in-the-table", None])
_CALL = st.tuples(
    st.sampled_from([0, 500, 999, 1_000, 20_000, 60_000, 90_000, 150_000, 199_000, 260_000]),  # prompt
    st.sampled_from([0.0, 0.2, 0.49, 0.5, 0.51, 1.0]),  # cache-read share of the prompt
    st.sampled_from([None, None, "end_turn", "tool_use", "max_tokens"]),  # stop_reason
    _MODELS,
    st.sampled_from([None, 500, 3_078, 3_079, 5_795, 5_796, 8_909, 20_000, 60_000]),  # latency ms
    st.sampled_from([None, 1, 150, 800, 3_000]),  # output tokens
    st.lists(  # the call's tool calls: (failed, denied, result: None, next line, or some lines later)
        st.tuples(st.booleans(), st.booleans(), st.sampled_from([None, 1, 1, 2, 9, 40])), max_size=4
    ),
)


def _session(spec: list, fail_all: bool, bounds: list[int]) -> SessionRows:
    calls, tools, seq = [], [], 0
    for i, (prompt, share, stop, model, latency, output, asked) in enumerate(spec):
        seq += 2
        calls.append(MainCall(seq, prompt, int(prompt * share), stop, model, latency, output))
        for failed, denied, later in asked:
            seq += 1
            failed = failed or fail_all
            result = None if later is None else seq + later
            tools.append(ToolCall(seq, "Bash", None, failed and not denied, failed and denied, result, i))
    marks = sorted({b % (seq + 2) + 1 for b in bounds})
    return SessionRows(calls, tools, [Compaction(b, "auto", None) for b in marks], {}, AXIS_CALLS)


def _composed(s) -> list[float]:
    n = len(s.rows.calls)
    return [compose([x["severity"] for x in signals_after(s, i, detail=False) if x["severity"] is not None])
            for i in range(n)]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    spec=st.lists(_CALL, min_size=1, max_size=40),
    fail_all=st.booleans(),
    bounds=st.lists(st.integers(0, 200), max_size=3),
    window=st.sampled_from([100_000, 200_000, 1_000_000]),
)
def test_scores_equal_composed_signals_after_every_call(spec, fail_all, bounds, window):
    """`scores_after_each_call` equals `compose` over `signals_after` after every call; and a signal list
    it leaves out (None) is one whose severity is 0 or None after every call."""
    s = signal_series(_session(spec, fail_all, bounds), window)
    composed = _composed(s)
    assert scores_after_each_call(s) == composed
    at = composed.index(max(composed))
    then = sorted((x for x in signals_after(s, at, detail=False) if x["active"]), key=lambda x: -x["severity"])
    assert worst_weather(s) == (max(composed), at, [x["name"] for x in then])
    after = [signals_after(s, i, detail=False) for i in range(len(s.rows.calls))]
    for k, (name, severities) in enumerate(SEVERITY_LISTS.items()):
        expected = [x[k]["severity"] or 0.0 for x in after]
        assert all(x[k]["name"] == name for x in after)
        got = severities(s)
        assert got == expected if got is not None else not any(expected), name
        assert (name in severity_lists(s)) == (got is not None)


def test_every_signal_list_is_reached():
    """The sessions above reach each signal: a fixed session in which every list is kept and above 0."""
    asked = [(True, False, 1)] * 3
    latencies = [5_000] * 6 + [60_000] * 6  # slower after six calls: latency_drift rises
    spec = [(150_000, 0.2, "max_tokens", "claude-sonnet-4-5", ms, 800, asked) for ms in latencies]
    s = signal_series(_session(spec, True, [5]), 200_000)
    for name, severities in SEVERITY_LISTS.items():
        got = severities(s)
        assert got is not None and max(got) > 0, name
    assert scores_after_each_call(s) == _composed(s)


def test_severity_lists_follow_the_spec_order():
    """`SEVERITY_LISTS` names each signal list in `signals_after`'s order, the names `SIGNALS` gives them."""
    assert list(SEVERITY_LISTS) == list(SIGNALS)


@settings(max_examples=2000, deadline=None)
@given(
    x=st.one_of(
        st.floats(min_value=-2.0, max_value=2.0, allow_nan=False),
        st.floats(min_value=0.0, max_value=1e6, allow_nan=False),
        st.floats(allow_nan=False, allow_infinity=True),
        # a score from two severities, and values at or beside a tie of the 9th decimal
        st.tuples(st.integers(0, 10**9), st.integers(0, 10**9)).map(lambda ab: ab[0] / 1e9 + 0.3 * (ab[1] / 1e9)),
        st.integers(0, 2 * 10**9).map(lambda n: (n + 0.5) / 1e9),
        st.integers(0, 2 * 10**9).map(lambda n: math.nextafter((n + 0.5) / 1e9, 0.0)),
        st.integers(0, 2 * 10**9).map(lambda n: math.nextafter((n + 0.5) / 1e9, 2.0)),
    )
)
def test_round_score_is_round_to_score_decimals(x):
    """`round_score(x)` is the float `round(x, SCORE_DECIMALS)` gives, sign of zero included."""
    got, expected = round_score(x), round(x, SCORE_DECIMALS)
    assert got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected), x


def test_round_score_on_every_curve_and_score_of_a_grid():
    """On a grid of measures through every signal's curve, and scores of pairs of them, `round_score` and
    `round(x, SCORE_DECIMALS)` agree: the values `curve` and `compose` round in practice."""
    raw = []
    for spec in SIGNALS.values():
        (x0, _), (x1, _) = spec.anchors[0], spec.anchors[-1]
        for k in range(2_001):
            m = x0 + (x1 - x0) * k / 2_000
            for i in range(1, len(spec.anchors)):
                (a, ya), (b, yb) = spec.anchors[i - 1], spec.anchors[i]
                if a < m < b:
                    raw.append(min(ya + (yb - ya) * (m - a) / (b - a), spec.cap))
    raw += [a + 0.3 * b for a, b in zip(raw[::7], raw[3::7], strict=False)]
    assert len(raw) > 10_000
    assert all(round_score(x) == round(x, SCORE_DECIMALS) for x in raw)


@settings(max_examples=150, deadline=None)
@given(
    spec=st.lists(_CALL, min_size=1, max_size=30),
    fail_all=st.booleans(),
    shift=st.integers(1, 6),
)
def test_error_cluster_of_tool_calls_given_to_earlier_calls(spec, fail_all, shift):
    """Rows whose tool calls belong to a call before the one they follow (not all read by the end of their
    call, which `session.session_rows_of` never gives) are counted window by window: error_cluster still
    equals `signals_after`'s after every call."""
    rows = _session(spec, fail_all, [])
    rows = SessionRows(
        rows.calls, [t._replace(call_index=max(0, t.call_index - shift)) for t in rows.tools], [], {}, AXIS_CALLS
    )
    s = signal_series(rows, 200_000)
    expected = [signals_after(s, i, detail=False)[5]["severity"] or 0.0 for i in range(len(rows.calls))]
    got = SEVERITY_LISTS["error_cluster"](s)
    assert got == expected if got is not None else not any(expected)


@settings(max_examples=1000, deadline=None)
@given(
    name=st.sampled_from(list(SIGNALS)),
    measure=st.one_of(
        st.floats(min_value=-1.0, max_value=12.0, allow_nan=False),
        st.integers(0, 12),
        st.tuples(st.integers(0, 400), st.integers(1, 400)).map(lambda nd: nd[0] / nd[1]),
        st.sampled_from([x for spec in SIGNALS.values() for x, _ in spec.anchors]),
    ),
)
def test_curve_of_is_curve(name, measure):
    """`curve_of(spec)(m)` is the float `curve(m, spec)` gives, on every signal's table, at and between anchors."""
    spec = SIGNALS[name]
    assert curve_of(spec)(measure) == curve(measure, spec)


def test_curve_of_on_a_grid_of_every_table():
    """The same on a dense grid through each signal's anchors (the rates and ratios the loops read)."""
    for spec in SIGNALS.values():
        severity = curve_of(spec)
        x0, x1 = spec.anchors[0][0], spec.anchors[-1][0]
        grid = [x0 + (x1 - x0) * k / 5_000 - 0.01 for k in range(5_003)]
        assert [severity(m) for m in grid] == [curve(m, spec) for m in grid]


_FINAL_CALL = st.tuples(  # calls whose stop_reason is recorded when they are timed: latency judged by pace
    st.sampled_from([0, 999, 20_000, 150_000]),
    st.just(0.0),
    st.sampled_from(["end_turn", "tool_use", "max_tokens"]),
    _MODELS,
    st.sampled_from([None, 500, 3_078, 5_796, 20_000, 60_000]),
    st.sampled_from([None, 1, 150, 800, 3_000]),
    st.just([]),
)


_UNFINAL_CALL = st.tuples(  # calls that never record their stop_reason: latency judged raw
    st.sampled_from([0, 20_000, 150_000]),
    st.just(0.0),
    st.none(),
    _MODELS,
    st.sampled_from([None, 500, 3_078, 3_079, 5_796, 8_909, 20_000, 60_000]),
    st.sampled_from([None, 800]),
    st.just([]),
)


@pytest.mark.parametrize(
    ("call", "fast", "all_final"),
    [(_FINAL_CALL, latency_by_pace, True), (_UNFINAL_CALL, latency_by_latency, False)],
    ids=["pace", "latency"],
)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_latency_fast_paths_are_latency_by_window(call, fast, all_final, data):
    """A session whose timed calls all record their stop_reason (`latency_by_pace`), or none does
    (`latency_by_latency`): the fast path gives the floats the window-by-window reading gives, and
    `SEVERITY_LISTS` takes it."""
    s = signal_series(_session(data.draw(st.lists(call, min_size=5, max_size=40)), False, []), 200_000)
    if not s.timed_upto[-1]:
        return
    assert (s.timed_upto[-1] == s.final_upto[-1]) if all_final else not s.final_upto[-1]
    expected = latency_by_window(s)
    assert fast(s) == expected
    assert SEVERITY_LISTS["latency_drift"](s) == expected


def _sample_series() -> list:
    """The signal series of every sample's session rows (window 200,000)."""
    out = []
    for path in sorted(SAMPLES.rglob("*.json*")):
        try:
            traces = read_trace(str(path))
        except ContextTraceError:  # a file of samples/ that is no trace (a sidecar, a subagent's meta)
            continue
        out += [signal_series(session_rows(trace), 200_000) for trace in traces]
    return out


def test_latency_shortcuts_of_every_sample_are_latency_by_window():
    """Every sample session whose timed calls all (or none) record their stop_reason: the same floats as
    the window-by-window reading."""
    taken = 0
    for s in _sample_series():
        if s.timed_upto[-1] and len(s.rows.calls) >= 5:
            if s.timed_upto[-1] == s.final_upto[-1]:
                taken += 1
                assert latency_by_pace(s) == latency_by_window(s)
            elif not s.final_upto[-1]:
                taken += 1
                assert latency_by_latency(s) == latency_by_window(s)
    assert taken > 1


@settings(max_examples=200, deadline=None)
@given(spec=st.lists(_CALL, min_size=1, max_size=20), fail_all=st.booleans())
def test_error_cluster_entry_counts_the_window(spec, fail_all):
    """error_cluster's entry after each call (its reason and calls, failures and refusals counted, or
    none when the trace has none) against the window's tool calls counted one by one."""
    rows = _session(spec, fail_all, [])
    s = signal_series(rows, 200_000)
    for i, cut in enumerate(s.cuts):
        window = [t for t in rows.tools if i - 4 <= t.call_index <= i and t.seq < cut]
        failed = [t for t in window if t.is_error and t.result_seq is not None and t.result_seq < cut]
        denied = [t for t in window if t.denied and t.result_seq is not None and t.result_seq < cut]
        [entry] = [x for x in signals_after(s, i) if x["name"] == "error_cluster"]
        if len(window) < 3:
            assert entry["severity"] is None
            continue
        why = f"{len(failed)} of {len(window)} tool calls failed in the last 5 calls"
        assert entry["why"] == why + (f" (+{len(denied)} denied, not counted)" if denied else "")
        assert entry["calls"] == (sorted({t.call_index + 1 for t in failed}) if entry["severity"] else [])


def _file_series() -> list:
    """The signal series of the session rows of every sample, case and fuzz file that reads as a trace."""
    out = []
    for path in [*sorted(SAMPLES.rglob("*.json*")), *sorted(CASES.rglob("*.json*")), *sorted(FUZZ.rglob("*.json*"))]:
        try:
            traces = read_trace(str(path))
        except ContextTraceError:  # no trace (a sidecar, a subagent's meta, a file made to be refused)
            continue
        out += [signal_series(session_rows(trace), window) for trace in traces for window in (200_000, 100_000)]
    return out


def test_worst_and_lists_of_every_file_follow_signals_after():
    """On every sample, case and fuzz trace: each severity list (windows read only where one can be above 0)
    is the severity `signals_after` gives after each call, and `worst_weather` (only the calls that can reach
    the best composed) is the highest `compose` of them, its first call and the signals active then."""
    series = _file_series()
    assert len(series) > 60
    kept = 0
    for s in series:
        after = [signals_after(s, i, detail=False) for i in range(len(s.rows.calls))]
        if not after:
            continue
        lists = severity_lists(s)
        kept += len(lists) > 1
        for k, (name, severities) in enumerate(SEVERITY_LISTS.items()):
            expected = [x[k]["severity"] or 0.0 for x in after]
            got = severities(s)
            assert got == expected if got is not None else not any(expected), name
        composed = [compose([x["severity"] for x in xs if x["severity"] is not None]) for xs in after]
        at = composed.index(max(composed))
        then = sorted((x for x in after[at] if x["active"]), key=lambda x: -x["severity"])
        assert worst_weather(s) == (max(composed), at, [x["name"] for x in then])
    assert kept > 5  # sessions with two or more signals above 0: the composed calls are picked
