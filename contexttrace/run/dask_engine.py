"""``--engine dask``: a run's unit of work (`work.read_built`) mapped over Dask's distributed scheduler.

`DaskEngine.run` keeps the local engine's contract (`engine.Engine`), so the runner reduces its results
exactly as it reduces the local engine's (same order, figures, warnings, exit code):

* one task per source: `work.read_built(source, build, window, slim=True)`, which reads the source and
  builds each trace's report on the worker behind the firewall (a bad file is that trace's
  `TraceFailure`, returned, never raised), and sends back the report with the trace slimmed to its call
  keys (what the runner needs to drop calls inherited across sessions; a trace that inherited some is
  read again in the client, as after the local engine's workers);
* results are put back in source order by task, each taken once: a worker that dies mid-run has its
  tasks rerun by the scheduler on another worker (``distributed.scheduler.allowed-failures`` times), and a
  task that still has no answer (it raised, or killed every worker it ran on) is done in this process,
  as the local engine does with a task its worker could not answer; nothing is lost or counted twice;
* each task sent to a scheduler given by address (or a given client) carries what this process saw of
  its source's files (size and modification time, `_seen`) and this process's `version`; the worker
  compares before reading (`_read_checked`) and a file that differs is never read there: the run stops
  with an `EngineError` naming the worker, the file and what differed (docs/dask.md);
* a scheduler lost mid-run: the sources it had not answered are done in this process, and `notices`
  says so (the CLI prints it);
* standard input, sources that are already errors, and ``memory://`` (per process) are done in this
  process;
* with the result store (`store.StoredSource`), workers of a LocalCluster keep what they read in the same
  store as the local engine's workers; workers of a remote scheduler may not see this machine's folder,
  so their sources go as plain `TraceSource`s (looked up here, not kept).

Tasks are keyed ``contexttrace-<run>-<index>`` (a fresh run id each run: never a cached result of another
run). Progress is the cluster's completions as they arrive (`distributed.as_completed`), given to the
``progress`` callback; this module never prints, and silences distributed's loggers in this process for
the engine's life. Dask, distributed and the cluster are imported and
started only when a run needs them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from contexttrace.discover.model import TraceSource
from contexttrace.errors import EngineError
from contexttrace.reading.urls import is_url
from contexttrace.run.work import read_built
from contexttrace.storage.store import StoredSource

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

    from contexttrace.reading import Trace
    from contexttrace.reports.results import TraceFailure

    Result = list[tuple[Trace, Any]] | TraceFailure

#: Seconds to wait for a scheduler given by address before saying it cannot be reached (whatever answers
#: there: a scheduler, another server, nothing).
CONNECT_TIMEOUT_S = 10
#: Seconds to wait for a first worker at a scheduler that has none.
WORKER_WAIT_S = 10
#: Seconds between looks at the client while no answer is ready (is the scheduler still there?).
POLL_S = 0.02
#: Where a message about workers that do not see this machine's files points.
DOCS = "docs/dask.md"


@dataclasses.dataclass(frozen=True)
class _Refused:
    """A worker's answer for a task it would not read: it runs another contexttrace, or a file of the
    source is not the file this process saw (`_read_checked`)."""

    worker: str
    reason: str


class DaskEngine:
    """Reads a run's sources on a Dask cluster (`engine.Engine`).

    Parameters
    ----------
    scheduler
        Address of a running ``dask scheduler`` (``tcp://host:8786``); None: a `LocalCluster` of this
        machine, started by the first run (worker processes of one thread each: the reader is Python
        code that holds the GIL) and shut down by `close`.
    workers
        The LocalCluster's worker processes; None: one per core. Ignored with `scheduler` or `client`.
    client
        A connected `distributed.Client` to use instead (tests, notebooks); never closed here.
    keep_in_store
        Whether workers keep what they read in this machine's result store (`storage.store`). None: yes on a
        LocalCluster this engine starts, no with a scheduler address or a given client.
    """

    def __init__(
        self,
        scheduler: str | None = None,
        workers: int | None = None,
        client: Client | None = None,
        keep_in_store: bool | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.workers = workers
        self._client = client
        self._own_client = client is None
        self._cluster: LocalCluster | None = None
        self.keep_in_store = keep_in_store if keep_in_store is not None else (client is None and scheduler is None)
        #: Whether each task carries what this process saw of its files, compared on the worker (not on a
        #: LocalCluster this engine starts: its workers are this machine's processes)
        self.check_files = client is not None or scheduler is not None
        #: Lines for stderr about the run that are not any trace's (the scheduler lost mid-run)
        self.notices: list[str] = []
        self._levels: dict[str, int] = {}

    def client(self) -> Client:
        """The connected client, made on first use. Distributed's loggers are silenced in this process
        until `close` (stderr stays the local engine's); a LocalCluster's workers ignore SIGINT (Ctrl-C
        reaches this process, which shuts them down).

        Raises
        ------
        EngineError
            The address is malformed, nothing that answers as a Dask scheduler is there within
            `CONNECT_TIMEOUT_S`, no worker joins it within `WORKER_WAIT_S`, or a worker runs another
            contexttrace or none (`_check_workers`).
        """
        if self._client is not None:
            return self._client
        from distributed import Client

        self._levels = _quiet_logs()
        if self.scheduler is None:
            with _workers_ignore_sigint():
                self._cluster = self._local_cluster()
            self._client = Client(self._cluster)
        else:
            self._client = _connect(self.scheduler)
            _check_workers(self._client, self.scheduler)
        return self._client

    def _local_cluster(self) -> LocalCluster:
        """A LocalCluster of this machine, its logs silenced (`_quiet_logs` keeps this process's)."""
        from distributed import LocalCluster

        return LocalCluster(
            n_workers=self.workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            # the scheduler's HTTP routes (health, metrics) on a free port: 8787 may be another cluster's
            scheduler_kwargs={"dashboard_address": ":0"},
            silence_logs=logging.CRITICAL,  # a worker lost, restarted or closed mid-heartbeat: not for stderr
            memory_limit=0,  # as the local engine: a large session may take what it needs
        )

    def close(self) -> None:
        """Close the client and shut down the LocalCluster this engine started (a given client is left open)."""
        if self._own_client and self._client is not None:
            self._client.close(timeout=CONNECT_TIMEOUT_S)  # (a lost scheduler: not waited for forever)
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
        for name, level in self._levels.items():
            logging.getLogger(name).setLevel(level)
        self._levels = {}

    def run(
        self,
        sources: list[TraceSource],
        build: Callable[[Trace, int | None], Any] | None,
        window: int | None,
        progress: Callable[[int, int], None] | None,
        workers: int | None = None,
    ) -> list[Result]:
        """Read (and build) every source on the cluster; the contract of `engine.Engine.run`.

        Parameters
        ----------
        sources
            From `discover.local.find_traces` (or `store.lookup`: `StoredSource`s are kept where they are read).
        build
            Turns a trace and the window into its report, on the worker when it pickles (with cloudpickle);
            else the workers send whole traces and the runner builds the reports here.
        window
            Context window in tokens, or None.
        progress
            Called with (done, total) as each source's answer arrives.
        workers
            Ignored: the cluster has its own workers (`DaskEngine`'s `workers` sizes a LocalCluster).

        Returns
        -------
        list
            For each source, in order: its (trace, report) pairs (traces slimmed when `build` ran on the
            worker) or its `TraceFailure`.

        Raises
        ------
        EngineError
            The scheduler cannot be reached (`client`); a relative path with a scheduler address
            (`refuse_relative`); a worker that runs another contexttrace or does not see a file as this
            process saw it (`_read_checked`): the run stops, naming the worker and the file.
        """
        total = len(sources)
        if self.scheduler is not None:
            refuse_relative([s.path for s in sources], self.scheduler)
        slots: list[Result | None] = [None] * total
        # standard input, errors, and memory:// (per process: a worker's is not this one's) are read here
        here = [i for i, s in enumerate(sources) if s.path == "-" or s.error is not None or _in_memory(s)]
        # largest first (as the local engine shares them out), so that no large file starts last
        sent = sorted(set(range(total)) - set(here), key=lambda i: -_bytes(sources[i]))
        done = 0

        def finish(i: int, value: Result) -> None:
            nonlocal done
            slots[i] = value
            done += 1
            if progress:
                progress(done, total)

        for i in here:
            finish(i, read_built(sources[i], build, window))
        answered = 0
        lost = False
        if sent:
            for i, value in self._map(sources, sent, build, window):
                if isinstance(value, _Refused):
                    raise EngineError(self._label(), f"worker {value.worker}: {value.reason}")
                lost = lost or (value is None and self._scheduler_lost())
                answered += value is not None
                finish(i, value if value is not None else read_built(sources[i], build, window))
        if lost and self.scheduler is not None:
            self.notices.append(
                f"the scheduler at {self.scheduler} was lost after {answered} of {len(sent)} sources; "
                "the rest were read in this process"
            )
        return [s for s in slots if s is not None]

    def _label(self) -> str:
        """The option an error of this engine names."""
        return f"--scheduler {self.scheduler}" if self.scheduler is not None else "--engine dask"

    def _scheduler_lost(self) -> bool:
        """Whether the client has lost its scheduler (a task's answer did not come for that reason)."""
        return self._client is not None and self._client.status != "running"

    def _map(
        self, sources: list[TraceSource], indexes: list[int], build: Any, window: int | None
    ) -> Iterator[tuple[int, Result | _Refused | None]]:
        """Yield (index, answer) for each source of `indexes` as the cluster answers it; None for a task
        that failed on the cluster (it raised, or killed every worker it was sent to)."""
        from distributed import as_completed

        client = self.client()
        remote_build = build if build is not None and _cloudpicklable(build) else None
        run_id = uuid.uuid4().hex[:12]
        keys = [f"contexttrace-{run_id}-{i}" for i in indexes]
        index_of = dict(zip(keys, indexes, strict=True))
        tasks = [self._portable(sources[i]) for i in indexes]
        seen = [_seen(sources[i]) if self.check_files else None for i in indexes]
        futures = client.map(
            _read_checked,
            tasks,
            seen,
            key=keys,
            expect=version(),
            build=remote_build,
            window=window,
            tail=None,
            slim=remote_build is not None,
            pure=False,
        )
        waiting = dict(index_of)
        try:
            ready = as_completed(futures, loop=client.loop, with_results=True, raise_errors=False)
            while not ready.is_empty():
                if not ready.has_ready():
                    if self._scheduler_lost():  # its futures would never finish: the rest are read here
                        break
                    time.sleep(POLL_S)
                    continue
                for future, value in ready.next_batch(block=False):
                    answer = value if future.status == "finished" else None
                    future.release()  # the worker's copy is not needed any more
                    yield waiting.pop(future.key), answer
            for key in sorted(waiting, key=index_of.__getitem__):
                yield index_of[key], None
        finally:
            if not self._scheduler_lost():
                client.cancel([f for f in futures if not f.done()])

    def _portable(self, source: TraceSource) -> TraceSource:
        """The source as a worker gets it: a `StoredSource` stays one only when workers keep in this
        machine's store (`keep_in_store`)."""
        if isinstance(source, StoredSource) and not self.keep_in_store:
            return TraceSource(**{f.name: getattr(source, f.name) for f in dataclasses.fields(TraceSource)})
        return source


def _connect(address: str) -> Client:
    """A client of the scheduler at `address`: first a handshake of our own (`_probe`), bounded by
    `CONNECT_TIMEOUT_S` whatever answers there, then distributed's `Client`.

    Raises
    ------
    EngineError
        The address is malformed, nothing answers as a Dask scheduler in time, or anything distributed
        raises while connecting (MemoryError included: a peer that is not a scheduler can announce an
        absurd message length). One line, no traceback.
    """
    import asyncio

    from distributed import Client

    where = f"--scheduler {address}"
    try:
        asyncio.run(asyncio.wait_for(_probe(address), CONNECT_TIMEOUT_S))
    except TimeoutError:
        reason = f"nothing answered as one within {CONNECT_TIMEOUT_S} s"
        raise EngineError(where, f"cannot reach the Dask scheduler ({reason})") from None
    except EngineError:
        raise
    except (Exception, MemoryError) as exc:
        raise EngineError(where, f"cannot reach the Dask scheduler ({_plain(exc)})") from None

    class _Connecting(Client):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            try:
                super().__init__(*args, **kwargs)
            except BaseException:
                runner = getattr(self, "_loop_runner", None)
                if runner is not None:
                    runner.stop()
                self._Client__loop = None  # (its __del__ would close it again: "IOLoop is closed")
                raise

    try:
        return _Connecting(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (Exception, MemoryError) as exc:
        raise EngineError(where, f"cannot reach the Dask scheduler ({_plain(exc)})") from None


async def _probe(address: str) -> None:
    """Connect to `address` and ask who answers (the scheduler's ``identity``); the caller bounds it in
    time. Raises EngineError when what answers is not a Dask scheduler, and what distributed raises for
    a malformed address or a failed connection."""
    from distributed.comm import connect

    comm = await connect(address, timeout=CONNECT_TIMEOUT_S)
    try:
        await comm.write({"op": "identity", "reply": True})
        answer = await comm.read()
    finally:
        comm.abort()
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise EngineError(f"--scheduler {address}", "what answers there is not a Dask scheduler")


def _plain(exc: BaseException) -> str:
    """An exception as a reason in one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def refuse_relative(paths: list[str], scheduler: str) -> None:
    """Refuse relative paths (and relative ``file://`` URLs) for the workers of a scheduler given by
    address: they run in folders of their own (often on other machines), where ``traces/a.jsonl`` names
    another file or none. (A LocalCluster's workers share this process's folder.) A path is not made
    absolute here: a trace is named as its path is spelled, and the output must be the local engine's for
    the same arguments. ``~/dir`` is absolute (`discover.local.find_traces` expands it); ``-`` is read here.

    Raises
    ------
    EngineError
        Naming the first relative path and what to give instead.
    """
    for path in paths:
        if path == "-":
            continue
        if is_url(path):
            scheme, _, rest = path.partition("://")
            relative = scheme.lower() == "file" and not rest.startswith("/")
        else:
            relative = not os.path.isabs(os.path.expanduser(path))
        if relative:
            raise EngineError(
                f"--scheduler {scheduler}",
                f"a relative path ({path}) means nothing to the scheduler's workers: give absolute paths "
                "(file:///srv/traces) on a file system every worker mounts, or URLs (s3://bucket/traces/)",
            )


def version() -> str:
    """This process's contexttrace version and reader version (`reading.contract.READER_VERSION`), as ``0.1.0/4``: what
    every worker must run for the output to be this machine's (`_check_workers`)."""
    from contexttrace.reading.contract import READER_VERSION
    from contexttrace.version import __version__

    return f"{__version__}/{READER_VERSION}"


def _check_workers(client: Client, scheduler: str) -> None:
    """Wait up to `WORKER_WAIT_S` for a worker, then check that every worker of a scheduler given by
    address runs this contexttrace (`version`). Workers that join later are checked by each task they
    run (`_read_checked`).

    Raises
    ------
    EngineError
        No worker joined in time; a worker cannot import contexttrace, or runs another version (each named
        with its version). The client is closed first.
    """
    where = f"--scheduler {scheduler}"
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except Exception:
        client.close()
        raise EngineError(where, f"no worker joined the scheduler within {WORKER_WAIT_S} s") from None
    try:
        versions: dict[str, str] = client.run(version)
    except Exception as exc:  # a worker without contexttrace: ModuleNotFoundError raised on it
        client.close()
        missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        what = f"cannot import {missing}" if missing else f"cannot run contexttrace ({_plain(exc)})"
        raise EngineError(where, f"a worker {what}: pip install contexttrace on every worker") from None
    other = {w: v for w, v in versions.items() if v != version()}
    if other:
        client.close()
        named = ", ".join(f"{w} has {v}" for w, v in sorted(other.items()))
        raise EngineError(where, f"workers run another contexttrace than {version()}: {named}")


def _local_path(path: str) -> str | None:
    """The path on disk a source file names: itself, the path of a ``file://`` URL; None for another URL."""
    if not is_url(path):
        return path
    scheme, _, rest = path.partition("://")
    return rest if scheme.lower() == "file" else None


def _in_memory(source: TraceSource) -> bool:
    """Whether a source is behind ``memory://`` (fsspec's per-process file system)."""
    return source.path.lower().startswith("memory://")


#: What this process saw of one file: (path, size in bytes, st_mtime_ns), or (path, None, None) missing.
Seen = tuple[str, int | None, int | None]


def _stat_seen(path: str) -> Seen:
    """`Seen` of a path on disk. Raises nothing."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return (path, None, None)
    return (path, st.st_size, st.st_mtime_ns)


def _seen(source: TraceSource) -> tuple[Seen, ...]:
    """What this process sees of a source's files on disk, as `stamps.stamp_of` looks at them: the size and
    modification time of the main file and of each subagent file (URLs other than ``file://`` are the
    object store's, the same for everyone: not stamped). Raises nothing."""
    paths = [_local_path(p) for p in (source.path, *(s.path for s in source.subagents))]
    return tuple(_stat_seen(p) for p in paths if p is not None)


def _differs(seen: Seen, there: Seen) -> str | None:
    """How a file on a worker (`there`) differs from what this process saw; None when it does not."""
    if seen == there:
        return None
    path, size, _ = seen
    if there[1] is None:
        return f"{path}: missing on the worker"
    if size is None:
        return f"{path}: missing here but present on the worker"
    if there[1] != size:
        return f"{path}: size differs ({size:,} bytes here, {there[1]:,} on the worker)"
    return f"{path}: modification time differs"


def _read_checked(source: TraceSource, seen: tuple[Seen, ...] | None, expect: str, **read: Any) -> Result | _Refused:
    """A task on a worker: `work.read_built(source, **read)` when this worker runs contexttrace
    `expect` (`version`: a worker that joined after `_check_workers`) and sees each file of `seen` as the
    command's process saw it (None: not checked); else a `_Refused` naming the worker and what differs,
    and nothing is read. Raises what `read_built` raises (nothing: its firewall)."""
    worker = _worker_address()
    if version() != expect:
        return _Refused(worker, f"runs contexttrace {version()}, this machine {expect}")
    for one in seen or ():
        what = _differs(one, _stat_seen(one[0]))
        if what is not None:
            return _Refused(
                worker,
                f"{what}; workers must see the files at the same paths as this machine, or read URLs "
                f"(s3://...): {DOCS}",
            )
    return read_built(source, **read)


def _worker_address() -> str:
    """The address of the worker running this task ("?" outside a worker). Raises nothing."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except Exception:
        return "?"


def _quiet_logs() -> dict[str, int]:
    """Silence distributed's loggers in this process (a lost worker or scheduler is not the local engine's
    stderr); returns their levels before, for `DaskEngine.close` to restore."""
    loggers = logging.root.manager.loggerDict
    # (tornado's: a connection reset by a scheduler that died)
    names = ["distributed", "tornado", *(n for n in loggers if n.startswith(("distributed.", "tornado.")))]
    levels = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.CRITICAL + 1)
    return levels


@contextlib.contextmanager
def _workers_ignore_sigint() -> Iterator[None]:
    """While a LocalCluster starts its worker processes, SIGINT is ignored: they inherit that (an ignored
    signal stays ignored across exec, and Python then installs no KeyboardInterrupt handler), so Ctrl-C in
    a terminal (SIGINT to the whole process group) reaches only this process, which shuts them down."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _bytes(source: TraceSource) -> int:
    """Bytes of a source's files on disk (0 for a URL, or a file that cannot be stat'ed): its place in the
    order tasks are sent in. Raises nothing."""
    total = 0
    for path in (source.path, *(s.path for s in source.subagents)):
        with contextlib.suppress(OSError, ValueError):  # ValueError: a NUL byte in the name
            total += os.path.getsize(path)
    return total


def _cloudpicklable(obj: Any) -> bool:
    """Whether `obj` can be sent to a worker (Dask pickles tasks with cloudpickle). Raises nothing."""
    try:
        import cloudpickle

        cloudpickle.dumps(obj)
    except Exception:
        return False
    return True
