"""Session Weather (spec 002): eight signals → severities → one score → sunny … stormy.

Pure functions over `health.SessionRows`; nothing here reads files, prints or formats numbers. The spec's
"turn" is one main-thread model call (issue 3): in code and output it is a *call*, numbered from 1 in
output (0-based indexes inside). Weather is given as it stands after the last call, and `worst` is the
worst it stood after any call. A signal without enough data abstains (severity None, with the reason);
only the others are composed. A trace without a model call has no weather (issue 10). latency_drift
compares latency per output token when the outputs are known, so extended thinking is not slowness.

Severity curves, caps and minimums are the spec's, kept as data below; between the spec's anchor points a
severity is linear, and outside them it is held at the nearest anchor.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from contexttrace.analysis.health import MainCall, SessionRows, ToolCall, session_rows
from contexttrace.analysis.metrics import measured, round_half_up, window_choice

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: (upper edge, exclusive; level; emoji) in order; a score at or above the last edge is stormy.
WEATHER_LEVELS: tuple[tuple[float, str, str], ...] = (
    (0.35, "sunny", "☀️"),
    (0.55, "fair", "🌤️"),
    (0.75, "cloudy", "⛅"),
    (0.95, "rainy", "🌧️"),
)
STORMY = ("stormy", "⛈️")

#: Score = max severity + SECOND_WEIGHT × the second highest (only the two highest count).
SECOND_WEIGHT = 0.3

#: Scores are rounded to this many decimals before they are levelled, so float noise (0.6 + 0.3 × 0.5)
#: cannot move a score across a band edge.
SCORE_DECIMALS = 9


@dataclass(frozen=True)
class SignalSpec:
    """One row of spec 002's signal table: cap, curve anchors (measure → severity) and minimum data."""

    cap: float
    anchors: tuple[tuple[float, float], ...]
    minimum: int


#: Spec 002's table. Measures: ctx_pressure = the last measured call's fill (0–1+; a call whose usage could
#: not be read, prompt 0, is skipped: `metrics.measured`); compaction_scar = compactions;
#: truncation = calls that stopped at max_tokens; stuck = longest run of failed tool results;
#: latency_drift = p75 latency ÷ baseline; error_cluster = error rate over the last 5 calls' tool calls;
#: error_cumulative = error rate over all tool calls; cache_health = median cache-hit fraction.
#: `minimum` is in the unit the spec gives: calls, consecutive results, tool calls in the window,
#: calls that used a tool, qualifying calls.
SIGNALS: dict[str, SignalSpec] = {
    "ctx_pressure": SignalSpec(1.0, ((0.40, 0.0), (1.00, 1.0)), 1),
    "compaction_scar": SignalSpec(0.6, ((0, 0.0), (1, 0.4), (2, 0.6)), 1),
    "truncation": SignalSpec(0.5, ((0, 0.0), (1, 0.5)), 1),
    "stuck": SignalSpec(0.9, ((9, 0.0), (10, 0.9)), 10),
    "latency_drift": SignalSpec(1.0, ((1.0, 0.0), (3.0, 1.0)), 5),
    "error_cluster": SignalSpec(0.5, ((0.0, 0.0), (1.0, 0.5)), 3),
    "error_cumulative": SignalSpec(1.0, ((0.0, 0.0), (0.20, 0.5), (0.40, 1.0)), 10),
    "cache_health": SignalSpec(0.5, ((0.0, 0.5), (0.50, 0.0)), 3),
}

#: error_cluster looks at the tool calls of this many most recent calls.
CLUSTER_CALLS = 5
#: cache_health and latency_drift look at this many most recent calls.
RECENT_CALLS = 10
#: cache_health skips this many first calls (prompt cache cold start) ...
CACHE_SKIP_CALLS = 3
#: ... and calls with fewer prompt tokens than this.
CACHE_MIN_PROMPT_TOKENS = 1_000
#: latency_drift's own baselines: the median over the trace's own first this-many calls (of latency
#: for a model not in the table; of pace, below).
BASELINE_CALLS = 10
#: latency_drift compares *pace* when it can: extended thinking writes its thinking as output tokens,
#: so a thinking call is slower in proportion, and raw latency against the model's table baseline made
#: every thinking session stormy. A call's latency is a wait for the first token plus a time per output
#: token; its pace is latency ÷ (output tokens + this many), the wait counted as that many tokens. The
#: figure is a robust (Theil–Sen) line of latency against output tokens fitted to the calls with final
#: outputs of the three bundled samples that have them: the wait is 98, 134 and 184 tokens' time there.
#: Without it, a short call's wait made its pace two or three times a long call's.
PACE_OVERHEAD_TOKENS = 150
#: The window of latency_drift is judged by pace when at least this share of its timed calls have a
#: final output (a recorded stop_reason; then it abstains with fewer than the minimum paced calls), and
#: by raw latency against the table otherwise (CLI versions that record no stop_reason). Deciding per
#: window, not per call, keeps a thinking session's first short calls from being judged raw.
PACE_MODE_SHARE = 0.5

