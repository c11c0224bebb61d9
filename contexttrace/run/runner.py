"""Run the reader over many traces: discovery, parallel reading, cross-file identity, reports.

This is the library's entry point for a whole command: `analyze(paths, window)` returns a
`reports.results.RunResult`. Files are read in worker processes (both cores) when there are several and
they are large enough to pay for the workers; the result never depends on how they were read. It never
prints: progress goes to an optional callback.

Each source is read and its reports built by `work.read_built` (the unit of work, behind the firewall),
in this process or a worker. Parallel runs use `workers - 1` worker processes plus this process, which
reads too. A worker is a fork of this process while it runs a single thread (Linux): the workers and
this process then take the files in turn, largest first, from one queue (`pool.TaskQueue`), and end
within about one small file of each other. Else a worker is a new `python -m contexttrace.run.pool` that
is sent a fixed share, decided before it starts (`_shares`: largest first, each to the process with the
least to read so far). Each worker builds the reports of the traces it read
(when `build` can be pickled) and sends them back with slim traces (call keys only), one answer per file
as soon as it is read; a trace that inherited calls from another session (`drop_inherited_calls`) is
read again here and its report rebuilt. A session transcript of `reading.SPLIT_MIN_BYTES` or more is
read in two parts at once: a worker reads its tail and subagent files first (`reading.read_tail`) while
this process reads its head and merges; the report of such a trace may then have a share of itself computed
by a forked child on the idle core (`forked.second_core`, opened for a run of more than one process). A task
a worker could not answer (it raised, or the worker died) is done here. Standard input is always read here,
in one process. Another engine (`engine`: a Dask cluster) may read the sources in place of these processes;
the reduction here is the same.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from contexttrace import reading  # its readers imported when a run reads (a run served from the store reads none)
from contexttrace.discover.local import default_roots, find_traces
from contexttrace.discover.model import TraceSource
from contexttrace.forked import fork_safe, second_core
from contexttrace.reading.collector import free_left, gc_paused, leave_for_exit
from contexttrace.reading.identity import drop_inherited_calls, inherited_calls
from contexttrace.reports.builds import TRACE_BUILD, NamedBuild
from contexttrace.reports.results import RunResult, TraceFailure
from contexttrace.run.work import build_guarded, profile_of, read_built, read_source

#: Below this many bytes in all, worker processes cost more than they save.
PARALLEL_MIN_BYTES = 16 * 1024 * 1024

#: What one more small file costs, in bytes read (opening it and its meta file, the builder's per-file
#: work, its rows' trip to the merging process): measured 0.4 ms per subagent file against 6.6 ms per MB.
FILE_COST_BYTES = 64 * 1024

Progress = Callable[[int, int], None]

if TYPE_CHECKING:
    from contexttrace.reading import Trace
    from contexttrace.run.engine import Engine
    from contexttrace.run.pool import Task


def _run_stored(
    sources: list[TraceSource],
    build: Callable[[Trace, int | None], Any],
    window: int | None,
    progress: Progress | None,
    workers: int | None,
    cache: bool,
    warnings: list[str],
    engine: Engine | None = None,
) -> list[list[tuple[Trace, Any]] | TraceFailure]:
    """`_run` through the result store (`storage.store`) when `cache`: the sources it holds are not read
    (their reports are served from `storage.reports`, or built here), the others go to `_run` as
    `StoredSource`s, kept where they are read. The lookups are made here, before any worker starts, so the
    workers' shares and the split of a large file count only what is read (measured against lookups in the
    workers: benchmarks/README.md). An `engine` (`engine.open_engine`: a Dask cluster) reads in place of
    `_run`."""
    run = _run if engine is None else engine.run
    if not cache:
        return run(sources, build, window, progress, workers)
    from contexttrace.storage import reports as kept_reports  # (a run without the store never imports it)
    from contexttrace.storage import store

    try:
        kept = kept_reports.lookup(sources, build, window, warnings)  # reports kept with their entries
        found = iter(store.lookup([s for s, k in zip(sources, kept, strict=True) if k is None], warnings))
        held: list[list[Trace] | TraceSource | None] = [next(found) if k is None else None for k in kept]
        read = iter(run([f for f in held if isinstance(f, TraceSource)], build, window, progress, workers))
        out: list[list[tuple[Trace, Any]] | TraceFailure] = []
        for source, got, k in zip(sources, held, kept, strict=True):
            if k is not None:
                out.append(k)
            elif isinstance(got, TraceSource):
                out.append(next(read))
            elif got is not None:  # traces the store held, their reports not: built here, and kept
                pairs = [(t, build_guarded(build, t, window)) for t in got]
                if isinstance(got, store.Found):
                    kept_reports.keep(source, got.stamp, build, window, pairs)
                out.append(pairs)
        return out
    finally:
        store.finish(warnings)


def _whole_again(sources: list[TraceSource], cache: bool, warnings: list[str]) -> dict[int, list[Trace] | TraceFailure]:
    """The whole traces of the sources of which slim traces were sent, by `id(source)`: from the result store
    when it holds them (a warm run reads no file again: one lookup for all, so a store another process holds
    locked costs one wait, not one per source), else read again."""
    unique = list({id(s): s for s in sources}.values())
    out: dict[int, list[Trace] | TraceFailure] = {}
    if cache and unique:
        from contexttrace.storage import store

        try:
            held = store.lookup(unique, warnings)
        finally:
            store.finish(warnings)
        out = {id(s): h for s, h in zip(unique, held, strict=True) if not isinstance(h, TraceSource)}
    for source in unique:
        if id(source) not in out:
            out[id(source)] = read_source(source)
    return out


def _picklable(obj: Any) -> bool:
    import pickle  # (a run with workers only)

    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


def _sizes(source: TraceSource) -> tuple[int, int]:
    """Bytes of a source's main file and of its subagent files (0 for a file that cannot be read)."""

    def size(path: str) -> int:
        try:
            return os.path.getsize(path)
        except (OSError, ValueError):  # ValueError: a NUL byte in the name
            return 0

    if source.error is not None:
        return 0, 0  # not read at all
    return size(source.path), sum(size(s.path) for s in source.subagents)


