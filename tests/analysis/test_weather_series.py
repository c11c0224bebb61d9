"""`weather_series.signal_series` (columns transposed at once, the tool calls taken as the results' order when
their results are read in order, running counts skipped when nothing is set) against the arrays built one row
at a time as its docstring states them, on random sessions (results read in order, late, out of order or
never; refusals; max_tokens stops; timed and untimed calls) and on every sample's session rows."""

from __future__ import annotations

import itertools
import statistics

from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.analysis.metrics import measured
from contexttrace.analysis.session import AXIS_CALLS, MainCall, SessionRows, ToolCall, session_rows
from contexttrace.analysis.weather_series import signal_series
from contexttrace.analysis.weather_signals import BASELINE_CALLS, pace
from contexttrace.errors import ContextTraceError
from contexttrace.reading import read_trace

from ..conftest import SAMPLES

_CALL = st.tuples(
    st.sampled_from([0, 1_000, 90_000, 150_000]),  # prompt (0: unmeasured)
    st.sampled_from([None, None, "end_turn", "tool_use", "max_tokens"]),  # stop_reason
    st.sampled_from([None, 500, 6_000]),  # latency ms
    st.sampled_from([None, 1, 800]),  # output tokens
    st.lists(  # tool calls: (failed, denied, where the result is read: never, next line, later, earlier)
        st.tuples(st.booleans(), st.booleans(), st.sampled_from([None, 1, 1, 1, 7, -1])), max_size=4
    ),
)


def _session(spec: list) -> SessionRows:
    calls, tools, seq = [], [], 0
    for i, (prompt, stop, latency, output, asked) in enumerate(spec):
        seq += 2
        calls.append(MainCall(seq, prompt, 0, stop, "m", latency, output))
        for failed, denied, later in asked:
            seq += 1
            result = None if later is None else seq + later
            tools.append(ToolCall(seq, "Bash", None, failed and not denied, failed and denied, result, i))
    return SessionRows(calls, tools, [], {}, AXIS_CALLS)


def _reference(rows: SessionRows) -> dict[str, list]:
    """The arrays `signal_series` changed how it builds, one row at a time."""
    calls, tools = rows.calls, rows.tools
    with_result = sorted([t for t in tools if t.result_seq is not None], key=lambda t: t.result_seq)
    asked = [any(t.call_index == k for t in tools) for k in range(len(calls))]
    paces = [pace(c) for c in calls]
    bases, first = [], []
    for v in paces:
        first += [v] if v is not None and len(first) < BASELINE_CALLS else []
        bases.append(statistics.median(first) if first else None)
    last = -1
    measured_at = []
    for k, c in enumerate(calls):
        last = k if measured(c.prompt_tokens) else last
        measured_at.append(last)
    return {
        "use_seqs": sorted(t.seq for t in tools),
        "result_seqs": [t.result_seq for t in with_result],
        "result_errors": [t.is_error for t in with_result],
        "errors_before": [0, *itertools.accumulate(t.is_error for t in with_result)],
        "denied_before": [0, *itertools.accumulate(t.denied for t in with_result)],
        "result_calls": [t.call_index for t in with_result],
        "tool_turns_upto": list(itertools.accumulate(asked)),
        "known_upto": list(itertools.accumulate(c.stop_reason is not None for c in calls)),
        "cutoff_calls": [k for k, c in enumerate(calls) if c.stop_reason == "max_tokens"],
        "paces": paces,
        "paced_upto": list(itertools.accumulate(v is not None for v in paces)),
        "pace_bases": bases,
        "timed_upto": [0, *itertools.accumulate(c.latency_ms is not None for c in calls)],
        "final_upto": [0, *itertools.accumulate(c.latency_ms is not None and c.stop_reason is not None for c in calls)],
        "measured_at": measured_at,
        "tools_by_call": [[t for t in tools if t.call_index == k] for k in range(len(calls))],
    }


def _check(rows: SessionRows) -> None:
    s = signal_series(rows, 200_000)
    for name, expected in _reference(rows).items():
        assert getattr(s, name) == expected, name


@settings(max_examples=300, deadline=None)
@given(spec=st.lists(_CALL, max_size=30))
def test_series_equals_the_arrays_built_row_by_row(spec):
    """Every array read off the transposed columns equals the one built row by row."""
    _check(_session(spec))


#: calls that are all measured, timed and final: `signal_series`' shortcuts for them (each call its own last
#: measured call; the pace baseline set after `BASELINE_CALLS` paces) are taken
_MEASURED_CALL = st.tuples(
    st.sampled_from([1_000, 90_000, 150_000]),
    st.sampled_from(["end_turn", "tool_use", "max_tokens"]),
    st.sampled_from([500, 6_000, 6_001, 20_000]),
    st.sampled_from([None, 1, 800, 801]),
    st.lists(st.tuples(st.booleans(), st.booleans(), st.sampled_from([None, 1, 7])), max_size=2),
)


@settings(max_examples=200, deadline=None)
@given(spec=st.lists(_MEASURED_CALL, min_size=1, max_size=30))
def test_series_of_measured_timed_calls_equals_the_arrays_built_row_by_row(spec):
    """The shortcuts for measured, timed, final calls give the arrays built row by row."""
    _check(_session(spec))


def test_series_of_every_sample_equals_the_arrays_built_row_by_row():
    traces = []
    for path in sorted(SAMPLES.rglob("*.json*")):
        try:
            traces += read_trace(str(path))
        except ContextTraceError:  # a file of samples/ that is no trace (a sidecar, a subagent's meta)
            continue
    assert len(traces) > 20
    for trace in traces:
        _check(session_rows(trace))