#: Figures in JSON (measures, stats) are rounded to this many decimals; severities and scores keep
#: `SCORE_DECIMALS`.
MEASURE_DECIMALS = 4
#: `reason` of a trace without a main-thread model call (every weather field then null).
NO_CALL_REASON = "no model call: no weather"
#: The keys of `stats`, in the tooltip's order.
STAT_KEYS = ("context_fill_frac", "tool_errors", "tool_denials", "cache_hit_frac", "latency_ratio", "compactions")

#: Per-model baseline latency of one main-thread call, ms (from the line before the call to its last
#: line). Source of every entry: the median over the main-thread calls of the real transcripts bundled in
#: samples/ (see samples/PROVENANCE.md), recomputed by tests/test_weather.py. Model ids are matched after
#: dropping a trailing date (`-20250929`). A model not listed falls back to the trace's own first calls.
LATENCY_BASELINE_MS: dict[str, dict[str, Any]] = {
    "claude-opus-4-5": {"ms": 3078.5, "calls": 12, "source": "samples/b-ccl-print-mode-sessions (claude -p, 2.1.17)"},
    "claude-opus-4-6": {"ms": 5568, "calls": 139, "source": "samples/b-spotter-compaction (marot/spotter, 2.1.39)"},
    "claude-opus-4-7": {"ms": 8908, "calls": 17, "source": "samples/b-ccl-agent-teams-opus47 (2.1.114)"},
    "claude-sonnet-4": {"ms": 5943, "calls": 9, "source": "samples/b-ccv-inline-sidechains-v1098.jsonl (1.0.98)"},
    "claude-sonnet-4-5": {
        "ms": 5795,
        "calls": 217,
        "source": "samples/b-ccl-flat-agent-files-v2037, b-ccl-image-and-errors.jsonl, b-ccl-thinking-sonnet45.jsonl",
    },
}

_DATE_SUFFIX = re.compile(r"-\d{8}$")


def curve(measure: float, spec: SignalSpec) -> float:
    """Map a measure to a severity: linear between the anchors, held at the end anchors, then capped.

    The result is rounded to 9 decimals (`SCORE_DECIMALS`) so that, for example, a fill of exactly 0.70
    gives 0.5 and not 0.4999999999999999.

    Examples
    --------
    >>> curve(0.70, SIGNALS["ctx_pressure"]), curve(0.30, SIGNALS["ctx_pressure"])
    (0.5, 0.0)
    >>> curve(0.30, SIGNALS["error_cumulative"]), curve(5, SIGNALS["compaction_scar"])
    (0.75, 0.6)
    """
    points = spec.anchors
    if measure <= points[0][0]:
        value = points[0][1]
    elif measure >= points[-1][0]:
        value = points[-1][1]
    else:
        i = 1  # the first anchor past the measure (`bisect_right` over the anchors' measures)
        while points[i][0] <= measure:
            i += 1
        (x0, y0), (x1, y1) = points[i - 1], points[i]
        value = y0 + (y1 - y0) * (measure - x0) / (x1 - x0)
    return round(min(value, spec.cap), SCORE_DECIMALS)


def compose(severities: list[float]) -> float:
    """Compose severities into a score: the highest plus 0.3 × the second highest (spec 002).

    Parameters
    ----------
    severities
        Severities of the signals that did not abstain, each 0–cap; may be empty (→ 0.0).

    Returns
    -------
    float
        0–1.3, rounded to 9 decimals. Exact up to that rounding.

    Examples
    --------
    >>> compose([0.4, 0.5, 0.2]), compose([]), compose([0.6, 0.5])
    (0.62, 0.0, 0.75)
    """
    top = [*sorted(severities, reverse=True)[:2], 0.0, 0.0]
    return round(top[0] + SECOND_WEIGHT * top[1], SCORE_DECIMALS)


def weather_level(score: float) -> tuple[str, str]:
    """Return (level, emoji) of a score: sunny below 0.35, fair below 0.55, cloudy below 0.75, rainy below
    0.95, else stormy (edges exclusive, as the spec's ``<``).

    Examples
    --------
    >>> weather_level(0.3499), weather_level(0.35), weather_level(0.95)
    (('sunny', '☀️'), ('fair', '🌤️'), ('stormy', '⛈️'))
    """
    for edge, level, emoji in WEATHER_LEVELS:
        if score < edge:
            return level, emoji
    return STORMY


def percentile(values: list[float], q: float) -> float:
    """Return the q-quantile (0–1) with linear interpolation between order statistics (numpy's default).

    Examples
    --------
    >>> percentile([1, 2, 3, 4, 5], 0.75), percentile([10, 20], 0.75)
    (4.0, 17.5)
    """
    return quantile_of_sorted(sorted(values), q)


