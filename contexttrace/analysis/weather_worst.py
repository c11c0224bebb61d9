"""The weather score after every call of a session, and the worst of them, in one linear pass.

`weather.weather_of` reports the worst weather after any call. Reading the eight signals after each call
(`weather_series.signals_after`) would build 8 dicts per call; here each signal's severity after every
call is computed as one list from the per-trace arrays (`weather_series.SignalSeries`), through the same
measures and the same `weather_signals.curve`, and the lists are composed call by call. A signal whose
severity is 0 after every call is skipped before it is computed. Each list is checked against
`signals_after` in tests/analysis/test_weather_scores.py. Pure: nothing here reads files or prints.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import statistics
from collections.abc import Callable

from contexttrace.analysis.weather_series import SignalSeries
from contexttrace.analysis.weather_signals import (
    BASELINE_CALLS,
    CACHE_MIN_PROMPT_TOKENS,
    CACHE_SKIP_CALLS,
    CLUSTER_CALLS,
    PACE_MODE_SHARE,
    RECENT_CALLS,
    SCORE_DECIMALS,
    SECOND_WEIGHT,
    SIGNALS,
    SignalSpec,
    baseline_ms,
    cache_skipped_why,
    curve,
    curve_of,
    round_score,
)

#: When the skips of `severity_lists` hold (derived from the table, so a changed curve turns them off):
#: latency_drift is 0 for p75 / baseline <= 1, error_cluster and error_cumulative are 0 at a rate of 0,
#: cache_health is 0 from this hit on.
_LATENCY_ZERO_UP_TO_BASELINE = SIGNALS["latency_drift"].anchors[0] == (1.0, 0.0)
_CLUSTER_ZERO_WITHOUT_FAILURES = curve(0.0, SIGNALS["error_cluster"]) == 0.0
_CUMULATIVE_ZERO_WITHOUT_FAILURES = curve(0.0, SIGNALS["error_cumulative"]) == 0.0
_CACHE_ZERO_FROM = SIGNALS["cache_health"].anchors[-1][0] if SIGNALS["cache_health"].anchors[-1][1] == 0.0 else None

#: Below how far under the best a call's highest severity may be and its score still reach the best: one unit
#: of the last decimal scores keep, twice the largest move rounding makes (derived, as the skips above are)
_PRUNE_MARGIN = 10.0**-SCORE_DECIMALS

_CTX, _STUCK = SIGNALS["ctx_pressure"], SIGNALS["stuck"]
_LATENCY, _CLUSTER, _CUMULATIVE = SIGNALS["latency_drift"], SIGNALS["error_cluster"], SIGNALS["error_cumulative"]
_CACHE = SIGNALS["cache_health"]
_CACHE_CURVE, _LATENCY_CURVE, _CUMULATIVE_CURVE = curve_of(_CACHE), curve_of(_LATENCY), curve_of(_CUMULATIVE)
#: latency_drift's curve between its first two anchors (`curve_of`'s terms), written out in
#: `_p75_severity` when the table gives it two anchors
_LATENCY_SEGMENT = (
    (_LATENCY.anchors[0][1], _LATENCY.anchors[1][1] - _LATENCY.anchors[0][1], _LATENCY.anchors[0][0],
     _LATENCY.anchors[1][0] - _LATENCY.anchors[0][0])
    if len(_LATENCY.anchors) == 2 else None
)  # fmt: skip


def worst_weather(s: SignalSeries) -> tuple[float, int, list[str]]:
    """Find the worst weather score after any call of a session.

    Parameters
    ----------
    s
        The session's `weather_series.signal_series`; it has at least one call.

    Returns
    -------
    (float, int, list of str)
        The highest score after any call (0–1.3, as `weather_signals.compose`), the 0-based index of the
        first call that reached it, and the names of the signals active then, highest severity first
        (ties in the spec's order, as sorting `signals_after`'s list does). Raises ValueError on a
        session without a call. Exact, except latency (≈: line timestamps).
    """
    severities = severity_lists(s)
    best, at = _worst_of(list(severities.values()))
    # stable: signals of equal severity keep the spec's order, as sorting `signals_after`'s list does
    active = [(name, sev[at]) for name, sev in severities.items() if sev[at]]
    if len(active) > 1:
        active.sort(key=_descending)
    return best, at, [name for name, _ in active]


def _descending(named: tuple[str, float]) -> float:
    """The sort key that puts the highest severity first."""
    return -named[1]


def scores_after_each_call(s: SignalSeries) -> list[float]:
    """Return the weather score after each call, in call order.

    Returns
    -------
    list of float
        One score per call (0–1.3): `weather_signals.compose` of the severities of
        `signals_after(s, i, detail=False)` that are not None, from `severity_lists`. Exact, except
        latency (≈).
    """
    return _composed(list(severity_lists(s).values()))


def severity_lists(s: SignalSeries) -> dict[str, list[float]]:
    """Compute each signal's severity after every call, as lists.

    Returns
    -------
    dict
        Signal name → its severity after each call (0-based call order), in the spec's order: the
        severities of `signals_after(s, i, detail=False)`, the same measures through the same `curve`,
        from per-trace arrays instead of the eight dicts; an abstaining signal is 0.0 there.

        A signal whose severity is 0 after every call, whatever its measures, is left out before any is
        computed: a count signal whose table gives 0 for every count the trace reaches (no compaction, no
        max_tokens stop, no run of 10 failed results), error_cluster and error_cumulative without a
        failed result, cache_health without a hit below the fraction from which its severity is 0,
        latency_drift without a timed call, and either in a trace with fewer calls than their window
        needs. Every severity is at least 0, so a 0 never changes the two highest `compose` keeps, nor is
        it active. Most traces keep one or two signals. Linear in the calls (each window is a constant
        size).
    """
    kept = {}
    for name, severities in SEVERITY_LISTS.items():
        if (sev := severities(s)) is not None:
            kept[name] = sev
    return kept


def _worst_of(series: list[list[float]]) -> tuple[float, int]:
    """The highest of `_composed(series)` and the first index that reaches it, composing only the calls that
    can reach it: a call's score is at least its highest severity and at most 1 + `SECOND_WEIGHT` times it,
    each up to the rounding to `SCORE_DECIMALS` (at most half a unit of the last decimal), so a call whose
    highest severity is below the highest of all, less one unit of that decimal (`_PRUNE_MARGIN`), over 1 +
    `SECOND_WEIGHT`, scores below the best."""
    if len(series) == 1:
        scores = series[0]
        best = max(scores)
        return best, scores.index(best)
    tops = list(map(max, *series))  # each call's highest severity
    floor = (max(tops) - _PRUNE_MARGIN) / (1.0 + SECOND_WEIGHT)
    picked = list(itertools.compress(range(len(tops)), map(floor.__le__, tops)))
    scores = _composed([[values[k] for k in picked] for values in series])
    best = max(scores)
    return best, picked[scores.index(best)]


def _composed(series: list[list[float]]) -> list[float]:
    """`compose` after each call of the severity lists given (each at least 0, each rounded to
    `SCORE_DECIMALS` already): the highest plus `SECOND_WEIGHT` × the second highest, rounded to
    `SCORE_DECIMALS`. Where the second highest is 0 the score is the highest as it is (x + 0.3 × 0.0 is x,
    and a value rounded once is its own rounding), so only the other calls are rounded."""
    weight, rounded = SECOND_WEIGHT, round_score
    if len(series) == 1:
        return list(series[0])
    if len(series) == 2:
        return [
            (a if not b else rounded(a + weight * b)) if a >= b else (b if not a else rounded(b + weight * a))
            for a, b in zip(*series, strict=True)
        ]
    out = []
    for sevs in zip(*series, strict=True):
        ordered = sorted(sevs)  # the two highest are its last two (`compose`)
        second = ordered[-2]
        out.append(rounded(ordered[-1] + weight * second) if second else ordered[-1])
    return out


def _ctx_severities(s: SignalSeries) -> list[float]:
    """ctx_pressure after each call: `curve` of the last measured call's fill, its two-anchor arithmetic
    written out (a fill at or past an end anchor takes that anchor's severity, capped and rounded once
    here); 0.0 before any measured call (the signal abstains)."""
    (x0, y0), (x1, y1) = _CTX.anchors
    calls, window, cap, rounded = s.rows.calls, s.window, _CTX.cap, round_score
    low, high = rounded(min(y0, cap)), rounded(min(y1, cap))
    dy, dx = y1 - y0, x1 - x0
    fills = [calls[k].prompt_tokens / window if k >= 0 else None for k in s.measured_at]
    return [
        0.0 if m is None
        else low if m <= x0
        else high if m >= x1
        else rounded(v if (v := y0 + dy * (m - x0) / dx) <= cap else cap)  # `min(v, cap)` without the call
        for m in fills
    ]  # fmt: skip


@functools.cache
def _by_count(name: str, most: int) -> tuple[float, ...] | None:
    """The severity of count signal `name` for each count 0 … `most`; None when the table gives 0 for all of
    them (remembered: traces reach the same few counts)."""
    by_count = tuple([curve(n, SIGNALS[name]) for n in range(most + 1)])
    return by_count if any(by_count) else None


def _compaction_severities(s: SignalSeries) -> list[float] | None:
    """compaction_scar after each call: the compactions read so far."""
    by_count = _by_count("compaction_scar", len(s.bound_seqs))
    if by_count is None:
        return None
    return [by_count[bisect.bisect_left(s.bound_seqs, cut)] for cut in s.cuts]


def _truncation_severities(s: SignalSeries) -> list[float] | None:
    """truncation after each call: calls so far that stopped at max_tokens; 0.0 (abstains) until a call
    records its stop_reason."""
    cutoff = s.cutoff_calls
    by_count = _by_count("truncation", len(cutoff))
    if by_count is None:
        return None
    return [by_count[bisect.bisect_right(cutoff, i)] if known else 0.0 for i, known in enumerate(s.known_upto)]


def _stuck_severities(s: SignalSeries) -> list[float] | None:
    """stuck after each call: the longest run of failed results among those read then; 0.0 (abstains)
    with fewer results than its minimum."""
    by_count = _by_count("stuck", s.longest_before[-1][0])  # the longest run of all (a running maximum)
    if by_count is None:
        return None
    out = []
    for cut in s.cuts:
        results = bisect.bisect_left(s.result_seqs, cut)
        out.append(by_count[s.longest_before[results][0]] if results >= _STUCK.minimum else 0.0)
    return out


def _remembered(spec: SignalSpec) -> Callable[[float], float]:
    """`curve(measure, spec)`, remembered per measure for one trace: its rates repeat (0, 1/2, 1/3, ...)."""
    return functools.cache(curve_of(spec))


def _ends(spec: SignalSpec) -> tuple[float, float, float, float]:
    """(first anchor's measure, its severity, last anchor's measure, its severity) as `curve` gives them: a
    measure at or before the first (after the last) anchor has that anchor's severity, so a loop whose
    measures rarely repeat needs `curve` only between them."""
    first, last = spec.anchors[0][0], spec.anchors[-1][0]
    return first, curve(first, spec), last, curve(last, spec)


def _cumulative_severities(s: SignalSeries) -> list[float] | None:
    """error_cumulative after each call: failed results ÷ tool uses read so far, once enough calls used a
    tool; None without a failed result when a rate of 0 is severity 0."""
    errors_before = s.errors_before
    if not errors_before[-1] and _CUMULATIVE_ZERO_WITHOUT_FAILURES:
        return None
    # calls before enough calls used a tool abstain (0.0); `tool_turns_upto` only grows, so they are a prefix
    start = bisect.bisect_left(s.tool_turns_upto, _CUMULATIVE.minimum)
    cuts = s.cuts
    if _CUMULATIVE_ZERO_WITHOUT_FAILURES and all(map(operator.le, cuts, cuts[1:])):
        # so are the calls before the first failed result is read (a rate of 0 is severity 0): a prefix
        first_failed = s.result_seqs[s.result_errors.index(True)]
        start = max(start, bisect.bisect_right(cuts, first_failed))
    cuts = cuts[start:]
    errors = map(errors_before.__getitem__, map(functools.partial(bisect.bisect_left, s.result_seqs), cuts))
    uses = map(functools.partial(bisect.bisect_left, s.use_seqs), cuts)
    out = [0.0] * start
    out += map(_CUMULATIVE_CURVE, [e / u if u else 0.0 for e, u in zip(errors, uses, strict=True)])
    return out


def _cluster_severities(s: SignalSeries) -> list[float] | None:
    """error_cluster after each call (see `signals_after`): failed ÷ tool calls of the last
    `CLUSTER_CALLS` calls, counted by prefix sums; None when no tool result failed.

    Each call's tool calls were asked before the next call (`session.session_rows_of` gives a tool call to
    the last call before it), so all of a window's tool calls are read by its end, and a failed result read
    before the end of call j counts in the windows of calls max(its call, j) … its call + `CLUSTER_CALLS` − 1
    (a difference list). Rows that do not keep to that order are counted window by window
    (`_cluster_scanned`).
    """
    if not s.errors_before[-1] and _CLUSTER_ZERO_WITHOUT_FAILURES:  # no failed result: every rate is 0
        return None
    cuts, by_call = s.cuts, s.tools_by_call
    n = len(cuts)
    all_tools = s.rows.tools
    # each tool call read before its call's cut (compared column by column, without a loop in Python)
    ordered = all(map(operator.le, cuts, cuts[1:])) and all(
        map(operator.lt, map(_SEQ, all_tools), map(cuts.__getitem__, map(_CALL_INDEX, all_tools)))
    )
    if not ordered:
        return _cluster_scanned(s)
    delta = [0] * (n + CLUSTER_CALLS + 1)  # failed results counted from call j, until their window ends
    right = bisect.bisect_right
    for t in all_tools:  # the order does not matter: each failed result adds to a window count
        if t.is_error and t.result_seq is not None:
            k = t.call_index
            j = max(k, right(cuts, t.result_seq))  # the first call whose cut is past the result
            if j < k + CLUSTER_CALLS:
                delta[j] += 1
                delta[k + CLUSTER_CALLS] -= 1
    tools_upto = [0, *itertools.accumulate(map(len, by_call))]
    severity, need = _remembered(_CLUSTER), _CLUSTER.minimum
    failed_in = list(itertools.accumulate(delta))[:n]  # failed results in each call's window
    out = [0.0] * n
    # a window without a failed result is severity 0 (`_CLUSTER_ZERO_WITHOUT_FAILURES`): only the others are read
    for i in itertools.compress(range(n), failed_in) if _CLUSTER_ZERO_WITHOUT_FAILURES else range(n):
        n_tools = tools_upto[i + 1] - tools_upto[i - CLUSTER_CALLS + 1 if i >= CLUSTER_CALLS else 0]
        if n_tools >= need:
            out[i] = severity(failed_in[i] / n_tools)
    return out


_SEQ, _CALL_INDEX = operator.attrgetter("seq"), operator.attrgetter("call_index")
_MODEL = operator.attrgetter("model")


def _cluster_scanned(s: SignalSeries) -> list[float]:
    """`_cluster_severities` counted window by window, for rows whose tool calls are not all read by the end
    of the call they belong to: a window with no failed result is 0.0 without being counted (its rate
    is 0)."""
    # each call's tool calls as (seq, seq of a failed result or None)
    asked = [
        [(t.seq, t.result_seq if t.is_error and t.result_seq is not None else None) for t in tools]
        for tools in s.tools_by_call
    ]
    failed_upto = [0, *itertools.accumulate(any(at is not None for _, at in tools) for tools in asked)]
    severity = _remembered(_CLUSTER)
    out = []
    for i, cut in enumerate(s.cuts):
        n_tools = n_failed = 0
        first = max(0, i - CLUSTER_CALLS + 1)
        if failed_upto[i + 1] > failed_upto[first] or not _CLUSTER_ZERO_WITHOUT_FAILURES:
            for k in range(first, i + 1):
                for seq, failed_at in asked[k]:
                    if seq < cut:
                        n_tools += 1
                        if failed_at is not None and failed_at < cut:
                            n_failed += 1
        if n_tools < _CLUSTER.minimum:
            out.append(0.0)
            continue
        measure = n_failed / n_tools
        out.append(severity(measure))
    return out


def _cache_severities(s: SignalSeries) -> list[float] | None:
    """cache_health after each call, as `signals_after` reads it: the median (`statistics.median`) of the
    recent cache-hit fractions. The severity is 0 from the fraction `_CACHE_ZERO_FROM` on, and the median of
    hits fewer than half of which are below it is at or above it (both middle values are), so such a window
    is 0.0 without a median (counted by prefix sums); the signal is None when every window is, or when it is
    skipped for the session's provider (`weather_signals.cache_skipped_why`)."""
    if cache_skipped_why(s.rows.provider) is not None:
        return None
    if len(s.cuts) - CACHE_SKIP_CALLS < _CACHE.minimum:  # no window can hold enough qualifying calls
        return None
    hits = [
        c.cache_read_tokens / c.prompt_tokens if c.prompt_tokens >= CACHE_MIN_PROMPT_TOKENS else None
        for c in s.rows.calls
    ]
    low_hit = _CACHE_ZERO_FROM if _CACHE_ZERO_FROM is not None else float("inf")
    low = [h is not None and h < low_hit for h in hits]
    if not any(low):
        return None
    low_upto = list(itertools.accumulate(low, initial=0))
    hit_upto = list(itertools.accumulate([h is not None for h in hits], initial=0))
    lo_x, lo, hi_x, hi = _CACHE_ENDS
    need = _CACHE.minimum
    n = len(hits)
    out = [0.0] * n
    some = False  # a window whose median was taken
    # a window without a low hit is 0.0 (above; `need` > 0): only the windows of the calls from each low hit
    # to RECENT_CALLS - 1 after it are read
    following = 0  # the first call whose window is not read yet
    for k in itertools.compress(range(n), low):
        for i in range(k if k > following else following, k + RECENT_CALLS if k + RECENT_CALLS < n else n):
            first = i + 1 - RECENT_CALLS if i + 1 - RECENT_CALLS > CACHE_SKIP_CALLS else CACHE_SKIP_CALLS  # max()
            n_hits = hit_upto[i + 1] - hit_upto[first] if first <= i else 0
            if n_hits < need or 2 * (low_upto[i + 1] - low_upto[first]) < n_hits:
                continue
            some = True
            picked = sorted([h for h in hits[first : i + 1] if h is not None])
            half = len(picked) // 2
            measure = picked[half] if len(picked) % 2 else (picked[half - 1] + picked[half]) / 2
            out[i] = lo if measure <= lo_x else hi if measure >= hi_x else _CACHE_CURVE(measure)
        following = k + RECENT_CALLS
    return out if some else None


