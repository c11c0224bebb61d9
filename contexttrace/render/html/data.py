"""The data of `context report`'s HTML page: pure, no HTML and no chart library.

`build_page` turns a run of `section.TraceSection`s into one dict: everything the template
(`templates/report.html.j2`) and the chart specs (`charts`) draw, as plain values: the index of the
traces, and per trace its header, gauges, health, weather, largest results, notes and panels.

Chart data are **columnar** (`{"column": [values, ...]}` per dataset): a page for 200 sessions holds
every call of every session, and rows would repeat each key per value (the page's script zips the
columns into rows when it draws a chart). `rows_of` does the same here for tests and readers.

What it must not do: import jinja2, altair or vl-convert (`context report` imports this module before it
knows the extra is installed), print, or put a string from a trace anywhere but into data (never into a
chart spec's expressions, an id or an href): escaping is the template's (autoescaped) and the page
script's (JSON in a `<script type="application/json">`) job.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from contexttrace.render.diagnostics import left_out_line
from contexttrace.render.explain import (
    call_numbers,
    exact_fill,
    factor_name,
    signal_name,
    weather_stats,
    window_words,
)
from contexttrace.render.html.growth import NO_GRADE_COLOR, compaction_detail, compaction_label, grade_color, utc_text
from contexttrace.render.html.index import index_columns, index_datasets, index_groups, trace_labels
from contexttrace.render.html.section import TraceSection
from contexttrace.render.text import fmt_decimal, fmt_duration, fmt_int, fmt_percent, fmt_usd
from contexttrace.render.trace import failed_cell
from contexttrace.reports.results import RunResult, TraceReport
from contexttrace.version import __version__

#: The context gauge's bands (spec 003): cyan up to 60 %, amber up to 85 %, red above; a warning from 85 %.
GAUGE_BANDS: tuple[tuple[float, str, str], ...] = (
    (0.60, "cyan", "#89dceb"),
    (0.85, "amber", "#fab387"),
    (math.inf, "red", "#f38ba8"),
)
GAUGE_WARN_FRACTION = 0.85
#: The gauge is a 270° arc (from 135° to 405°, clockwise from the x axis), radius and stroke in px.
GAUGE_SWEEP_DEG = 270.0
GAUGE_START_DEG = 135.0
GAUGE_RADIUS = 42.0
GAUGE_CENTER = 50.0

#: The index's sparkline: at most this many buckets, each kept as its minimum and maximum (in order).
SPARK_BUCKETS = 40
SPARK_WIDTH, SPARK_HEIGHT = 90, 24

#: What the page writes for a figure that is not known.
MISSING = "–"


def gauge(tokens: int | None, window: int | None, label: str) -> dict[str, Any]:
    """Spec 003's context gauge for `tokens` of `window`: the arc's SVG path, its colour, the percentage.

    Returns
    -------
    dict
        `label`, `fraction` (None without a window or tokens), `percent` (text: "53%", "112%", "–"),
        `band` (cyan / amber / red), `color`, `track` and `arc` (SVG path data in a 100×100 box; the arc
        stops at 100 % even when the fill is above it), `warn` (True from 85 %), `tokens`, `window` (text).

    Examples
    --------
    >>> g = gauge(170_000, 200_000, "peak")
    >>> g["percent"], g["band"], g["warn"]
    ('85%', 'red', True)
    >>> gauge(100_000, 200_000, "last call")["band"], gauge(None, 200_000, "x")["percent"]
    ('cyan', '–')
    """
    fraction = tokens / window if tokens is not None and window else None
    band, color = "none", NO_GRADE_COLOR
    if fraction is not None:
        band, color = next((name, c) for limit, name, c in GAUGE_BANDS if fraction < limit)
    shown = min(fraction or 0.0, 1.0)
    return {
        "label": label,
        "fraction": fraction,
        "percent": MISSING if fraction is None else fmt_percent(fraction),
        "band": band,
        "color": color,
        "track": _arc(1.0),
        "arc": _arc(shown) if shown > 0 else "",
        "warn": fraction is not None and fraction >= GAUGE_WARN_FRACTION,
        "tokens": fmt_int(tokens),
        "window": fmt_int(window),
    }


def _arc(fraction: float) -> str:
    """SVG path of the gauge arc from 0 to `fraction` (0–1) of its sweep."""
    r, c = GAUGE_RADIUS, GAUGE_CENTER
    a0 = math.radians(GAUGE_START_DEG)
    a1 = math.radians(GAUGE_START_DEG + GAUGE_SWEEP_DEG * fraction)
    x0, y0 = c + r * math.cos(a0), c + r * math.sin(a0)
    x1, y1 = c + r * math.cos(a1), c + r * math.sin(a1)
    large = 1 if GAUGE_SWEEP_DEG * fraction > 180 else 0
    return f"M {x0:.2f} {y0:.2f} A {r:.0f} {r:.0f} 0 {large} 1 {x1:.2f} {y1:.2f}"


def decimate(series: Sequence[int], buckets: int = SPARK_BUCKETS) -> list[tuple[int, int]]:
    """Shorten a series for the index: per bucket its minimum and maximum, in order, as (index, value).

    A series of at most ``2 × buckets`` values is kept whole. The first and last values and every
    bucket's extremes are kept, so the peak, the first call and each compaction's drop stay visible.

    Examples
    --------
    >>> decimate([5, 1, 9, 2], buckets=4)
    [(0, 5), (1, 1), (2, 9), (3, 2)]
    >>> pts = decimate(list(range(1000)), buckets=10)
    >>> len(pts) <= 20, pts[0], pts[-1]
    (True, (0, 0), (999, 999))
    """
    n = len(series)
    if n <= 2 * buckets:
        return list(enumerate(series))
    keep: set[int] = {0, n - 1}
    for b in range(buckets):
        lo, hi = b * n // buckets, (b + 1) * n // buckets
        part = range(lo, hi)
        keep.add(min(part, key=series.__getitem__))
        keep.add(max(part, key=series.__getitem__))
    return [(i, series[i]) for i in sorted(keep)]


def sparkline(series: Sequence[int]) -> str:
    """SVG polyline points of the index's sparkline (decimated, `SPARK_WIDTH` × `SPARK_HEIGHT`); "" if empty.

    >>> sparkline([0, 10])
    '0.0,24.0 90.0,0.0'
    """
    pts = decimate(series)
    if not pts:
        return ""
    top = max(v for _, v in pts) or 1
    last = max(len(series) - 1, 1)
    return " ".join(f"{i * SPARK_WIDTH / last:.1f},{SPARK_HEIGHT - v * SPARK_HEIGHT / top:.1f}" for i, v in pts)


def rows_of(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Zip a columnar dataset into rows (what the page's script does before drawing).

    >>> rows_of({"a": [1, 2], "b": ["x", "y"]})
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    keys = list(columns)
    return [dict(zip(keys, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def growth_spec_name(section: TraceSection, axis: str) -> str:
    """The growth-chart spec (`charts.chart_specs`) that draws this section on `axis`."""
    with_sub = "sub" if section.datasets["subagents"]["xc"] else "nosub"
    return f"growth_{axis}_{with_sub}"


#: A transcript is first drawn by call number when it was idle (gaps over 30 minutes) for more than this
#: share of its wall time: by time its calls would be squeezed into a few columns. The page can switch.
IDLE_SHARE_FOR_CALL_AXIS = 0.5


def chart_axes(section: TraceSection) -> tuple[list[str], str]:
    """The x axes the growth chart can be drawn on, and the one it is drawn on first.

    >>> from types import SimpleNamespace as NS
    >>> chart_axes(NS(axis="calls", report=NS(duration_ms=None, active_duration_ms=None)))
    (['calls'], 'calls')
    >>> chart_axes(NS(axis="time", report=NS(duration_ms=18_068_922, active_duration_ms=3_015_338)))
    (['time', 'calls'], 'calls')
    """
    if section.axis != "time":
        return ["calls"], "calls"
    wall, active = section.report.duration_ms, section.report.active_duration_ms
    idle = wall is not None and active is not None and wall > 0 and (wall - active) / wall > IDLE_SHARE_FOR_CALL_AXIS
    return ["time", "calls"], "calls" if idle else "time"


def _health_view(report: TraceReport) -> dict[str, Any]:
    """The health card: grade, score and colour, and spec 000's breakdown, one row per signal (its fixed
    weight, and `has_data` false where the spec's no-data value applied)."""
    h = report.extra.get("health") or {}
    signals = []
    for sig in h.get("signals") or []:
        grade = sig.get("grade")
        signals.append(
            {
                "name": signal_name(sig["name"]),
                "value": sig.get("value"),
                "grade": grade,
                "color": grade_color(grade),
                "has_data": bool(sig.get("has_data", True)),
                "weight": fmt_percent(sig["weight"]),
                "why": sig.get("why") or "",
            }
        )
    grade = h.get("grade")
    return {
        "grade": grade,
        "score": h.get("score"),
        "color": grade_color(grade),
        "reason": h.get("reason"),
        "title": f"Context Health: {grade} (score: {h.get('score')}/100)" if grade else "Context Health: not graded",
        "signals": signals,
        "window": fmt_int(h.get("window")),
        "window_source": window_words(h.get("window_source")),
        "axis": "time" if h.get("timeline_axis") == "time" else "calls",
    }