def quantile_of_sorted(ordered: list[float], q: float) -> float:
    """`percentile` of values already sorted ascending (the windows keep theirs sorted as they move)."""
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def baseline_ms(model: str | None) -> float | None:
    """Return the table's baseline latency (ms) of a model, or None when the table lacks it."""
    if not model:
        return None
    entry = LATENCY_BASELINE_MS.get(_DATE_SUFFIX.sub("", model))
    return float(entry["ms"]) if entry else None


# --- the signals after one call -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Series:
    """Per-trace arrays that make the signals after any call O(1) to compute."""

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


def pace(call: MainCall) -> float | None:
    """Return a call's pace: its latency ÷ (output tokens + `PACE_OVERHEAD_TOKENS`), in ms per token.

    None unless the call is timed, its `stop_reason` is recorded (without one, `output_tokens` is a
    streaming snapshot, FORMATS G2) and its usage was read (a prompt of 0 is usage the reader could not
    read, `metrics.measured`: its output count is no count either). Thinking tokens are output tokens,
    so a call that thinks longer is not slower per token. ≈: line timestamps, ms.

    Examples
    --------
    >>> pace(MainCall(1, 1_000, 0, "tool_use", "m", 13_000, 500)), pace(MainCall(1, 1_000, 0, None, "m", 13_000, 500))
    (20.0, None)
    """
    out = call.output_tokens
    # a call whose usage could not be read (prompt 0, `metrics.measured`) has no output count to pace by
    if call.latency_ms is None or call.stop_reason is None or out is None or not measured(call.prompt_tokens):
        return None
    return call.latency_ms / (out + PACE_OVERHEAD_TOKENS)


def _series(rows: SessionRows, window: int) -> _Series:
    n = len(rows.calls)
    cuts = [float(rows.calls[i + 1].seq) if i + 1 < n else float("inf") for i in range(n)]
    with_result = sorted((t for t in rows.tools if t.result_seq is not None), key=lambda t: t.result_seq or 0)
    errors_before = [0]
    denied_before = [0]
    longest: list[tuple[int, int]] = [(0, 0)]
    run = 0
    for r, t in enumerate(with_result, 1):
        errors_before.append(errors_before[-1] + t.is_error)
        denied_before.append(denied_before[-1] + t.denied)
        run = run + 1 if t.is_error else 0
        longest.append(max(longest[-1], (run, r)) if run > longest[-1][0] else longest[-1])
    by_call: list[list[ToolCall]] = [[] for _ in range(n)]
    for t in rows.tools:
        by_call[t.call_index].append(t)
    asked = {t.call_index for t in rows.tools}
    turns = []
    count = 0
    for i in range(n):
        count += i in asked
        turns.append(count)
    # `pace` of each call, written out; the baseline after each call (median of the first paces, sorted)
    paces: list[float | None] = []
    bases: list[float | None] = []
    timed_upto, final_upto = [0], [0]
    first: list[float] = []  # the first BASELINE_CALLS paces, sorted
    base: float | None = None
    timed = final = 0
    for c in rows.calls:
        v = None
        if c.latency_ms is not None:
            timed += 1
            if c.stop_reason is not None:
                final += 1
                if c.output_tokens is not None and measured(c.prompt_tokens):  # `pace`
                    v = c.latency_ms / (c.output_tokens + PACE_OVERHEAD_TOKENS)
                    if len(first) < BASELINE_CALLS:
                        bisect.insort(first, v)
                        half = len(first) // 2
                        base = first[half] if len(first) % 2 else (first[half - 1] + first[half]) / 2
        paces.append(v)
        bases.append(base)
        timed_upto.append(timed)
        final_upto.append(final)
    return _Series(
        rows=rows,
        window=window,
        cuts=cuts,
        use_seqs=sorted(t.seq for t in rows.tools),
        result_seqs=[t.result_seq or 0 for t in with_result],
        result_errors=[t.is_error for t in with_result],
        errors_before=errors_before,
        denied_before=denied_before,
        longest_before=longest,
        tool_turns_upto=turns,
        result_calls=[t.call_index for t in with_result],
        tools_by_call=by_call,
        call_seqs=[c.seq for c in rows.calls],
        bound_seqs=sorted(c.seq for c in rows.compactions),
        known_upto=list(itertools.accumulate(c.stop_reason is not None for c in rows.calls)),
        cutoff_calls=[k for k, c in enumerate(rows.calls) if c.stop_reason == "max_tokens"],
        paces=paces,
        timed_upto=timed_upto,
        final_upto=final_upto,
        pace_bases=bases,
        paced_upto=list(itertools.accumulate(v is not None for v in paces)),
        measured_at=_measured_at(rows.calls),
    )


def _measured_at(calls: list[MainCall]) -> list[int]:
    """Per call, the index of the last call up to it whose prompt was measured (`metrics.measured`), or -1."""
    out = []
    last = -1
    for k, c in enumerate(calls):
        if measured(c.prompt_tokens):
            last = k
        out.append(last)
    return out