_CACHE_ENDS, _LATENCY_ENDS = _ends(_CACHE), _ends(_LATENCY)


def _latency_severities(s: SignalSeries) -> list[float] | None:
    """latency_drift after each call, as `signals_after` reads it: p75 of the recent paces over the trace's
    own pace baseline when the window is judged by pace, else p75 of the recent latencies (`percentile`)
    over the model's baseline (looked up once per model); None without a timed call (it abstains
    throughout). A session whose timed calls all record their stop_reason has every window with a timed
    call judged by pace (`latency_by_pace`), one where none does every window judged by raw latency
    (`latency_by_latency`); any other is read window by window (`latency_by_window`).
    """
    calls = s.rows.calls
    if not s.timed_upto[-1] or len(calls) < _LATENCY.minimum:  # no timed call, or no window of enough calls
        return None
    if s.timed_upto[-1] == s.final_upto[-1]:  # every timed call records its stop_reason
        return latency_by_pace(s)
    if not s.final_upto[-1]:  # no timed call records its stop_reason
        return latency_by_latency(s)
    return latency_by_window(s)


def latency_by_window(s: SignalSeries) -> list[float]:
    """Return latency_drift after each call of a session with a timed call, each window judged by pace or by
    raw latency as `weather_series.signals_after` judges it (`_latency_severities`).

    `recent` and `recent_paces` are kept sorted as the window moves (`bisect.insort` in, one deletion
    out). A raw window with no latency above the lowest baseline of the trace's models is 0.0 without a
    percentile (p75 / baseline <= 1: severity 0). ≈: line timestamps.
    """
    calls = s.rows.calls
    latencies, baselines, slow_upto = _raw_terms(s)
    paces, pace_bases, timed_upto, final_upto = s.paces, s.pace_bases, s.timed_upto, s.final_upto
    insort, bisect_left, need, severity = bisect.insort, bisect.bisect_left, _LATENCY.minimum, _p75_severity
    recent: list[float] = []  # the non-None latencies of the last RECENT_CALLS calls, sorted
    recent_paces: list[float] = []  # the same calls' paces, sorted
    out = []
    for i in range(len(calls)):
        if (v := latencies[i]) is not None:
            insort(recent, v)
        if (v := paces[i]) is not None:
            insort(recent_paces, v)
        if i >= RECENT_CALLS:
            if (v := latencies[i - RECENT_CALLS]) is not None:
                del recent[bisect_left(recent, v)]
            if (v := paces[i - RECENT_CALLS]) is not None:
                del recent_paces[bisect_left(recent_paces, v)]
        start = i - RECENT_CALLS + 1 if i >= RECENT_CALLS else 0
        timed = timed_upto[i + 1] - timed_upto[start]
        if timed and final_upto[i + 1] - final_upto[start] >= PACE_MODE_SHARE * timed:  # judged by pace
            if len(recent_paces) < need:
                out.append(0.0)
                continue
            base = pace_bases[i]
            ordered = recent_paces
        elif len(recent) >= need and slow_upto[i + 1] > slow_upto[start]:
            base = baselines[calls[i].model]
            ordered = recent
        else:
            out.append(0.0)
            continue
        out.append(severity(ordered, base))
    return out