def _weather_view(report: TraceReport) -> dict[str, Any]:
    """The weather card: level and score, spec 002's stats (sunny, fair) or factors, the worst weather reached."""
    w = report.extra.get("weather") or {}
    level = w.get("level")
    stats = w.get("stats") or {}
    h = report.extra.get("health") or {}
    fill = exact_fill(report.prompt_tokens, h.get("window"))  # as weather's context pressure reads it
    stat_lines = weather_stats(stats, fill, missing=MISSING) if level in ("sunny", "fair") and stats else []
    factors = [
        {
            "name": factor_name(f["name"]),
            "severity": fmt_decimal(f["severity"], 2),
            "width": max(0.0, min(1.0, float(f["severity"]))) * 100,
            "why": f.get("why") or "",
            "calls": call_numbers(f.get("calls") or []),
        }
        for f in w.get("factors") or []
    ]
    look_at: list[int] = []
    for f in w.get("factors") or []:
        look_at.extend(c for c in f.get("calls") or [] if c not in look_at)
    worst = w.get("worst") or None
    return {
        "level": level,
        "emoji": w.get("emoji") or "",
        "score": fmt_decimal(w.get("score"), 2, missing=MISSING),
        "reason": w.get("reason"),
        "stats": stat_lines,
        "factors": factors,
        "look_at": call_numbers(sorted(look_at)),
        "worst": (
            {
                "emoji": worst["emoji"],
                "level": worst["level"],
                "score": fmt_decimal(worst["score"], 2),
                "call": worst.get("call"),
                "factors": ", ".join(factor_name(k) for k in worst.get("factors") or []),
            }
            if worst and worst.get("level") != level
            else None
        ),
        "idle": [
            {"name": factor_name(s["name"]), "why": s.get("why") or ""}
            for s in w.get("signals") or []
            if s.get("severity") is None
        ],
    }


