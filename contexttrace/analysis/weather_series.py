"""The eight weather signals as they stand after one call, read off per-trace prefix arrays.

`signal_series` turns a session's rows into arrays of running counts (errors, refusals, failed runs,
paces, ...), once per trace; `signals_after` reads each signal after any call from them in O(recent
calls), with its measure, severity (`weather_signals.curve`), reason and the calls it points at. The
spec's "turn" is one main-thread model call: in code and output it is a *call*, numbered from 1 in output
(0-based indexes inside). A signal without enough data abstains (severity None, with the reason). Pure:
nothing here reads files, prints or formats numbers.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from contexttrace.analysis.metrics import round_half_up
from contexttrace.analysis.result_types import WeatherSignal, WeatherStats
from contexttrace.analysis.session import MainCall, SessionRows, ToolCall
from contexttrace.analysis.weather_signals import (
    BASELINE_CALLS,
    CACHE_MIN_PROMPT_TOKENS,
    CACHE_SKIP_CALLS,
    CLUSTER_CALLS,
    MEASURE_DECIMALS,
    PACE_MODE_SHARE,
    PACE_OVERHEAD_TOKENS,
    RECENT_CALLS,
    SIGNALS,
    SignalSpec,
    baseline_ms,
    cache_skipped_why,
    curve_of,
    percentile,
)


class SignalSeries(NamedTuple):
    """Per-trace arrays that make the signals after any call cheap to read (built by `signal_series`).

    Each `*_upto` / `*_before` list is a running count: entry k counts the first k items (calls, or
    results in reading order), so a count over calls lo … i is one subtraction. Seqs are reading-order
    positions; indexes of calls are 0-based.
    """

    rows: SessionRows
    window: int
    cuts: list[float]  # cuts[i]: rows before this seq are known after call i (the next call's seq)
    use_seqs: list[int]  # tool uses' seqs, sorted
    result_seqs: list[int]  # results' seqs, sorted
    result_errors: list[bool]  # is_error per result in that order
    errors_before: list[int]  # errors among the first r results
    denied_before: list[int]  # refusals among the first r results (never errors)
    longest_before: list[tuple[int, int]]  # (length, end) of the longest failed run among the first r results
    tool_turns_upto: list[int]  # calls up to i that asked for a tool
    result_calls: list[int]  # call index of each result's tool use, in result order
    tools_by_call: list[list[ToolCall]]  # tool calls each call asked for
    call_seqs: list[int]  # each call's seq, in order
    bound_seqs: list[int]  # compaction boundaries' seqs, sorted
    known_upto: list[int]  # calls up to i that record a stop_reason
    cutoff_calls: list[int]  # indexes of calls that stopped at max_tokens, sorted
    paces: list[float | None]  # each call's ms per output token (`pace`), None when it has none
    timed_upto: list[int]  # entry k: timed calls among the first k
    final_upto: list[int]  # entry k: timed calls with a recorded stop_reason among the first k
    pace_bases: list[float | None]  # after call i: median pace of the first BASELINE_CALLS paced calls
    paced_upto: list[int]  # calls up to i that have a pace
    measured_at: list[int]  # index of the last call up to i whose prompt was measured (`metrics.measured`), or -1


def signal_series(rows: SessionRows, window: int) -> SignalSeries:
    """Build a session's `SignalSeries`: every running count the eight signals read, in one pass each.

    Parameters
    ----------
    rows
        From `session.session_rows`.
    window
        The effective context window in tokens, > 0.

    Returns
    -------
    SignalSeries
        Its arrays hold one entry per call (or per result, plus one); `paces` is `weather_signals.pace`
        of each call, written out here. Exact, except paces (≈: line timestamps).
    """
    calls, tools = rows.calls, rows.tools
    n = len(calls)
    # the calls' and the tool calls' columns, transposed at once
    call_seqs_, prompts, _, stops, _, latencies, outputs = zip(*calls, strict=True) if calls else ((),) * 7
    call_seqs = list(call_seqs_)
    cuts = [*map(float, call_seqs[1:]), float("inf")] if n else []
    seqs, _, _, failed, denied, results, call_of = zip(*tools, strict=True) if tools else ((),) * 7
    if None not in results and all(map(operator.le, results, results[1:])):  # every result read, in order
        with_result: list[ToolCall] | tuple[ToolCall, ...] = tools
        result_errors, result_denied, result_calls = list(failed), denied, list(call_of)
        result_seqs = list(results)
    else:
        with_result = sorted([t for t in tools if t.result_seq is not None], key=_result_seq)
        result_errors = [t.is_error for t in with_result]
        result_denied = tuple([t.denied for t in with_result])
        result_calls = [t.call_index for t in with_result]
        result_seqs = [t.result_seq or 0 for t in with_result]
    # running counts start from the int 0 (`initial`): a bool first term would print as false, not 0
    errors_before = list(itertools.accumulate(result_errors, initial=0))
    longest: list[tuple[int, int]] = [(0, 0)]
    if errors_before[-1]:  # without a failed result, every run of failed results is 0 long
        run = 0
        for r, failed_result in enumerate(result_errors, 1):
            run = run + 1 if failed_result else 0
            longest.append((run, r) if run > longest[-1][0] else longest[-1])
    else:
        longest *= len(with_result) + 1
    by_call: list[list[ToolCall]] = [[] for _ in range(n)]
    for t in tools:
        by_call[t.call_index].append(t)
    paces, bases, timed_upto, final_upto = _paces(latencies, stops, outputs, prompts)
    # made with `tuple.__new__` in field order: the named tuple's constructor with 22 keywords is a Python call
    return tuple.__new__(
        SignalSeries,
        (
            rows,
            window,
            cuts,
            sorted(seqs),  # use_seqs
            result_seqs,
            result_errors,
            errors_before,
            _running(result_denied),  # denied_before
            longest,  # longest_before
            list(itertools.islice(itertools.accumulate(map(bool, by_call), initial=0), 1, None)),  # tool_turns_upto
            result_calls,
            by_call,  # tools_by_call
            call_seqs,
            sorted([c.seq for c in rows.compactions]) if rows.compactions else [],  # bound_seqs
            [0] * n if stops.count(None) == n else _running([stop is not None for stop in stops])[1:],  # known_upto
            [k for k, stop in enumerate(stops) if stop == "max_tokens"]
            if "max_tokens" in stops
            else [],  # cutoff_calls
            paces,
            timed_upto,
            final_upto,
            bases,  # pace_bases
            list(itertools.accumulate([v is not None for v in paces]))
            if bases[-1:] != [None]
            else [0] * n,  # paced_upto
            _measured_at(prompts),  # measured_at
        ),
    )


_result_seq = operator.attrgetter("result_seq")


def _running(flags: Sequence[bool]) -> list[int]:
    """The running count of `flags` from 0 (len(flags) + 1 ints), without the pass when none is set."""
    if not any(flags):
        return [0] * (len(flags) + 1)
    return list(itertools.accumulate(flags, initial=0))


def _paces(
    latencies: tuple[int | None, ...],
    stops: tuple[str | None, ...],
    outputs: tuple[int | None, ...],
    prompts: tuple[int, ...],
) -> tuple[list[float | None], list[float | None], list[int], list[int]]:
    """Each call's `pace` (written out), the pace baseline after it (median of the first `BASELINE_CALLS`
    paces), and the running counts of timed calls and of timed calls with a recorded stop_reason; the
    arguments are the calls' `latency_ms`, `stop_reason`, `output_tokens` and `prompt_tokens` columns."""
    n = len(latencies)
    if latencies.count(None) == n:  # no call is timed (stream-json): nothing to pace
        return [None] * n, [None] * n, [0] * (n + 1), [0] * (n + 1)
    over = PACE_OVERHEAD_TOKENS
    final = [latency is not None and stop is not None for latency, stop in zip(latencies, stops, strict=True)]
    # `pace` of each call: timed, a recorded stop_reason, an output count and a measured prompt
    paces = [
        latency / (output + over)  # type: ignore[operator]  # a final call is timed
        if is_final and output is not None and prompt is not None and prompt > 0
        else None
        for latency, output, prompt, is_final in zip(latencies, outputs, prompts, final, strict=True)
    ]
    bases: list[float | None] = []
    first: list[float] = []  # the first BASELINE_CALLS paces, sorted
    base: float | None = None
    for v in paces:
        if v is not None:
            bisect.insort(first, v)
            half = len(first) // 2
            base = first[half] if len(first) % 2 else (first[half - 1] + first[half]) / 2
            if len(first) == BASELINE_CALLS:  # the baseline is set: it holds for every later call
                bases += [base] * (n - len(bases))
                break
        bases.append(base)
    return paces, bases, _running([v is not None for v in latencies]), _running(final)


