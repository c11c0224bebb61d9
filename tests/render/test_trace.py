"""The `context trace` table renderers: cells, what goes in the table and what is a note, the --calls series."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from contexttrace.render.trace import (
    NOT_GRADED,
    SERIES_INDENT,
    health_cell,
    render_table,
    render_table_notes,
    weather_cell,
)
from contexttrace.reports.results import RunResult, TraceReport

from ..conftest import assistant, trace_and_report

HEALTH = {"grade": "A", "score": 94}
WEATHER = {"level": "sunny", "emoji": "☀️", "score": 0.1}
#: What a trace with no main-thread model call carries (what the health and weather modules give it).
UNGRADED_HEALTH = {"grade": None, "score": None, "reason": "no model call on the main thread"}
UNGRADED_WEATHER = {"level": None, "emoji": None, "score": None, "reason": "no model call on the main thread"}


def _report(**figures: Any) -> TraceReport:
    """A `TraceReport` with every field empty (0, "", [], {}, None) but those given."""
    empty = {"int": 0, "str": "t.jsonl", "bool": False}
    values = {}
    for f in dataclasses.fields(TraceReport):
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        kind = str(f.type)
        values[f.name] = (
            None if "None" in kind else [] if kind.startswith("list") else {} if "dict" in kind else empty[kind]
        )
    values["extra"] = {"health": HEALTH, "weather": WEATHER}
    return TraceReport(**{**values, **figures})


def _cells(text: str, row: int = 0) -> dict[str, str]:
    """The cells of a table row (0 = the first trace), keyed by header."""
    lines = text.splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return dict(zip(header, (c.strip() for c in lines[2 + row].strip("|").split("|")), strict=True))


@pytest.mark.parametrize(
    ("failed", "denied", "cell"),
    [
        pytest.param(6, 4, "6 (4 denied)", id="denials-named"),
        pytest.param(2, 0, "2", id="no-denial"),
        pytest.param(1200, 1000, "1,200 (1,000 denied)", id="thousands"),
    ],
)
def test_render_failed_cell_names_denials(failed, denied, cell):
    """The failed column counts failed results, and names how many of them were refusals."""
    text = render_table(RunResult([_report(failed=failed, denied=denied, tools=failed)]))
    assert _cells(text)["failed"] == cell


@pytest.mark.parametrize(
    ("health", "cell"),
    [
        pytest.param(HEALTH, "A 94", id="graded"),
        pytest.param(UNGRADED_HEALTH, NOT_GRADED, id="nothing-measured"),
        pytest.param(None, NOT_GRADED, id="none"),
        pytest.param({}, NOT_GRADED, id="no-keys"),
        pytest.param({"grade": "A"}, NOT_GRADED, id="no-score"),
    ],
)
def test_render_health_cell(health, cell):
    """A health with a grade and score shows them; anything else shows –, never a grade."""
    assert health_cell(health) == cell


@pytest.mark.parametrize(
    ("weather", "cell"),
    [
        pytest.param(WEATHER, "☀️ sunny", id="graded"),
        pytest.param(UNGRADED_WEATHER, NOT_GRADED, id="nothing-measured"),
        pytest.param(None, NOT_GRADED, id="none"),
        pytest.param({}, NOT_GRADED, id="no-keys"),
        pytest.param({"level": "fair"}, "fair", id="no-emoji"),
    ],
)
def test_render_weather_cell(weather, cell):
    """A weather with a level shows its emoji and level; one without shows –, never sunny."""
    assert weather_cell(weather) == cell


def test_render_table_ungraded_trace_shows_dashes():
    """A trace whose health and weather graded nothing shows – in both cells; the other trace its grades."""
    ungraded = _report(trace="none.jsonl", extra={"health": UNGRADED_HEALTH, "weather": UNGRADED_WEATHER})
    text = render_table(RunResult([_report(), ungraded]))
    assert (_cells(text, 0)["health"], _cells(text, 0)["weather"]) == ("A 94", "☀️ sunny")
    assert (_cells(text, 1)["health"], _cells(text, 1)["weather"]) == ("–", "–")


def test_render_table_holds_only_the_table():
    """Without --calls the table is all there is: every line a table line; the largest results are notes."""
    r = _report(largest_results=[{"tool": "Read", "chars": 55_483}, {"tool": "Bash", "chars": 165}])
    text = render_table(RunResult([r]))
    assert len(text.splitlines()) == 3
    assert all(line.startswith("|") and line.endswith("|") for line in text.splitlines())
    assert render_table_notes(RunResult([r, _report(trace="empty.jsonl")])) == [
        "t.jsonl: largest tool results (chars): Read 55,483, Bash 165"
    ]


def test_render_series_numbered_from_1_with_compactions():
    """--calls numbers each call from 1 and marks a compaction before the first call after it (or at the end)."""
    events = [
        {"call": 3, "trigger": "auto", "pre_tokens": 170_251},  # 1-based number of the call after it
        {"call": None, "trigger": "manual", "pre_tokens": None},  # no call after it
    ]
    r = _report(prompt_tokens=[26_450, 164_831, 36_081], compaction_events=events)
    text = render_table(RunResult([r, _report(trace="none.jsonl")]), with_calls=True)
    lines = text.splitlines()
    assert lines[4] == ""  # a blank line ends the table
    assert lines[5:] == [
        f"{SERIES_INDENT}t.jsonl: prompt tokens per call: 1:26,450 2:164,831 | compact (auto, pre 170,251) | "
        "3:36,081 | compact (manual) |",
        f"{SERIES_INDENT}none.jsonl: prompt tokens per call: (no calls)",
    ]


def test_render_series_cannot_be_read_as_table_rows():
    """The series lines sit after a blank line and are indented four spaces: a markdown code block."""
    r = _report(prompt_tokens=[1, 2], compaction_events=[{"call": 2, "trigger": "auto", "pre_tokens": 5}])
    text = render_table(RunResult([r]), with_calls=True)
    table, _, block = text.partition("\n\n")
    assert all(line.startswith("|") for line in table.splitlines())
    assert block and all(line.startswith("    ") for line in block.splitlines())


def test_render_table_empty_run_is_empty():
    """No reports, no table (the CLI then says where it looked)."""
    assert render_table(RunResult()) == ""
    assert render_table_notes(RunResult()) == []


def test_b26_fill_over_window_is_flagged(write):
    """B26: a peak above the given window gives fill > 1, which the table marks with '!'."""
    from contexttrace.render.diagnostics import render_diagnostics
    from contexttrace.render.trace import render_table
    from contexttrace.reports.results import RunResult

    _, rep = trace_and_report(write("t.jsonl", assistant("m1", 0, 0, 310000)), window=200000)
    assert rep.fill == 1.55
    run = RunResult([rep])
    assert "155%!" in render_table(run)
    assert any("exceeds the window" in line for line in render_diagnostics(run))
