"""Run the reader over many traces: discovery, parallel reading, cross-file identity, reports.

This is the library's entry point for a whole command: `analyze(paths, window)` returns a
`report.RunResult`. Files are read in worker processes (both cores) when there are several and they are
large enough to pay for the workers; the result never depends on how they were read. It never prints:
progress goes to an optional callback.

Parallel runs use `workers - 1` worker processes plus this process, which reads too. A worker is a fork
of this process while it runs a single thread (Linux), else a new `python -m contexttrace._worker`
(never `multiprocessing`'s spawn, which would import the caller's main script); both are fed pickled
tasks over a pipe by a writer thread and answer over another, read by a collector thread that queues
the worker's next task at once. Each worker builds the reports of the traces it read (when `build` can
be pickled) and sends them back with slim traces (call keys only); a trace that inherited calls from
another session (`drop_inherited_calls`) is read again here and its report rebuilt. A session
transcript of `reader.SPLIT_MIN_BYTES` or more is read in two parts at once: a worker reads its tail and
subagent files (`reader.read_tail`) while this process reads its head and merges. Standard input is
always read here, in one process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from queue import SimpleQueue
from typing import IO, Any

from . import store
from .errors import ContextTraceError, EmptyTraceError
from .reader import (
    PendingTail,
    TailPart,
    Trace,
    drop_inherited_calls,
    gc_paused,
    inherited_calls,
    read_tail,
    read_trace,
    split_point,
)
from .report import RunResult, TraceFailure, build_report
from .sources import TraceSource, default_roots, find_traces

#: Below this many bytes in all, worker processes cost more than they save.
PARALLEL_MIN_BYTES = 16 * 1024 * 1024

#: What one more small file costs, in bytes read (opening it and its meta file, the builder's per-file
#: work, its rows' trip to the merging process): measured 0.4 ms per subagent file against 6.6 ms per MB.
FILE_COST_BYTES = 64 * 1024

Progress = Callable[[int, int], None]

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Frames between this process and a worker: an 8-byte little-endian length, then a pickle.
_HEADER = struct.Struct("<Q")


def _read(source: TraceSource, tail: TailPart | PendingTail | None = None) -> list[Trace] | TraceFailure:
    """Read one source; every exception becomes its `TraceFailure` (the firewall: one trace never takes
    the run down). A `ContextTraceError` is a reason the reader gives on purpose (missing file, binary,
    no record of either format); anything else is a defect, named by its exception type. A
    `store.StoredSource` (one the result store did not hold: `_run_stored`) is kept in the store once
    read, by whichever process read it; a failure never is."""
    if source.error is not None:
        return TraceFailure(source.path, source.error)
    try:
        traces = read_trace(source.path, source.subagents, tail=tail)
    except ContextTraceError as exc:
        return TraceFailure(source.path, exc.reason, empty=isinstance(exc, EmptyTraceError), line=exc.line)
    except Exception as exc:  # the firewall: this trace fails, the run goes on
        return TraceFailure.unexpected(source.path, exc, "read")
    if isinstance(source, store.StoredSource):
        store.keep(source, traces)  # raises nothing
    for trace in traces:  # subagent folders found but not listable: said, never silently dropped
        trace.warnings.extend(source.unreadable)
    return traces


def _run_stored(
    sources: list[TraceSource],
    build: Callable[[Trace, int | None], Any],
    window: int | None,
    progress: Progress | None,
    workers: int | None,
    cache: bool,
    warnings: list[str],
) -> list[list[tuple[Trace, Any]] | TraceFailure]:
    """`_run` through the result store (`store.py`) when `cache`: the sources it holds are not read (their
    reports are built here), the others go to `_run` as `StoredSource`s, kept where they are read. The
    lookups are made here, before any worker starts, so the workers' shares and the split of a large file
    count only what is read (measured against lookups in the workers: benchmarks/README.md)."""
    if not cache:
        return _run(sources, build, window, progress, workers)
    found = store.lookup(sources, warnings)
    try:
        read = iter(_run([f for f in found if isinstance(f, TraceSource)], build, window, progress, workers))
        return [
            next(read) if isinstance(f, TraceSource) else [(t, build_guarded(build, t, window)) for t in f]
            for f in found
        ]
    finally:
        store.finish(warnings)


def build_guarded(build: Callable[[Trace, int | None], Any], trace: Trace, window: int | None) -> Any | TraceFailure:
    """`build(trace, window)`, or the trace's `TraceFailure` when it raises (the firewall, as `_read`)."""
    try:
        return build(trace, window)
    except Exception as exc:
        return TraceFailure.unexpected(trace.name, exc, "report")


