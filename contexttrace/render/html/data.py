"""The data of `context report`'s HTML page, built from reports and traces: pure, no HTML and no chart library.

`build_section` is the `build` that `runner.analyze` runs on each trace (in a worker process when the run
is parallel): it builds the trace's `report.TraceReport` and `usage.UsageReport` and, from the same
`Trace`, the series the charts need and the report alone does not hold (each call's moment and tools,
the subagent calls, the re-reads). `build_page` turns a run of such sections into one dict: everything
the template (`templates/report.html.j2`) and the chart specs (`html_charts`) draw, as plain values.

Chart data are **columnar** (`{"column": [values, ...]}` per dataset): a page for 200 sessions holds
every call of every session, and rows would repeat each key per value (the page's script zips the
columns into rows when it draws a chart). `rows_of` does the same here for tests and readers.

What it must not do: import jinja2, altair or vl-convert (this module is imported in the worker
processes and by `context report` before it knows the extra is installed), print, or put a string from
a trace anywhere but into data (never into a chart spec's expressions, an id or an href): escaping is the
template's (autoescaped) and the page script's (JSON in a `<script type="application/json">`) job.
"""

from __future__ import annotations

import bisect
import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from contexttrace import __version__
from contexttrace.analysis.counts import result_count
from contexttrace.analysis.frame_rows import FrameRows
from contexttrace.analysis.metrics import measured
from contexttrace.analysis.session import session_rows_of
from contexttrace.reading import Trace
from contexttrace.reading.contract import THREAD_SUBAGENT
from contexttrace.render.trace import GRADE_COLORS, fmt_int, fmt_percent, fmt_usd
from contexttrace.reports.trace import DiagnosticsOfReport, RunResult, TraceReport, build_report
from contexttrace.reports.usage import UsageReport, build_usage

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

#: Colour of a health-bar point with no grade (before the first model call).
NO_GRADE_COLOR = "#585b70"
#: Health-bar slices between two 5 % points: the colour is interpolated across them (spec 000).
HEALTH_SLICES_PER_STEP = 4

#: The index's sparkline: at most this many buckets, each kept as its minimum and maximum (in order).
SPARK_BUCKETS = 40
SPARK_WIDTH, SPARK_HEIGHT = 90, 24

#: Tool names listed per call in the growth chart's hover text; the rest are counted.
TOOLS_SHOWN = 6

#: Panels computed by other commands, added to each trace's section once those exist: (module, function).
#: The function takes `(trace, report)` and returns a `Panel`-shaped dict or None (see docs/report.md);
#: a module or function that does not exist yet is skipped, so a panel appears as soon as its command lands.
PANEL_HOOKS: tuple[tuple[str, str], ...] = (
    ("contexttrace.reports.sources", "sources_panel"),  # `context sources`: the sources table at the last call
    ("contexttrace.reports.tools", "tools_panel"),  # `context tools`: the tools table
    ("contexttrace.reports.files", "files_panel"),  # `context files`: spec 003's per-file table, dropped files in amber
)


@dataclass
class TraceSection(DiagnosticsOfReport):
    """One trace's part of the page: its `TraceReport`, the cost, and the chart data only the trace holds.

    The attributes `render.render_diagnostics` reads (`path`, `trace`, `line_notes`, ...) are the
    report's, so a run of sections prints its diagnostics as `context trace` does.
    """

    report: TraceReport
    usage: UsageReport
    cost: dict[str, Any]
    threshold: dict[str, Any]
    axis: str  # "time" (transcripts with timestamps) or "calls" (stream-json: call numbers)
    start_ms: int | None
    reported_duration_ms: int | None  # stream-json: the result line's duration_ms
    datasets: dict[str, dict[str, list[Any]]]
    notes: list[str] = field(default_factory=list)
    panels: list[dict[str, Any]] = field(default_factory=list)


def build_section(trace: Trace, window: int | None = None) -> TraceSection:
    """Build one trace's section of the report page (the `build` of `runner.analyze` for `context report`).

    Parameters
    ----------
    trace
        A trace from `reader.read_trace`.
    window
        `--window` in tokens, or None (then the trace's own window, `window.window_choice`).

    Returns
    -------
    TraceSection
        `report` (`build_report`, exact), `cost` (`build_usage`'s total: ≈ list prices, ≥ a lower bound),
        `threshold` (the autocompact threshold: observed, or ≈ from the window), and the chart datasets
        (`growth_datasets`). Every figure drawn comes from these; none is re-derived differently.
    """
    report = build_report(trace, window)
    usage = build_usage(trace, window)
    total = usage.total
    cost = {
        "usd": total["cost_usd"],
        "lower_bound": bool(total["cost_is_lower_bound"]),
        "reasons": list(total.get("lower_bound_reasons") or []),
        "text": fmt_usd(total["cost_usd"], total["cost_is_lower_bound"], estimate=bool(total["cost_usd"])),
        "reported_usd": (usage.reported or {}).get("total_cost_usd"),
    }
    figures = usage.turn_figures
    threshold = {
        "tokens": figures["autocompact_threshold_tokens"],
        "source": figures["autocompact_threshold_source"],
    }
    datasets, axis, notes = growth_datasets(trace, report, threshold)
    duration, _ = result_count(trace.result, "duration_ms")  # bounded like every result-line count
    return TraceSection(
        report=report,
        usage=usage,
        cost=cost,
        threshold=threshold,
        axis=axis,
        start_ms=trace.timestamps_ms[0] if trace.timestamps_ms else None,
        reported_duration_ms=duration,
        datasets=datasets,
        notes=notes,
        panels=_hook_panels(trace, report),
    )