def _duration_view(s: TraceSection) -> str:
    """The header's duration: wall time (and the active part when it differs), else the result line's."""
    r = s.report
    duration = fmt_duration(r.duration_ms, missing=MISSING)
    if r.active_duration_ms is not None and r.duration_ms is not None and r.active_duration_ms != r.duration_ms:
        duration += f" ({fmt_duration(r.active_duration_ms)} active)"
    elif r.duration_ms is None and s.reported_duration_ms is not None:
        duration = f"{fmt_duration(s.reported_duration_ms)} (the result line's)"
    return duration


def _section_notes(s: TraceSection) -> list[str]:
    """The notes under a trace's charts: what was not drawn, assumed or estimated, and the report's warnings."""
    r = s.report
    h = r.extra.get("health") or {}
    notes = list(s.notes)
    axes, first_axis = chart_axes(s)
    if len(axes) > 1 and first_axis == "calls":
        notes.append(
            f"drawn by call number first: the session was idle (gaps over 30 minutes) for "
            f"{fmt_duration((r.duration_ms or 0) - (r.active_duration_ms or 0))} of its "
            f"{fmt_duration(r.duration_ms, missing=MISSING)}; 'by time' redraws it on the clock"
        )
    if h.get("window_source") not in (None, "option"):
        window = h.get("window") or r.window
        notes.append(f"window {fmt_int(window)}: {window_words(h['window_source'])}")
    if s.threshold.get("tokens") and s.threshold.get("source") != "observed":
        notes.append(
            f"autocompact threshold ≈ {fmt_int(s.threshold['tokens'])}: window − 20,000 output reserve − 13,000 "
            "(no auto compaction observed)"
        )
    if r.spikes:
        notes.append(
            f"{len(r.spikes)} spike(s) (calls {call_numbers([k + 1 for k in r.spikes])}); "
            f"peak without them {fmt_int(r.peak_without_spikes)}"
        )
    if r.skipped_lines:
        notes.append(f"{fmt_int(r.skipped_lines)} line(s) skipped (see stderr)")
    notes.extend(f"warning: {w}" for w in r.warnings)
    if s.cost["lower_bound"] and s.cost["reasons"]:
        notes.append("cost is a lower bound: " + ", ".join(str(x) for x in s.cost["reasons"]))
    return notes