def _read_built(
    source: TraceSource,
    build: Callable[[Trace, int | None], Any] | None,
    window: int | None,
    tail: TailPart | PendingTail | None = None,
    slim: bool = False,
) -> list[tuple[Trace, Any]] | TraceFailure:
    """Read one source (its main file's end maybe read elsewhere: `tail`) and, when `build` is given,
    build each trace's report in the same process; with `slim` (a worker's answer), each built trace is
    sent back `Trace.slimmed` (a twentieth of the bytes to pickle).

    The cyclic garbage collector is paused meanwhile (`reader.gc_paused`): reports, like the reader,
    make no reference cycles, and with a large trace's rows alive each full collection walks them all
    (measured: the report of a 23,000-call trace 1.5 s -> 0.9 s).
    """
    with gc_paused():
        read = _read(source, tail)
        if isinstance(read, TraceFailure):
            return read
        if build is None:
            return [(trace, None) for trace in read]
        return [(trace.slimmed() if slim else trace, build_guarded(build, trace, window)) for trace in read]


def _picklable(obj: Any) -> bool:
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
            at = split_point(source.path, subagents + FILE_COST_BYTES * len(source.subagents))
            if at is not None:
                out[i] = at
    return out


def _run(
    sources: list[TraceSource],
    build: Callable[[Trace, int | None], Any] | None,
    window: int | None,
    progress: Progress | None,
    workers: int | None,
) -> list[list[tuple[Trace, Any]] | TraceFailure]:
    """Read (and build) every source: in this process, or in it and `workers - 1` spawned processes."""
    total = len(sources)
    sizes = [_sizes(s) for s in sources]  # (main, subagents) bytes, read once
    order = sorted(range(total), key=lambda i: -sum(sizes[i]))  # largest first
    splits = _splits(sources, sizes) if workers is None or workers > 1 else {}
    workers = _workers(sources, workers, splits, sum(map(sum, sizes)))
    if workers <= 1:
        out: list[list[tuple[Trace, Any]] | TraceFailure] = []
        for i, source in enumerate(sources, 1):
            out.append(_read_built(source, build, window))
            if progress:
                progress(i, total)
        return out
    # Largest first keeps every core busy to the end; results are put back in argument order. The
    # workers are kept two tasks ahead; this process takes the next task whenever it is free. A large
    # transcript is read here in two parts at once: its second half by a worker (task id total + i).
    queue = deque(i for i in order if i not in splits)
    slots: list[list[tuple[Trace, Any]] | TraceFailure | None] = [None] * total
    remote_build = build if build is not None and _picklable(build) else None
    done = 0

    def finish(i: int, value: list[tuple[Trace, Any]] | TraceFailure) -> None:
        nonlocal done
        if i >= total or value is None:
            # the tail of a file whose head turned out not to need it (stream-json, or unreadable), or a task
            # a worker could not answer (redone here at the end)
            return
        slots[i] = value
        done += 1
        if progress:
            progress(done, total)

    pool = _WorkerPool(workers - 1)
    try:

        def refill(worker: _Worker) -> None:
            # Called here between tasks and by each worker's collector thread as soon as it answers, so a
            # worker never waits for this process to finish a task of its own.
            while worker.alive and len(worker.inflight) < 2:
                try:
                    i = queue.popleft()
                except IndexError:
                    return
                worker.send(i, (_read_built, (sources[i], remote_build, window, None, remote_build is not None)))

        def feed() -> None:
            for worker in pool.workers:
                refill(worker)
                worker.refill = refill

        for i in (i for i in order if i in splits):
            tail = pool.read_tail(total + i, sources[i], splits[i])
            feed()
            finish(i, _read_built(sources[i], build, window, tail))
            for j, value in pool.ready():
                finish(j, value)
        feed()
        while True:
            try:
                i = queue.popleft()
            except IndexError:  # empty (the collectors take from it too)
                break
            finish(i, _read_built(sources[i], build, window))
            for i, value in pool.ready():
                finish(i, value)
            feed()
        for i, value in pool.drain():
            finish(i, value)
        # Tasks a dead worker never answered are done here (a bug in them then surfaces as a traceback).
        for i in range(total):
            if slots[i] is None:
                finish(i, _read_built(sources[i], build, window))
    finally:
        pool.close()
    return [s for s in slots if s is not None]