def _hook_panels(trace: Trace, report: TraceReport) -> list[dict[str, Any]]:
    """The panels of the commands in `PANEL_HOOKS` that exist (none yet: see its comment)."""
    panels = []
    for module, name in PANEL_HOOKS:
        builder = _hook(module, name)
        if builder is not None:
            panel = builder(trace, report)
            if panel:
                panels.append(panel)
    return panels


def _hook(module: str, name: str) -> Callable[..., Any] | None:
    try:
        found = importlib.import_module(module)
    except ImportError:
        return None
    hook = getattr(found, name, None)
    return hook if callable(hook) else None


# -- the growth chart and the health bar --------------------------------------------------------------


def growth_datasets(
    trace: Trace, report: TraceReport, threshold: dict[str, Any]
) -> tuple[dict[str, dict[str, list[Any]]], str, list[str]]:
    """Build the datasets of the growth chart and the health bar under it, columnar, for both x axes.

    Parameters
    ----------
    trace
        The trace the report was built from.
    report
        Its `TraceReport` (`prompt_tokens`, `compaction_events`, `extra["health"]`).
    threshold
        The autocompact threshold (`tokens`, `source`: ``"observed"`` or ``"window"``, ≈).

    Returns
    -------
    (datasets, axis, notes)
        `axis` is ``"time"`` when the main thread's lines carry timestamps, else ``"calls"`` (stream-json).
        Every row has `xc`, its place on the call axis (call numbers from 1), and on the time axis `xt`
        (Unix epoch ms; None on the calls axis or where no moment is known): a line without a timestamp
        takes the moment of the last one before it, as health does. Datasets, one list per column:

        - `calls`: one row per main-thread call, in order: `call` (from 1), `xc`, `xt`, `tokens` (exactly
          `report.prompt_tokens`), `tools` (the tool uses it asked for, "Read ×2, Bash").
        - `subagents`: one row per subagent call: `xt` (its own timestamp), `xc` (transcripts: that moment
          between the main calls around it; stream-json, whose lines carry no time but are written where
          they ran: the m subagent calls after call k at k + j/(m+1)), `tokens`, `agent`.
        - `compactions`: one row per `report.compaction_events` entry: `xt` (the boundary's moment), `xc`
          (half a call before the first call after it), `trigger`, `pre`, `post`, `call`, `label`,
          `detail` (text), and the label again as `label_left_t` / `label_right_t` (time axis) and
          `label_left_c` / `label_right_c` (calls axis): set on the side of its line that keeps it inside
          the chart (right of the line, unless the line is in the last 40 %), "" on the other.
        - `limits`: the window and the autocompact threshold: `kind`, `tokens`, `label`.
        - `health`: the health bar's slices between the 21 timeline points: `xt`, `x2t`, `xc`, `x2c`,
          `color` (the grade colours of spec 000, interpolated), `label`. On the calls axis a transcript's
          moments are placed between the calls around them (linearly in time).
        - `rereads`: one row per Read of a file read before (health's Re-reads): `xt`, `xc` (the call
          that asked for it), `label`.
        `notes` says what could not be drawn (subagent calls without a timestamp).
    """
    rows = FrameRows(trace)
    session = session_rows_of(trace, rows)
    axis = session.axis
    times = session.times
    call_seqs = [c.seq for c in session.calls]
    n = len(call_seqs)
    series = report.prompt_tokens
    call_times = [times.get(seq) for seq in call_seqs] if axis == "time" else []
    place = _CallPlacer(call_times)

    def xt_of(seq: int) -> int | None:
        moment = times.get(seq) if axis == "time" else None
        return None if moment is None else int(moment)

    tools_per_call: list[list[str]] = [[] for _ in range(n)]
    for t in session.tools:
        if 0 <= t.call_index < n:
            tools_per_call[t.call_index].append(t.name)
    calls: dict[str, list[Any]] = {"call": [], "xc": [], "xt": [], "tokens": [], "tools": []}
    for i, seq in enumerate(call_seqs):
        calls["call"].append(i + 1)
        calls["xc"].append(i + 1)
        calls["xt"].append(xt_of(seq))
        calls["tokens"].append(series[i])
        calls["tools"].append(tools_text(tools_per_call[i]))

    subagents, notes = _subagent_rows(trace, axis, call_seqs, call_times)

    # compactions: the report's events, in the same (seq) order as the session's boundaries
    keys = ("xc", "xt", "trigger", "pre", "post", "call", "label", "detail",
            "label_left_c", "label_right_c", "label_left_t", "label_right_t")  # fmt: skip
    comps: dict[str, list[Any]] = {k: [] for k in keys}
    t_lo = min((t for t in call_times if t is not None), default=None)
    t_hi = max((t for t in call_times if t is not None), default=None)
    for event, bound in zip(report.compaction_events, session.compactions, strict=False):
        call = event.get("call")
        xc = (call if call is not None else n + 1) - 0.5
        xt = xt_of(bound.seq)
        comps["xc"].append(xc)
        comps["xt"].append(xt)
        comps["trigger"].append(event.get("trigger"))
        comps["pre"].append(event.get("pre_tokens"))
        comps["post"].append(event.get("post_tokens"))
        comps["call"].append(call)
        comps["label"].append(compaction_label(event))
        comps["detail"].append(compaction_detail(event))
        label = compaction_label(event)
        for suffix, side in (("c", _side(xc, 1, n)), ("t", _side(xt, t_lo, t_hi))):
            comps[f"label_left_{suffix}"].append(label if side == "left" else "")
            comps[f"label_right_{suffix}"].append(label if side == "right" else "")

    health = report.extra.get("health") or {}
    window = health.get("window") or report.window
    limits: dict[str, list[Any]] = {"kind": [], "tokens": [], "label": []}
    if window:
        limits["kind"].append("window")
        limits["tokens"].append(window)
        limits["label"].append(f"window {fmt_int(window)}")
    if threshold.get("tokens"):
        approx = "" if threshold["source"] == "observed" else "≈ "
        limits["kind"].append("autocompact")
        limits["tokens"].append(threshold["tokens"])
        limits["label"].append(f"autocompact {approx}{fmt_int(threshold['tokens'])}")

    rereads: dict[str, list[Any]] = {"xc": [], "xt": [], "label": []}
    first_read: dict[str, Any] = {}
    for t in session.tools:
        if t.name != "Read" or not t.file_path:
            continue
        if t.file_path in first_read:
            earlier = first_read[t.file_path]
            where = f"{utc_text(xt_of(earlier.seq))} UTC" if axis == "time" else f"call #{earlier.call_index + 1}"
            rereads["xc"].append(t.call_index + 1)
            rereads["xt"].append(xt_of(t.seq))
            rereads["label"].append(f"Re-read: {t.file_path} was already read at {where}")
        else:
            first_read[t.file_path] = t

    datasets = {
        "calls": calls,
        "subagents": subagents,
        "compactions": comps,
        "limits": limits,
        "health": health_slices(health.get("timeline") or [], axis, place),
        "rereads": rereads,
    }
    return datasets, axis, notes