def read_sources(
    sources: list[TraceSource], progress: Progress | None = None, workers: int | None = None
) -> list[list[Trace] | TraceFailure]:
    """Read every source, in parallel when it pays; results in the order of `sources`.

    Parameters
    ----------
    sources
        From `discover.local.find_traces`.
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
    with _run_gc_paused():  # as `analyze`
        results = _run(sources, None, None, progress, workers)
    return [r if isinstance(r, TraceFailure) else [t for t, _ in r] for r in results]


def _workers(sources: list[TraceSource], workers: int | None, splits: dict[int, int], total_bytes: int) -> int:
    if "-" in [s.path for s in sources]:
        return 1  # standard input is this process's: a worker could not read it, nor this one read it twice
    if workers is None:
        usable = len(sources) > 1 or splits
        workers = min(os.cpu_count() or 1, max(len(sources), 2)) if total_bytes >= PARALLEL_MIN_BYTES and usable else 1
    return workers


def _splits(sources: list[TraceSource], sizes: list[tuple[int, int]]) -> dict[int, int]:
    """Sources whose main file is large enough to be read in two parts at once: index -> byte offset."""
    out = {}
    for i, (source, (_main, subagents)) in enumerate(zip(sources, sizes, strict=True)):
        if source.path != "-" and source.error is None:
            # The tail's reader also reads the subagent files: the cut leaves it as much to do as the head's.
            at = reading.split_point(source.path, subagents + FILE_COST_BYTES * len(source.subagents))
            if at is not None:
                out[i] = at
    return out


def _fork_safe() -> bool:
    """`forked.fork_safe`: whether this run's workers may be forked (a test may say otherwise)."""
    return fork_safe()


def _cost(source: TraceSource, size: tuple[int, int]) -> int:
    """What reading a source costs, in bytes read: its files' bytes and `FILE_COST_BYTES` per file."""
    return sum(size) + FILE_COST_BYTES * (1 + len(source.subagents))


def _split_shares(
    sources: list[TraceSource], sizes: list[tuple[int, int]], splits: dict[int, int], n: int
) -> tuple[list[list[int]], list[int]]:
    """Each of `n` processes' files read in two parts (indexes; share 0 is this process's), and what each
    process has to read so far, in bytes.

    A file read in two parts comes first in this process's share (its head) and in one worker's (its tail
    and subagent files), workers in turn, so the two halves are read at the same time.
    """
    loads = [0] * n
    shares: list[list[int]] = [[] for _ in range(n)]
    for k, i in enumerate(sorted(splits, key=lambda i: -_cost(sources[i], sizes[i]))):
        worker = 1 + k % (n - 1)
        shares[0].append(i)
        shares[worker].append(i)
        # the cut balances the two parts (`split_point`): each takes about what reading the head takes
        loads[0] += splits[i]
        loads[worker] += splits[i]
    return shares, loads


def _largest_first(sources: list[TraceSource], sizes: list[tuple[int, int]], splits: dict[int, int]) -> list[int]:
    """The sources read whole (not in `splits`), largest first (`_cost`), as indexes."""
    return sorted((i for i in range(len(sources)) if i not in splits), key=lambda i: -_cost(sources[i], sizes[i]))