def _signal(name: str, measure: float | Fraction | None, why: str, calls: list[int] | None = None) -> dict[str, Any]:
    """One signal's dict; `calls` are 0-based main-call indexes, written as call numbers from 1. An exact
    measure (a `Fraction`: the fill) is rounded half up from its exact value (`metrics.round_half_up`), as
    every view of the fill is."""
    spec = SIGNALS[name]
    severity = None if measure is None else curve(float(measure), spec)
    if isinstance(measure, Fraction):
        shown: float | None = round_half_up(measure, MEASURE_DECIMALS)
    else:
        shown = None if measure is None else round(measure, MEASURE_DECIMALS)
    return {
        "name": name,
        "severity": severity,
        "cap": spec.cap,
        "active": bool(severity),
        "measure": shown,
        "why": why,
        "calls": sorted({k + 1 for k in calls or []}) if severity else [],
    }


def _not_counted(denied: int) -> str:
    """The note that names refusals beside a failure count (the table's `failed` counts both)."""
    return f" (+{denied} denied, not counted)" if denied else ""


def _signals_after(s: _Series, i: int, detail: bool = True) -> list[dict[str, Any]]:
    """The eight signals as they stand after call `i` (0-based), with everything read before call i + 1.

    Each signal looks at a bounded window of calls or at prefix counts kept in `s`, so this is O(recent
    calls) per call and `worst` over a whole trace stays linear. Without `detail`, the texts and the lists
    of calls each signal points at (O(trace) to build) are left out: only `severity` is meant to be read.
    """
    calls: list[MainCall] = s.rows.calls
    cut = s.cuts[i]
    uses = bisect.bisect_left(s.use_seqs, cut)
    results = bisect.bisect_left(s.result_seqs, cut)
    errors = s.errors_before[results]
    out = []

    at = s.measured_at[i]  # the last call whose prompt was measured (usage read), -1 when none yet
    if at < 0:
        out.append(_signal("ctx_pressure", None, "no call's prompt size could be read (usage read as 0)"))
    else:
        fill = Fraction(calls[at].prompt_tokens, s.window)  # exact: rounded once, half up, where shown
        why = ""
        if detail:
            whose = "last call's" if at == i else f"call #{at + 1}'s (the last with readable usage)"
            why = f"{whose} prompt is {round_half_up(fill * 100):.0f}% of {s.window:,} tokens"
        out.append(_signal("ctx_pressure", fill, why, [at]))

    n_bounds = bisect.bisect_left(s.bound_seqs, cut)
    after = [min(bisect.bisect_left(s.call_seqs, b), i) for b in s.bound_seqs[:n_bounds]] if detail else []
    out.append(_signal("compaction_scar", n_bounds, f"{n_bounds} compaction{'' if n_bounds == 1 else 's'}", after))

    known = s.known_upto[i]
    n_cut = bisect.bisect_right(s.cutoff_calls, i)
    if known:
        why = f"{n_cut} call(s) stopped at max_tokens ({i + 1 - known} with no stop_reason)" if detail else ""
        out.append(_signal("truncation", n_cut, why, s.cutoff_calls[:n_cut] if detail else []))
    else:
        out.append(_signal("truncation", None, "no call records its stop_reason (streamed lines)"))

    length, end = s.longest_before[results]
    if results < SIGNALS["stuck"].minimum:
        out.append(_signal("stuck", None, f"{results} tool result(s): fewer than {SIGNALS['stuck'].minimum}"))
    else:
        streak = s.result_calls[end - length : end] if detail else []
        out.append(_signal("stuck", length, f"longest run of failed tool results: {length}", streak))

    out.append(_latency(s, i))

    lo = max(0, i - CLUSTER_CALLS + 1)
    window_tools = [t for k in range(lo, i + 1) for t in s.tools_by_call[k] if t.seq < cut]
    failed = [t for t in window_tools if t.is_error and t.result_seq is not None and t.result_seq < cut]
    need = SIGNALS["error_cluster"].minimum
    if len(window_tools) < need:
        why = f"{len(window_tools)} tool call(s) in the last {CLUSTER_CALLS} calls: fewer than {need}"
        out.append(_signal("error_cluster", None, why))
    else:
        rate = len(failed) / len(window_tools)
        why = ""
        if detail:
            denied = sum(1 for t in window_tools if t.denied and t.result_seq is not None and t.result_seq < cut)
            why = f"{len(failed)} of {len(window_tools)} tool calls failed in the last {CLUSTER_CALLS} calls"
            why += _not_counted(denied)
        out.append(_signal("error_cluster", rate, why, [t.call_index for t in failed]))

    turns = s.tool_turns_upto[i]
    need = SIGNALS["error_cumulative"].minimum
    if turns < need:
        out.append(_signal("error_cumulative", None, f"{turns} call(s) used a tool: fewer than {need}"))
    else:
        rate = errors / uses if uses else 0.0
        failed_calls = [s.result_calls[r] for r in range(results) if s.result_errors[r]] if detail else []
        why = f"{errors} of {uses} tool calls failed{_not_counted(s.denied_before[results])}"
        out.append(_signal("error_cumulative", rate, why, failed_calls))

    out.append(_cache(calls, i))
    return out