def _measured_at(prompts: tuple[int, ...]) -> list[int]:
    """Per call (given its prompt), the index of the last call up to it whose prompt was measured
    (`metrics.measured`), or -1."""
    if None not in prompts and (not prompts or min(prompts) > 0):  # every prompt measured: each call's own
        return list(range(len(prompts)))
    # each measured call's own index (else -1), carried forward by a running maximum
    at = [k if p is not None and p > 0 else -1 for k, p in enumerate(prompts)]
    return list(itertools.accumulate(at, max))


def weather_signal(
    name: str, measure: float | Fraction | None, why: str, calls: list[int] | None = None
) -> WeatherSignal:
    """Build one signal's entry of the `weather` object from its measure.

    Parameters
    ----------
    name
        A key of `weather_signals.SIGNALS`.
    measure
        What its curve reads, or None when the signal abstains. An exact measure (a `Fraction`: the
        fill) is rounded half up from its exact value (`metrics.round_half_up`), as every view of the
        fill is; any other is rounded to `MEASURE_DECIMALS`.
    why
        The reason shown.
    calls
        0-based main-call indexes it points at, written as call numbers from 1 (only when active).

    Returns
    -------
    WeatherSignal
        `severity` from `curve` (None when it abstains), `active` when that is above 0. Raises KeyError
        for an unknown name.

    >>> weather_signal("truncation", 1, "1 call stopped at max_tokens", [4])["calls"]
    [5]
    """
    spec = SIGNALS[name]
    if measure is None:  # it abstains
        return {"name": name, "severity": None, "cap": spec.cap, "active": False, "measure": None, "why": why,
                "calls": []}  # fmt: skip
    if type(measure) in _PLAIN or not isinstance(measure, Fraction):  # ints and floats skip the ABC test
        plain: float = measure  # type: ignore[assignment]  # not a Fraction here: a float or an int
        shown = round(plain, MEASURE_DECIMALS)  # an int stays an int
        return _signal(name, spec, _CURVES[name](float(measure)), shown, why, calls)
    return _signal(name, spec, _CURVES[name](float(measure)), round_half_up(measure, MEASURE_DECIMALS), why, calls)