def _raw_terms(s: SignalSeries) -> tuple[list[float | None], dict[str | None, float], list[int]]:
    """The calls' latencies as floats, each model's baseline (as `signals_after` takes it: the table's, else
    the median of the trace's first timed calls) and the running count of latencies above the lowest of them."""
    calls = s.rows.calls
    latencies = [None if c.latency_ms is None else float(c.latency_ms) for c in calls]
    baselines: dict[str | None, float] = {}
    for model in dict.fromkeys(map(_MODEL, calls)):
        base = baseline_ms(model)
        if base is None:
            own = [c.latency_ms for c in calls[:BASELINE_CALLS] if c.latency_ms is not None]
            base = float(statistics.median(own)) if own else 0.0
        baselines[model] = base
    lowest = min(baselines.values()) if _LATENCY_ZERO_UP_TO_BASELINE else -1.0
    slow = [v is not None and v > lowest for v in latencies]
    return latencies, baselines, list(itertools.accumulate(slow, initial=0))


def latency_by_latency(s: SignalSeries) -> list[float]:
    """Return `latency_by_window` of a session in which no call records its stop_reason, without its pace windows.

    No window there has a call with a final output, so every one is judged by raw latency against the
    model's baseline: only the recent latencies are kept (`p75_window_severities`). A window with fewer
    than the minimum timed calls, or none above the lowest baseline, is 0.0. The same floats as
    `latency_by_window` (tests compare them on random sessions and every sample). ≈: line timestamps.
    """
    latencies, baselines, slow_upto = _raw_terms(s)
    return p75_window_severities(latencies, list(map(baselines.__getitem__, map(_MODEL, s.rows.calls))), slow_upto)