def _side(x: float | None, lo: float | None, hi: float | None) -> str:
    """Where a label next to a vertical line at `x` goes: to its right, unless the line is in the last 40 %."""
    if x is None or lo is None or hi is None or hi <= lo:
        return "left"
    return "right" if (x - lo) / (hi - lo) > 0.6 else "left"


class _CallPlacer:
    """Place a moment on the call axis: linearly between the calls before and after it, clamped to 1..n."""

    def __init__(self, call_times: list[float | None]) -> None:
        self.times = [t for t in call_times if t is not None]
        self.ok = len(self.times) == len(call_times) and all(
            a <= b for a, b in zip(self.times, self.times[1:], strict=False)
        )

    def __call__(self, moment: float | None) -> float | None:
        ts = self.times
        if moment is None or not ts or not self.ok:
            return None
        i = bisect.bisect_right(ts, moment) - 1
        if i < 0:
            return 1.0
        if i >= len(ts) - 1:
            return float(len(ts))
        span = ts[i + 1] - ts[i]
        return i + 1 + ((moment - ts[i]) / span if span > 0 else 0.0)


def _subagent_rows(
    trace: Trace, axis: str, call_seqs: list[int], call_times: list[float | None]
) -> tuple[dict[str, list[Any]], list[str]]:
    """Subagent calls placed on both x axes (see `growth_datasets`), and a note for those time cannot place."""
    view = trace.view("calls")
    kinds = view.get_column("thread_kind").to_list()
    seqs = view.get_column("seq").to_list()
    threads = view.get_column("thread").to_list()
    tokens = view.get_column("prompt_tokens").to_list()
    stamps = view.get_column("ts_ms").to_list()
    labels = _agent_labels(trace)
    picked = sorted(
        (s, th, tok, ts)
        for k, s, th, tok, ts in zip(kinds, seqs, threads, tokens, stamps, strict=True)
        if k == THREAD_SUBAGENT
    )
    out: dict[str, list[Any]] = {"xc": [], "xt": [], "tokens": [], "agent": []}
    if axis == "time":
        # A transcript's subagent files are read after the session file, so their seqs say nothing of
        # when they ran: place them by their timestamps, between the main calls around them.
        place = _CallPlacer(call_times)
        unplaced = 0
        for _seq, th, tok, ts in picked:
            xc = place(ts)
            out["xc"].append(None if xc is None else round(xc, 3))
            out["xt"].append(ts)
            out["tokens"].append(tok)
            out["agent"].append(labels.get(th) or th)
            unplaced += ts is None
    else:
        # stream-json: a subagent's lines are written where it ran, between the main calls around it.
        groups: dict[int, list[tuple[Any, ...]]] = {}
        for row in picked:
            groups.setdefault(bisect.bisect_left(call_seqs, row[0]), []).append(row)
        unplaced = 0
        for after, group in sorted(groups.items()):
            for j, (_seq, th, tok, _ts) in enumerate(group, 1):
                out["xc"].append(round(after + j / (len(group) + 1), 3))
                out["xt"].append(None)
                out["tokens"].append(tok)
                out["agent"].append(labels.get(th) or th)
    notes = [f"{unplaced} subagent call(s) without a timestamp are not drawn"] if unplaced else []
    return out, notes


