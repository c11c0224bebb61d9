"""Health against spec 000 itself: an independent transliteration of the spec's TypeScript (`computeFillScore`
… `computeHealthGrade`), sharing no code with `contexttrace.analysis.health*`, fed with each bundled sample's
and case's inputs, must give the grade, score and every sub-score that contexttrace gives.

The inputs are read here from the trace's tables (`spec_input_of`, not `session.session_rows`): the
main-thread calls' prompts (a call whose usage could not be read, prompt 0, is left out,
docs/health-weather.md), the main thread's compactions, and its tool calls in order with name, Read
`file_path` and `is_error` (a refusal is not an error). Another agent's tools are named as spec 000 names
Claude Code's: a tool that reads one file (`contract.READ_TOOLS`) is "Read", a tool that writes or edits
files (`contract.EDIT_TOOLS`) is "Edit". The one parameter the port takes beyond the spec is the window:
spec 000 hard-codes 200,000 in `computeFillScore`; contexttrace uses the effective window
(`window.window_choice`), which the port is given.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from contexttrace import read_trace
from contexttrace.analysis.health import health_grade, health_report
from contexttrace.analysis.health_scores import composite
from contexttrace.analysis.health_timeline import TIMELINE_STEPS
from contexttrace.analysis.metrics import measured
from contexttrace.analysis.session import (
    AXIS_CALLS,
    AXIS_TIME,
    Compaction,
    MainCall,
    SessionRows,
    ToolCall,
    session_rows,
)
from contexttrace.analysis.window import window_choice
from contexttrace.reading import Trace
from contexttrace.reading.contract import EDIT_TOOLS, READ_TOOLS
from contexttrace.reports.results import TraceReport
from contexttrace.run.runner import analyze

from ..conftest import CASES, SAMPLES

# --- spec 000, transliterated line by line (JavaScript numbers are IEEE doubles, as Python floats) ----------


@dataclass
class SpecTool:
    tool_name: str
    file_path: str | None
    is_error: bool


@dataclass
class HealthInput:
    assistant_input_tokens: list[int]  # assistantRecords[].inputTokens, in order
    compaction_events: int  # compactionEvents.length
    tool_calls: list[SpecTool]


def compute_fill_score(inp: HealthInput, max_window: int = 200_000) -> int:
    latest = inp.assistant_input_tokens[-1] if inp.assistant_input_tokens else None
    if latest is None:
        return 100  # no data = healthy
    fill_pct = latest / max_window
    if fill_pct < 0.50:
        return 100
    if fill_pct < 0.65:
        return 80
    if fill_pct < 0.80:
        return 60
    if fill_pct < 0.90:
        return 40
    return 20


def compute_compaction_score(inp: HealthInput) -> int:
    count = inp.compaction_events
    if count == 0:
        return 100
    if count == 1:
        return 75
    if count == 2:
        return 55
    if count == 3:
        return 35
    return 15


def compute_reread_score(inp: HealthInput) -> int:
    reads = [t for t in inp.tool_calls if t.tool_name == "Read" and t.file_path]
    if len(reads) == 0:
        return 100
    seen: set[str] = set()
    rereads = 0
    for read in reads:
        if read.file_path in seen:
            rereads += 1
        else:
            seen.add(read.file_path)  # type: ignore[arg-type]
    ratio = rereads / len(reads)
    if ratio <= 0.05:
        return 100
    if ratio <= 0.10:
        return 80
    if ratio <= 0.20:
        return 60
    if ratio <= 0.35:
        return 40
    return 20


def compute_error_acceleration_score(inp: HealthInput) -> int:
    calls = inp.tool_calls
    if len(calls) < 4:
        return 100  # too few calls to judge
    mid = math.floor(len(calls) / 2)
    first_half, second_half = calls[:mid], calls[mid:]
    first_errors = len([c for c in first_half if c.is_error]) / len(first_half)
    second_errors = len([c for c in second_half if c.is_error]) / len(second_half)
    if first_errors == 0 and second_errors == 0:
        return 100
    if first_errors == 0 and second_errors > 0:
        return 40  # went from clean to errors
    ratio = second_errors / first_errors
    if ratio <= 1.0:
        return 100
    if ratio <= 2.0:
        return 75
    if ratio <= 3.0:
        return 55
    if ratio <= 5.0:
        return 35
    return 15


def compute_tool_efficiency_score(inp: HealthInput) -> int:
    calls = inp.tool_calls
    if len(calls) < 4:
        return 100

    def is_productive(name: str) -> bool:
        return name in ["Write", "Edit", "MultiEdit"]

    mid = math.floor(len(calls) / 2)
    first_half, second_half = calls[:mid], calls[mid:]
    first_ratio = len([c for c in first_half if is_productive(c.tool_name)]) / len(first_half)
    second_ratio = len([c for c in second_half if is_productive(c.tool_name)]) / len(second_half)
    if first_ratio == 0:
        return 80  # no writes at all — could be research phase
    change = second_ratio / first_ratio
    if change >= 0.9:
        return 100
    if change >= 0.7:
        return 75
    if change >= 0.4:
        return 55
    if change >= 0.15:
        return 35
    return 15


def to_grade(score: float) -> str:
    return "A" if score >= 85 else "B" if score >= 70 else "C" if score >= 55 else "D" if score >= 40 else "F"


def js_math_round(x: float) -> int:
    """JavaScript's `Math.round` for the composite's range (0–100): the nearest integer, a half up."""
    return math.floor(x + 0.5)


def compute_health_grade(inp: HealthInput, max_window: int = 200_000) -> tuple[str, int, list[int]]:
    signals = [
        ("Context Fill", compute_fill_score(inp, max_window), 0.40),
        ("Compactions", compute_compaction_score(inp), 0.25),
        ("Re-reads", compute_reread_score(inp), 0.15),
        ("Error Rate", compute_error_acceleration_score(inp), 0.10),
        ("Tool Efficiency", compute_tool_efficiency_score(inp), 0.10),
    ]
    composite = 0.0
    for _, value, weight in signals:  # signals.reduce((sum, s) => sum + s.value * s.weight, 0)
        composite = composite + value * weight
    return to_grade(composite), js_math_round(composite), [value for _, value, _ in signals]


# --- the measured inputs ---------------------------------------------------------------------------------


def spec_name(name: str) -> str:
    """A tool's name as spec 000 writes it: another agent's file read is "Read", its file write or edit "Edit"."""
    return "Read" if name in READ_TOOLS else "Edit" if name in EDIT_TOOLS else name


def spec_input(rows: SessionRows) -> HealthInput:
    """Spec 000's `HealthInput` from a session's rows: measured prompts, compactions, tool calls in order."""
    return HealthInput(
        assistant_input_tokens=[c.prompt_tokens for c in rows.calls if measured(c.prompt_tokens)],
        compaction_events=len(rows.compactions),
        tool_calls=[
            SpecTool(spec_name(t.name), t.file_path if t.name in READ_TOOLS else None, t.is_error) for t in rows.tools
        ],
    )


def spec_input_of(trace: Trace) -> HealthInput:
    """Spec 000's `HealthInput` read from a trace's tables with Polars (no contexttrace analysis code)."""
    main = pl.col("thread_kind") == "main"
    calls = trace.calls.filter(main).sort("seq")
    compactions = trace.events.filter(main & (pl.col("kind") == "compact_boundary")).height
    results = trace.tool_results.filter(main)
    failed: dict[str, bool] = {}
    for tid, is_error, denied in results.select("tool_use_id", "is_error", "denied").iter_rows():
        if tid is not None:  # a later result of the same call wins; a refusal is not an error
            failed[tid] = bool(is_error) and not bool(denied)
    uses = trace.tool_uses.filter(main).sort("seq")
    tools = [
        SpecTool(spec_name(name), path if name in READ_TOOLS and path else None, failed.get(tid, False))
        for tid, name, path in uses.select("tool_use_id", "name", "file_path").iter_rows()
    ]
    prompts = [p for p in calls.get_column("prompt_tokens").to_list() if p is not None and p > 0]
    return HealthInput(assistant_input_tokens=prompts, compaction_events=compactions, tool_calls=tools)


def _inputs() -> list[str]:
    paths = sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())
    return paths + sorted(str(p) for p in CASES.iterdir() if p.suffix == ".jsonl" or p.is_dir())


def _traces(path: str) -> list[tuple[str, Trace, TraceReport]]:
    """(name, trace, the report contexttrace printed for it) of each trace of a sample or case path."""
    out = []
    for report in analyze([path], workers=1).reports:
        file, _, run = report.trace.partition("#")
        out.append((report.trace, read_trace(file)[int(run) - 1 if run else 0], report))
    return out


INPUTS = _inputs()


def _id(path: str) -> str:
    return str(Path(path).relative_to(SAMPLES.parent))


@pytest.mark.parametrize("path", INPUTS, ids=_id)
def test_health_equals_spec_000(path):
    """Grade, score and each sub-score equal the spec's code fed with the trace's measured inputs; a trace
    without a model call is the one exception (ungraded, where the spec would say A 100)."""
    for name, trace, report in _traces(path):
        rows = session_rows(trace)
        ours = report.extra["health"]
        assert (ours["grade"], ours["score"]) == (health_report(trace)["grade"], health_report(trace)["score"])
        if not rows.calls:
            assert (ours["grade"], ours["score"], ours["reason"]) == (None, None, "no model call: nothing to grade")
            continue
        spec = compute_health_grade(spec_input_of(trace), window_choice(trace).tokens)
        assert (ours["grade"], ours["score"], [s["value"] for s in ours["signals"]]) == spec, name


def _cuts(rows: SessionRows) -> list[SessionRows]:
    """The rows each timeline point grades (the rule `health_timeline`'s docstring states)."""
    n = len(rows.calls)
    out = []
    for k in range(TIMELINE_STEPS + 1):
        if rows.axis == AXIS_TIME:
            start, end = min(rows.times.values()), max(rows.times.values())
            out.append(rows.cut_at_time(end if k == TIMELINE_STEPS else start + (end - start) * k / TIMELINE_STEPS))
        else:
            last = k * (n - 1) // TIMELINE_STEPS
            out.append(rows.cut(rows.calls[last + 1].seq) if last < n - 1 else rows)
    return out


@pytest.mark.parametrize("path", INPUTS, ids=_id)
def test_timeline_equals_spec_000_at_every_point(path):
    """Each point of the health bar is the spec's grade of the rows read by then (no grade before a call)."""
    for name, trace, report in _traces(path):
        h = report.extra["health"]
        if h["grade"] is None:
            assert h["timeline"] == [], name
            continue
        window = window_choice(trace).tokens
        expected = [
            compute_health_grade(spec_input(cut), window)[:2] if cut.calls else (None, None)
            for cut in _cuts(session_rows(trace))
        ]
        assert [(p["grade"], p["score"]) for p in h["timeline"]] == expected, name


def test_every_sample_and_case_is_compared():
    """The comparison sees every sample (the 27 runs of a-ralph in one, the Codex rollouts, the Gemini
    sessions) and every case, graded or not."""
    names = {Path(p).name for p in INPUTS}
    assert {"a-ralph-27runs-with-separators.jsonl", "b-spotter-compaction", "B38.jsonl", "B30"} <= names
    assert {"c-codex-0.65-compaction.jsonl", "c-codex-0.111-exec-command.jsonl", "d-gemini-sessions"} <= names
    assert len(analyze([str(SAMPLES / "a-ralph-27runs-with-separators.jsonl")], workers=1).reports) == 27


# --- where exact arithmetic and the spec's floats could part ------------------------------------------------


def test_composite_in_integers_equals_the_spec_floats_for_every_sub_score_combination():
    """Every combination of the sub-scores the five signals can give (5 × 5 × 5 × 6 × 6) has the same grade
    and score whether composed in integers (ours) or in the spec's floats with `Math.round`."""
    fills, counts, rereads = (100, 80, 60, 40, 20), (100, 75, 55, 35, 15), (100, 80, 60, 40, 20)
    errors, efficiency = (100, 75, 55, 40, 35, 15), (100, 80, 75, 55, 35, 15)
    for values in itertools.product(fills, counts, rereads, errors, efficiency):
        spec = 0.0
        for value, weight in zip(values, (0.40, 0.25, 0.15, 0.10, 0.10), strict=True):
            spec = spec + value * weight
        assert composite(values) == (js_math_round(spec), to_grade(spec)), values


def _rows_with(tools: list[ToolCall]) -> SessionRows:
    return SessionRows([MainCall(1, 1_000, 0, None, None, None)], tools, [], {}, AXIS_CALLS)


@pytest.mark.parametrize(
    ("n", "first_hits", "second_hits", "kind", "spec_float", "ours"),
    [
        # 12 tool calls: 1 of 6 failed, then 5 of 6. The rate ratio is exactly 5.0 (`<= 5.0`, 35); the spec's
        # float division gives 5.000000000000001 and 15.
        pytest.param(12, 1, 5, "errors", 15, 35, id="error-ratio-5.0"),
        # 22 tool calls: 3 of 11, then 9 of 11: exactly 3.0 (55); floats give 3.0000000000000004 and 35.
        pytest.param(22, 3, 9, "errors", 35, 55, id="error-ratio-3.0"),
        # 12 tool calls: 5 of 6 productive, then 2 of 6: a change of exactly 0.4 (55); floats 0.39999999999999997.
        pytest.param(12, 5, 2, "writes", 35, 55, id="efficiency-change-0.4"),
    ],
)
def test_rate_ratios_are_compared_exactly(n, first_hits, second_hits, kind, spec_float, ours):
    """A ratio of two rates on a band edge takes the spec's band for that edge. The spec's code divides
    floats twice and can land a hair past the edge; contexttrace compares the exact ratio (the decision in
    docs/health-weather.md). The samples and cases never sit on such an edge (the tests above agree)."""
    mid = n // 2
    hits = [k < first_hits for k in range(mid)] + [k < second_hits for k in range(n - mid)]
    if kind == "errors":
        tools = [ToolCall(10 + k, "Bash", None, hit, False, 11 + k, 0) for k, hit in enumerate(hits)]
        index, spec = 3, compute_error_acceleration_score
    else:
        tools = [
            ToolCall(10 + k, "Edit" if hit else "Bash", None, False, False, 11 + k, 0) for k, hit in enumerate(hits)
        ]
        index, spec = 4, compute_tool_efficiency_score
    rows = _rows_with(tools)
    assert spec(spec_input(rows)) == spec_float
    assert health_grade(rows, 200_000)["signals"][index]["value"] == ours
    exact = Fraction(second_hits, n - mid) / Fraction(first_hits, mid)
    assert exact in (Fraction(5), Fraction(3), Fraction(2, 5))


_EDGES = {Fraction(e) for e in ("1", "2", "3", "5", "0.9", "0.7", "0.4", "0.15")}


def _on_an_edge(tools: list[ToolCall]) -> bool:
    """Whether a rate ratio of these tool calls is exactly a band edge (where the spec's floats may part)."""
    n, mid = len(tools), len(tools) // 2
    if n < 4:
        return False
    for hit in (lambda t: t.is_error, lambda t: t.name in ("Write", "Edit", "MultiEdit")):
        first, second = sum(map(hit, tools[:mid])), sum(map(hit, tools[mid:]))
        if first and Fraction(second * mid, (n - mid) * first) in _EDGES:
            return True
    return False


@settings(max_examples=400, deadline=None)
@given(
    prompts=st.lists(
        st.sampled_from([0, 1_000, 99_999, 100_000, 129_999, 130_000, 160_000, 180_000, 250_000]),
        min_size=1,
        max_size=6,
    ),
    tools=st.lists(
        st.tuples(
            st.sampled_from(["Read", "Read", "Edit", "Write", "MultiEdit", "Bash"]),
            st.sampled_from(["a", "b", "c", "d", None]),
            st.booleans(),
        ),
        max_size=40,
    ),
    compactions=st.integers(0, 5),
    window=st.sampled_from([200_000, 1_000_000]),
)
def test_random_sessions_equal_spec_000(prompts, tools, compactions, window):
    """On random sessions (unmeasured calls, 0–40 tool calls, reads with and without a path, errors, 0–5
    compactions) grade, score and sub-scores equal the spec's code, but where a rate ratio is exactly a band
    edge (`test_rate_ratios_are_compared_exactly`)."""
    calls = [MainCall(k, p, 0, None, None, None) for k, p in enumerate(prompts)]
    tool_rows = [ToolCall(100 + k, name, path if name == "Read" else None, err, False, 200 + k, 0)
                 for k, (name, path, err) in enumerate(tools)]  # fmt: skip
    bounds = [Compaction(50 + k, "auto", None) for k in range(compactions)]
    rows = SessionRows(calls, tool_rows, bounds, {}, AXIS_CALLS)
    assume(not _on_an_edge(tool_rows))
    h = health_grade(rows, window)
    assert (h["grade"], h["score"], [s["value"] for s in h["signals"]]) == compute_health_grade(
        spec_input(rows), window
    )
