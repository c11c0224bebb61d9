"""The text and JSON of `context trace`: the table (spec 004), the prompt series under it, the notes for stderr.

Renderers take `RunResult` / `TraceReport` objects and return `str` (or lines); they never print. Every
number is formatted by `render.text`. Output does not depend on a terminal, on dict order or on locale:
traces print in argument order, JSON keys sorted.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from contexttrace.analysis.window import window_origin
from contexttrace.render.text import fmt_int, fmt_percent, fmt_window, json_text, pipe_table, safe_text
from contexttrace.reports.results import RunResult, TraceReport


class OutputFormat(StrEnum):
    """The output the `--json` switch selects."""

    TABLE = "table"
    JSON = "json"


#: The health and weather cells of a trace with nothing to grade (no main-thread model call): `–`, never
#: a grade; `--explain` and the JSON give the reason.
NOT_GRADED = "–"

#: Indent of the `--calls` lines under the table: four spaces make them a code block in markdown, so
#: pasted output never reads them (or the `|` of a compaction mark) as table rows.
SERIES_INDENT = "    "


def measured_cell(r: Any, value: Any, fmt: Any = fmt_int) -> str:
    """A `first` / `peak` / `growth` / `fill` cell: `fmt(value)`, or ``-`` when no main call's prompt was
    measured (every call's usage unreadable), never 0.

    Parameters
    ----------
    r
        A report with `calls` and (optionally) `unmeasured_calls`.
    value
        The figure to show.
    fmt
        Its format (`fmt_int` for tokens, `fmt_percent` for the fill).
    """
    return "-" if r.calls and getattr(r, "unmeasured_calls", 0) >= r.calls else fmt(value)


def failed_cell(failed: int, denied: int) -> str:
    """The `failed` cell: failed tool results, naming the refusals counted among them.

    >>> failed_cell(6, 4), failed_cell(2, 0)
    ('6 (4 denied)', '2')
    """
    return fmt_int(failed) + (f" ({fmt_int(denied)} denied)" if denied else "")


def health_cell(h: dict[str, Any] | None) -> str:
    """The `health` cell, ``"A 94"``; `NOT_GRADED` when there is no health, or it has no grade (nothing was
    measured).

    >>> health_cell({"grade": "A", "score": 94}), health_cell(None)
    ('A 94', '–')
    """
    if not h or h.get("grade") is None or h.get("score") is None:
        return NOT_GRADED
    return f"{h['grade']} {h['score']}"


def weather_cell(w: dict[str, Any] | None) -> str:
    """The `weather` cell, ``"☀️ sunny"``; `NOT_GRADED` when there is no weather, or it has no level (nothing
    was measured).

    >>> weather_cell({"level": "sunny", "emoji": "☀️"}), weather_cell({"level": None})
    ('☀️ sunny', '–')
    """
    if not w or w.get("level") is None:
        return NOT_GRADED
    return f"{w.get('emoji') or ''} {w['level']}".strip()


#: A cell the trace's format cannot give (`TraceReport.unrecorded`): never 0; stderr says why.
UNRECORDED = "–"


def unrecorded_cell(r: Any, what: str, cell: str) -> str:
    """`cell`, or `UNRECORDED` when the trace cannot give `what` (``"tokens"``, ``"compactions"``).

    >>> from types import SimpleNamespace
    >>> unrecorded_cell(SimpleNamespace(unrecorded={"tokens": "why"}), "tokens", "0"), unrecorded_cell(None, "x", "3")
    ('–', '3')
    """
    return UNRECORDED if what in (getattr(r, "unrecorded", None) or {}) else cell


def _fill_cell(r: Any) -> str:
    """The `fill` cell: peak ÷ window as a percentage, ``!`` after it when the peak exceeds the window."""
    cell = measured_cell(r, r.fill, fmt_percent) + ("!" if r.fill is not None and r.fill > 1 else "")
    return unrecorded_cell(r, "tokens", cell)


def _token_cell(r: Any, value: Any) -> str:
    return unrecorded_cell(r, "tokens", measured_cell(r, value))


def window_cell(r: Any) -> str:
    """The `window` cell: the window the fill is of, short (`fmt_window`), and where it came from in one word
    (`window.window_origin`: given, stated, inferred); ``-`` without one. Unless given, `UNRECORDED` with the
    fill when the trace records no token counts: a Codex CLI before 0.32 states no window either, and Claude
    Code's default is not its window.

    >>> from types import SimpleNamespace
    >>> window_cell(SimpleNamespace(window=200_000, window_source="default"))
    '200k inferred'
    >>> window_cell(SimpleNamespace(window=200_000, window_source="default", unrecorded={"tokens": "none"}))
    '–'
    """
    if not r.window:
        return "-"
    origin = window_origin(getattr(r, "window_source", None))
    cell = f"{fmt_window(r.window)} {origin}"
    return cell if origin == "given" else unrecorded_cell(r, "tokens", cell)


#: Column header → how to get the cell from a report.
COLUMNS: list[tuple[str, Any]] = [
    ("trace", lambda r: r.trace),
    ("calls", lambda r: unrecorded_cell(r, "tokens", fmt_int(r.calls))),
    ("first", lambda r: _token_cell(r, r.first)),
    ("peak", lambda r: _token_cell(r, r.peak)),
    ("fill", _fill_cell),
    ("window", window_cell),
    ("growth", lambda r: _token_cell(r, r.growth)),
    ("compact", lambda r: unrecorded_cell(r, "compactions", fmt_int(r.compact))),
    ("tools", lambda r: fmt_int(r.tools)),
    ("failed", lambda r: failed_cell(r.failed, r.denied)),
    ("repeated calls", lambda r: fmt_int(r.repeat)),
    ("result chars", lambda r: fmt_int(r.result_chars)),
]

#: The columns `context trace` adds after those: the health grade and the weather, header → cell function.
EXTRA_COLUMNS: list[tuple[str, Any]] = [
    ("health", lambda r: health_cell(r.extra.get("health"))),
    ("weather", lambda r: weather_cell(r.extra.get("weather"))),
]


def render_table(run: RunResult, with_calls: bool = False) -> str:
    """Render the spec 004 table; with `--calls`, each trace's prompt series under it.

    Parameters
    ----------
    run
        Reports to show, in order.
    with_calls
        After a blank line, one line per trace, indented by `SERIES_INDENT`:
        ``<trace>: prompt tokens per call: 1:16,386 2:18,119 ...`` (`prompt_series`).

    Returns
    -------
    str
        The table (and series), ending without a newline; empty when there are no reports. Only data
        the user asked for: the notes about it are `render_table_notes`, for stderr.
    """
    if not run.reports:
        return ""
    columns = COLUMNS + EXTRA_COLUMNS
    rows = [[cell(r) for _, cell in columns] for r in run.reports]
    lines = [pipe_table(rows, [h for h, _ in columns])]
    if with_calls:
        lines.append("")
        lines.extend(f"{SERIES_INDENT}{r.trace}: prompt tokens per call: {prompt_series(r)}" for r in run.reports)
    return safe_text("\n".join(lines))


def largest_results_line(name: str, r: TraceReport) -> str | None:
    """``<name>: largest tool results (chars): Read 55,483, Edit 16,877``, or None when the trace has none.

    The tools are the report's `largest_results` (main thread, summed per tool name, up to five; exact
    character counts).
    """
    if not r.largest_results:
        return None
    parts = ", ".join(f"{x['tool']} {fmt_int(x['chars'])}" for x in r.largest_results)
    return f"{name}: largest tool results (chars): {parts}"


def render_table_notes(run: RunResult) -> list[str]:
    """Lines for stderr under the table: per trace, the tools whose results weighed most.

    Returns
    -------
    list of str
        `largest_results_line` per trace that has any.
    """
    lines = (largest_results_line(r.trace, r) for r in run.reports)
    return [safe_text(line) for line in lines if line is not None]


def unrecorded_line(name: str, r: Any) -> str | None:
    """``<name>: – for what the trace cannot give (token counts, compactions): <reason>``, or None.

    >>> from types import SimpleNamespace
    >>> unrecorded_line("t", SimpleNamespace(unrecorded={"tokens": "none written", "compactions": "none written"}))
    't: – for what the trace cannot give (token counts, compactions): none written'
    """
    gone = getattr(r, "unrecorded", None) or {}
    names = {"tokens": "token counts", "compactions": "compactions"}
    by_reason: dict[str, list[str]] = {}
    for what, why in gone.items():
        by_reason.setdefault(why, []).append(names.get(what, what))
    head = f"{name}: {UNRECORDED} for what the trace cannot give"
    parts = [f"{head} ({', '.join(w)}): {why}" for why, w in by_reason.items()]
    return "; ".join(parts) or None


def prompt_series(r: TraceReport) -> str:
    """The prompt tokens of each main call as ``number:tokens``, numbered from 1, compactions marked.

    A compaction shows as ``| compact (trigger, pre N) |`` before the first call after it (at the end when
    no call followed); ``(no calls)`` for a trace without one.
    """
    marks: dict[int, list[str]] = {}
    trailing = []
    for ev in r.compaction_events:
        pre = f", pre {fmt_int(ev['pre_tokens'])}" if ev["pre_tokens"] is not None else ""
        label = f"| compact ({ev['trigger'] or '?'}{pre}) |"
        after = ev["call"]  # the 1-based number among main calls of the first call after it, or None
        if after is None:
            trailing.append(label)
        else:
            marks.setdefault(int(after), []).append(label)
    parts: list[str] = []
    for number, tokens in enumerate(r.prompt_tokens, 1):
        parts.extend(marks.get(number, []))
        parts.append(f"{number}:{fmt_int(tokens)}")
    parts.extend(trailing)
    return " ".join(parts) if parts else "(no calls)"


def render_json(run: RunResult, with_calls: bool = False) -> str:
    """Render every report as a JSON list (one object per trace, also for one), keys sorted, raw numbers.

    Returns
    -------
    str
        Indented JSON; lone surrogates in strings are replaced so the output is always valid UTF-8.
    """
    return json_text([r.to_dict(with_calls) for r in run.reports])