def _agent_labels(trace: Trace) -> dict[str, str]:
    """Subagent thread → "type: description" of the Task/Agent call that started it, where known."""
    uses = trace.view("tool_uses")
    by_use: dict[str, str] = {}
    for tid, kind, desc in zip(
        uses.get_column("tool_use_id").to_list(),
        uses.get_column("agent_type").to_list(),
        uses.get_column("agent_description").to_list(),
        strict=True,
    ):
        if tid and (kind or desc):
            by_use[tid] = ": ".join(str(p) for p in (kind, desc) if p)
    results = trace.view("tool_results")
    labels = dict(by_use)  # stream-json: a subagent thread is named by its Task call's id
    for tid, agent in zip(
        results.get_column("tool_use_id").to_list(), results.get_column("agent_id").to_list(), strict=True
    ):
        if agent and tid in by_use:  # transcripts: by the agent id its result names
            labels[agent] = by_use[tid]
    return labels


def health_slices(
    timeline: list[dict[str, Any]], axis: str, place: Callable[[float | None], float | None] | None = None
) -> dict[str, list[Any]]:
    """Cut health's 21-point timeline into coloured slices, the colour interpolated between points.

    Each 5 % step from point k to k + 1 is cut into `HEALTH_SLICES_PER_STEP` slices whose colour moves
    from point k's grade colour to point k + 1's (spec 000: "compute health score at each 5% time
    interval, interpolate colors"); a point without a grade is `NO_GRADE_COLOR` and is not blended.
    The label names the later point (what the session's grade was at that moment). On the ``"time"``
    axis a slice has `xt`/`x2t` (ms) and, through `place` (a moment → call position), `xc`/`x2c`; on the
    ``"calls"`` axis only `xc`/`x2c` (the timeline's `calls`).

    Examples
    --------
    >>> tl = [{"percent": 0, "grade": "A", "score": 100, "calls": 1},
    ...       {"percent": 5, "grade": "F", "score": 20, "calls": 2}]
    >>> s = health_slices(tl, "calls")
    >>> len(s["xc"]), s["color"][0], s["color"][-1], s["xc"][0], s["x2c"][-1], s["xt"][0], s["label"][0]
    (4, '#a6e3a1', '#f38ba8', 1.0, 2.0, None, '5%: F 20/100')
    """
    out: dict[str, list[Any]] = {"xt": [], "x2t": [], "xc": [], "x2c": [], "color": [], "label": []}
    if axis == "time":
        ts = [p.get("ts_ms") for p in timeline]
        cs = [place(t) if place is not None else None for t in ts]
    else:
        ts = [None] * len(timeline)
        cs = [p.get("calls") for p in timeline]

    def lerp(a: float | None, b: float | None, f: float) -> float | None:
        # ms to the millisecond, call positions to a thousandth: finer than a pixel, and a third of the bytes
        return None if a is None or b is None else round(a + (b - a) * f, 0 if axis_ms(a) else 3)

    def axis_ms(a: float) -> bool:
        return a > 1e9  # a Unix epoch moment in ms, not a call position

    for k in range(len(timeline) - 1):
        a, b = timeline[k], timeline[k + 1]
        ca, cb = _grade_color(a.get("grade")), _grade_color(b.get("grade"))
        label = f"{b['percent']}%: {b['grade']} {b['score']}/100" if b.get("grade") else f"{b['percent']}%: no call yet"
        blend = bool(a.get("grade") and b.get("grade"))
        for j in range(HEALTH_SLICES_PER_STEP):
            f0, f1 = j / HEALTH_SLICES_PER_STEP, (j + 1) / HEALTH_SLICES_PER_STEP
            t = j / (HEALTH_SLICES_PER_STEP - 1)  # the first slice is point a's colour, the last point b's
            out["xt"].append(lerp(ts[k], ts[k + 1], f0))
            out["x2t"].append(lerp(ts[k], ts[k + 1], f1))
            out["xc"].append(lerp(cs[k], cs[k + 1], f0))
            out["x2c"].append(lerp(cs[k], cs[k + 1], f1))
            out["color"].append(mix(ca, cb, t) if blend else (cb if f1 > 0.5 else ca))
            out["label"].append(label)
    return out


