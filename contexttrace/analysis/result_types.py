"""The shapes of the `health` and `weather` objects of a trace, as they cross into reports and render.

Each is a `TypedDict`: a plain dict at runtime, so the JSON is exactly what the dict holds (keys in the
order the code writes them), while mypy checks every key a report or a renderer reads. The producers are
`health.health_of` (`HealthReport`) and `weather.weather_of` (`WeatherReport`); docs/health-weather.md
gives each key's meaning and source.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

# --- health (spec 000) ---------------------------------------------------------------------------------


class HealthSignal(TypedDict):
    """One of the five health signals of a graded trace, in spec order."""

    name: str  #: as spec 000 writes it ("Context Fill", ...)
    value: int | None  #: sub-score 0–100 (the spec's no-data value when `has_data` is False); None when ungraded
    weight: float  #: the spec's fixed weight, a fraction (0.4, 0.25, 0.15, 0.1, 0.1)
    has_data: bool  #: False when the spec's no-data value applied (no Read call, fewer than 4 tool calls, ...)
    grade: str | None  #: the sub-score's letter A–F
    measure: float | None  #: the figure scored: a 0–1 fill, a count or a ratio (4 decimals); None without one
    why: str  #: one sentence: what was measured, or which no-data value of the spec applied


class HealthGrade(TypedDict):
    """The grade of a session's rows (`health.health_grade`): every value None when nothing is graded."""

    grade: str | None  #: A–F
    score: int | None  #: the composite rounded half up, 0–100
    reason: str | None  #: None when graded; else why not
    fill_percent: float | None  #: latest measured prompt ÷ window × 100, 2 decimals
    compaction_count: int | None
    reread_ratio: float | None  #: re-reads ÷ file reads, 4 decimals
    error_acceleration: float | None  #: second-half ÷ first-half tool error rate, 4 decimals
    tool_efficiency: float | None  #: second-half ÷ first-half productive share, 4 decimals
    signals: list[HealthSignal]


class TimelinePoint(TypedDict):
    """The grade of the session up to one of its 21 points (every 5 %), as `health.health_timeline` gives it.

    A point on the ``"time"`` axis carries `ts_ms`, one on the ``"calls"`` axis `calls`; never both.
    """

    percent: int  #: 0, 5, … 100
    score: int | None  #: None before the first model call
    grade: str | None
    compactions: int  #: compactions counted up to this point
    ts_ms: NotRequired[int]  #: the point's moment, Unix epoch ms (time axis)
    calls: NotRequired[int]  #: main calls counted up to this point (calls axis)


class CompactionMark(TypedDict):
    """Where a compaction falls on the health timeline."""

    trigger: str | None  #: "auto" / "manual" as the harness wrote it
    pre_tokens: int | None  #: as the harness wrote it (metadata only)
    next_call: int | None  #: number, from 1, of the first main call after it; None when none follows
    percent: int  #: the first timeline percent that counts it


class HealthReport(HealthGrade):
    """The `health` object of a trace's JSON (`health.health_of`): the grade, its window and timeline."""

    window: int  #: tokens (`window.window_choice`)
    window_source: str  #: "option", "modelUsage", "model [1m]", "default" or "peak"
    timeline: list[TimelinePoint]  #: 21 points; empty when nothing is graded
    timeline_axis: str  #: "time" or "calls"
    compactions: list[CompactionMark]


# --- weather (spec 002) --------------------------------------------------------------------------------


class WeatherSignal(TypedDict):
    """One of the eight weather signals as it stands after the last call, in spec order."""

    name: str  #: as spec 002 names it ("ctx_pressure", ...)
    severity: float | None  #: 0–cap; None when the signal abstains
    cap: float
    active: bool  #: severity above 0
    measure: float | None  #: the figure its curve read (4 decimals)
    why: str
    calls: list[int]  #: numbers, from 1, of the main calls it points at (empty when not active)


class WeatherFactor(TypedDict):
    """An active weather signal, as the factors list repeats it (highest severity first)."""

    name: str
    severity: float | None
    why: str
    calls: list[int]


class WeatherStats(TypedDict):
    """The tooltip's figures (spec 002's stats), each None when unknown."""

    context_fill_frac: float | None  #: ctx_pressure's measure
    tool_errors: int | None  #: failed tool results read so far (refusals apart)
    tool_denials: int | None  #: refused tool calls (never counted as errors)
    cache_hit_frac: float | None  #: cache_health's measure
    latency_ratio: float | None  #: latency_drift's measure
    compactions: int | None  #: compactions read by then (compaction_scar's measure)


class WorstWeather(TypedDict):
    """The worst weather after any call."""

    level: str
    emoji: str
    score: float
    call: int  #: number, from 1, of the first call that reached it
    factors: list[str]  #: names of the signals active then, highest severity first


class WeatherReport(TypedDict):
    """The `weather` object of a trace's JSON (`weather.weather_of`); `level`, `emoji`, `score` and
    `worst` are None (and `reason` says why) for a trace without a model call."""

    level: str | None  #: sunny, fair, cloudy, rainy, stormy
    emoji: str | None
    score: float | None  #: 0–1.3
    reason: str | None
    signals: list[WeatherSignal]
    factors: list[WeatherFactor]
    stats: WeatherStats
    worst: WorstWeather | None
