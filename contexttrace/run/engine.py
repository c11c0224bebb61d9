"""Which engine reads a run's traces: this machine's processes (``local``) or a Dask cluster (``dask``).

The work of a command is a map over trace files (read one source and build its report: `work.read_built`,
behind the firewall) and a small reduction (calls inherited across sessions dropped, reports in argument
order, failures, warnings: `runner.analyze`). The ``local`` engine is the runner's own process pool,
untouched here. The ``dask`` engine (`dask_engine.DaskEngine`) maps the same unit of work over Dask's
distributed scheduler, on a `LocalCluster` of this machine or a running ``dask scheduler``, and hands the
results to the same reduction, so the output is byte-identical.

This module imports neither Dask nor fsspec: `open_engine` checks that they are installed and names what
to install when they are not (`EngineError`). It imports `dask_engine` only when a run asks for it;
`dask_engine` never imports this module. It never prints.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from contexttrace.errors import EngineError

if TYPE_CHECKING:
    from contexttrace.discover.local import TraceSource
    from contexttrace.reading import Trace
    from contexttrace.reports.results import TraceFailure

#: What `pip` installs for ``--engine dask`` (pyproject.toml's ``dask`` extra).
INSTALL_HINT = "pip install 'contexttrace[dask]'"
#: The modules ``--engine dask`` imports: the scheduler's client and cluster, and fsspec for URLs.
DASK_MODULES = ("dask", "distributed", "fsspec")


class EngineName(StrEnum):
    """The ``--engine`` choices."""

    LOCAL = "local"  # this machine: the runner's worker processes (the default)
    DASK = "dask"  # a Dask cluster: a LocalCluster here, or the scheduler at --scheduler


class Engine(Protocol):
    """What reads a run's sources in place of the runner's own processes (the local engine)."""

    def run(
        self,
        sources: list[TraceSource],
        build: Callable[[Trace, int | None], Any] | None,
        window: int | None,
        progress: Callable[[int, int], None] | None,
        workers: int | None,
    ) -> list[list[tuple[Trace, Any]] | TraceFailure]:
        """Read (and build, when `build` is given) every source: for each source in order, its (trace,
        report) pairs (`work.read_built`'s answer) or its failure. `progress` is called with (done, total)
        as sources are done; `workers` is the local engine's process count (another engine may ignore it)."""
        ...


def missing_modules() -> list[str]:
    """The modules of `DASK_MODULES` that cannot be imported here (found without importing them).

    Returns
    -------
    list of str
        In `DASK_MODULES` order; empty when ``--engine dask`` can run.
    """
    return [name for name in DASK_MODULES if importlib.util.find_spec(name) is None]


@contextlib.contextmanager
def open_engine(
    name: EngineName | str,
    scheduler: str | None = None,
    workers: int | None = None,
    paths: list[str] | None = None,
) -> Iterator[Engine | None]:
    """The engine a command runs on, checked up front and closed when the block ends (a LocalCluster it
    started is shut down, distributed's loggers are given back their levels).

    Every verdict on the options is given here, before the result store is looked up, so that a command
    gives the same one whether its sources are stored or not: the engine's packages, relative `paths`
    with a scheduler, and the scheduler itself (connected to, a worker waited for, the workers' version
    checked). A LocalCluster is started only when a run needs one.

    Parameters
    ----------
    name
        ``local`` (yields None: `runner.analyze` runs its own process pool) or ``dask``.
    scheduler
        With ``dask``: the address of a running ``dask scheduler`` (``tcp://host:8786``); None starts a
        `LocalCluster` on this machine when the first run needs it. Not taken with ``local``.
    workers
        With ``dask`` and no scheduler: the LocalCluster's worker processes (None: one per core).
    paths
        The command's path arguments, checked with a scheduler (`dask_engine.refuse_relative`).

    Raises
    ------
    EngineError
        ``--scheduler`` given with ``local``; ``dask`` with its packages missing (the message names them
        and `INSTALL_HINT`); a relative path with a scheduler; the scheduler malformed, unreachable,
        without a worker or with workers of another version (`dask_engine.DaskEngine.client`).
    """
    if EngineName(name) is EngineName.LOCAL:
        if scheduler is not None:
            raise EngineError(f"--scheduler {scheduler}", "a scheduler is used with --engine dask only")
        yield None
        return
    missing = missing_modules()
    if missing:
        raise EngineError("--engine dask", f"needs {', '.join(missing)} (not installed): {INSTALL_HINT}")
    from contexttrace.run.dask_engine import DaskEngine, refuse_relative

    engine = DaskEngine(scheduler=scheduler, workers=workers)
    try:
        if scheduler is not None:
            refuse_relative(list(paths or []), scheduler)
            engine.client()  # connected now: the verdict on the address does not wait for a source to read
        yield engine
    finally:
        engine.close()