def _grade_color(grade: str | None) -> str:
    return GRADE_COLORS.get(grade or "", NO_GRADE_COLOR)


def mix(a: str, b: str, t: float) -> str:
    """Blend two ``#rrggbb`` colours: `t` 0 gives `a`, 1 gives `b`.

    >>> mix("#000000", "#ffffff", 0.5), mix("#a6e3a1", "#f38ba8", 0)
    ('#808080', '#a6e3a1')
    """
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb, strict=True))


def tools_text(names: Sequence[str | None]) -> str:
    """The tools one call asked for, counted in order of first use: ``"Read ×2, Bash"``; "" for none.

    >>> tools_text(["Read", "Bash", "Read"]), tools_text([])
    ('Read ×2, Bash', '')
    """
    counts: dict[str, int] = {}
    for name in names:
        key = name or "?"
        counts[key] = counts.get(key, 0) + 1
    parts = [f"{k} ×{v}" if v > 1 else k for k, v in counts.items()]
    more = len(parts) - TOOLS_SHOWN
    return ", ".join(parts[:TOOLS_SHOWN]) + (f" and {more} more" if more > 0 else "")


def utc_text(ms: float | None) -> str | None:
    """A Unix epoch ms moment as ``YYYY-MM-DD HH:MM:SS`` UTC; None for None.

    >>> utc_text(1770912147718)
    '2026-02-12 16:02:27'
    """
    if ms is None or (isinstance(ms, float) and math.isnan(ms)):
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def compaction_label(event: dict[str, Any]) -> str:
    """The short label over a compaction line: trigger, then the harness's pre → post tokens.

    Where the CLI writes no `post_tokens` (before 2.1.x' newer builds), the first call after it stands in,
    said as such ("next call").

    >>> compaction_label({"trigger": "auto", "pre_tokens": 170251, "post_tokens": None, "context_after": 36081})
    'auto 170,251 → next call 36,081'
    >>> compaction_label({"trigger": "manual", "pre_tokens": 50000, "post_tokens": 9000})
    'manual 50,000 → 9,000'
    """
    pre = fmt_int(event.get("pre_tokens")) if event.get("pre_tokens") is not None else "?"
    if event.get("post_tokens") is not None:
        post = fmt_int(event["post_tokens"])
    elif event.get("context_after") is not None:
        post = f"next call {fmt_int(event['context_after'])}"
    else:
        post = "?"
    return f"{event.get('trigger') or '?'} {pre} → {post}"


def compaction_detail(event: dict[str, Any]) -> str:
    """The hover text of a compaction line: the harness's figures and the calls' around it."""
    parts = [f"compaction ({event.get('trigger') or 'trigger unknown'})"]
    parts.append(f"harness: pre {fmt_int(event.get('pre_tokens'))}, post {fmt_int(event.get('post_tokens'))}")
    parts.append(f"calls: before {fmt_int(event.get('context_before'))}, after {fmt_int(event.get('context_after'))}")
    call = event.get("call")
    parts.append(f"before call #{call}" if call is not None else "after the last call")
    return "; ".join(parts)


# -- gauge, sparkline, durations -----------------------------------------------------------------------


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
        "percent": "–" if fraction is None else f"{fraction * 100:.0f}%",
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