def _fork_safe() -> bool:
    """Whether workers may be forked from this process rather than started afresh.

    A fork starts in milliseconds where a new interpreter needs about 0.4 s. Only on Linux, and only while
    this process runs a single thread (`/proc/self/task`): another thread, such as Polars' pool once a
    frame was built, could hold a lock that the fork would copy held.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


#: Linux's `fcntl.F_SETPIPE_SZ` (Python 3.10+ names it; spelled out for type checkers on other systems).
_F_SETPIPE_SZ = 1031
#: Bytes a worker can write before this process reads them: a report and its trace's tables are 20–200 KB,
#: and with the default 64 KiB a worker would wait for this process's collector thread (which needs the
#: GIL) after every answer: measured 0.26 s of 2.1 s idle on 200 transcripts.
_PIPE_BYTES = 1024 * 1024


def _widen(fd: int) -> None:
    """Grow a pipe's buffer to `_PIPE_BYTES` where the system allows it (Linux); else leave it."""
    if sys.platform.startswith("linux"):
        import fcntl

        with contextlib.suppress(OSError):  # above /proc/sys/fs/pipe-max-size, or not permitted
            fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_BYTES)


class _Worker:
    """One worker process, a thread that writes its tasks and a thread that collects its answers.

    The process is a fork of this one (`_fork_safe`) or a new `python -m contexttrace._worker`; both
    speak the same protocol over two pipes. No thread of this process ever blocks on a write that the
    worker could be waiting behind: tasks are queued for the writer thread (`send` returns at once), and
    the collector only reads.
    """

    def __init__(self, results: SimpleQueue[tuple[int, Any]], fork: bool, close_in_child: list[int]) -> None:
        self.inflight: deque[int] = deque()
        self.alive = True
        self._results = results
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0
        if fork:
            task_r, task_w = os.pipe()
            answer_r, answer_w = os.pipe()
            _widen(answer_w)
            pid = os.fork()
            if pid == 0:  # the child: serve, then leave without running the parent's exit handlers
                code = 1
                try:
                    for fd in (task_w, answer_r, *close_in_child):
                        os.close(fd)
                    from ._worker import serve

                    serve(os.fdopen(task_r, "rb"), os.fdopen(answer_w, "wb"))
                    code = 0
                finally:
                    os._exit(code)
            os.close(task_r)
            os.close(answer_w)
            self.pid = pid
            self.stdin: IO[bytes] = os.fdopen(task_w, "wb", buffering=0)
            self.stdout: IO[bytes] = os.fdopen(answer_r, "rb", buffering=0)
        else:
            # The worker imports this very package, wherever it was imported from (a checkout, say).
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_PARENT, env.get("PYTHONPATH")]))
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "contexttrace._worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                env=env,
            )
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
            _widen(self.stdout.fileno())
        self._send_lock = threading.Lock()
        self._outbox: SimpleQueue[bytes | None] = SimpleQueue()
        #: called by the collector after each answer, to queue the worker's next task at once
        self.refill: Callable[[_Worker], None] | None = None
        self._thread = threading.Thread(target=self._collect, daemon=True)
        self._writer = threading.Thread(target=self._write, daemon=True)

    def start(self) -> None:
        """Start the writer and the collector (after every worker is forked: a fork never copies them)."""
        self._writer.start()
        self._thread.start()

    def send(self, i: int, task: tuple[Any, ...]) -> None:
        """Queue task `i` for the worker; returns at once."""
        blob = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        with self._send_lock:  # this process's main thread and the collector both send: ids keep task order
            self.inflight.append(i)
            self._outbox.put(_HEADER.pack(len(blob)) + blob)

    def _write(self) -> None:
        while (frame := self._outbox.get()) is not None:
            try:
                self.stdin.write(frame)
            except OSError:  # the worker died: what it was given is redone by the parent
                self.alive = False
                self._results.put((-1, None))
                return
        with contextlib.suppress(OSError):  # already gone
            self.stdin.close()

    def close_input(self) -> None:
        """No more tasks: the worker ends once it has answered those queued."""
        self._outbox.put(None)

    def _collect(self) -> None:
        out = self.stdout
        while True:
            header = _read_exact(out, _HEADER.size)
            if header is None:
                break
            (size,) = _HEADER.unpack(header)
            blob = _read_exact(out, size)
            if blob is None:
                break
            # The task counts as in flight until its answer is queued (`_WorkerPool.wait_for` relies on it).
            self._results.put((self.inflight[0], pickle.loads(blob)))
            self.inflight.popleft()
            if self.refill is not None:
                self.refill(self)
        self.alive = False
        self._results.put((-1, None))  # wakes a parent waiting in `drain`

    def finish(self, timeout: float) -> None:
        """Wait for the process to end (its input is closed), killing it after `timeout` seconds."""
        if self.proc is not None:
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            return
        deadline = time.monotonic() + timeout
        while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                return
            time.sleep(0.005)