_PLAIN = (float, int)
#: Each signal's `curve` as `weather_signals.curve_of` gives it (the same floats, fewer steps at the ends).
_CURVES = {name: curve_of(spec) for name, spec in SIGNALS.items()}


def _signal(
    name: str, spec: SignalSpec, severity: float, shown: float, why: str, calls: list[int] | None
) -> WeatherSignal:
    """`weather_signal` of a measure that does not abstain, its severity and shown measure given: a dict display
    in `WeatherSignal`'s key order (calling the TypedDict with keywords builds the same dict, slower)."""
    return {"name": name, "severity": severity, "cap": spec.cap, "active": bool(severity), "measure": shown,
            "why": why, "calls": sorted({k + 1 for k in calls}) if severity and calls else []}  # fmt: skip


def _not_counted(denied: int) -> str:
    """The note that names refusals beside a failure count (the table's `failed` counts both)."""
    return f" (+{denied} denied, not counted)" if denied else ""


def signals_after(s: SignalSeries, i: int, detail: bool = True) -> list[WeatherSignal]:
    """Read the eight signals as they stand after call `i`, with everything read before call i + 1.

    Parameters
    ----------
    s
        The session's `signal_series`.
    i
        0-based index of a main call.
    detail
        False leaves out the texts and the lists of calls each signal points at (O(trace) to build):
        only `severity` (and `active`, `measure`) is then meant to be read.

    Returns
    -------
    list of WeatherSignal
        The eight in the spec's order (`weather_signals.SIGNALS`). Each signal looks at a bounded window
        of calls or at prefix counts kept in `s`, so this is O(recent calls) per call. Exact, except
        latency_drift (≈: line timestamps, ms).
    """
    calls: list[MainCall] = s.rows.calls
    cut = s.cuts[i]
    uses = bisect.bisect_left(s.use_seqs, cut)
    results = bisect.bisect_left(s.result_seqs, cut)
    errors = s.errors_before[results]
    out = [_ctx(s, i, detail)]

    n_bounds = bisect.bisect_left(s.bound_seqs, cut)
    after = [min(bisect.bisect_left(s.call_seqs, b), i) for b in s.bound_seqs[:n_bounds]] if detail else []
    out.append(
        weather_signal("compaction_scar", n_bounds, f"{n_bounds} compaction{'' if n_bounds == 1 else 's'}", after)
    )

    known = s.known_upto[i]
    n_cut = bisect.bisect_right(s.cutoff_calls, i)
    if known:
        why = f"{n_cut} call(s) stopped at max_tokens ({i + 1 - known} with no stop_reason)" if detail else ""
        out.append(weather_signal("truncation", n_cut, why, s.cutoff_calls[:n_cut] if detail else []))
    else:
        out.append(weather_signal("truncation", None, "no call records its stop_reason (streamed lines)"))

    length, end = s.longest_before[results]
    if results < SIGNALS["stuck"].minimum:
        out.append(weather_signal("stuck", None, f"{results} tool result(s): fewer than {SIGNALS['stuck'].minimum}"))
    else:
        streak = s.result_calls[end - length : end] if detail else []
        out.append(weather_signal("stuck", length, f"longest run of failed tool results: {length}", streak))

    out.append(_latency(s, i))
    out.append(_cluster(s, i, detail))

    turns = s.tool_turns_upto[i]
    need = SIGNALS["error_cumulative"].minimum
    if turns < need:
        out.append(weather_signal("error_cumulative", None, f"{turns} call(s) used a tool: fewer than {need}"))
    else:
        rate = errors / uses if uses else 0.0
        failed_calls = list(itertools.compress(s.result_calls[:results], s.result_errors[:results])) if detail else []
        why = f"{errors} of {uses} tool calls failed{_not_counted(s.denied_before[results])}"
        out.append(weather_signal("error_cumulative", rate, why, failed_calls))

    out.append(_cache(calls, i, s.rows.provider))
    return out