def latency_by_pace(s: SignalSeries) -> list[float]:
    """Return `latency_by_window` of a session whose timed calls all record their stop_reason, without its raw
    windows.

    Every window with a timed call is judged by pace there (its calls with a final output are all its
    timed calls, `PACE_MODE_SHARE` of them or more), and one without a timed call has no pace and no
    latency: it is 0.0 either way. So only the recent paces are kept (`p75_window_severities`), and a
    window with fewer than the minimum is 0.0. The same floats as `latency_by_window` (tests compare
    them on random sessions and every sample). ≈: line timestamps.
    """
    return p75_window_severities(s.paces, s.pace_bases, None)


def p75_window_severities(
    values: list[float | None], bases: list[float | None], slow_upto: list[int] | None
) -> list[float]:
    """latency_drift after each call when every window is judged one way: the p75 of the values (latencies in
    ms, or paces in ms per output token; None for an untimed call) of the last `RECENT_CALLS` calls over
    call i's baseline (`bases[i]`, the same unit; None or ≤ 0: measure 0), through latency_drift's curve
    (`_p75_severity`).

    `values` and `bases` have one entry per call; `slow_upto` (one more: the running count of values above
    the lowest baseline) makes a window with none of them 0.0 without a percentile, None skips that test.
    A window with fewer than `_LATENCY.minimum` values is 0.0. The recent values are kept sorted as the
    window moves (`bisect.insort` in, one deletion out). Returns one float per call; raises nothing.
    """
    insort, bisect_left, need, severity = bisect.insort, bisect.bisect_left, _LATENCY.minimum, _p75_severity
    recent: list[float] = []  # the values of the last RECENT_CALLS calls, sorted
    out = [0.0] * len(values)
    for i, v in enumerate(values):
        if v is not None:
            insort(recent, v)
        if i >= RECENT_CALLS and (v := values[i - RECENT_CALLS]) is not None:
            del recent[bisect_left(recent, v)]
        if len(recent) < need or (
            slow_upto is not None and slow_upto[i + 1] == slow_upto[i - RECENT_CALLS + 1 if i >= RECENT_CALLS else 0]
        ):
            continue
        out[i] = severity(recent, bases[i])
    return out