def _read_exact(stream: Any, size: int) -> bytes | None:
    """Read exactly `size` bytes from a pipe (raw reads may return less), or None at its end."""
    parts = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


class _WorkerPool:
    def __init__(self, n: int) -> None:
        self.results: SimpleQueue[tuple[int, Any]] = SimpleQueue()
        self.stash: list[tuple[int, Any]] = []  # answers received while waiting for another (`wait_for`)
        fork = self.forked = _fork_safe()
        self.workers: list[_Worker] = []
        for _ in range(n):
            # a later fork must not hold the pipes of the workers before it (they would never see EOF)
            held = [fd for w in self.workers for fd in (w.stdin.fileno(), w.stdout.fileno())]
            self.workers.append(_Worker(self.results, fork, held))
        for w in self.workers:
            w.start()

    def read_tail(self, task: int, source: TraceSource, start: int) -> PendingTail | None:
        """Have the least busy worker read a source's main file from byte `start`, then its subagent files
        (`reader.read_tail`), as task `task`."""
        alive = [w for w in self.workers if w.alive]
        if not alive:
            return None
        worker = min(alive, key=lambda w: len(w.inflight))
        # A forked worker shares this process's hash seed; one started afresh does not (`stable_text_hash`).
        stable = not self.forked
        worker.send(task, (read_tail, (source.path, start, source.subagents, stable)))
        return PendingTail(start, lambda: self.wait_for(task), stable)

    def wait_for(self, task: int) -> Any:
        """The answer to `task` (None if its worker died first); other answers are kept for `ready`.

        A collector queues an answer before it takes the task off `inflight`, so once the task is no
        longer in flight its answer (if any) is already in `results`.
        """
        while True:
            pending = any(w.alive and task in w.inflight for w in self.workers)
            while not self.results.empty():
                i, value = self.results.get()
                if i >= 0:
                    self.stash.append((i, value))
            for k, (i, value) in enumerate(self.stash):
                if i == task:
                    del self.stash[k]
                    return value
            if not pending:
                return None
            i, value = self.results.get()
            if i >= 0:
                self.stash.append((i, value))

    def ready(self) -> list[tuple[int, Any]]:
        out, self.stash = self.stash, []
        while not self.results.empty():
            i, value = self.results.get()
            if i >= 0:
                out.append((i, value))
        return out

    def drain(self) -> list[tuple[int, Any]]:
        out = self.ready()
        while any(w.inflight and w.alive for w in self.workers):
            i, value = self.results.get()
            if i >= 0:
                out.append((i, value))
        return out + self.ready()  # answers queued just before their tasks left `inflight`

    def close(self) -> None:
        for w in self.workers:
            w.close_input()
        for w in self.workers:
            w.finish(timeout=10)