def _section_view(i: int, s: TraceSection) -> dict[str, Any]:
    """One trace's section of the page: header, gauges, health, weather, largest results, notes, panels."""
    r = s.report
    h = r.extra.get("health") or {}
    window = h.get("window") or r.window
    last = r.prompt_tokens[-1] if r.prompt_tokens else None
    largest_top = max((x["chars"] for x in r.largest_results), default=0) or 1
    return {
        "id": f"t{i + 1}",
        "index": i,
        "number": i + 1,
        "trace": r.trace,
        "path": r.path,
        "format": r.format,
        "session_id": r.session_id,
        "models": ", ".join(r.models) or MISSING,
        "cli_version": r.cli_version or MISSING,
        "start": f"{utc_text(s.start_ms)} UTC" if s.start_ms is not None else MISSING,
        "duration": _duration_view(s),
        "cost": s.cost["text"],
        "cost_reported": fmt_usd(s.cost["reported_usd"], estimate=False)
        if s.cost["reported_usd"] is not None
        else None,
        "calls": r.calls,
        "has_calls": bool(r.prompt_tokens),
        "axes": chart_axes(s)[0],
        "axis": chart_axes(s)[1],
        "gauges": [gauge(last, window, "last call"), gauge(r.peak if r.calls else None, window, "peak")],
        "health": _health_view(r),
        "weather": _weather_view(r),
        "largest": [
            {"tool": x["tool"], "chars": fmt_int(x["chars"]), "width": 100 * x["chars"] / largest_top}
            for x in r.largest_results
        ],
        "figures": _figures(r),
        "compactions": [{"label": compaction_label(e), "detail": compaction_detail(e)} for e in r.compaction_events],
        "subagent_calls": r.subagent_calls,
        "notes": _section_notes(s),
        "panels": s.panels,
    }


def _figures(r: TraceReport) -> list[tuple[str, str]]:
    """The `context trace` row of one trace, as (column, cell) pairs."""
    return [
        ("calls", fmt_int(r.calls)),
        ("first", fmt_int(r.first)),
        ("peak", fmt_int(r.peak)),
        ("fill", fmt_percent(r.fill) if r.fill is not None else MISSING),
        ("growth", fmt_int(r.growth)),
        ("compact", fmt_int(r.compact)),
        ("tools", fmt_int(r.tools)),
        ("failed", failed_cell(r.failed, r.denied)),
        ("repeated calls", fmt_int(r.repeat)),
        ("result chars", fmt_int(r.result_chars)),
        ("subagent calls", fmt_int(r.subagent_calls)),
    ]


def _index_row(i: int, s: TraceSection, short: str, condition: str | None) -> dict[str, Any]:
    """One trace's row of the index: its cells as `context trace` shows them, and the values to sort by."""
    r = s.report
    h = r.extra.get("health") or {}
    w = r.extra.get("weather") or {}
    window = h.get("window") or r.window
    fill = r.peak / window if window and r.calls else None
    return {
        "id": f"t{i + 1}",
        "number": i + 1,
        "trace": r.trace,
        "short": short,
        "title": s.title,
        "condition": condition,
        "group": None,
        "cells": {
            "calls": fmt_int(r.calls),
            "first": fmt_int(r.first),
            "peak": fmt_int(r.peak),
            "fill": fmt_percent(fill) if fill is not None else MISSING,
            "growth": fmt_int(r.growth),
            "compact": fmt_int(r.compact),
            "tools": fmt_int(r.tools),
            "failed": failed_cell(r.failed, r.denied),
            "repeat": fmt_int(r.repeat),
            "result_chars": fmt_int(r.result_chars),
            "cost": s.cost["text"],
        },
        "sort": {
            "trace": r.trace,
            "title": s.title or "",
            "condition": condition or "",
            "calls": r.calls,
            "first": r.first,
            "peak": r.peak,
            "fill": fill if fill is not None else -1,
            "growth": r.growth,
            "compact": r.compact,
            "tools": r.tools,
            "failed": r.failed,
            "repeat": r.repeat,
            "result_chars": r.result_chars,
            "health": h.get("score") if h.get("score") is not None else -1,
            "weather": w.get("score") if w.get("score") is not None else -1,
            "cost": s.cost["usd"] or 0,
        },
        "fill_window": f"of {fmt_int(window)}" if window else "",
        "health": _health_view(r),
        "weather": {"emoji": w.get("emoji") or "", "level": w.get("level"), "reason": w.get("reason")},
        "spark": sparkline(r.prompt_tokens),
    }


