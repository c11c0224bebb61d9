"""The data of the report page's growth chart and the health bar under it, columnar, for both x axes.

Built in `section.build_section` (in a worker process when the run is parallel) from the `Trace` and its
`TraceReport`: the series the charts need and the report alone does not hold (each call's moment and tools,
the subagent calls, the re-reads). Pure: no HTML, no chart library, nothing printed; strings from a trace go
into data only, never into a chart spec's expressions.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from contexttrace.analysis.frame_rows import FrameRows
from contexttrace.analysis.session import session_rows_of
from contexttrace.reading import Trace
from contexttrace.reading.contract import READ_TOOLS, THREAD_SUBAGENT
from contexttrace.render.text import GRADE_COLORS, fmt_int
from contexttrace.reports.results import TraceReport

#: Colour of a health-bar point with no grade (before the first model call).
NO_GRADE_COLOR = "#585b70"
#: Health-bar slices between two 5 % points: the colour is interpolated across them (spec 000).
HEALTH_SLICES_PER_STEP = 4

#: Tool names listed per call in the growth chart's hover text; the rest are counted.
TOOLS_SHOWN = 6

Columns = dict[str, list[Any]]


def growth_datasets(
    trace: Trace, report: TraceReport, threshold: dict[str, Any]
) -> tuple[dict[str, Columns], str, list[str]]:
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
    session = session_rows_of(trace, FrameRows(trace))
    axis = session.axis
    call_seqs = [c.seq for c in session.calls]
    call_times = [session.times.get(seq) for seq in call_seqs] if axis == "time" else []
    moment = _moment_of(session.times, axis)
    subagents, notes = _subagent_rows(trace, axis, call_seqs, call_times)
    health = report.extra.get("health") or {}
    datasets = {
        "calls": _call_rows(session, report.prompt_tokens, moment),
        "subagents": subagents,
        "compactions": _compaction_rows(report, session.compactions, moment, call_times, len(call_seqs)),
        "limits": _limit_rows(health.get("window") or report.window, threshold),
        "health": health_slices(health.get("timeline") or [], axis, _CallPlacer(call_times)),
        "rereads": _reread_rows(session.tools, axis, moment),
    }
    return datasets, axis, notes


def _moment_of(times: dict[int, Any], axis: str) -> Callable[[int], int | None]:
    """A line's moment on the time axis (Unix epoch ms, by its seq), or None: on the calls axis, or unknown."""

    def xt_of(seq: int) -> int | None:
        moment = times.get(seq) if axis == "time" else None
        return None if moment is None else int(moment)

    return xt_of


def _call_rows(session: Any, series: list[int], xt_of: Callable[[int], int | None]) -> Columns:
    """One row per main-thread call: `call`, `xc`, `xt`, `tokens` (the report's), `tools` (`tools_text`)."""
    n = len(session.calls)
    tools_per_call: list[list[str]] = [[] for _ in range(n)]
    for t in session.tools:
        if 0 <= t.call_index < n:
            tools_per_call[t.call_index].append(t.name)
    calls: Columns = {"call": [], "xc": [], "xt": [], "tokens": [], "tools": []}
    for i, c in enumerate(session.calls):
        calls["call"].append(i + 1)
        calls["xc"].append(i + 1)
        calls["xt"].append(xt_of(c.seq))
        calls["tokens"].append(series[i])
        calls["tools"].append(tools_text(tools_per_call[i]))
    return calls


def _compaction_rows(
    report: TraceReport,
    bounds: Sequence[Any],
    xt_of: Callable[[int], int | None],
    call_times: list[float | None],
    n: int,
) -> Columns:
    """One row per compaction: the report's events, in the same (seq) order as the session's boundaries;
    `n` main calls."""
    keys = ("xc", "xt", "trigger", "pre", "post", "call", "label", "detail",
            "label_left_c", "label_right_c", "label_left_t", "label_right_t")  # fmt: skip
    comps: Columns = {k: [] for k in keys}
    t_lo = min((t for t in call_times if t is not None), default=None)
    t_hi = max((t for t in call_times if t is not None), default=None)
    for event, bound in zip(report.compaction_events, bounds, strict=False):
        call = event.get("call")
        xc = (call if call is not None else n + 1) - 0.5
        xt = xt_of(bound.seq)
        label = compaction_label(event)
        comps["xc"].append(xc)
        comps["xt"].append(xt)
        comps["trigger"].append(event.get("trigger"))
        comps["pre"].append(event.get("pre_tokens"))
        comps["post"].append(event.get("post_tokens"))
        comps["call"].append(call)
        comps["label"].append(label)
        comps["detail"].append(compaction_detail(event))
        for suffix, side in (("c", _side(xc, 1, n)), ("t", _side(xt, t_lo, t_hi))):
            comps[f"label_left_{suffix}"].append(label if side == "left" else "")
            comps[f"label_right_{suffix}"].append(label if side == "right" else "")
    return comps


def _limit_rows(window: int | None, threshold: dict[str, Any]) -> Columns:
    """The window and the autocompact threshold (≈ unless observed) as horizontal lines."""
    limits: Columns = {"kind": [], "tokens": [], "label": []}
    if window:
        limits["kind"].append("window")
        limits["tokens"].append(window)
        limits["label"].append(f"window {fmt_int(window)}")
    if threshold.get("tokens"):
        approx = "" if threshold["source"] == "observed" else "≈ "
        limits["kind"].append("autocompact")
        limits["tokens"].append(threshold["tokens"])
        limits["label"].append(f"autocompact {approx}{fmt_int(threshold['tokens'])}")
    return limits


def _reread_rows(tools: Sequence[Any], axis: str, xt_of: Callable[[int], int | None]) -> Columns:
    """One row per Read (`contract.READ_TOOLS`) of a file read before (health's Re-reads), at the call that
    asked for it."""
    rereads: Columns = {"xc": [], "xt": [], "label": []}
    first_read: dict[str, Any] = {}
    for t in tools:
        if t.name not in READ_TOOLS or not t.file_path:
            continue
        if t.file_path in first_read:
            earlier = first_read[t.file_path]
            where = f"{utc_text(xt_of(earlier.seq))} UTC" if axis == "time" else f"call #{earlier.call_index + 1}"
            rereads["xc"].append(t.call_index + 1)
            rereads["xt"].append(xt_of(t.seq))
            rereads["label"].append(f"File re-read: {t.file_path} was already read at {where}")
        else:
            first_read[t.file_path] = t
    return rereads


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
        ca, cb = grade_color(a.get("grade")), grade_color(b.get("grade"))
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


def grade_color(grade: str | None) -> str:
    """A grade's colour (`GRADE_COLORS`), `NO_GRADE_COLOR` for no grade.

    >>> grade_color("A"), grade_color(None)
    ('#a6e3a1', '#585b70')
    """
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
