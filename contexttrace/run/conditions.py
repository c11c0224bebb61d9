"""Read the runs of `context compare`'s conditions: each condition's paths through `runner.analyze`.

`reports.compare` computes a comparison from the reports it is given; this module reads them, one
`RunResult` of `compare.RunFigures` per condition. (The CLI reads each condition through its own run of
`analyze`, with the result store and the chosen engine, and the same `build_run`.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from contexttrace.reports.compare import Condition, build_run
from contexttrace.reports.results import RunResult
from contexttrace.run.runner import analyze


def analyze_conditions(
    conditions: Sequence[Condition],
    window: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> list[RunResult]:
    """Read every condition's runs (`runner.analyze` with `compare.build_run`), one `RunResult` per condition.

    Conditions are read apart: a run is never compared with, nor dropped as a copy of, another condition's.

    Parameters
    ----------
    conditions
        From `compare.parse_conditions`.
    window
        `--window` in tokens, or None (each trace's own window).
    progress, workers
        As `runner.analyze`, for each condition's read in turn.

    Returns
    -------
    list of RunResult
        In the order of `conditions`: the `RunFigures` of the condition's traces that could be read, and
        the failures of the others (a trace that cannot be read is a failure, never raised).
    """
    return [
        analyze(list(c.paths), window=window, progress=progress, workers=workers, build=build_run) for c in conditions
    ]