def build_page(
    run: RunResult,
    window: int | None = None,
    paths: Sequence[str] = (),
    generated_at: datetime | None = None,
    compare: dict[str, Any] | None = None,
    conditions: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Build everything the report page shows, as plain values (the template's context, charts' data).

    Parameters
    ----------
    run
        From `runner.analyze(..., build=build_section)`: `reports` are `TraceSection`s.
    window
        `--window`, or None (each trace's own window).
    paths
        The paths as given (shown in the page's header).
    generated_at
        The moment printed in the header (now, UTC, when None; tests pin it).
    compare
        From `compare_view`, when the run compares conditions: the page then opens with the comparison.
    conditions
        With `compare`: the condition of each of `run.reports`, in order (the index's condition column);
        the header lists the conditions as `paths` gives them (``NAME=PATH``).

    Returns
    -------
    dict
        `title`, `meta` (version, generated, paths, window), `index` (rows, columns; only with more than
        one trace), `sections` (one view per trace: header, gauges, health, weather, largest results,
        notes, panels), `failures` (`TraceFailure.message` each), `left_out`, `compare` (`compare`), and
        `data`: the JSON the page's script reads (`traces`: each section's specs by axis and its
        datasets; `index`: the index chart's datasets; `compare`: the comparison's).
    """
    sections: list[TraceSection] = list(run.reports)
    moment = generated_at or datetime.now(UTC)
    several = len(sections) > 1
    return {
        "title": "contexttrace report" + (f": {sections[0].report.trace}" if len(sections) == 1 else ""),
        "meta": {
            "version": __version__,
            "generated": moment.strftime("%Y-%m-%d %H:%M UTC"),
            "paths": list(paths) or ["(the default session roots)"],
            "conditions": sorted(set(conditions), key=list(conditions).index) if conditions else [],
            "window": fmt_int(window) if window else None,
            "traces": len(sections),
        },
        "index": index_view(sections, conditions) if several else None,
        "sections": [_section_view(i, s) for i, s in enumerate(sections)],
        "failures": [f.message for f in run.failures],
        "left_out": run.left_out,
        "left_out_line": left_out_line(run.left_out_files) if run.left_out else "",
        "orphan_agent_files": run.orphan_agent_files,
        "run_warnings": list(run.warnings),
        "compare": compare,
        "data": {
            "traces": [
                {
                    "specs": {axis: growth_spec_name(s, axis) for axis in chart_axes(s)[0]},
                    "axis": chart_axes(s)[1],
                    "datasets": s.datasets if s.report.prompt_tokens else None,
                }
                for s in sections
            ],
            "index": index_datasets(sections) if several else None,
            "compare": (compare or {}).get("datasets"),
        },
    }


def index_view(sections: Sequence[TraceSection], conditions: Sequence[str] | None = None) -> dict[str, Any]:
    """The index table: `columns` (`index.index_columns`), `rows` (one per trace, `_index_row`, each with
    its short label, title and condition), `groups` (`index.index_groups`: the runs of one file, shown under
    one collapsible row; a run's row names its group in `group`) and whether it has a condition column."""
    names = [s.report.trace for s in sections]
    labels = trace_labels(names)
    rows = [
        _index_row(i, s, label, conditions[i] if conditions else None)
        for i, (s, label) in enumerate(zip(sections, labels, strict=True))
    ]
    groups = index_groups(names, labels)
    for first, group in groups.items():
        members = [rows[i] for i in group["rows"]]
        group["summary"] = _group_summary(members, [sections[i] for i in group["rows"]])
        group["first_row"] = first
        for row in members:
            row["group"] = group["id"]
            row["short"] = "#" + row["short"].rsplit("#", 1)[1]
    return {"columns": index_columns(bool(conditions)), "rows": rows, "groups": groups, "conditions": bool(conditions)}


def _group_summary(rows: list[dict[str, Any]], sections: list[TraceSection]) -> str:
    """One line for a group of runs: how many, and the range of calls and peak over them."""
    calls = [s.report.calls for s in sections]
    peaks = [s.report.peak for s in sections]

    def span(values: list[int]) -> str:
        low, high = min(values), max(values)
        return fmt_int(low) if low == high else f"{fmt_int(low)}–{fmt_int(high)}"

    return f"{len(rows)} runs · calls {span(calls)} · peak {span(peaks)}"
