"""``--engine dask``: the runner's per-source unit of work mapped over Dask's distributed scheduler (issue 17).

`DaskEngine.run` keeps `runner._run`'s contract, so `runner._analyze` reduces its results exactly as it
reduces the local engine's (same order, figures, warnings, exit code):

* one task per source: `runner._read_built(source, build, window, slim=True)`, which reads the source
  and builds each trace's report on the worker behind the runner's firewall (a bad file is that trace's
  `TraceFailure`, returned, never raised), and sends back the report with the trace slimmed to its call
  keys (what `runner._analyze` needs to drop calls inherited across sessions; a trace that inherited some
  is read again in the client, as after the local engine's workers);
* results are put back in source order by task, each taken once: a worker that dies mid-run has its
  tasks rerun by the scheduler on another worker (``distributed.scheduler.allowed-failures`` times), and a
  task that still has no answer (it raised, or killed every worker it ran on) is done in this process,
  as the local engine does with a task its worker could not answer; nothing is lost or counted twice;
* standard input and sources that are already errors are done in this process;
* with the result store (`store.StoredSource`), workers of a LocalCluster keep what they read in the same
  store as the local engine's workers; workers of a remote scheduler may not see this machine's folder,
  so their sources go as plain `TraceSource`s (looked up here, not kept).

Tasks are keyed ``contexttrace-<run>-<index>`` (a fresh run id each run: never a cached result of another
run). Progress is the cluster's completions as they arrive (`distributed.as_completed`), given to the
``progress`` callback; this module never prints. Dask, distributed and the cluster are imported and
started only when a run needs them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .engine import EngineError
from .remote import is_url
from .runner import _read_built
from .sources import TraceSource
from .store import StoredSource

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

    from .reader import Trace
    from .report import TraceFailure

    Result = list[tuple[Trace, Any]] | TraceFailure

#: Seconds to wait for a scheduler given by address before saying it cannot be reached.
CONNECT_TIMEOUT_S = 10


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
        Whether workers keep what they read in this machine's result store (`store.py`). None: yes on a
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

    def client(self) -> Client:
        """The connected client, made on first use.

        Raises
        ------
        EngineError
            The scheduler at `scheduler` cannot be reached within `CONNECT_TIMEOUT_S`.
        """
        if self._client is not None:
            return self._client
        from distributed import Client, LocalCluster

        if self.scheduler is None:
            self._cluster = LocalCluster(
                n_workers=self.workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # the scheduler's HTTP routes (health, metrics) on a free port: 8787 may be another cluster's
                scheduler_kwargs={"dashboard_address": ":0"},
                silence_logs=logging.CRITICAL,  # a worker lost, restarted or closed mid-heartbeat: not for stderr
                memory_limit=0,  # as the local engine: a large session may take what it needs
            )
            self._client = Client(self._cluster)
        else:
            try:
                self._client = _connect(self.scheduler)
            except (OSError, TimeoutError) as exc:
                raise EngineError(f"--scheduler {self.scheduler}", f"cannot reach the Dask scheduler ({exc})") from None
            _check_workers(self._client, self.scheduler)
        return self._client

    def close(self) -> None:
        """Close the client and shut down the LocalCluster this engine started (a given client is left open)."""
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def run(
        self,
        sources: list[TraceSource],
        build: Callable[[Trace, int | None], Any] | None,
        window: int | None,
        progress: Callable[[int, int], None] | None,
        workers: int | None = None,
    ) -> list[Result]:
        """Read (and build) every source on the cluster; `runner._run`'s contract.

        Parameters
        ----------
        sources
            From `sources.find_traces` (or `store.lookup`: `StoredSource`s are kept where they are read).
        build
            Turns a trace and the window into its report, on the worker when it pickles (with cloudpickle);
            else the workers send whole traces and `runner._analyze` builds the reports here.
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
            The scheduler cannot be reached.
        """
        total = len(sources)
        if self.scheduler is not None:
            _absolute_only(sources, self.scheduler)
        slots: list[Result | None] = [None] * total
        here = [i for i, s in enumerate(sources) if s.path == "-" or s.error is not None]
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
            finish(i, _read_built(sources[i], build, window))
        if sent:
            for i, value in self._map(sources, sent, build, window):
                finish(i, value if value is not None else _read_built(sources[i], build, window))
        return [s for s in slots if s is not None]

    def _map(
        self, sources: list[TraceSource], indexes: list[int], build: Any, window: int | None
    ) -> Iterator[tuple[int, Result | None]]:
        """Yield (index, answer) for each source of `indexes` as the cluster answers it; None for a task
        that failed on the cluster (it raised, or killed every worker it was sent to)."""
        from distributed import as_completed

        client = self.client()
        remote_build = build if build is not None and _cloudpicklable(build) else None
        run_id = uuid.uuid4().hex[:12]
        keys = [f"contexttrace-{run_id}-{i}" for i in indexes]
        index_of = dict(zip(keys, indexes, strict=True))
        tasks = [self._portable(sources[i]) for i in indexes]
        futures = client.map(
            _read_built,
            tasks,
            key=keys,
            build=remote_build,
            window=window,
            tail=None,
            slim=remote_build is not None,
            pure=False,
        )
        try:
            for batch in as_completed(futures, with_results=True, raise_errors=False).batches():
                for future, value in batch:
                    answer = value if future.status == "finished" else None
                    future.release()  # the worker's copy is not needed any more
                    yield index_of[future.key], answer
        finally:
            client.cancel([f for f in futures if not f.done()])

    def _portable(self, source: TraceSource) -> TraceSource:
        """The source as a worker gets it: a `StoredSource` stays one only when workers keep in this
        machine's store (`keep_in_store`)."""
        if isinstance(source, StoredSource) and not self.keep_in_store:
            return TraceSource(**{f.name: getattr(source, f.name) for f in dataclasses.fields(TraceSource)})
        return source