def _ctx(s: SignalSeries, i: int, detail: bool) -> WeatherSignal:
    """ctx_pressure after call `i`: the last measured call's prompt ÷ the window, exact."""
    at = s.measured_at[i]  # the last call whose prompt was measured (usage read), -1 when none yet
    if at < 0:
        return weather_signal("ctx_pressure", None, "no call's prompt size could be read (usage read as 0)")
    # the fill prompt ÷ window is exact: rounded once, half up, where shown (`metrics.round_half_up` of the
    # fraction, written out in integers), and read by the curve as the float nearest it (int ÷ int is
    # correctly rounded, as `float(Fraction(prompt, window))`)
    prompt, window = s.rows.calls[at].prompt_tokens, s.window
    why = ""
    if detail:
        whose = "last call's" if at == i else f"call #{at + 1}'s (the last with readable usage)"
        why = f"{whose} prompt is {(prompt * 200 + window) // (2 * window):.0f}% of {window:,} tokens"
    shown = (prompt * _SCALE * 2 + window) // (2 * window) / _SCALE
    return _signal("ctx_pressure", _CTX_SPEC, _CURVES["ctx_pressure"](prompt / window), shown, why, [at])


#: ctx_pressure's row of the table, and the scale of `MEASURE_DECIMALS`.
_CTX_SPEC = SIGNALS["ctx_pressure"]
_SCALE = 10**MEASURE_DECIMALS