def _worst(s: _Series) -> tuple[float, int, list[str]]:
    """The worst score after any call, the first call that reached it, and the names of the signals
    active then, highest severity first (`weather_of`'s `worst`: as `_signals_after` orders them)."""
    severities = _severity_lists(s)
    scores = _composed(list(severities.values()))
    best = max(scores)
    at = scores.index(best)
    # stable: signals of equal severity keep the spec's order, as sorting `_signals_after`'s list does
    ranked = sorted(severities.items(), key=lambda kv: -kv[1][at])
    return best, at, [name for name, sev in ranked if sev[at]]


def _scores(s: _Series) -> list[float]:
    """The score after each call (0-based call order), as `compose` of the severities of
    `_signals_after(s, i, detail=False)` that are not None (`_severity_lists`, `_composed`)."""
    return _composed(list(_severity_lists(s).values()))


def _severity_lists(s: _Series) -> dict[str, list[float]]:
    """Each signal's severity after every call (0-based call order), by name in the spec's order: the
    severities of `_signals_after(s, i, detail=False)`, the same measures through the same `curve`, from
    per-trace arrays instead of the eight dicts; an abstaining signal is 0.0 there.

    A signal whose severity is 0 after every call, whatever its measures, is left out before any is
    computed: a count signal whose table gives 0 for every count the trace reaches (no compaction, no
    max_tokens stop, no run of 10 failed results), error_cluster and error_cumulative without a failed
    result, cache_health without a hit below the fraction from which its severity is 0, latency_drift
    without a timed call. Every severity is at least 0, so a 0 never changes the two highest `compose`
    keeps, nor is it active. Most traces keep one or two signals. Linear in the calls (each window is a
    constant size).
    """
    lists = {
        "ctx_pressure": _ctx_severities(s),
        "compaction_scar": _compaction_severities(s),
        "truncation": _truncation_severities(s),
        "stuck": _stuck_severities(s),
        "latency_drift": _latency_severities(s),
        "error_cluster": _cluster_severities(s),
        "error_cumulative": _cumulative_severities(s),
        "cache_health": _cache_severities(s),
    }
    return {name: sev for name, sev in lists.items() if sev is not None}


def _composed(series: list[list[float]]) -> list[float]:
    """`compose` after each call of the severity lists given (each at least 0): the highest plus
    `SECOND_WEIGHT` × the second highest, rounded to `SCORE_DECIMALS`."""
    weight, decimals = SECOND_WEIGHT, SCORE_DECIMALS
    if len(series) == 1:
        return [round(top + weight * 0.0, decimals) for top in series[0]]
    if len(series) == 2:
        return [round(a + weight * b if a >= b else b + weight * a, decimals) for a, b in zip(*series, strict=True)]
    out = []
    for sevs in zip(*series, strict=True):
        *_, second, top = sorted(sevs)  # the two highest (`compose`)
        out.append(round(top + weight * second, decimals))
    return out


def _ctx_severities(s: _Series) -> list[float]:
    """ctx_pressure after each call: `curve` of the last measured call's fill, its two-anchor arithmetic
    written out; 0.0 before any measured call (the signal abstains)."""
    (x0, y0), (x1, y1) = _CTX.anchors
    calls, window, cap, decimals = s.rows.calls, s.window, _CTX.cap, SCORE_DECIMALS
    fills = [calls[k].prompt_tokens / window if k >= 0 else None for k in s.measured_at]
    return [
        0.0 if m is None
        else round(min(y0 if m <= x0 else y1 if m >= x1 else y0 + (y1 - y0) * (m - x0) / (x1 - x0), cap), decimals)
        for m in fills
    ]  # fmt: skip


def _by_count(spec: SignalSpec, most: int) -> list[float] | None:
    """A count signal's severity for each count 0 … `most`; None when the table gives 0 for all of them."""
    by_count = [curve(n, spec) for n in range(most + 1)]
    return by_count if any(by_count) else None


def _compaction_severities(s: _Series) -> list[float] | None:
    """compaction_scar after each call: the compactions read so far."""
    by_count = _by_count(_SCAR, len(s.bound_seqs))
    if by_count is None:
        return None
    return [by_count[bisect.bisect_left(s.bound_seqs, cut)] for cut in s.cuts]


def _truncation_severities(s: _Series) -> list[float] | None:
    """truncation after each call: calls so far that stopped at max_tokens; 0.0 (abstains) until a call
    records its stop_reason."""
    cutoff = s.cutoff_calls
    by_count = _by_count(_TRUNC, len(cutoff))
    if by_count is None:
        return None
    return [by_count[bisect.bisect_right(cutoff, i)] if known else 0.0 for i, known in enumerate(s.known_upto)]


