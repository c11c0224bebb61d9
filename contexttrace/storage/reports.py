"""The result store's second layer: the reports built from its entries, so that a warm run builds none.

`store` keeps what the reader extracted from each source (its `Trace` list); building every report from
those traces would be two thirds of a warm run (benchmarks/README.md). This layer keeps, beside each
entry, what the runner hands on for it: each trace slimmed to its call keys (`Trace.slimmed`: what
`reading.inherited_calls` reads across a run's sessions) with its built report.

A report is served only when every input of its build is as it was:

* the entry's key and stamp (`stamps`: the source's files' paths, sizes, modification times, inodes);
* the build (`build_spec`: its name, with the options it was given, and its report type) and the window
  it was given (`-1` for none);
* `code_version`: the reader's version and a hash of every module and data file of the package, so a
  change to any report code or to the price table never meets an old report. (Finer keys — only the
  modules a build imports — would keep reports across unrelated edits, at the risk of missing one.)

A report is a pure function of those (`reports.trace.build_report` reads the trace, the window, the
package's data). A trace that loses calls to another session (a resumed or forked session copies its parent's)
gets its report built again, exactly as for a worker's answer (`runner.analyze`).

Trust, as for entries: a typed msgpack document (`list[tuple[Trace, <report type>]]`, no code runs),
behind a CRC-32 of the row's key (path, spelling, build, window, version, stamp: `stamps.row_checksum`)
and the document, so a row moved under another key is a miss; its traces checked as slim traces of
equal-length key columns; anything else is a miss, deleted. The builds kept are each command's (`KEPT_BUILDS`:
`context trace` with and without its cost, `usage`, `tools`, `sources`, `files`), a `functools.partial` of
one by its keyword arguments (`--at`, `--thread`), which are part of the build's name; any other build
builds its reports from the stored traces. A report's module is imported only when one of its reports is
looked up or kept. Nothing here raises into a run.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from contexttrace.discover.model import TraceSource
from contexttrace.reading import Trace
from contexttrace.reading.model import KEY_COLUMNS
from contexttrace.reports.builds import NamedBuild
from contexttrace.storage import store as result_store
from contexttrace.storage.stamps import entry_key, reader_version, row_checksum, stamp_of
from contexttrace.storage.store import ResultStore

#: The builds whose reports are kept, by (module, function name): the name a report is kept under, and the
#: module and class its reports decode to (imported when a report of that build is looked up or kept).
KEPT_BUILDS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("contexttrace.reports.trace", "build_report"): ("trace", "contexttrace.reports.results", "TraceReport"),
    ("contexttrace.select.views", "build_report_with_cost"): (
        "trace+cost",
        "contexttrace.reports.results",
        "TraceReport",
    ),
    ("contexttrace.reports.usage", "build_usage"): ("usage", "contexttrace.reports.results", "UsageReport"),
    ("contexttrace.reports.tools", "build_tools"): ("tools", "contexttrace.reports.tools", "ToolsReport"),
    ("contexttrace.reports.sources", "build_sources"): ("sources", "contexttrace.reports.sources", "SourcesReport"),
    ("contexttrace.reports.files", "build_files"): ("files", "contexttrace.reports.files", "FilesReport"),
}
#: `window` as kept for "no window".
_NO_WINDOW = -1
#: The package's folder (`contexttrace/`, above this module's `storage/`): every module and data file in it
#: is hashed into `code_version`.
_PACKAGE = Path(__file__).resolve().parent.parent


def code_version() -> str:
    """The reader's version and a hash of the package's `.py` files and `data/` files (names and bytes).

    >>> code_version().startswith(reader_version() + "+")
    True
    """
    return f"{reader_version()}+{_code_hash()}"


@functools.cache
def _code_hash() -> str:
    """A hash of the package's files, and of the Python and the decoding libraries that build a report (a store
    shared by two environments with the same package never serves one's reports to the other)."""
    import orjson

    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{sys.version}|{msgspec.__version__}|{orjson.__version__}\0".encode())
    files = sorted([*_PACKAGE.rglob("*.py"), *(_PACKAGE / "data").glob("*")])
    for path in files:
        if "__pycache__" in path.parts or not path.is_file():
            continue
        digest.update(os.fsencode(path.relative_to(_PACKAGE)) + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def build_spec(build: Callable[..., Any] | None) -> tuple[str, type] | None:
    """The name a build's reports are kept under and the type they decode to, or None when they are not kept.

    Parameters
    ----------
    build
        A run's build: a function of `KEPT_BUILDS` or a `builds.NamedBuild` naming one (kept under the same
        name, its module not imported), or a `functools.partial` of either with keyword arguments only
        (their values, encoded as sorted JSON, are part of the name: `sources{"at":"peak",...}`).

    Returns
    -------
    tuple of (str, type) or None
        None for any other build, a function that is not the one its module holds now (replaced, as a test
        does), or keyword values that cannot be encoded.

    >>> from contexttrace.reports.builds import TRACE_BUILD
    >>> from contexttrace.reports.trace import build_report
    >>> build_spec(build_report)[0], build_spec(TRACE_BUILD)[0], build_spec(print)
    ('trace', 'trace', None)
    """
    func, keywords = build, {}
    if isinstance(build, functools.partial):
        if build.args:
            return None
        func, keywords = build.func, build.keywords
    if isinstance(func, NamedBuild):
        where = (func.module, func.name)
        if not _named_is_own(func):
            return None
    else:
        where = (getattr(func, "__module__", ""), getattr(func, "__qualname__", ""))
    kept = KEPT_BUILDS.get(where)
    if kept is None or func is None:
        return None
    name, module_name, class_name = kept
    module = importlib.import_module(module_name)
    if not isinstance(func, NamedBuild) and getattr(importlib.import_module(where[0]), where[1], None) is not func:
        return None
    if keywords:
        try:
            name += msgspec.json.encode(keywords, order="sorted").decode()
        except (TypeError, msgspec.EncodeError):
            return None
    return name, getattr(module, class_name)


def _named_is_own(build: NamedBuild) -> bool:
    """Whether the function a `NamedBuild` calls is its module's own (not one put there in its place): true
    when the module is not imported yet (nothing replaced it; importing it here is what naming it saves)."""
    module = sys.modules.get(build.module)
    if module is None:
        return True
    func = getattr(module, build.name, None)
    return getattr(func, "__module__", None) == build.module and getattr(func, "__qualname__", None) == build.name


@functools.cache
def _decoder(report_type: type) -> msgspec.msgpack.Decoder[Any]:
    return msgspec.msgpack.Decoder(list[tuple[Trace, report_type]])  # type: ignore[valid-type]


_ENCODER = msgspec.msgpack.Encoder()


def _sound(pairs: Any, name: str, window: int | None) -> bool:
    """Whether decoded pairs are what `keep` wrote for `window`: at least one, each `context trace` report
    built with that window (`_built_with`), each trace slim with exactly `Trace.slimmed`'s columns (the call
    keys and `end_ts_ms`, in order) as lists of one length."""
    if not isinstance(pairs, list) or not pairs:
        return False
    own_window = name.startswith("trace")
    for trace, report in pairs:
        if not trace.slim or list(trace.tables) != ["calls"] or (own_window and not _built_with(report, window)):
            return False
        columns = trace.tables["calls"]
        if type(columns) is not dict or list(columns) != _SLIM_COLUMNS:
            return False
        if any(type(v) is not list for v in columns.values()) or len({len(v) for v in columns.values()}) != 1:
            return False
    return True


_SLIM_COLUMNS = [*KEY_COLUMNS, "end_ts_ms"]


def _built_with(report: Any, window: int | None) -> bool:
    """Whether a `TraceReport` was built with `window`: given, its `window` is the option's and its
    `window_source` ``"option"``; without one, the window it chose itself (any other source). Other
    reports hold the window they chose and are not checked."""
    if window is None:
        return report.window_source != "option"
    return report.window_source == "option" and report.window == window


def _usable(window: int | None) -> bool:
    """Windows the store keeps reports for: none, or a window of at least a token (`analyze` takes any int;
    a value below 1 is no window a trace can have, and -1 is how "none" is kept)."""
    return window is None or window >= 1


def lookup(
    sources: Sequence[TraceSource], build: Callable[..., Any], window: int | None, warnings: list[str]
) -> list[list[tuple[Trace, Any]] | None]:
    """Look up the reports kept for each source by `build` with `window`, before a run reads.

    Parameters
    ----------
    sources
        The run's sources, in order.
    build
        The run's build; only those of `KEPT_BUILDS` (`build_spec`) have kept reports.
    window
        Context window in tokens, or None.
    warnings
        The run's warnings: the store's are moved here.

    Returns
    -------
    list
        For each source, in order: its (slim trace, report) pairs as kept, or None. All None when
        `build` is not kept (`build_spec`), `window` is below 1, or the store cannot be used; a row that fails
        its checks (checksum, decoding, slim columns, window) is deleted and missed.

    Raises nothing: anything unexpected is a warning, and the reports are built as with `--no-cache`.
    """
    if not sources or not _usable(window):
        return [None] * len(sources)
    spec = build_spec(build)
    if spec is None:
        return [None] * len(sources)
    store = ResultStore.for_path()
    try:
        found = _lookup(store, sources, spec, window)
    except Exception as exc:  # the firewall: the store never fails a run
        found = [None] * len(sources)
        store.warnings.append(f"result store {store.path}: kept reports not used ({type(exc).__name__}: {exc})")
    store.take_warnings(warnings)
    return found


def _lookup(
    store: ResultStore, sources: Sequence[TraceSource], spec: tuple[str, type], window: int | None
) -> list[list[tuple[Trace, Any]] | None]:
    name = spec[0]
    version = code_version()
    out: list[list[tuple[Trace, Any]] | None] = []
    hits: list[tuple[bytes, bytes]] = []
    with store.lock:
        for source in sources:
            stamp = stamp_of(source)
            conn = store.connection() if stamp is not None else None
            if stamp is None or conn is None:
                out.append(None)
                continue
            path, spelling = entry_key(source)
            key = (path, spelling, name, _NO_WINDOW if window is None else window)
            try:
                row = conn.execute(
                    "SELECT checksum, data FROM reports WHERE path = ? AND spelling = ? AND build = ? "
                    "AND window = ? AND version = ? AND stamp = ?",
                    (*key, version, stamp[0]),
                ).fetchone()
            except sqlite3.DatabaseError as exc:
                store.corrupt(exc)
                out.append(None)
                continue
            pairs = _decode(row, (*key, version, stamp[0]), spec, window) if row is not None else None
            if row is not None and pairs is None:  # damaged, or not written by this code: never trusted
                try:
                    conn.execute(
                        "DELETE FROM reports WHERE path = ? AND spelling = ? AND build = ? AND window = ?", key
                    )
                except sqlite3.DatabaseError as exc:
                    store.corrupt(exc)
            out.append(pairs)
            if pairs is not None:
                hits.append((path, spelling))
        _mark_used(store, hits)
    return out


def _mark_used(store: ResultStore, hits: list[tuple[bytes, bytes]]) -> None:
    """Date today the entries whose reports were served (so the daily prune, `store.KEEP_DAYS`, keeps
    what is in use): one transaction, writing only rows not dated today."""
    if not hits:
        return
    today = result_store.current_day()  # (looked up when called: tests move the day)
    store.write_many(
        "UPDATE entries SET used = ? WHERE path = ? AND spelling = ? AND used != ?",
        [(today, path, spelling, today) for path, spelling in hits],
    )


def _decode(
    row: tuple[Any, Any], key: tuple[Any, ...], spec: tuple[str, type], window: int | None
) -> list[tuple[Trace, Any]] | None:
    checksum, data = row
    if not isinstance(data, bytes) or row_checksum(key, data) != checksum:
        return None
    try:
        pairs = _decoder(spec[1]).decode(data)
    except (msgspec.DecodeError, ValueError, TypeError):
        return None
    return pairs if _sound(pairs, spec[0], window) else None


def keep(
    source: TraceSource, stamp: bytes, build: Callable[..., Any], window: int | None, pairs: list[tuple[Trace, Any]]
) -> bool:
    """Keep the reports built from a source, each beside its trace slimmed (in whichever process built them).

    Parameters
    ----------
    source
        The source read; a `store.StoredSource` names its store, another source is kept in the default one.
    stamp
        The stamp its files had before they were read (`stamps.stamp_of`).
    build, window
        The build that made the reports and the window it was given.
    pairs
        The source's (trace, report) pairs, in order.

    Returns
    -------
    bool
        Whether they were kept: not when `build` is not kept (`build_spec`), `window` is below 1, a report failed
        (is not of the build's report type), the files changed since `stamp`, or the store cannot be
        written.

    Raises nothing.
    """
    if not pairs or not _usable(window):
        return False
    try:
        spec = build_spec(build)
        if spec is None or any(not isinstance(r, spec[1]) for _, r in pairs):
            return False
        return _keep(source, stamp, spec[0], window, pairs)
    except Exception:  # the firewall: the store never fails a run
        return False


def _keep(source: TraceSource, stamp: bytes, name: str, window: int | None, pairs: list[tuple[Trace, Any]]) -> bool:
    now = stamp_of(source)
    if now is None or now[0] != stamp:  # changed while it was read or reported
        return False
    data = _ENCODER.encode([(t if t.slim else t.slimmed(), r) for t, r in pairs])
    path, spelling = entry_key(source)
    store = ResultStore.for_path(getattr(source, "store", None) or None)  # a `StoredSource` names its store
    with store.lock:
        conn = store.connection()
        if conn is None:
            return False
        try:
            key = (path, spelling, name, _NO_WINDOW if window is None else window, code_version(), stamp)
            conn.execute(
                "INSERT OR REPLACE INTO reports VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (*key, row_checksum(key, data), data)
            )
        except sqlite3.DatabaseError as exc:
            store.corrupt(exc)
            return False
    return True
