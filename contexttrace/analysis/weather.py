"""Session Weather (spec 002): eight signals → severities → one score → sunny … stormy.

This module levels a score and assembles the `weather` object of a trace's JSON
(`result_types.WeatherReport`). The signals' table and curves are in `weather_signals`, their reading after
one call in `weather_series`, the score after every call in `weather_worst`. Weather is given as it stands
after the last call, and `worst` is the worst it stood after any call. Only the signals that do not
abstain are composed. A trace without a model call has no weather. Pure: nothing here reads files, prints
or formats numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contexttrace.analysis.result_types import WeatherFactor, WeatherReport, WeatherStats, WorstWeather
from contexttrace.analysis.session import SessionRows, session_rows
from contexttrace.analysis.weather_series import signal_series, signals_after, weather_signal, weather_stats
from contexttrace.analysis.weather_signals import SIGNALS, compose
from contexttrace.analysis.weather_worst import worst_weather
from contexttrace.analysis.window import window_choice

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

#: `reason` of a trace without a main-thread model call (every weather field then null).
NO_CALL_REASON = "no model call: no weather"


def weather_level(score: float) -> tuple[str, str]:
    """Return the level of a weather score (0–1.3).

    Returns
    -------
    (str, str)
        (level, emoji): sunny below 0.35, fair below 0.55, cloudy below 0.75, rainy below 0.95, else
        stormy (edges exclusive, as the spec's ``<``).

    Examples
    --------
    >>> weather_level(0.3499), weather_level(0.35), weather_level(0.95)
    (('sunny', '☀️'), ('fair', '🌤️'), ('stormy', '⛈️'))
    """
    for edge, level, emoji in WEATHER_LEVELS:
        if score < edge:
            return level, emoji
    return STORMY


def weather_report(trace: Trace, window: int | None = None) -> WeatherReport:
    """Compute the `weather` object of a trace's JSON (spec 002 with the decisions in docs/health-weather.md).

    Parameters
    ----------
    trace
        A trace from `reading.read_trace`.
    window
        `--window` in tokens, or None (then `window.window_choice` decides); used by ctx_pressure.

    Returns
    -------
    WeatherReport
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


def weather_of(rows: SessionRows, window: int) -> WeatherReport:
    """Compute the weather of session rows against a window (see `weather_report` for the shape).

    Parameters
    ----------
    rows
        From `session.session_rows` or `session.session_rows_of` (shared with health).
    window
        The effective context window in tokens, > 0.

    Returns
    -------
    WeatherReport
        The same shape as `weather_report`.

    Examples
    --------
    >>> from contexttrace.analysis.session import AXIS_CALLS, MainCall
    >>> rows = SessionRows([MainCall(1, 170_000, 0, "max_tokens", "m", None)], [], [], {}, AXIS_CALLS)
    >>> w = weather_of(rows, 200_000)
    >>> w["level"], w["score"], [f["name"] for f in w["factors"]], w["worst"]["call"]
    ('rainy', 0.9, ['ctx_pressure', 'truncation'], 1)
    >>> w = weather_of(SessionRows([], [], [], {}, AXIS_CALLS), 200_000)
    >>> w["level"], w["emoji"], w["score"], w["reason"]
    (None, None, None, 'no model call: no weather')
    """
    if not rows.calls:
        return WeatherReport(
            level=None,
            emoji=None,
            score=None,
            reason=NO_CALL_REASON,
            signals=[weather_signal(name, None, "no model call") for name in SIGNALS],
            factors=[],
            stats=WeatherStats(
                context_fill_frac=None,
                tool_errors=None,
                tool_denials=None,
                cache_hit_frac=None,
                latency_ratio=None,
                compactions=None,
            ),
            worst=None,
        )
    s = signal_series(rows, window)
    best, at, worst_factors = worst_weather(s)
    last = len(rows.calls) - 1
    signals = signals_after(s, last)
    score = compose([sev for x in signals if (sev := x["severity"]) is not None])
    level, emoji = weather_level(score)
    # the active signals (severity above 0), highest first; a stable sort keeps the spec's order at a tie. Dict
    # displays in `WeatherFactor`'s, `WorstWeather`'s and `WeatherReport`'s key order (the TypedDicts called
    # with keywords build the same dicts, slower).
    factors: list[WeatherFactor] = [
        {"name": x["name"], "severity": x["severity"], "why": x["why"], "calls": x["calls"]}
        for x in signals
        if x["active"]
    ]
    if len(factors) > 1:
        factors.sort(key=_descending_severity)
    worst_level, worst_emoji = weather_level(best)
    worst: WorstWeather = {"level": worst_level, "emoji": worst_emoji, "score": best, "call": at + 1,
                           "factors": worst_factors}  # fmt: skip
    return {"level": level, "emoji": emoji, "score": score, "reason": None, "signals": signals, "factors": factors,
            "stats": weather_stats(signals, s, last), "worst": worst}  # fmt: skip


def _descending_severity(factor: WeatherFactor) -> float:
    """The sort key that puts the highest severity first."""
    return -(factor["severity"] or 0.0)