def _cluster(s: SignalSeries, i: int, detail: bool) -> WeatherSignal:
    """error_cluster after call `i`: failed ÷ tool calls of the last `CLUSTER_CALLS` calls, read by then."""
    cut = s.cuts[i]
    lo = i - CLUSTER_CALLS + 1 if i >= CLUSTER_CALLS else 0
    window_tools = [t for tools in s.tools_by_call[lo : i + 1] for t in tools if t.seq < cut]
    # a failed (refused) result in the window is one of the trace's results: none when the trace has none
    failed = (
        [t for t in window_tools if t.is_error and t.result_seq is not None and t.result_seq < cut]
        if s.errors_before[-1]
        else []
    )
    need = SIGNALS["error_cluster"].minimum
    if len(window_tools) < need:
        why = f"{len(window_tools)} tool call(s) in the last {CLUSTER_CALLS} calls: fewer than {need}"
        return weather_signal("error_cluster", None, why)
    rate = len(failed) / len(window_tools)
    why = ""
    if detail:
        denied = (
            sum(1 for t in window_tools if t.denied and t.result_seq is not None and t.result_seq < cut)
            if s.denied_before[-1]
            else 0
        )
        why = f"{len(failed)} of {len(window_tools)} tool calls failed in the last {CLUSTER_CALLS} calls"
        why += _not_counted(denied)
    return weather_signal("error_cluster", rate, why, [t.call_index for t in failed])


def _cache(calls: list[MainCall], i: int, provider: str | None) -> WeatherSignal:
    """cache_health after call `i`: the median cache-hit fraction of the recent qualifying calls; skipped
    (abstains, with why) for a provider spec 002 leaves out (`weather_signals.cache_skipped_why`)."""
    skipped = cache_skipped_why(provider)
    if skipped is not None:
        return weather_signal("cache_health", None, skipped)
    start = max(CACHE_SKIP_CALLS, i + 1 - RECENT_CALLS)
    picked = [
        (k, calls[k].cache_read_tokens / calls[k].prompt_tokens)
        for k in range(start, i + 1)
        if calls[k].prompt_tokens >= CACHE_MIN_PROMPT_TOKENS
    ]
    need = SIGNALS["cache_health"].minimum
    if len(picked) < need:
        return weather_signal("cache_health", None, f"{len(picked)} qualifying call(s): fewer than {need}")
    hit = _median(sorted([h for _, h in picked]))
    low = [k for k, h in picked if h < SIGNALS["cache_health"].anchors[-1][0]]
    return weather_signal("cache_health", hit, f"median cache hit {hit:.0%} over calls #{start + 1}–#{i + 1}", low)


def _pace_mode(s: SignalSeries, lo: int, i: int) -> bool:
    """Whether latency_drift judges calls lo … i by pace (`PACE_MODE_SHARE`)."""
    timed = s.timed_upto[i + 1] - s.timed_upto[lo]
    return timed > 0 and s.final_upto[i + 1] - s.final_upto[lo] >= PACE_MODE_SHARE * timed