def _stuck_severities(s: _Series) -> list[float] | None:
    """stuck after each call: the longest run of failed results among those read then; 0.0 (abstains)
    with fewer results than its minimum."""
    by_count = _by_count(_STUCK, s.longest_before[-1][0])  # the longest run of all (a running maximum)
    if by_count is None:
        return None
    out = []
    for cut in s.cuts:
        results = bisect.bisect_left(s.result_seqs, cut)
        out.append(by_count[s.longest_before[results][0]] if results >= _STUCK.minimum else 0.0)
    return out


def _remembered(spec: SignalSpec) -> Callable[[float], float]:
    """`curve(measure, spec)`, remembered per measure for one trace: its rates repeat (0, 1/2, 1/3, ...)."""
    return functools.cache(lambda measure: curve(measure, spec))


def _cumulative_severities(s: _Series) -> list[float] | None:
    """error_cumulative after each call: failed results ÷ tool uses read so far, once enough calls used a
    tool; None without a failed result when a rate of 0 is severity 0."""
    errors_before = s.errors_before
    if not errors_before[-1] and _CUMULATIVE_ZERO_WITHOUT_FAILURES:
        return None
    severity = _remembered(_CUMULATIVE)
    out = []
    for cut, turns in zip(s.cuts, s.tool_turns_upto, strict=True):
        if turns < _CUMULATIVE.minimum:
            out.append(0.0)
            continue
        r = bisect.bisect_left(s.result_seqs, cut)
        uses = bisect.bisect_left(s.use_seqs, cut)
        measure = errors_before[r] / uses if uses else 0.0
        out.append(severity(measure))
    return out


def _cluster_severities(s: _Series) -> list[float] | None:
    """error_cluster after each call (see `_signals_after`): failed ÷ tool calls of the last
    `CLUSTER_CALLS` calls; a window with no failed result is 0.0 without being counted (its rate is 0),
    and the signal is None when no call has one."""
    # each call's tool calls as (seq, seq of a failed result or None)
    asked = [
        [(t.seq, t.result_seq if t.is_error and t.result_seq is not None else None) for t in tools]
        for tools in s.tools_by_call
    ]
    failed_upto = [0, *itertools.accumulate(any(at is not None for _, at in tools) for tools in asked)]
    if not failed_upto[-1] and _CLUSTER_ZERO_WITHOUT_FAILURES:
        return None
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


def _cache_severities(s: _Series) -> list[float] | None:
    """cache_health after each call (see `_cache`): the median (`statistics.median`) of the recent
    cache-hit fractions; a window with no hit below the fraction from which the severity is 0 is 0.0
    without a median, and the signal is None when no call has such a hit."""
    hits = [
        c.cache_read_tokens / c.prompt_tokens if c.prompt_tokens >= CACHE_MIN_PROMPT_TOKENS else None
        for c in s.rows.calls
    ]
    low_hit = _CACHE_ZERO_FROM if _CACHE_ZERO_FROM is not None else float("inf")
    low_upto = [0, *itertools.accumulate(h is not None and h < low_hit for h in hits)]
    if not low_upto[-1]:
        return None
    severity = _remembered(_CACHE)
    out = []
    for i in range(len(hits)):
        first = max(CACHE_SKIP_CALLS, i + 1 - RECENT_CALLS)
        low = first <= i and low_upto[i + 1] > low_upto[first]
        picked = [h for h in hits[first : i + 1] if h is not None] if low else []
        if len(picked) < _CACHE.minimum:
            out.append(0.0)
            continue
        picked.sort()
        half = len(picked) // 2
        measure = picked[half] if len(picked) % 2 else (picked[half - 1] + picked[half]) / 2
        out.append(severity(measure))
    return out


def _latency_severities(s: _Series) -> list[float] | None:
    """latency_drift after each call (see `_latency`): p75 of the recent paces over the trace's own pace
    baseline when the window is judged by pace, else p75 of the recent latencies (`percentile`) over the
    model's baseline (looked up once per model); None without a timed call (it abstains throughout).

    `recent` and `recent_paces` are kept sorted as the window moves (`bisect.insort` in, one deletion
    out). A raw window with no latency above the lowest baseline of the trace's models is 0.0 without a
    percentile (p75 / baseline <= 1: severity 0).
    """
    calls = s.rows.calls
    if not s.timed_upto[-1]:
        return None
    latencies = [None if c.latency_ms is None else float(c.latency_ms) for c in calls]
    baselines: dict[str | None, float] = {}
    for model in dict.fromkeys(c.model for c in calls):  # (`_latency`'s baseline of each model)
        base = baseline_ms(model)
        if base is None:
            own = [c.latency_ms for c in calls[:BASELINE_CALLS] if c.latency_ms is not None]
            base = float(statistics.median(own)) if own else 0.0
        baselines[model] = base
    lowest = min(baselines.values()) if _LATENCY_ZERO_UP_TO_BASELINE else -1.0
    slow_upto = [0, *itertools.accumulate(v is not None and v > lowest for v in latencies)]
    paces, pace_bases, timed_upto, final_upto = s.paces, s.pace_bases, s.timed_upto, s.final_upto
    insort, bisect_left, need = bisect.insort, bisect.bisect_left, _LATENCY.minimum
    severity = _remembered(_LATENCY)
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
        start = max(0, i - RECENT_CALLS + 1)
        timed = timed_upto[i + 1] - timed_upto[start]
        if timed and final_upto[i + 1] - final_upto[start] >= PACE_MODE_SHARE * timed:  # `_pace_mode`
            if len(recent_paces) < need:
                out.append(0.0)
                continue
            base = pace_bases[i]
            measure = quantile_of_sorted(recent_paces, 0.75) / base if base is not None and base > 0 else 0.0
        elif len(recent) >= need and slow_upto[i + 1] > slow_upto[start]:
            base = baselines[calls[i].model]
            measure = quantile_of_sorted(recent, 0.75) / base if base > 0 else 0.0
        else:
            out.append(0.0)
            continue
        out.append(severity(measure))
    return out