def _shares(
    sources: list[TraceSource], sizes: list[tuple[int, int]], splits: dict[int, int], n: int
) -> list[list[int]]:
    """Each of `n` processes' fixed share of the sources (indexes; share 0 is this process's), in the order
    each reads them: for workers started afresh, or a run with more files than a `pool.TaskQueue` holds.

    The files read in two parts come first (`_split_shares`). The other files go, largest first, each to
    the process with the least to read so far (bytes, `_cost`; a tie to a worker, as this process also
    merges the answers): alternating while the sizes are alike, and never leaving one process the last
    large file while another idles. The result never depends on the shares.
    """
    shares, loads = _split_shares(sources, sizes, splits, n)
    for i in _largest_first(sources, sizes, splits):
        process = min(range(n), key=lambda p: (loads[p], p == 0))
        shares[process].append(i)
        loads[process] += _cost(sources[i], sizes[i])
    return shares


def _run(
    sources: list[TraceSource],
    build: Callable[[Trace, int | None], Any] | None,
    window: int | None,
    progress: Progress | None,
    workers: int | None,
) -> list[list[tuple[Trace, Any]] | TraceFailure]:
    """Read (and build) every source: in this process, or in it and `workers - 1` worker processes."""
    total = len(sources)
    sizes = [_sizes(s) for s in sources]  # (main, subagents) bytes, read once
    splits = _splits(sources, sizes) if workers is None or workers > 1 else {}
    workers = _workers(sources, workers, splits, sum(map(sum, sizes)))
    if workers <= 1:
        out: list[list[tuple[Trace, Any]] | TraceFailure] = []
        for i, source in enumerate(sources, 1):
            out.append(read_built(source, build, window))
            if progress:
                progress(i, total)
        return out
    if isinstance(build, NamedBuild):
        # its module imported once, before a fork (and before `_fork_safe` looks for threads): forked workers
        # inherit it rather than each importing it
        with contextlib.suppress(Exception):  # (an import that fails fails each trace's build, as before)
            build.function()
    fork = _fork_safe()
    from contexttrace.run.pool import Pool, TaskQueue

    # Forked workers and this process take the files read whole in turn, largest first (`pool.TaskQueue`);
    # workers started afresh (or more files than the queue holds) read fixed shares.
    order = _largest_first(sources, sizes, splits)
    queue = TaskQueue.make(len(order)) if fork else None
    if queue is None:
        shares, order = _shares(sources, sizes, splits, workers), []
    else:
        shares = _split_shares(sources, sizes, splits, workers)[0]
    remote_build = build if build is not None and _picklable(build) else None
    slots: list[list[tuple[Trace, Any]] | TraceFailure | None] = [None] * total
    done = 0

    def finish(i: int, value: list[tuple[Trace, Any]] | TraceFailure | None) -> None:
        nonlocal done
        if i >= total or value is None:
            # the tail of a file whose head did not need it (stream-json, or unreadable), or a task a
            # worker could not answer (done here at the end)
            return
        slots[i] = value
        done += 1
        if progress:
            progress(done, total)

    def task(i: int) -> Task:
        if i in splits:  # a tail: task number total + i (a worker started afresh hashes texts stably)
            s = sources[i]
            return (total + i, reading.read_tail, (s.path, splits[i], s.subagents, not fork, *profile_of(s, build)))
        return (i, read_built, (sources[i], remote_build, window, None, remote_build is not None))

    pool = Pool([[task(i) for i in share] for share in shares[1:]], fork, queue, [task(i) for i in order])
    try:
        # A report built here may fork a share of itself (`forked.elsewhere`): once the workers are done
        # (no collector thread left), the second core would idle while the last large trace is reported.
        with second_core():
            taken = (order[k] for k in queue) if queue is not None else ()
            for i in itertools.chain(shares[0], taken):
                tail = (
                    reading.PendingTail(splits[i], functools.partial(pool.wait_for, total + i), not fork)
                    if i in splits
                    else None
                )
                finish(i, read_built(sources[i], build, window, tail))
                for j, value in pool.ready().items():
                    finish(j, value)
            for j, value in pool.drain().items():
                finish(j, value)
            # Tasks a worker did not answer are done here (a bug in them then surfaces as this trace's failure).
            for i in range(total):
                if slots[i] is None:
                    finish(i, read_built(sources[i], build, window))
    finally:
        pool.close()
    return [s for s in slots if s is not None]