def _latency(s: SignalSeries, i: int) -> WeatherSignal:
    """latency_drift after call `i`: when the last `RECENT_CALLS` calls mostly have final outputs
    (`_pace_mode`), their pace (`pace`) against the trace's own first paced calls; else raw latency
    against the model's table baseline (spec 002)."""
    calls = s.rows.calls
    lo = max(0, i - RECENT_CALLS + 1)
    if s.timed_upto[i + 1] == s.timed_upto[lo]:  # no timed call in the window: neither paces nor latencies
        return weather_signal("latency_drift", None, "no timestamps to time calls by")
    need = SIGNALS["latency_drift"].minimum
    if _pace_mode(s, lo, i):
        paced = [(k, v) for k in range(lo, i + 1) if (v := s.paces[k]) is not None]
        if len(paced) < need:
            why = f"{len(paced)} call(s) with a final output count among the last {RECENT_CALLS}: fewer than {need}"
            return weather_signal("latency_drift", None, why)
        base = s.pace_bases[i]
        p75 = percentile([v for _, v in paced], 0.75)
        ratio = p75 / base if base is not None and base > 0 else 0.0
        first = min(BASELINE_CALLS, s.paced_upto[i])
        why = (
            f"p75 {p75:.1f} vs {base or 0:.1f} ms per output token, {PACE_OVERHEAD_TOKENS} added for the "
            f"first-token wait (baseline: median of this trace's first {first} calls with a final output count)"
        )
        return weather_signal("latency_drift", ratio, why, [k for k, v in paced if v >= p75])
    recent = [(k, calls[k].latency_ms) for k in range(lo, i + 1) if calls[k].latency_ms is not None]
    if len(recent) < need:
        why = f"{len(recent)} timed call(s): fewer than {need}" if recent else "no timestamps to time calls by"
        return weather_signal("latency_drift", None, why)
    model = calls[i].model
    base = baseline_ms(model)
    source = f"table baseline for {model}"
    if base is None:
        own = [c.latency_ms for c in calls[:BASELINE_CALLS] if c.latency_ms is not None]
        base = float(_median(sorted(own))) if own else 0.0
        source = f"median of this trace's first {BASELINE_CALLS} calls (model not in the table)"
    timed = [(k, float(v)) for k, v in recent if v is not None]
    p75 = percentile([v for _, v in timed], 0.75)
    ratio = p75 / base if base > 0 else 0.0
    slow = [k for k, v in timed if v >= p75]
    why = f"p75 {p75 / 1000:.1f}s vs {base / 1000:.1f}s per call ({source})"
    return weather_signal("latency_drift", ratio, why, slow)


def _median(ordered: list[float]) -> float:
    """`statistics.median` of values already sorted (non-empty): the middle one, or the mean of the two."""
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def weather_stats(signals: list[WeatherSignal], s: SignalSeries, i: int) -> WeatherStats:
    """Return spec 002's tooltip stats after call `i` (0-based), from `signals_after(s, i)`.

    Returns
    -------
    WeatherStats
        The measures of ctx_pressure, cache_health and latency_drift, and the compactions (compaction_scar's
        measure), failed tool results (refusals apart) and refused ones read by then. Exact, except the
        latency ratio (≈).
    """
    by_name = _BY_NAME if list(map(_NAME, signals)) == _NAMES else {x["name"]: k for k, x in enumerate(signals)}
    cut = s.cuts[i]
    results = bisect.bisect_left(s.result_seqs, cut)
    # a dict display in `WeatherStats`' key order (the TypedDict called with keywords is the same dict, slower)
    return {"context_fill_frac": signals[by_name["ctx_pressure"]]["measure"], "tool_errors": s.errors_before[results],
            "tool_denials": s.denied_before[results], "cache_hit_frac": signals[by_name["cache_health"]]["measure"],
            "latency_ratio": signals[by_name["latency_drift"]]["measure"],
            "compactions": bisect.bisect_left(s.bound_seqs, cut)}  # fmt: skip


#: The signals' names in the spec's order, and each one's position in `signals_after`'s list.
_NAMES = list(SIGNALS)
_NAME = operator.itemgetter("name")
_BY_NAME = {name: k for k, name in enumerate(_NAMES)}