#: When the skips of `_worst` hold (derived from the table, so a changed curve turns them off): latency_drift
#: is 0 for p75 / baseline <= 1, error_cluster and error_cumulative are 0 at a rate of 0, cache_health is 0 from
#: this hit on.
_LATENCY_ZERO_UP_TO_BASELINE = SIGNALS["latency_drift"].anchors[0] == (1.0, 0.0)
_CLUSTER_ZERO_WITHOUT_FAILURES = curve(0.0, SIGNALS["error_cluster"]) == 0.0
_CUMULATIVE_ZERO_WITHOUT_FAILURES = curve(0.0, SIGNALS["error_cumulative"]) == 0.0
_CACHE_ZERO_FROM = SIGNALS["cache_health"].anchors[-1][0] if SIGNALS["cache_health"].anchors[-1][1] == 0.0 else None

_CTX, _SCAR, _TRUNC, _STUCK = (
    SIGNALS["ctx_pressure"],
    SIGNALS["compaction_scar"],
    SIGNALS["truncation"],
    SIGNALS["stuck"],
)
_LATENCY, _CLUSTER, _CUMULATIVE = SIGNALS["latency_drift"], SIGNALS["error_cluster"], SIGNALS["error_cumulative"]
_CACHE = SIGNALS["cache_health"]


def _cache(calls: list[MainCall], i: int) -> dict[str, Any]:
    start = max(CACHE_SKIP_CALLS, i + 1 - RECENT_CALLS)
    picked = [
        (k, calls[k].cache_read_tokens / calls[k].prompt_tokens)
        for k in range(start, i + 1)
        if calls[k].prompt_tokens >= CACHE_MIN_PROMPT_TOKENS
    ]
    need = SIGNALS["cache_health"].minimum
    if len(picked) < need:
        return _signal("cache_health", None, f"{len(picked)} qualifying call(s): fewer than {need}")
    hit = statistics.median(h for _, h in picked)
    low = [k for k, h in picked if h < SIGNALS["cache_health"].anchors[-1][0]]
    return _signal("cache_health", hit, f"median cache hit {hit:.0%} over calls #{start + 1}–#{i + 1}", low)


def _pace_mode(s: _Series, lo: int, i: int) -> bool:
    """Whether latency_drift judges calls lo … i by pace (`PACE_MODE_SHARE`)."""
    timed = s.timed_upto[i + 1] - s.timed_upto[lo]
    return timed > 0 and s.final_upto[i + 1] - s.final_upto[lo] >= PACE_MODE_SHARE * timed


def _latency(s: _Series, i: int) -> dict[str, Any]:
    """latency_drift after call `i`: when the last `RECENT_CALLS` calls mostly have final outputs
    (`_pace_mode`), their pace (`pace`) against the trace's own first paced calls; else raw latency
    against the model's table baseline (spec 002)."""
    calls = s.rows.calls
    lo = max(0, i - RECENT_CALLS + 1)
    need = SIGNALS["latency_drift"].minimum
    if _pace_mode(s, lo, i):
        paced = [(k, v) for k in range(lo, i + 1) if (v := s.paces[k]) is not None]
        if len(paced) < need:
            why = f"{len(paced)} call(s) with a final output count among the last {RECENT_CALLS}: fewer than {need}"
            return _signal("latency_drift", None, why)
        base = s.pace_bases[i]
        p75 = percentile([v for _, v in paced], 0.75)
        ratio = p75 / base if base is not None and base > 0 else 0.0
        first = min(BASELINE_CALLS, s.paced_upto[i])
        why = (
            f"p75 {p75:.1f} vs {base or 0:.1f} ms per output token, {PACE_OVERHEAD_TOKENS} added for the "
            f"first-token wait (baseline: median of this trace's first {first} calls with a final output count)"
        )
        return _signal("latency_drift", ratio, why, [k for k, v in paced if v >= p75])
    recent = [(k, calls[k].latency_ms) for k in range(lo, i + 1) if calls[k].latency_ms is not None]
    if len(recent) < need:
        why = f"{len(recent)} timed call(s): fewer than {need}" if recent else "no timestamps to time calls by"
        return _signal("latency_drift", None, why)
    model = calls[i].model
    base = baseline_ms(model)
    source = f"table baseline for {model}"
    if base is None:
        own = [c.latency_ms for c in calls[:BASELINE_CALLS] if c.latency_ms is not None]
        base = float(statistics.median(own)) if own else 0.0
        source = f"median of this trace's first {BASELINE_CALLS} calls (model not in the table)"
    timed = [(k, float(v)) for k, v in recent if v is not None]
    p75 = percentile([v for _, v in timed], 0.75)
    ratio = p75 / base if base > 0 else 0.0
    slow = [k for k, v in timed if v >= p75]
    why = f"p75 {p75 / 1000:.1f}s vs {base / 1000:.1f}s per call ({source})"
    return _signal("latency_drift", ratio, why, slow)


