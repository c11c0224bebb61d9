"""`context trace --explain`: per trace, spec 000's health breakdown and health bar and spec 002's weather tooltip.

Returns lines (or one `str`), never prints. Colour is 24-bit ANSI, only when the caller asks for it; without
colour the same lines use plain glyphs and grade letters. Every number is formatted by `render.text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from contexttrace.analysis.metrics import measured
from contexttrace.render.text import GRADE_COLORS, fmt_decimal, fmt_int, fmt_percent, fmt_ratio, safe_text
from contexttrace.reports.results import RunResult

#: Spec 000's compaction-line colour.
COMPACTION_COLOR = "#f38ba8"
#: The breakdown bar: cells, and the glyphs for a full cell, a half cell and an empty one.
BREAKDOWN_CELLS = 10
BAR_FULL, BAR_HALF, BAR_EMPTY = "█", "▌", "░"
#: One health-bar point in colour (painted in its grade's colour); without colour a point is its grade letter.
HEALTH_POINT = "█"
#: Marks a breakdown row whose sub-score is spec 000's no-data value (`has_data` false).
NO_DATA_MARK = "(no data)"
#: The mark under the health bar where a compaction happened.
COMPACTION_MARK = "┆"
#: How the window was chosen, in words (here and on the report page), each led by its origin
#: (`window.window_origin`: given, stated by the trace, inferred).
WINDOW_SOURCES = {
    "option": "given: --window",
    "modelUsage": "stated: the result line's modelUsage",
    "model [1m]": "stated: a model id ends in [1m]",
    "model_context_window": "stated: the rollout's model_context_window (Codex CLI from 0.48: 95 % of the model's "
    "window)",
    "model table": "inferred: Gemini CLI's model table for the session's model (the session does not record it)",
    "default": "inferred: Claude Code's default; the trace does not say",
    "peak": "inferred: the peak exceeds 200,000",
}
#: Spec 002's weather signals in words, by their JSON key (`weather.signals[].name`, kept as it is in JSON).
FACTOR_NAMES = {
    "ctx_pressure": "context pressure",
    "compaction_scar": "compaction scar",
    "truncation": "truncated output",
    "stuck": "stuck on failures",
    "latency_drift": "latency drift",
    "error_cluster": "recent errors",
    "error_cumulative": "errors overall",
    "cache_health": "cache health",
}
#: At most this many call numbers are listed per factor.
CALLS_SHOWN = 8


def _paint(text: str, hex_color: str, color: bool) -> str:
    if not color:
        return text
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"\x1b[38;2;{r};{g};{b}m{text}\x1b[0m"


def _breakdown_bar(value: int | None, grade: str | None, color: bool) -> str:
    if value is None or grade is None:  # not graded: no sub-score to draw
        return "·" * BREAKDOWN_CELLS
    full, half = divmod(value * BREAKDOWN_CELLS, 100)
    filled = BAR_FULL * full + (BAR_HALF if half >= 50 else "")
    return _paint(filled, GRADE_COLORS[grade], color) + BAR_EMPTY * (BREAKDOWN_CELLS - len(filled))


#: Spec 000's signals as printed, where the name alone could be another measure's: Re-reads counts Read calls
#: of a file read before, not the identical repeated calls of `repeat` nor the tokens `context tools` resends.
SIGNAL_NAMES = {"Re-reads": "File re-reads"}


def signal_name(name: str) -> str:
    """A health signal's name as printed (`SIGNAL_NAMES`; the JSON keeps spec 000's).

    >>> signal_name("Re-reads"), signal_name("Context Fill")
    ('File re-reads', 'Context Fill')
    """
    return SIGNAL_NAMES.get(name, name)


def factor_name(key: str) -> str:
    """A weather signal's key (`ctx_pressure`) as a person reads it (`FACTOR_NAMES`); an unknown key as is.

    >>> factor_name("ctx_pressure"), factor_name("error_cumulative"), factor_name("new_key")
    ('context pressure', 'errors overall', 'new_key')
    """
    return FACTOR_NAMES.get(key, key)


def call_numbers(calls: list[int], shown: int = CALLS_SHOWN) -> str:
    """Call numbers as ``#3, #7 and 2 more``: the first `shown`, then how many more; "" for none.

    >>> call_numbers([3, 7]), call_numbers(list(range(1, 11)), shown=2), call_numbers([])
    ('#3, #7', '#1, #2 and 8 more', '')
    """
    more = f" and {len(calls) - shown} more" if len(calls) > shown else ""
    return ", ".join(f"#{c}" for c in calls[:shown]) + more if calls else ""


def _calls_text(calls: list[int]) -> str:
    return f"call{'s' if len(calls) > 1 else ''} {call_numbers(calls)}"


def render_health_panel(h: dict[str, Any], color: bool = False) -> list[str]:
    """Render spec 000's breakdown panel: one row per signal, name | bar | sub-score and grade | weight | why.

    Parameters
    ----------
    h
        A `health` object (`health.health_report`).
    color
        Paint each bar in its grade's colour (24-bit ANSI); False gives plain glyphs.

    Returns
    -------
    list of str
        A heading line, then five signal rows, indented by two spaces. The weight shown is spec 000's
        fixed one; a signal whose sub-score is the spec's no-data value (`has_data` false) is marked
        `NO_DATA_MARK` before its reason. Without a grade (no model call), one line: `health –` and the
        reason.
    """
    if h["grade"] is None:
        return [f"  health – {h['reason']}"]
    lines = [f"  health {h['grade']} {h['score']}/100"]  # the window and its source: `fill_line`, above it
    for sig in h["signals"]:
        bar = _breakdown_bar(sig["value"], sig["grade"], color)
        sig = {**sig, "name": signal_name(sig["name"])}
        weight = fmt_percent(sig["weight"])
        why = sig["why"] if sig["has_data"] else f"{NO_DATA_MARK} {sig['why']}"
        lines.append(f"    {sig['name']:<16} {bar} {sig['value']:>3} {sig['grade']}  {weight:>4}  {why}")
    return lines


def render_health_bar(h: dict[str, Any], color: bool = False) -> list[str]:
    """Render the health bar: the grade at each 5 % of the session (21 points), compactions marked below.

    Returns
    -------
    list of str
        A heading naming the axis (time, or calls for stream-json), the bar (coloured blocks, or grade
        letters without colour; `·` for a point before the first model call, which has no grade), and a
        line with `COMPACTION_MARK` under the first point that counts each compaction, labelled with the
        number (from 1) of the call after it. Nothing when the trace has no grade.
    """
    points = h["timeline"]
    if not points:
        return []
    axis = "time" if h["timeline_axis"] == "time" else "calls (the trace has no timestamps)"
    if color:
        bar = "".join(
            "·" if p["grade"] is None else _paint(HEALTH_POINT, GRADE_COLORS[p["grade"]], True) for p in points
        )
    else:
        bar = "".join(p["grade"] or "·" for p in points)
    before = " (· before the first model call)" if any(p["grade"] is None for p in points) else ""
    lines = [f"  health bar, 0% → 100% of the session by {axis}, a point per 5%{before}:", f"    {bar}"]
    for c in h["compactions"]:
        col = c["percent"] * (len(points) - 1) // 100
        pre = f", pre {fmt_int(c['pre_tokens'])}" if c["pre_tokens"] is not None else ""
        mark = _paint(COMPACTION_MARK, COMPACTION_COLOR, color)
        where = f"before call #{c['next_call']}" if c["next_call"] is not None else "after the last call"
        lines.append(f"    {' ' * col}{mark} compaction ({c['trigger'] or '?'}{pre}) {where}, by {c['percent']}%")
    return lines


def weather_stats(st: dict[str, Any], fill: Fraction | None, missing: str = "-") -> list[str]:
    """Spec 002's tooltip stats of a sunny or fair trace: the last call's fill (spec 002's context), tool
    errors, cache hit, latency, compactions.

    Parameters
    ----------
    st
        `weather.stats` (`context_fill_frac`, `tool_errors`, `tool_denials`, `cache_hit_frac`,
        `latency_ratio`, `compactions`).
    fill
        The exact prompt ÷ window when the caller has it: the context percentage is then one rounding of
        the exact value (`context_fill_frac` is already rounded to 4 decimals).
    missing
        What an unknown latency ratio shows (``-`` in the terminal, ``–`` on the report page).
    """
    denied = st.get("tool_denials")
    latency = st.get("latency_ratio")
    return [
        f"last call's fill {fmt_percent(fill if fill is not None else st.get('context_fill_frac'))}",
        f"{fmt_int(st.get('tool_errors'))} tool errors" + (f" (+{denied} denied, not counted)" if denied else ""),
        f"cache hit {fmt_percent(st.get('cache_hit_frac'))}",
        "latency " + (missing if latency is None else f"{fmt_ratio(latency)}× baseline"),
        f"{fmt_int(st.get('compactions'))} compaction{'' if st.get('compactions') == 1 else 's'}",
    ]


def render_weather_tooltip(w: dict[str, Any], fill: Fraction | None = None) -> list[str]:
    """Render spec 002's tooltip: stats when sunny or fair, else the active factors and the calls to read.

    Returns
    -------
    list of str
        A heading (emoji, level, score, and the worst weather reached if at a worse level, with the
        call and the two signals that made it), then the stats line (`weather_stats`) or
        one line per factor (highest severity first) and a "look at" line; last, the signals that
        abstained and why. Call numbers count main-thread model calls from 1, as `--calls` and the JSON
        do. Without weather (no model call), one line: `weather –` and the reason. `fill`, the exact
        prompt ÷ window when the caller has it, makes the stats' context percentage one rounding of the
        exact value (`stats.context_fill_frac` is already rounded to 4 decimals).
    """
    if w["level"] is None:
        return [f"  weather – {w['reason']}"]
    lines = [f"  weather {w['emoji']} {w['level']} {fmt_decimal(w['score'], 2)}"]
    worst = w.get("worst")
    if worst and worst["level"] != w["level"]:  # worse than now (a worst of the same level says nothing)
        where = f"after call #{worst['call']}"
        causes = f": {', '.join(factor_name(k) for k in worst['factors'][:2])}" if worst.get("factors") else ""
        lines[0] += f" (worst: {worst['emoji']} {worst['level']} {fmt_decimal(worst['score'], 2)} {where}{causes})"
    if w["level"] in ("sunny", "fair"):
        lines.append("    " + " · ".join(weather_stats(w["stats"], fill)))
    else:
        called: list[int] = []
        for f in w["factors"]:
            lines.append(f"    {factor_name(f['name'])} {fmt_decimal(f['severity'], 2)}: {f['why']}")
            called.extend(c for c in f["calls"] if c not in called)
        if called:
            lines.append(f"    → look at {_calls_text(sorted(called))}")
    idle = [s for s in w["signals"] if s["severity"] is None]
    if idle:
        lines.append("    not judged: " + "; ".join(f"{factor_name(s['name'])} — {s['why']}" for s in idle))
    return lines


def exact_fill(prompt_tokens: Sequence[int | None], window: int | None) -> Fraction | None:
    """The last measured prompt ÷ `window`, exact (as weather's context pressure reads it); None without a
    window or a measured prompt.

    >>> exact_fill([100, None], 400), exact_fill([], 400)
    (Fraction(1, 4), None)
    """
    last = next((p for p in reversed(prompt_tokens) if measured(p)), None)
    return Fraction(last, window) if last is not None and window else None


def window_words(source: str | None) -> str:
    """How a window was chosen in words (`WINDOW_SOURCES`), led by its origin; an unlisted source a trace
    states is ``stated: <source>``.

    >>> window_words("default"), window_words("trace")
    ("inferred: Claude Code's default; the trace does not say", 'stated: trace')
    """
    return WINDOW_SOURCES.get(source or "", f"stated: {source}")


def fill_line(r: Any) -> str:
    """The fill line of `--explain`: the peak as a share of the window, with the window and its source.

    >>> from types import SimpleNamespace
    >>> fill_line(SimpleNamespace(fill=0.82, peak=164_000, window=200_000, window_source="default", calls=3))
    "  fill 82%: peak 164,000 of a 200,000-token window (inferred: Claude Code's default; the trace does not say)"
    """
    if r.fill is None or not r.window:
        return "  fill – no model call: no prompt to measure"
    return (
        f"  fill {fmt_percent(r.fill)}: peak {fmt_int(r.peak)} of a {fmt_int(r.window)}-token window "
        f"({window_words(r.window_source)})"
    )


def render_explain(run: RunResult, color: bool = False) -> str:
    """Render `--explain`: per trace, the health breakdown, the health bar and the weather tooltip.

    Parameters
    ----------
    run
        Reports from `reports.trace.build_report` (their `extra` holds `health` and `weather`).
    color
        Colour the bars (the CLI passes True only when stdout is a terminal and NO_COLOR is unset).

    Returns
    -------
    str
        One block per trace, separated by blank lines, ending without a newline.
    """
    blocks = []
    for r in run.reports:
        h, w = r.extra.get("health"), r.extra.get("weather")
        if h is None or w is None:
            continue
        fill = exact_fill(getattr(r, "prompt_tokens", []), h.get("window"))
        lines = [r.trace, fill_line(r), *render_health_panel(h, color), *render_health_bar(h, color)]
        lines += render_weather_tooltip(w, fill)
        blocks.append("\n".join(lines))
    return safe_text("\n\n".join(blocks))
