"""The other readings over the directory corpus: `context usage`, and health + weather.

Target (issue 5): each adds at most 15 % to `context trace`'s time. `context usage` is its own command,
timed end to end. Health and weather have no command of their own: they are computed inside every
`context trace` report. What they add is measured as `context trace` with them against `context trace`
with them replaced by stubs, in paired rounds (`test_health_weather_added`); their one-core time over
traces read beforehand is kept for reference (`test_health_weather`).
"""

from __future__ import annotations

import statistics
import time

import pytest
from conftest import FIGURES, PAIRED, cli_reports, run_cli

from contexttrace.analysis.frame_rows import FrameRows
from contexttrace.analysis.health import health_of
from contexttrace.analysis.session import session_rows_of
from contexttrace.analysis.weather import weather_of
from contexttrace.analysis.window import window_choice
from contexttrace.discover.local import find_traces
from contexttrace.reading import gc_paused
from contexttrace.reports import trace as report
from contexttrace.run.runner import read_sources


def test_command_usage(timed, corpora):
    corpus = corpora["directory"]
    out = timed("e2e-usage-directory", run_cli, ["context", "usage", *corpus.paths, "--json", "--no-cache"])
    assert out.strip().startswith("[")


def _health_and_weather(traces_and_rows):
    """What a report computes for health and weather alone (its rows are read for the other figures
    anyway), with the collector paused as `context trace` runs it."""
    grades = []
    with gc_paused():
        for trace, rows in traces_and_rows:
            session = session_rows_of(trace, rows)
            choice = window_choice(trace)
            health = health_of(session, choice)
            weather = weather_of(session, choice.tokens)
            grades.append((health["grade"], weather["level"]))
    return grades


def test_health_weather(timed, corpora):
    corpus = corpora["directory"]
    reads = read_sources(find_traces(list(corpus.paths)), workers=1)
    traces = [t for r in reads if isinstance(r, list) for t in r]
    assert len(traces) == len(corpus.expected)
    grades = timed("health-weather-directory", _health_and_weather, [(t, FrameRows(t)) for t in traces])
    assert len(grades) == len(traces)
    assert all(g is None or g in "ABCDF" for g, _ in grades)


def test_health_weather_added(corpora, rounds, benchmark_enabled, monkeypatch):
    """`context trace --json` over the directory with health and weather, and with them stubbed out (the
    workers are forked, so they run the stubs too): the median of the paired rounds' added share."""
    corpus = corpora["directory"]
    args = ["context", "trace", *corpus.paths, "--json", "--no-cache"]
    added = []
    for k in range(rounds if benchmark_enabled else 1):
        times = {}
        for which in ("with", "without") if k % 2 == 0 else ("without", "with"):
            with monkeypatch.context() as m:
                if which == "without":
                    m.setattr(report, "session_rows_of", lambda trace, rows: None)
                    m.setattr(report, "health_of", lambda session, choice: {"grade": "-"})
                    m.setattr(report, "weather_of", lambda session, window: {"level": "-"})
                start = time.perf_counter()
                reports = cli_reports(args)
                times[which] = time.perf_counter() - start
            assert {r["health"]["grade"] == "-" for r in reports} == {which == "without"}
        added.append((times["with"] - times["without"]) / times["with"])
    if benchmark_enabled:
        PAIRED["health-weather-added"] = statistics.median(added)
        FIGURES["paired-health-weather-added"] = [round(a, 3) for a in added]
    else:
        pytest.skip("timed only in a timed run")


#: Issue 13: `context tools` over the directory costs at most this many times `context trace`.
TOOLS_OVER_TRACE_LIMIT = 1.3


def test_command_tools(timed, corpora):
    corpus = corpora["directory"]
    out = timed("e2e-tools-directory", run_cli, ["context", "tools", *corpus.paths, "--json", "--no-cache"])
    assert out.strip().startswith("[")


def test_tools_over_trace(corpora, rounds, benchmark_enabled, pytestconfig):
    """`context tools --json` against `context trace --json` over the directory, in paired rounds (each
    order in turn): the median ratio, asserted under `--bench-enforce` (issue 13: at most 1.3)."""
    corpus = corpora["directory"]
    commands = {name: ["context", name, *corpus.paths, "--json", "--no-cache"] for name in ("trace", "tools")}
    ratios = []
    for k in range(rounds if benchmark_enabled else 1):
        times = {}
        for name in ("trace", "tools") if k % 2 == 0 else ("tools", "trace"):
            start = time.perf_counter()
            assert len(cli_reports(commands[name])) == len(corpus.expected)
            times[name] = time.perf_counter() - start
        ratios.append(times["tools"] / times["trace"])
    if not benchmark_enabled:
        pytest.skip("timed only in a timed run")
    PAIRED["tools-over-trace"] = statistics.median(ratios)
    FIGURES["paired-tools-over-trace"] = [round(r, 3) for r in ratios]
    if pytestconfig.getoption("--bench-enforce"):
        assert PAIRED["tools-over-trace"] <= TOOLS_OVER_TRACE_LIMIT