def analyze(
    paths: list[str],
    window: int | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    build: Callable[[Trace, int | None], Any] = TRACE_BUILD,
    cache: bool = False,
    engine: Engine | None = None,
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
        (`builds.TRACE_BUILD`, `reports.trace.build_report` named, for `context trace`; other commands pass
        their own).
    cache
        Use the result store (`storage.store`, in `store.cache_dir()`): files unchanged since a run that kept
        them are not read again, and what is read is kept. The output is the same either way. The CLI
        passes True unless `--no-cache`; standard input is never kept.
    engine
        What reads the sources (`engine.open_engine`: a Dask cluster); None: this machine's
        processes (`workers`). The output is the same either way.

    Returns
    -------
    RunResult
        Reports in argument order (a directory's sessions sorted by path; a stream file's runs in file
        order), failures for sources that could not be read; sessions a directory scan found with no
        model call are left out and named in `left_out_files`.
    """
    with _run_gc_paused():  # see `_analyze`
        return _analyze(paths, window, progress, workers, build, cache, engine)


def _run_gc_paused() -> contextlib.AbstractContextManager[None]:
    """Pause the cyclic garbage collector for a whole run (`reading.gc_paused`), when this process runs no
    other Python thread; else leave it to `work.read_built`, which pauses it while each trace is read.

    Nothing a run does makes reference cycles, yet every collection walks all the objects still alive:
    while a trace is read, its rows; between traces, the answers unpickled from the workers and the
    reports kept so far (a pytest session or a notebook adds its own heap to each full pass). Pausing it
    per trace only moved the cost: the first collection after each trace walked what that trace had
    left. Measured on the 200-session benchmark directory: `analyze` 1.90 s with the collector running
    between traces, 1.60 s with it off (medians of 6, interleaved). The collector is process-wide,
    though: another thread of the host (a notebook's, a server's) that makes cycles during a long run
    would grow for its whole length (a thread making cycles over a 5,000-file run: 2.2 GB against
    0.2 GB), so with other threads alive the run keeps the per-trace pause only.
    """
    return gc_paused() if threading.active_count() == 1 else contextlib.nullcontext()


def _analyze(
    paths: list[str],
    window: int | None,
    progress: Progress | None,
    workers: int | None,
    build: Callable[[Trace, int | None], Any],
    cache: bool = False,
    engine: Engine | None = None,
) -> RunResult:
    """`analyze`, run with the cyclic garbage collector paused from start to end (`_run_gc_paused`).

    What it read (the traces) is left to the process's end when the process ends without freeing
    (`collector.leave_for_exit`): what an earlier run left is freed first."""
    free_left()
    found = find_traces(paths)
    sources = [s for s in found if not s.orphan]
    result = RunResult(
        orphan_agent_files=len(found) - len(sources), searched=list(paths) or [str(p) for p in default_roots()]
    )
    traces: list[Trace] = []
    source_of: list[TraceSource] = []
    built: dict[int, Any] = {}  # id(trace) -> its report, when a worker built it
    reads = _run_stored(sources, build, window, progress, workers, cache, result.warnings, engine)
    for source, read in zip(sources, reads, strict=True):
        if isinstance(read, TraceFailure):
            if source.explicit or not read.empty:
                result.failures.append(read)
            else:
                # an empty file a directory scan found: no model call, nothing wrong
                result.left_out_files.append(source.path)
            continue
        for trace, report in read:
            if not source.explicit and len(read) == 1 and trace.view("calls").height == 0:
                # a session file a directory scan found with no model call; the runs of a multi-run
                # stream-json file are runs, listed even with 0 calls (they are not files to leave out)
                result.left_out_files.append(source.path)
                continue
            traces.append(trace)
            source_of.append(source)
            if report is not None:
                built[id(trace)] = report
    try:
        lost = inherited_calls(traces)
        # a worker or the store sent only call keys: the whole traces, to drop what they inherited
        slim = [i for i in lost if traces[i].slim]
        wholes = _whole_again([source_of[i] for i in slim], cache, result.warnings)
        for i in slim:
            again = wholes[id(source_of[i])]
            same = [t for t in again if t.name == traces[i].name] if isinstance(again, list) else []
            traces[i] = same[0] if same else traces[i]  # (gone since: it keeps its calls and its report)
        kept = drop_inherited_calls(traces, lost)
    except Exception as exc:  # the firewall: calls shared across sessions stay counted where they are
        kept = traces
        result.warnings.append(f"calls inherited from other sessions not dropped ({type(exc).__name__}: {exc})")
    for trace in kept:
        # a trace that lost inherited calls is a new object: its report is built again here
        report = built.get(id(trace))
        if report is None:
            report = build_guarded(build, trace, window)
        if isinstance(report, TraceFailure):
            result.failures.append(report)
        else:
            result.reports.append(report)
    leave_for_exit((reads, traces))
    return result
