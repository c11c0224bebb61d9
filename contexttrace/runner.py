"""Run the reader over many traces: discovery, parallel reading, cross-file identity, reports.

This is the library's entry point for a whole command: `analyze(paths, window)` returns a
`report.RunResult`. Files are read in worker processes (both cores) when there are several and they are
large enough to pay for the workers; the result never depends on how they were read. It never prints:
progress goes to an optional callback.

Parallel runs use `workers - 1` spawned processes plus this process: the parent reads too, so the
second or so a spawned worker needs to import Polars is never idle time. Each worker also builds the
reports of the traces it read (when `build` can be pickled), so metrics use both cores as well; a report
is rebuilt here only for a trace that `drop_inherited_calls` changed.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from .errors import ContextTraceError, EmptyTraceError
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
        return TraceFailure(source.path, exc.reason, empty=isinstance(exc, EmptyTraceError))


def _read_built(
    source: TraceSource, build: Callable[[Trace, int | None], Any] | None, window: int | None
) -> list[tuple[Trace, Any]] | TraceFailure:
    """Read one source and, when `build` is given, build each trace's report in the same process."""
    read = _read(source)
    if isinstance(read, TraceFailure):
        return read
    return [(trace, build(trace, window) if build is not None else None) for trace in read]


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:  # noqa: BLE001 - any failure means "build in the parent"
        return False
    return True


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
        Processes in all, this one included; None picks `os.cpu_count()` (at most the number of
        sources) when the sources hold at least `PARALLEL_MIN_BYTES`, else reads in this process. 1
        forces one process.

    Returns
    -------
    list
        For each source, its traces or a `TraceFailure`.
    """
    results = _run(sources, None, None, progress, workers)
    return [r if isinstance(r, TraceFailure) else [t for t, _ in r] for r in results]


def _workers(sources: list[TraceSource], workers: int | None) -> int:
    total = len(sources)
    if workers is None:
        big = sum(_size(s) for s in sources) >= PARALLEL_MIN_BYTES
        workers = min(os.cpu_count() or 1, total) if big and total > 1 and "-" not in [s.path for s in sources] else 1
    return workers


def _run(
    sources: list[TraceSource],
    build: Callable[[Trace, int | None], Any] | None,
    window: int | None,
    progress: Progress | None,
    workers: int | None,
) -> list[list[tuple[Trace, Any]] | TraceFailure]:
    """Read (and build) every source: in this process, or in it and `workers - 1` spawned processes."""
    total = len(sources)
    workers = _workers(sources, workers)
    if workers <= 1:
        out: list[list[tuple[Trace, Any]] | TraceFailure] = []
        for i, source in enumerate(sources, 1):
            out.append(_read_built(source, build, window))
            if progress:
                progress(i, total)
        return out
    # Largest first keeps every core busy to the end; results are put back in argument order. The
    # spawned workers are kept two tasks ahead; this process takes the next task whenever it is free.
    queue = deque(sorted(range(total), key=lambda i: -_size(sources[i])))
    slots: list[list[tuple[Trace, Any]] | TraceFailure | None] = [None] * total
    remote_build = build if build is not None and _picklable(build) else None
    done = 0

    def finish(i: int, value: list[tuple[Trace, Any]] | TraceFailure) -> None:
        nonlocal done
        slots[i] = value
        done += 1
        if progress:
            progress(done, total)

    ctx = multiprocessing.get_context("spawn")  # fork is unsafe with Polars' thread pool
    with ProcessPoolExecutor(max_workers=workers - 1, mp_context=ctx) as pool:
        pending: dict[Future[Any], int] = {}

        def collect(block: bool) -> None:
            if pending:
                ready, _ = wait(pending, timeout=None if block else 0, return_when=FIRST_COMPLETED)
                for future in ready:
                    finish(pending.pop(future), future.result())
            while queue and len(pending) < 2 * (workers - 1):
                i = queue.popleft()
                pending[pool.submit(_read_built, sources[i], remote_build, window)] = i

        collect(block=False)
        while queue:
            i = queue.popleft()
            finish(i, _read_built(sources[i], build, window))
            collect(block=False)
        while pending:
            collect(block=True)
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
    built: dict[int, Any] = {}  # id(trace) -> its report, when a worker built it
    for source, read in zip(sources, _run(sources, build, window, progress, workers), strict=True):
        if isinstance(read, TraceFailure):
            if source.explicit or not read.empty:
                result.failures.append(read)
            else:
                result.left_out += 1  # an empty file a directory scan found: no model call, nothing wrong
            continue
        for trace, report in read:
            if not source.explicit and trace.calls.height == 0:
                result.left_out += 1
                continue
            traces.append(trace)
            if report is not None:
                built[id(trace)] = report
    for trace in drop_inherited_calls(traces):
        # a trace that lost inherited calls is a new object: its report is built again here
        report = built.get(id(trace))
        result.reports.append(report if report is not None else build(trace, window))
    return result
