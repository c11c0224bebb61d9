"""The other readings over the directory corpus: `context usage`, and health + weather.

Target (issue 5): each adds at most 15 % to `context trace`'s time. `context usage` is its own command,
timed end to end. Health and weather have no command of their own: they are computed inside every
`context trace` report, so they are timed apart here, on one core, over traces read beforehand, and
the summary gives their share of `context trace`'s end-to-end time.
"""

from __future__ import annotations

from conftest import run_cli

from contexttrace import metrics
from contexttrace.health import health_of, session_rows_of
from contexttrace.runner import read_sources
from contexttrace.sources import find_traces
from contexttrace.weather import weather_of


def test_command_usage(timed, corpora):
    corpus = corpora["directory"]
    out = timed("e2e-usage-directory", run_cli, ["context", "usage", *corpus.paths, "--json"])
    assert out.strip().startswith("[")


def _health_and_weather(traces):
    grades = []
    for trace in traces:
        rows = metrics.FrameRows(trace)
        session = session_rows_of(trace, rows)
        choice = metrics.window_choice(trace)
        health = health_of(session, choice)
        weather = weather_of(session, choice.tokens)
        grades.append((health["grade"], weather["level"]))
    return grades


def test_health_weather(timed, corpora):
    corpus = corpora["directory"]
    reads = read_sources(find_traces(list(corpus.paths)), workers=1)
    traces = [t for r in reads if isinstance(r, list) for t in r]
    assert len(traces) == len(corpus.expected)
    grades = timed("health-weather-directory", _health_and_weather, traces)
    assert len(grades) == len(traces)
    assert all(g in "ABCDF" for g, _ in grades)