def _p75_severity(ordered: list[float], base: float | None) -> float:
    """latency_drift's severity of one window: the p75 of its values (`ordered`, sorted, at least one; ms, or ms
    per output token for paces) over `base` (the same unit; None or ≤ 0: measure 0), through its curve —
    `quantile_of_sorted` and, between two anchors, `_LATENCY_CURVE` written out: the same operations on the
    same values. Raises nothing."""
    if base is not None and base > 0:
        low, high, part = _P75[len(ordered)]
        measure = (ordered[low] + (ordered[high] - ordered[low]) * part) / base
    else:
        measure = 0.0
    lo_x, lo, hi_x, hi = _LATENCY_ENDS
    if measure <= lo_x:
        return lo
    if measure >= hi_x:
        return hi
    if _LATENCY_SEGMENT is None:
        return _LATENCY_CURVE(measure)
    y0, dy, x0, dx = _LATENCY_SEGMENT
    value = y0 + dy * (measure - x0) / dx
    return round_score(value if value <= _LATENCY.cap else _LATENCY.cap)


def _quantile_terms(n: int, q: float) -> tuple[int, int, float]:
    """`quantile_of_sorted`'s (lower index, upper index, weight of the upper) for `n` values, the same floats."""
    pos = (n - 1) * q
    low = int(pos)
    return low, min(low + 1, n - 1), pos - low


#: `_quantile_terms` of the p75 of each window size latency_drift reads (1 … `RECENT_CALLS`; 0 is unused).
_P75 = [(0, 0, 0.0)] + [_quantile_terms(n, 0.75) for n in range(1, RECENT_CALLS + 1)]


#: Each signal's severities after every call (`severity_lists`), by name in the spec's order; a function
#: returns None when the signal's severity is 0 after every call whatever its measures.
SEVERITY_LISTS: dict[str, Callable[[SignalSeries], list[float] | None]] = {
    "ctx_pressure": _ctx_severities,
    "compaction_scar": _compaction_severities,
    "truncation": _truncation_severities,
    "stuck": _stuck_severities,
    "latency_drift": _latency_severities,
    "error_cluster": _cluster_severities,
    "error_cumulative": _cumulative_severities,
    "cache_health": _cache_severities,
}
