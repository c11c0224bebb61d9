"""Fast paths of `metrics`, `window`, `tool_figures` and `frame_rows` against the straightforward rules they
replace, on random inputs: the spike rule in one pass (`metrics.spike_indexes`: `context_figures`, the
window's peak rule) against `metrics.is_spike` at each index; `largest_results_of` with unique
tool_use_ids against the join that matches each row of a repeated id."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.analysis import metrics
from contexttrace.analysis.frame_rows import main_rows
from contexttrace.analysis.metrics import is_spike
from contexttrace.analysis.tool_figures import largest_results_of
from contexttrace.analysis.window import DEFAULT_WINDOW_TOKENS, LARGE_WINDOW_TOKENS, WindowChoice, window_choice_of

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


def _choice_by_the_rule(prompts: list[int]) -> WindowChoice:
    """The last step of `window_choice` as first written: the largest prompt that is no spike."""
    series = [p for p in prompts if metrics.measured(p)]
    steady = [v for i, v in enumerate(series) if not is_spike(series, i)]
    if max(steady, default=0) > DEFAULT_WINDOW_TOKENS:
        return WindowChoice(LARGE_WINDOW_TOKENS, "peak")
    return WindowChoice(DEFAULT_WINDOW_TOKENS, "default")


@settings(max_examples=500, deadline=None)
@given(series=_PROMPTS, window=st.sampled_from([None, 150_000, 200_000, 1_000_000]))
def test_context_figures_flag_the_spikes_of_the_rule(series, window):
    """`context_figures` (spikes in one pass, the window's check only past it) equals the rule per index."""
    assert metrics.context_figures(series, window) == _figures_by_the_rule(series, window)


@settings(max_examples=500, deadline=None)
@given(series=_PROMPTS)
def test_window_choice_peak_rule_is_the_rule(series):
    """The peak rule of `window_choice_of` (spikes looked for only past 200,000) equals the rule per index."""
    trace = SimpleNamespace(result=None, surface=None)
    got = window_choice_of(trace, ["m"] * len(series), series, None)  # type: ignore[arg-type]
    assert got == _choice_by_the_rule(series)


def _largest_by_the_rule(names: list, results: list, limit: int = 5) -> list[dict]:
    """`largest_results_of` as first written: every row of an id matches (a left join; null ids never do)."""
    by_id: dict[str, list[str]] = {}
    for tid, name in names:
        if tid is not None:
            by_id.setdefault(tid, []).append(name if name is not None else "?")
    totals: dict[str, int] = {}
    for tid, chars in results:
        for name in by_id.get(tid, ["?"]) if tid is not None else ["?"]:
            totals[name] = totals.get(name, 0) + (chars or 0)
    ranked = sorted(((c, n) for n, c in totals.items() if c > 0), key=lambda cn: (-cn[0], cn[1]))[:limit]
    return [{"tool": n, "chars": int(c)} for c, n in ranked]


_IDS = st.sampled_from(["t1", "t2", "t3", "t4", "t5", "t6", "t7", None])
_NAMES = st.sampled_from(["Read", "Bash", "Grep", "Edit", "mcp__a__b", "?", None])


@settings(max_examples=500, deadline=None)
@given(
    names=st.one_of(
        st.lists(st.tuples(_IDS, _NAMES), max_size=8),  # ids repeated, null ids
        st.lists(st.tuples(_IDS, _NAMES), max_size=8, unique_by=lambda u: u[0]),  # each id once
    ),
    results=st.lists(st.tuples(_IDS, st.sampled_from([None, 0, 1, 5, 100, 100, 2_000])), max_size=10),
    limit=st.sampled_from([1, 2, 5]),
)
def test_largest_results_is_the_join(names, results, limit):
    """`largest_results_of` equals the join of results to every row of their id, ids unique or not."""
    assert largest_results_of(names, results, limit) == _largest_by_the_rule(names, results, limit)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["main", "main", "subagent", "compaction", None]), st.integers(0, 6), st.integers()),
        max_size=12,
    ),
    all_main=st.booleans(),
    sort=st.booleans(),
)
def test_main_rows_filter_and_stable_sort(rows, all_main, sort):
    """`main_rows` (every row kept at once, and not sorted again, when all are the main thread's and in
    order) equals filtering the main thread's rows and sorting them stably by seq."""
    from contexttrace.reading.model import ColumnView

    if all_main:
        rows = [("main", s, v) for _, s, v in rows]
    kinds = [k for k, _, _ in rows]
    table = ColumnView({"seq": [s for _, s, _ in rows], "value": [v for _, _, v in rows]})
    expected = [(s, v) for k, s, v in rows if k == "main"]
    if sort:
        expected.sort(key=lambda r: r[0])
    assert main_rows(kinds, table, ("seq", "value"), sort) == expected


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