def _stats(signals: dict[str, dict[str, Any]], s: _Series, i: int) -> dict[str, Any]:
    results = bisect.bisect_left(s.result_seqs, s.cuts[i])
    return {
        "context_fill_frac": signals["ctx_pressure"]["measure"],
        "tool_errors": s.errors_before[results],
        "tool_denials": s.denied_before[results],
        "cache_hit_frac": signals["cache_health"]["measure"],
        "latency_ratio": signals["latency_drift"]["measure"],
        "compactions": signals["compaction_scar"]["measure"],
    }


def weather_report(trace: Trace, window: int | None = None) -> dict[str, Any]:
    """Compute the `weather` object of a trace's JSON (spec 002 with the decisions of issues 3 and 10).

    Parameters
    ----------
    trace
        A trace from `reader.read_trace`.
    window
        `--window` in tokens, or None (then `metrics.window_choice` decides); used by ctx_pressure.

    Returns
    -------
    dict
        `level` (sunny/fair/cloudy/rainy/stormy), `emoji`, `score` (0–1.3), `reason` (None; or why there
        is no weather: `NO_CALL_REASON`, and then `level`, `emoji`, `score` and `worst` are None),
        `signals` (the eight, in the spec's order: `name`, `severity` (None when the signal abstains),
        `cap`, `active`, `measure` (4 decimals), `why`, `calls` (numbers, from 1, of the main-thread
        calls it points at, as `--calls` numbers them)), `factors` (the active signals, highest severity
        first: `name`, `severity`, `why`, `calls`), `stats` (`context_fill_frac`, `tool_errors`,
        `tool_denials` (refusals, never counted as errors), `cache_hit_frac`, `latency_ratio`,
        `compactions`) and `worst` (`level`, `emoji`, `score`, `call`: the worst weather after any
        call and the number, from 1, of the first call that reached it; `factors`: the names of the
        signals active then, highest severity first). All exact from the trace's
        fields except latency (≈: line timestamps, ms) and its baselines.

    Raises
    ------
    statistics.StatisticsError
        Never in practice: a median is only taken over a non-empty list.
    """
    return weather_of(session_rows(trace), window_choice(trace, window).tokens)


def weather_of(rows: SessionRows, window: int) -> dict[str, Any]:
    """Compute the weather of session rows against a window (see `weather_report` for the shape).

    Examples
    --------
    >>> from contexttrace.analysis.health import AXIS_CALLS
    >>> rows = SessionRows([MainCall(1, 170_000, 0, "max_tokens", "m", None)], [], [], {}, AXIS_CALLS)
    >>> w = weather_of(rows, 200_000)
    >>> w["level"], w["score"], [f["name"] for f in w["factors"]], w["worst"]["call"]
    ('rainy', 0.9, ['ctx_pressure', 'truncation'], 1)
    >>> w = weather_of(SessionRows([], [], [], {}, AXIS_CALLS), 200_000)
    >>> w["level"], w["emoji"], w["score"], w["reason"]
    (None, None, None, 'no model call: no weather')
    """
    if not rows.calls:
        return {
            "level": None,
            "emoji": None,
            "score": None,
            "reason": NO_CALL_REASON,
            "signals": [_signal(name, None, "no model call") for name in SIGNALS],
            "factors": [],
            "stats": dict.fromkeys(STAT_KEYS),
            "worst": None,
        }
    s = _series(rows, window)
    worst = _worst(s)
    last = len(rows.calls) - 1
    signals = _signals_after(s, last)
    score = compose([x["severity"] for x in signals if x["severity"] is not None])
    level, emoji = weather_level(score)
    factors = sorted((x for x in signals if x["active"]), key=lambda x: -x["severity"])
    worst_level, worst_emoji = weather_level(worst[0])
    return {
        "level": level,
        "emoji": emoji,
        "score": score,
        "reason": None,
        "signals": signals,
        "factors": [{k: f[k] for k in ("name", "severity", "why", "calls")} for f in factors],
        "stats": _stats({x["name"]: x for x in signals}, s, last),
        "worst": {
            "level": worst_level,
            "emoji": worst_emoji,
            "score": worst[0],
            "call": worst[1] + 1,
            "factors": worst[2],
        },
    }
