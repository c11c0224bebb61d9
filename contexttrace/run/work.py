"""The unit of work of a run: read one source and build its reports, behind the firewall.

Every engine maps `read_built` over a run's sources: the runner in this process and in its worker
processes (`runner`, `pool`), and Dask's workers (`dask_engine`). Whoever calls it gets the same answer
for the same source, so the output never depends on where a source was read.

The firewall: one trace never takes a run down. Reading a source and building a trace's report each
turn any exception into that trace's `TraceFailure`, returned, never raised. A source the result store
did not hold (a `store.StoredSource`) is kept in the store, with its reports, by whichever process read
it.

This module imports nothing from the rest of `run`; the runner and the engines import it. It never
prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from contexttrace import reading
from contexttrace.discover.model import TraceSource
from contexttrace.errors import ContextTraceError, EmptyTraceError
from contexttrace.reading.collector import gc_paused
from contexttrace.reports.builds import NamedBuild
from contexttrace.reports.results import TraceFailure

if TYPE_CHECKING:
    from contexttrace.reading import PendingTail, SourceFile, TailPart, Trace
    from contexttrace.storage.store import StoredSource


def read_trace(
    path: str,
    subagents: Sequence[SourceFile] = (),
    tail: TailPart | PendingTail | None = None,
    words: bool = True,
    inputs: bool = True,
) -> list[Trace]:
    """`reading.read_trace` (`words`, `inputs`: the columns read, as there), the readers imported on the first
    call (a run served from the result store reads nothing and imports none); the one place this module reads
    a file."""
    return reading.read_trace(path, subagents, tail=tail, words=words, inputs=inputs)


def stored(source: TraceSource) -> StoredSource | None:
    """`source` when it is a `store.StoredSource` (a source the result store did not hold, kept once read),
    else None. The store is imported only for a source of that type: a run without the store (`--no-cache`)
    never imports it nor sqlite3."""
    if type(source) is TraceSource:
        return None
    from contexttrace.storage.store import StoredSource

    return source if isinstance(source, StoredSource) else None


#: The builds that read no call's `path_words` (`context trace`, priced or not, and `context usage`): a source
#: they report is read without them (`reading.read_trace`'s `words`), unless the result store keeps its traces.
#: Named rather than imported, so that no command loads another's report module; a build not named here
#: (`context files`, a library caller's own) gets every column.
WORDLESS_BUILDS = frozenset(
    {
        "contexttrace.reports.trace.build_report",
        "contexttrace.reports.usage.build_usage",
        "contexttrace.select.views.build_report_with_cost",
    }
)


#: The builds that read neither a tool use's input as JSON (`input_json`, `input_chars`, `tool_input_chars`), a
#: result's `content_hash`, nor a part read's `capped` (`context usage`): read without them (`reading.read_trace`'s
#: `inputs`) as `WORDLESS_BUILDS` are without path words.
INPUTLESS_BUILDS = frozenset({"contexttrace.reports.usage.build_usage"})


def _build_name(build: Callable[[Trace, int | None], Any] | None) -> str:
    if isinstance(build, NamedBuild):  # (the builds a command passes, `reports.builds`)
        return f"{build.module}.{build.name}"
    return f"{getattr(build, '__module__', None)}.{getattr(build, '__qualname__', None)}"


def reads_words(build: Callable[[Trace, int | None], Any] | None) -> bool:
    """Whether `build` may read the calls' `path_words` column: True for every build but `WORDLESS_BUILDS`
    (and for None, a read whose traces are returned as they are). Raises nothing."""
    return build is None or _build_name(build) not in WORDLESS_BUILDS


def reads_inputs(build: Callable[[Trace, int | None], Any] | None) -> bool:
    """Whether `build` may read the tool uses' inputs as JSON and the results' hashes: True for every build but
    `INPUTLESS_BUILDS` (and for None). Raises nothing."""
    return build is None or _build_name(build) not in INPUTLESS_BUILDS


def profile_of(source: TraceSource, build: Callable[[Trace, int | None], Any] | None) -> tuple[bool, bool]:
    """The reading profile (`words`, `inputs`) `read_built(source, build, ...)` reads `source` with: what
    `build` reads (`reads_words`, `reads_inputs`), every column for a source the result store keeps. The tail
    of a file read in two parts is read with it too (`reading.read_tail`), else its head is not merged with
    it. Raises nothing."""
    full = stored(source) is not None
    return reads_words(build) or full, reads_inputs(build) or full


def read_source(
    source: TraceSource, tail: TailPart | PendingTail | None = None, words: bool = True, inputs: bool = True
) -> list[Trace] | TraceFailure:
    """Read one source into its traces, or its failure.

    Parameters
    ----------
    source
        From `discover.local.find_traces` (or `store.lookup`: a `store.StoredSource` is kept in the result
        store once read; a failure never is).
    tail
        The end of the main file read elsewhere (`reading.read_tail` in a worker, or a `PendingTail`
        waiting for it), or None to read the whole file here.
    words
        Fill the calls' `path_words` column (`reading.read_trace`); always filled for a source the result
        store keeps.
    inputs
        Fill the tool uses' `input_json` and the results' `content_hash` (`reading.read_trace`); always filled
        for a source the result store keeps.

    Returns
    -------
    list of Trace or TraceFailure
        The traces `reading.read_trace` gives (one per session, or one per run of a stream-json file),
        each with the source's unreadable subagent folders added to its warnings; or the source's
        `TraceFailure`: its own `error` when discovery gave one, the reason of a `ContextTraceError`
        (missing file, binary, no record of either format; `empty` for a file with no JSON record), or
        the type of any other exception (a defect, ``could not read this trace``).

    Raises nothing: every exception is the trace's failure (the firewall).
    """
    if source.error is not None:
        return TraceFailure(source.path, source.error)
    kept = stored(source)
    try:
        full = kept is not None
        traces = read_trace(source.path, source.subagents, tail=tail, words=words or full, inputs=inputs or full)
    except ContextTraceError as exc:
        return TraceFailure(source.path, exc.reason, empty=isinstance(exc, EmptyTraceError), line=exc.line)
    except Exception as exc:  # the firewall: this trace fails, the run goes on
        return TraceFailure.unexpected(source.path, exc, "read")
    if kept is not None:
        from contexttrace.storage import store

        store.keep(kept, traces)  # raises nothing
    for trace in traces:  # subagent folders found but not listable: said, never silently dropped
        trace.warnings.extend(source.unreadable)
    return traces


def build_guarded(build: Callable[[Trace, int | None], Any], trace: Trace, window: int | None) -> Any | TraceFailure:
    """Build one trace's report, or the trace's failure when the build raises.

    Parameters
    ----------
    build
        Turns a trace and the window into its report (`reports.trace.build_report`, or a command's own).
    trace
        The trace to report.
    window
        Context window in tokens, or None.

    Returns
    -------
    object or TraceFailure
        What `build(trace, window)` returns; or, when it raises, the trace's `TraceFailure` naming the
        exception's type (``could not report this trace``).

    Raises nothing (the firewall, as `read_source`).
    """
    try:
        return build(trace, window)
    except Exception as exc:
        return TraceFailure.unexpected(trace.name, exc, "report")


def read_built(
    source: TraceSource,
    build: Callable[[Trace, int | None], Any] | None,
    window: int | None,
    tail: TailPart | PendingTail | None = None,
    slim: bool = False,
) -> list[tuple[Trace, Any]] | TraceFailure:
    """Read one source and build each of its traces' reports in the same process.

    The cyclic garbage collector is paused meanwhile (`reading.gc_paused`): reports, like the reader,
    make no reference cycles, and with a large trace's rows alive each full collection would walk them
    all (the report of a 23,000-call trace took 1.5 s with the collector running, 0.9 s without).

    Parameters
    ----------
    source
        As `read_source`. A `store.StoredSource` also has its reports kept beside its entry, when `build`
        is one the store keeps (`storage.reports.build_spec`).
    build
        As `build_guarded`; None reads only (each pair's report is None).
    window
        Context window in tokens, or None.
    tail
        As `read_source`.
    slim
        Send each built trace back `Trace.slimmed` (its call keys only: a twentieth of the bytes to
        pickle), as a worker's answer does; the caller reads the whole trace again if it needs it.

    Returns
    -------
    list of (Trace, report) or TraceFailure
        One pair per trace, in the order `read_source` gives them (a report may itself be a
        `TraceFailure`, from `build_guarded`); or the source's failure.

    Raises nothing (the firewall).
    """
    with gc_paused():
        read = read_source(source, tail, reads_words(build), reads_inputs(build))
        if isinstance(read, TraceFailure):
            return read
        if build is None:
            return [(trace, None) for trace in read]
        pairs = [(trace, build_guarded(build, trace, window)) for trace in read]
        if (kept := stored(source)) is not None:
            from contexttrace.storage import reports as kept_reports

            kept_reports.keep(kept, kept.stamp, build, window, pairs)  # (only the builds it keeps)
        return [(trace.slimmed(), report) for trace, report in pairs] if slim else pairs