def analyze(
    paths: list[str],
    window: int | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    build: Callable[[Trace, int | None], Any] = build_report,
    cache: bool = False,
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
    cache
        Use the result store (`store.py`, in `store.cache_dir()`): files unchanged since a run that kept
        them are not read again, and what is read is kept. The output is the same either way. The CLI
        passes True unless `--no-cache`; standard input is never kept.

    Returns
    -------
    RunResult
        Reports in argument order (a directory's sessions sorted by path; a stream file's runs in file
        order), failures for sources that could not be read; sessions a directory scan found with no
        model call are left out and counted in `left_out`.
    """
    with _run_gc_paused():  # see `_analyze`
        return _analyze(paths, window, progress, workers, build, cache)


def _run_gc_paused() -> contextlib.AbstractContextManager[None]:
    """Pause the cyclic garbage collector for a whole run (`reader.gc_paused`), when this process runs no
    other Python thread; else leave it to `_read_built`, which pauses it while each trace is read.

    Nothing a run does makes reference cycles, yet every collection walks all the objects still alive:
    while a trace is read, its rows; between traces, the answers unpickled from the workers and the
    reports kept so far (a pytest session or a notebook adds its own heap to each full pass). Pausing it
    per trace only moved the cost: the first collection after each trace walked what that trace had
    left. Measured on the 200-session benchmark directory: `analyze` 1.90 s with the collector running
    between traces, 1.60 s with it off (medians of 6, interleaved); the paired benchmark ratio went
    from 0.98-1.06 to 0.78-0.95. The collector is process-wide, though: another thread of the host
    (a notebook's, a server's) that makes cycles during a long run would grow for its whole length
    (a reviewer's thread making cycles over a 5,000-file run: 2.2 GB against 0.2 GB), so with other
    threads alive the run keeps the per-trace pause only.
    """
    return gc_paused() if threading.active_count() == 1 else contextlib.nullcontext()


def _analyze(
    paths: list[str],
    window: int | None,
    progress: Progress | None,
    workers: int | None,
    build: Callable[[Trace, int | None], Any],
    cache: bool = False,
) -> RunResult:
    """`analyze`, run with the cyclic garbage collector paused from start to end (`_run_gc_paused`)."""
    found = find_traces(paths)
    sources = [s for s in found if not s.orphan]
    result = RunResult(
        orphan_agent_files=len(found) - len(sources), searched=list(paths) or [str(p) for p in default_roots()]
    )
    traces: list[Trace] = []
    source_of: list[TraceSource] = []
    built: dict[int, Any] = {}  # id(trace) -> its report, when a worker built it
    reads = _run_stored(sources, build, window, progress, workers, cache, result.warnings)
    for source, read in zip(sources, reads, strict=True):
        if isinstance(read, TraceFailure):
            if source.explicit or not read.empty:
                result.failures.append(read)
            else:
                result.left_out += 1  # an empty file a directory scan found: no model call, nothing wrong
            continue
        for trace, report in read:
            if not source.explicit and len(read) == 1 and trace.view("calls").height == 0:
                # a session file a directory scan found with no model call; the runs of a multi-run
                # stream-json file are runs, listed even with 0 calls (they are not files to leave out)
                result.left_out += 1
                continue
            traces.append(trace)
            source_of.append(source)
            if report is not None:
                built[id(trace)] = report
    try:
        lost = inherited_calls(traces)
        for i in lost:
            if traces[i].slim:  # a worker sent only its call keys: read it again here to drop what it inherited
                again = _read(source_of[i])
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
    return result
