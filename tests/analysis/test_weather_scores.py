"""`weather_worst.scores_after_each_call` and `worst_weather` (the score after every call, one list per signal)
against the straightforward rule: `compose` of the severities `signals_after` gives after each call, on
random sessions built to reach every signal (long failure runs, compactions, max_tokens stops, cache hits
around 0.5, raw and paced latencies) and on sessions where each signal stays at 0."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.analysis.session import AXIS_CALLS, Compaction, MainCall, SessionRows, ToolCall
from contexttrace.analysis.weather_series import signal_series, signals_after
from contexttrace.analysis.weather_signals import SIGNALS, compose
from contexttrace.analysis.weather_worst import SEVERITY_LISTS, scores_after_each_call, severity_lists, worst_weather

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
