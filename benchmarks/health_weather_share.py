"""Health's and weather's share of reading a corpus in one process: `analyze(PATH, cache=False, workers=1)`
with `health_of` and `weather_of` timed (CPU seconds) where the trace report calls them; three rounds.

    python benchmarks/health_weather_share.py ~/.cache/contexttrace-bench/real-x23/projects
    PYTHONPATH=/tmp/before-round python benchmarks/health_weather_share.py ...   # another checkout
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import contexttrace.reports.trace as trace_report
from contexttrace.run.runner import analyze


def timed(spent: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn`, adding the CPU seconds of each call to `spent[name]`."""

    def inner(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - start

    return inner


def main(path: str, rounds: int = 3) -> None:
    """Print, per round, the CPU of the whole read-and-report, of health and of weather, and their share."""
    spent = {"health": 0.0, "weather": 0.0}
    trace_report.health_of = timed(spent, "health", trace_report.health_of)  # type: ignore[assignment]
    trace_report.weather_of = timed(spent, "weather", trace_report.weather_of)  # type: ignore[assignment]
    for number in range(rounds):
        spent.update(health=0.0, weather=0.0)
        start = time.process_time()
        run = analyze([path], cache=False, workers=1)
        total = time.process_time() - start
        share = (spent["health"] + spent["weather"]) / total
        print(
            f"round {number}: total {total:.2f} s, health {spent['health']:.2f} s, weather {spent['weather']:.2f} s,"
            f" share {share:.3f}, traces {len(run.reports)}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
