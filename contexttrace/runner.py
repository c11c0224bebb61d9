"""Run the reader over many traces: discovery, parallel reading, cross-file identity, reports.

This is the library's entry point for a whole command: `analyze(paths, window)` returns a
`report.RunResult`. Files are read in worker processes (both cores) when there are several and they are
large enough to pay for the workers; the result never depends on how they were read. It never prints:
progress goes to an optional callback.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from .errors import ContextTraceError
from .reader import Trace, drop_inherited_calls, read_trace
from .report import RunResult, TraceFailure, build_report
from .sources import TraceSource, find_traces

#: Below this many bytes in all, worker processes cost more than they save.
PARALLEL_MIN_BYTES = 16 * 1024 * 1024

Progress = Callable[[int, int], None]


def _read(source: TraceSource) -> list[Trace] | TraceFailure:
    try:
        return read_trace(source.path, source.subagents)
    except ContextTraceError as exc:
        return TraceFailure(source.path, exc.reason)


def _size(source: TraceSource) -> int:
    try:
        return os.path.getsize(source.path) + sum(os.path.getsize(s.path) for s in source.subagents)
    except OSError:
        return 0


def read_sources(sources: list[TraceSource], progress: Progress | None = None, workers: int | None = None) -> list[list[Trace] | TraceFailure]:
    """Read every source, in parallel when it pays; results in the order of `sources`.

    Parameters
    ----------
    sources
        From `sources.find_traces`.
    progress
        Called with (done, total) after each source.
    workers
        Worker processes; None picks `os.cpu_count()` (at most the number of sources) when the sources
        hold at least `PARALLEL_MIN_BYTES`, else reads in this process. 1 forces one process.

    Returns
    -------
    list
        For each source, its traces or a `TraceFailure`.
    """
    total = len(sources)
    if workers is None:
        big = sum(_size(s) for s in sources) >= PARALLEL_MIN_BYTES
        workers = min(os.cpu_count() or 1, total) if big and total > 1 and "-" not in [s.path for s in sources] else 1
    out: list[list[Trace] | TraceFailure] = []
    if workers <= 1:
        for i, source in enumerate(sources, 1):
            out.append(_read(source))
            if progress:
                progress(i, total)
        return out
    # Largest first keeps both cores busy to the end; results are put back in argument order.
    order = sorted(range(total), key=lambda i: -_size(sources[i]))
    slots: list[list[Trace] | TraceFailure | None] = [None] * total
    ctx = multiprocessing.get_context("spawn")  # fork is unsafe with Polars' thread pool
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {pool.submit(_read, sources[i]): i for i in order}
        for done, future in enumerate(as_completed(futures), 1):
            slots[futures[future]] = future.result()
            if progress:
                progress(done, total)
    return [s for s in slots if s is not None]


def analyze(
    paths: list[str],
    window: int | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    build: Callable[[Trace, int | None], Any] = build_report,
) -> RunResult:
    """Read the traces named by `paths` and report each.

    Parameters
    ----------
    paths
        Files, directories or ``"-"``; empty means the default session roots.
    window
        Context window in tokens for `fill`, or None.
    progress, workers
        As `read_sources`.
    build
        Turns one trace and the window into the report object kept in `RunResult.reports`
        (`report.build_report` for `context trace`; other commands pass their own).

    Returns
    -------
    RunResult
        Reports in argument order (a directory's sessions sorted by path; a stream file's runs in file
        order), failures for sources that could not be read; sessions a directory scan found with no
        model call are left out and counted in `left_out`.
    """
    found = find_traces(paths)
    sources = [s for s in found if not s.orphan]
    result = RunResult(orphan_agent_files=len(found) - len(sources))
    traces: list[Trace] = []
    for source, read in zip(sources, read_sources(sources, progress, workers), strict=True):
        if isinstance(read, TraceFailure):
            if source.explicit:
                result.failures.append(read)
            else:
                result.left_out += 1
            continue
        for trace in read:
            if not source.explicit and trace.calls.height == 0:
                result.left_out += 1
                continue
            traces.append(trace)
    for trace in drop_inherited_calls(traces):
        result.reports.append(build(trace, window))
    return result
