"""Spec 002's rules as data: the eight weather signals' caps, curves and minimums, and how severities compose.

Everything here is a function of a few numbers (a measure, a list of severities, one call); reading the
signals off a session is `weather_series`'s job, the score after every call `weather_worst`'s, the level
and the `weather` object `weather`'s. Severity curves, caps and minimums are the spec's: between the
spec's anchor points a severity is linear, and outside them it is held at the nearest anchor. Where we
depart from the spec (latency judged by pace when outputs are known, so extended thinking is not
slowness), docs/health-weather.md says why.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from contexttrace.analysis.metrics import measured
from contexttrace.analysis.session import MainCall
from contexttrace.reading.contract import PROVIDER_ANTHROPIC, PROVIDER_GOOGLE, PROVIDER_OPENAI

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
#: cache_health applies to Anthropic entries only, or to entries that do not state their provider (spec 002's
#: "Provider scope": other APIs' usage counts cached tokens differently); any other provider is skipped.
CACHE_PROVIDERS = frozenset({PROVIDER_ANTHROPIC, None})
#: The providers' names as a skipped cache_health's reason writes them.
PROVIDER_NAMES = {PROVIDER_OPENAI: "OpenAI", PROVIDER_GOOGLE: "Google"}
#: latency_drift's own baselines: the median over the trace's own first this-many calls (of latency
#: for a model not in the table; of pace, below).
BASELINE_CALLS = 10
#: latency_drift compares *pace* when it can: extended thinking writes its thinking as output tokens,
#: so a thinking call is slower in proportion, and raw latency against the model's table baseline would
#: make every thinking session stormy. A call's latency is a wait for the first token plus a time per output
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

#: Per-model baseline latency of one main-thread call, ms (from the line before the call to its last
#: line). Source of every entry: the median over the main-thread calls of the real transcripts bundled in
#: samples/ (see samples/PROVENANCE.md), recomputed by tests/analysis/test_weather.py. Model ids are matched after
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


def cache_skipped_why(provider: str | None) -> str | None:
    """Return why cache_health is skipped for a session's provider, or None when it applies.

    Parameters
    ----------
    provider
        The API whose usage the calls carry (`session.SessionRows.provider`), None when not stated.

    Returns
    -------
    str or None
        None for Anthropic or an unstated provider (`CACHE_PROVIDERS`); else one sentence naming the
        provider and spec 002's rule.

    Examples
    --------
    >>> cache_skipped_why("anthropic") is None, cache_skipped_why(None) is None
    (True, True)
    >>> cache_skipped_why("openai")
    'OpenAI usage: spec 002 scores cache health on Anthropic entries only (other APIs count cached tokens differently)'
    """
    if provider in CACHE_PROVIDERS:
        return None
    name = PROVIDER_NAMES.get(provider or "", provider)
    rule = "spec 002 scores cache health on Anthropic entries only (other APIs count cached tokens differently)"
    return f"{name} usage: {rule}"


def curve(measure: float, spec: SignalSpec) -> float:
    """Map a measure to a severity: linear between the anchors, held at the end anchors, then capped.

    Returns
    -------
    float
        0 to `spec.cap`, rounded to 9 decimals (`SCORE_DECIMALS`) so that, for example, a fill of
        exactly 0.70 gives 0.5 and not 0.4999999999999999.

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
    return round_score(min(value, spec.cap))


def curve_of(spec: SignalSpec) -> Callable[[float], float]:
    """Return `curve` of one signal as a function of the measure alone, for loops that read it after every call.

    The anchors' differences are taken once and the segment found by bisection; each severity is the same
    float `curve(measure, spec)` gives (the same operations on the same values, in the same order: tests
    compare them).

    >>> curve_of(SIGNALS["error_cumulative"])(0.30) == curve(0.30, SIGNALS["error_cumulative"])
    True
    """
    points = spec.anchors
    xs = [x for x, _ in points]
    first_x, last_x = xs[0], xs[-1]
    first, last, cap = curve(first_x, spec), curve(last_x, spec), spec.cap
    # segments[i]: (y0, y1 - y0, x0, x1 - x0) between anchors i - 1 and i (`curve`'s terms)
    segments = [(0.0, 0.0, 0.0, 1.0)]
    segments += [(y0, y1 - y0, x0, x1 - x0) for (x0, y0), (x1, y1) in itertools.pairwise(points)]
    right = bisect.bisect_right

    def severity(measure: float) -> float:
        if measure <= first_x:
            return first
        if measure >= last_x:
            return last
        y0, dy, x0, dx = segments[right(xs, measure)]  # the first anchor past the measure
        value = y0 + dy * (measure - x0) / dx
        return round_score(value if value <= cap else cap)  # `min(value, cap)` without the call

    return severity