def _connect(address: str) -> Client:
    """A client of the scheduler at `address`, connected within `CONNECT_TIMEOUT_S`. Raises OSError or
    TimeoutError as `distributed.Client` does; a client that fails to connect stops its event-loop thread
    (distributed's own leaves it running, for the life of the process)."""
    from distributed import Client

    class _Connecting(Client):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            try:
                super().__init__(*args, **kwargs)
            except BaseException:
                runner = getattr(self, "_loop_runner", None)
                if runner is not None:
                    runner.stop()
                raise

    return _Connecting(address, timeout=CONNECT_TIMEOUT_S)


def _absolute_only(sources: list[TraceSource], scheduler: str) -> None:
    """Refuse relative paths for the workers of a scheduler given by address: they run in folders of their
    own (often on other machines), where ``traces/a.jsonl`` names another file or none. (A LocalCluster's
    workers share this process's folder.) A path is not made absolute here: a trace is named as its path
    is spelled, and the output must be the local engine's for the same arguments.

    Raises
    ------
    EngineError
        Naming the first relative path and what to give instead.
    """
    relative = [s.path for s in sources if s.path != "-" and not is_url(s.path) and not os.path.isabs(s.path)]
    if relative:
        raise EngineError(
            f"--scheduler {scheduler}",
            f"a relative path ({relative[0]}) means nothing to the scheduler's workers: give absolute paths "
            "on a file system every worker mounts, or URLs (s3://bucket/traces/)",
        )


def version() -> str:
    """This process's contexttrace version and reader version (`schema.READER_VERSION`), as ``0.1.0/4``: what
    every worker must run for the output to be this machine's (`_check_workers`)."""
    from . import __version__
    from .schema import READER_VERSION

    return f"{__version__}/{READER_VERSION}"


def _check_workers(client: Client, scheduler: str) -> None:
    """Check that every worker of a scheduler given by address runs this contexttrace (`version`).

    Raises
    ------
    EngineError
        A worker cannot import contexttrace, or runs another version (each named with its version).
    """
    try:
        versions: dict[str, str] = client.run(version)
    except Exception as exc:  # a worker without contexttrace: ModuleNotFoundError raised on it
        client.close()
        raise EngineError(
            f"--scheduler {scheduler}",
            f"a worker cannot run contexttrace ({type(exc).__name__}: {exc}); install it on every worker: "
            "pip install 'contexttrace[dask]'",
        ) from None
    other = {w: v for w, v in versions.items() if v != version()}
    if other:
        client.close()
        named = ", ".join(f"{w} has {v}" for w, v in sorted(other.items()))
        raise EngineError(f"--scheduler {scheduler}", f"workers run another contexttrace than {version()}: {named}")


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