def duration_text(ms: int | None) -> str:
    """A duration in words: ``"5h 1m"``, ``"50m 15s"``, ``"8s"``; "–" for None.

    >>> duration_text(18_068_922), duration_text(3_015_338), duration_text(8_000), duration_text(None)
    ('5h 1m', '50m 15s', '8s', '–')
    """
    if ms is None:
        return "–"
    s = int(ms // 1000)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h}h {m}m"
    if m:
        return f"{m}m {sec}s"
    return f"{sec}s"


# -- the page ------------------------------------------------------------------------------------------


def rows_of(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Zip a columnar dataset into rows (what the page's script does before drawing).

    >>> rows_of({"a": [1, 2], "b": ["x", "y"]})
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    keys = list(columns)
    return [dict(zip(keys, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def growth_spec_name(section: TraceSection, axis: str) -> str:
    """The growth-chart spec (`html_charts.chart_specs`) that draws this section on `axis`."""
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
    h = report.extra.get("health") or {}
    signals = []
    for sig in h.get("signals") or []:
        grade = sig.get("grade")
        signals.append(
            {
                "name": sig["name"],
                "value": sig.get("value"),
                "grade": grade,
                "color": _grade_color(grade),
                "abstained": bool(sig.get("abstained")),
                "weight": f"{sig['effective_weight']:.0%}" if sig.get("effective_weight") is not None else "–",
                "spec_weight": f"{sig['weight']:.0%}",
                "why": sig.get("why") or "",
            }
        )
    grade = h.get("grade")
    return {
        "grade": grade,
        "score": h.get("score"),
        "color": _grade_color(grade),
        "reason": h.get("reason"),
        "title": f"Context Health: {grade} (score: {h.get('score')}/100)" if grade else "Context Health: not graded",
        "signals": signals,
        "window": fmt_int(h.get("window")),
        "window_source": _WINDOW_SOURCES.get(h.get("window_source") or "", h.get("window_source")),
        "axis": "time" if h.get("timeline_axis") == "time" else "calls",
    }


def _weather_view(report: TraceReport) -> dict[str, Any]:
    w = report.extra.get("weather") or {}
    level = w.get("level")
    stats = w.get("stats") or {}
    h = report.extra.get("health") or {}
    last = next((p for p in reversed(report.prompt_tokens) if measured(p)), None)  # as ctx_pressure reads it
    fill = Fraction(last, h["window"]) if last is not None and h.get("window") else None  # exact: one rounding
    stat_lines = []
    if level in ("sunny", "fair") and stats:
        denied = stats.get("tool_denials")
        latency = stats.get("latency_ratio")
        stat_lines = [
            f"context {fmt_percent(fill if fill is not None else stats.get('context_fill_frac'))}",
            f"{fmt_int(stats.get('tool_errors'))} tool errors"
            + (f" (+{denied} denied, not counted)" if denied else ""),
            f"cache hit {fmt_percent(stats.get('cache_hit_frac'))}",
            "latency " + ("–" if latency is None else f"{latency:.2f}× baseline"),
            f"{fmt_int(stats.get('compactions'))} compaction{'' if stats.get('compactions') == 1 else 's'}",
        ]
    factors = [
        {
            "name": f["name"],
            "severity": f"{f['severity']:.2f}",
            "width": max(0.0, min(1.0, float(f["severity"]))) * 100,
            "why": f.get("why") or "",
            "calls": _calls_text(f.get("calls") or []),
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
        "score": f"{w['score']:.2f}" if w.get("score") is not None else "–",
        "reason": w.get("reason"),
        "stats": stat_lines,
        "factors": factors,
        "look_at": _calls_text(sorted(look_at)),
        "worst": (
            {
                "emoji": worst["emoji"],
                "level": worst["level"],
                "score": f"{worst['score']:.2f}",
                "call": worst.get("call"),
                "factors": ", ".join(worst.get("factors") or []),
            }
            if worst and worst.get("level") != level
            else None
        ),
        "idle": [
            {"name": s["name"], "why": s.get("why") or ""} for s in w.get("signals") or [] if s.get("severity") is None
        ],
    }


def _calls_text(calls: list[int], shown: int = 8) -> str:
    if not calls:
        return ""
    more = f" and {len(calls) - shown} more" if len(calls) > shown else ""
    return ", ".join(f"#{c}" for c in calls[:shown]) + more


def _section_view(i: int, s: TraceSection) -> dict[str, Any]:
    r = s.report
    h = r.extra.get("health") or {}
    window = h.get("window") or r.window
    last = r.prompt_tokens[-1] if r.prompt_tokens else None
    largest_top = max((x["chars"] for x in r.largest_results), default=0) or 1
    duration = duration_text(r.duration_ms)
    if r.active_duration_ms is not None and r.duration_ms is not None and r.active_duration_ms != r.duration_ms:
        duration += f" ({duration_text(r.active_duration_ms)} active)"
    elif r.duration_ms is None and s.reported_duration_ms is not None:
        duration = f"{duration_text(s.reported_duration_ms)} (the result line's)"
    notes = list(s.notes)
    axes, first_axis = chart_axes(s)
    if len(axes) > 1 and first_axis == "calls":
        notes.append(
            f"drawn by call number first: the session was idle (gaps over 30 minutes) for "
            f"{duration_text((r.duration_ms or 0) - (r.active_duration_ms or 0))} of its "
            f"{duration_text(r.duration_ms)}; 'by time' redraws it on the clock"
        )
    if h.get("window_source") not in (None, "option"):
        notes.append(f"window {fmt_int(window)}: {_WINDOW_SOURCES.get(h['window_source'], h['window_source'])}")
    if s.threshold.get("tokens") and s.threshold.get("source") != "observed":
        notes.append(
            f"autocompact threshold ≈ {fmt_int(s.threshold['tokens'])}: window − 20,000 output reserve − 13,000 "
            "(no auto compaction observed)"
        )
    if r.spikes:
        notes.append(
            f"{len(r.spikes)} spike(s) (calls {_calls_text([k + 1 for k in r.spikes])}); "
            f"peak without them {fmt_int(r.peak_without_spikes)}"
        )
    if r.skipped_lines:
        notes.append(f"{fmt_int(r.skipped_lines)} line(s) skipped (see stderr)")
    notes.extend(f"warning: {w}" for w in r.warnings)
    if s.cost["lower_bound"] and s.cost["reasons"]:
        notes.append("cost is a lower bound: " + ", ".join(str(x) for x in s.cost["reasons"]))
    return {
        "id": f"t{i + 1}",
        "index": i,
        "number": i + 1,
        "trace": r.trace,
        "path": r.path,
        "format": r.format,
        "session_id": r.session_id,
        "models": ", ".join(r.models) or "–",
        "cli_version": r.cli_version or "–",
        "start": f"{utc_text(s.start_ms)} UTC" if s.start_ms is not None else "–",
        "duration": duration,
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
        "notes": notes,
        "panels": s.panels,
    }


_WINDOW_SOURCES = {
    "option": "from --window",
    "modelUsage": "from the result line's modelUsage",
    "default": "Claude Code's default; the trace does not say",
    "peak": "assumed: the peak exceeds 200,000",
    "model [1m]": "a model id ends in [1m]",
}


def _figures(r: TraceReport) -> list[tuple[str, str]]:
    """The `context trace` row of one trace, as (column, cell) pairs."""
    return [
        ("calls", fmt_int(r.calls)),
        ("first", fmt_int(r.first)),
        ("peak", fmt_int(r.peak)),
        ("fill", fmt_percent(r.fill) if r.fill is not None else "–"),
        ("growth", fmt_int(r.growth)),
        ("compact", fmt_int(r.compact)),
        ("tools", fmt_int(r.tools)),
        ("failed", f"{fmt_int(r.failed)} ({r.denied} denied)" if r.denied else fmt_int(r.failed)),
        ("repeat", fmt_int(r.repeat)),
        ("result chars", fmt_int(r.result_chars)),
        ("subagent calls", fmt_int(r.subagent_calls)),
    ]


#: The index table's columns: (header, key of the row's sort value, numeric).
INDEX_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("trace", "trace", False),
    ("calls", "calls", True),
    ("first", "first", True),
    ("peak", "peak", True),
    ("fill", "fill", True),
    ("growth", "growth", True),
    ("compact", "compact", True),
    ("tools", "tools", True),
    ("failed", "failed", True),
    ("repeat", "repeat", True),
    ("result chars", "result_chars", True),
    ("health", "health", True),
    ("weather", "weather", True),
    ("cost", "cost", True),
)


def short_names(names: Sequence[str]) -> list[str]:
    """The trace names without the folders they all share (the index's first column; the title keeps all).

    >>> short_names(["samples/a.jsonl#1", "samples/b/c.jsonl"]), short_names(["x.jsonl"])
    (['a.jsonl#1', 'b/c.jsonl'], ['x.jsonl'])
    """
    if len(names) < 2:
        return list(names)
    parts = [n.replace("\\", "/").split("/") for n in names]
    common = 0
    while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
        common += 1
    return ["/".join(p[common:]) for p in parts]


def _index_row(i: int, s: TraceSection, short: str) -> dict[str, Any]:
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
        "cells": {
            "calls": fmt_int(r.calls),
            "first": fmt_int(r.first),
            "peak": fmt_int(r.peak),
            "fill": fmt_percent(fill) if fill is not None else "–",
            "growth": fmt_int(r.growth),
            "compact": fmt_int(r.compact),
            "tools": fmt_int(r.tools),
            "failed": f"{fmt_int(r.failed)} ({r.denied} denied)" if r.denied else fmt_int(r.failed),
            "repeat": fmt_int(r.repeat),
            "result_chars": fmt_int(r.result_chars),
            "cost": s.cost["text"],
        },
        "sort": {
            "trace": r.trace,
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


def index_datasets(sections: Sequence[TraceSection]) -> dict[str, dict[str, list[Any]]]:
    """The index chart's data: one row per trace and figure (`first`, `peak`), columnar.

    Columns: `label` ("#1", ...: the trace's number in the page), `trace`, `figure` ("first" or "peak"),
    `tokens` (exactly the report's `first` / `peak`), `href` (the link to its section).
    """
    out: dict[str, list[Any]] = {"label": [], "trace": [], "figure": [], "tokens": [], "href": []}
    for i, s in enumerate(sections):
        for figure in ("first", "peak"):
            out["label"].append(f"#{i + 1}")
            out["trace"].append(s.report.trace)
            out["figure"].append(figure)
            out["tokens"].append(getattr(s.report, figure))
            out["href"].append(f"#t{i + 1}")
    return {"traces": out}


def build_page(
    run: RunResult,
    window: int | None = None,
    paths: Sequence[str] = (),
    generated_at: datetime | None = None,
    compare: dict[str, Any] | None = None,
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
            "window": fmt_int(window) if window else None,
            "traces": len(sections),
        },
        "index": (
            {
                "columns": [{"label": h, "key": k, "numeric": num} for h, k, num in INDEX_COLUMNS],
                "rows": [
                    _index_row(i, s, short)
                    for i, (s, short) in enumerate(zip(sections, short_names([s.trace for s in sections]), strict=True))
                ],
            }
            if several
            else None
        ),
        "sections": [_section_view(i, s) for i, s in enumerate(sections)],
        "failures": [f.message for f in run.failures],
        "left_out": run.left_out,
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


# -- comparing conditions (`context compare`) -----------------------------------------------------------


def compare_view(
    conditions: Sequence[Any], results: Sequence[RunResult], baseline: str | None = None, first_number: int = 1
) -> dict[str, Any]:
    """The comparison section: each metric per condition, the runs as points and the median marked.

    Parameters
    ----------
    conditions
        `compare.Condition`s (`compare.parse_conditions`).
    results
        One run of `TraceSection`s per condition, in the same order (`runner.analyze` with `build_section`).
    baseline
        The baseline condition's name; None: the first.
    first_number
        The page number of the first condition's first trace (the sections are the conditions' runs in
        order), so each point links to its run's section.

    Returns
    -------
    dict
        `baseline`, `rows` (`compare.metric_row`'s figures per metric and condition, formatted as
        `context compare` prints them), `warnings` (their kinds), and `datasets` for the chart: `runs`
        (one row per run and metric: `metric`, `condition`, `value`, `trace`, `href`, `kind` "run") and
        the medians (`kind` "median").
    """
    from contexttrace.render.compare import fmt_p, fmt_value, label
    from contexttrace.reports import compare as cmp

    figures = [
        RunResult(reports=[cmp.RunFigures(s.report, s.usage) for s in r.reports], failures=list(r.failures))
        for r in results
    ]
    comparison = cmp.compare(conditions, figures, baseline=baseline)
    numbers: dict[int, int] = {}  # id of a run's report -> its page number
    k = first_number
    for r in results:
        for s in r.reports:
            numbers[id(s.report)] = k
            k += 1
    points: dict[str, list[Any]] = {k: [] for k in ("metric", "condition", "value", "trace", "href", "kind")}
    for key in comparison.metrics:
        metric = cmp.METRICS[key]
        for group in comparison.conditions:
            for run in group.runs:
                value = metric.value(run)
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    continue
                points["metric"].append(label(key))
                points["condition"].append(group.name)
                points["value"].append(value)
                points["trace"].append(run.report.trace)
                points["href"].append(f"#t{numbers.get(id(run.report), 0)}")
                points["kind"].append("run")
            row = comparison.row(group.name, key)
            if row["median"] is not None:
                points["metric"].append(label(key))
                points["condition"].append(group.name)
                points["value"].append(row["median"])
                points["trace"].append(f"median of {row['runs']} run(s)")
                points["href"].append("")
                points["kind"].append("median")
    rows = [
        {
            "metric": label(r["metric"]),
            "condition": r["condition"],
            "runs": r["runs"],
            "median": fmt_value(r["median"], r["unit"]),
            "range": "–" if r["min"] is None else f"{fmt_value(r['min'], r['unit'])}–{fmt_value(r['max'], r['unit'])}",
            "delta": fmt_value(r["delta"], r["unit"], signed=True),
            "delta_pct": "–" if r["delta_pct"] is None else f"{r['delta_pct']:+.0f}%",
            "noise": {True: "within noise", False: "beyond noise"}.get(r["within_noise"], "–"),
            "p": fmt_p(r["p_value"]),
        }
        for r in comparison.rows
    ]
    return {
        "baseline": comparison.baseline,
        "conditions": [
            {"name": g.name, "runs": len(g.runs), "no_call": len(g.no_call), "failures": g.failures}
            for g in comparison.conditions
        ],
        "rows": rows,
        "warnings": [w.get("kind", "") for w in comparison.warnings],
        "datasets": {"runs": points},
        "height": 26 * len(comparison.conditions) + 24,
    }