#: 10 ** SCORE_DECIMALS, exact as a float.
_SCORE_SCALE = 10.0**SCORE_DECIMALS
#: `round_score` reads x × `_SCORE_SCALE` as a float only below this: there the float is within 2 ** -15 of
#: the exact product (half an ulp of 2 ** 39), so a product read 0.4999 or nearer to an integer is nearer
#: than 1/2 to it exactly.
_SCORE_SHORTCUT_BELOW = float(2**39)


def round_score(x: float) -> float:
    """Return ``round(x, SCORE_DECIMALS)``, the same float, in fewer steps for the usual severity or score.

    `round` with digits converts to a decimal string and back. For 0 < x × 10**9 < 2**39 the product's float
    is within 2**-15 of the exact product; when its fraction is below 0.4999 (above 0.5001), the exact
    product is nearer than 1/2 to the integer r below (above) it, so r ÷ 10**9 is the decimal `round`
    keeps, and the float division (correctly rounded, r and 10**9 exact) is the float `round` reads back.
    The fraction, the integer and the division are float operations without a call. Zero is itself; other
    values (negatives, a product near a half, very large values) go to `round` itself. Exact:
    tests/analysis/test_weather_scores.py compares them on random and constructed values.

    >>> round_score(0.1 + 0.2), round_score(2 / 3), round_score(0.0)
    (0.3, 0.666666667, 0.0)
    """
    if not x:  # 0 (either sign) rounds to itself
        return x
    y = x * _SCORE_SCALE
    if 0.0 < y < _SCORE_SHORTCUT_BELOW:
        fraction = y % 1.0  # exact, and so is y - fraction, the integer below
        if fraction < 0.4999:
            return (y - fraction) / _SCORE_SCALE
        if fraction > 0.5001:
            return (y - fraction + 1.0) / _SCORE_SCALE
    return round(x, SCORE_DECIMALS)


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
    return round_score(top[0] + SECOND_WEIGHT * top[1])


def percentile(values: list[float], q: float) -> float:
    """Return the q-quantile (`q` 0–1) of a non-empty list of values.

    Returns
    -------
    float
        Linear interpolation between order statistics (numpy's default), in the values' unit. Raises
        IndexError on an empty list.

    Examples
    --------
    >>> percentile([1, 2, 3, 4, 5], 0.75), percentile([10, 20], 0.75)
    (4.0, 17.5)
    """
    return quantile_of_sorted(sorted(values), q)


def quantile_of_sorted(ordered: list[float], q: float) -> float:
    """Return `percentile(ordered, q)` of values already sorted ascending, without sorting them again.

    The windows of latency_drift keep their values sorted as they move. Raises IndexError on an empty list.

    >>> quantile_of_sorted([1, 2, 3, 4, 5], 0.75)
    4.0
    """
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def baseline_ms(model: str | None) -> float | None:
    """Return the table's baseline latency of a model, in ms per call (`LATENCY_BASELINE_MS`).

    The model id is matched after dropping a trailing date (``-20250929``). None when the table lacks the
    model or there is no model. ≈: medians of line timestamps in the bundled samples.

    >>> baseline_ms("claude-opus-4-6-20260101"), baseline_ms("other")
    (5568.0, None)
    """
    if not model:
        return None
    if model not in _BASELINES:  # each model id matched once (the table is fixed for the process)
        entry = LATENCY_BASELINE_MS.get(_DATE_SUFFIX.sub("", model))
        _BASELINES[model] = float(entry["ms"]) if entry else None
    return _BASELINES[model]


_BASELINES: dict[str, float | None] = {}


def pace(call: MainCall) -> float | None:
    """Return a call's pace: its latency ÷ (output tokens + `PACE_OVERHEAD_TOKENS`), in ms per token.

    None unless the call is timed, its `stop_reason` is recorded (without one, `output_tokens` may be a
    streaming snapshot, `metrics.output_is_lower_bound`) and its usage was read (a prompt of 0 is usage
    the reader could not read, `metrics.measured`: its output count is no count either). Thinking
    tokens are output tokens, so a call that thinks longer is not slower per token. ≈: line timestamps,
    ms.

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
