"""The result store: what the reader extracted from each trace file, kept between runs.

A re-run over a projects folder whose files did not change reads none of them again. For each source
(a main file and its subagent files) the store keeps the `Trace` list that `read_trace` returned — the
reader's column tables and the facts beside them, never rendered output — in one SQLite file in the
user's cache folder (`cache_dir`: `platformdirs.user_cache_dir("contexttrace")`, or
`$CONTEXTTRACE_CACHE_DIR`). Beside each entry, `storage.reports` keeps the reports `context trace` built
from it (table `reports`), keyed by the entry's stamp, the build, the window and a hash of the package's
code.

An entry is served only when its source's files and the reader's version are as they were when it was
kept (`stamps`: the files' paths, sizes, modification times and inodes, and the reader's fingerprint).
An appended transcript is therefore read again in full: resuming from its last complete line would need
the reader's state before `build` (not the built `Trace`) and a proof that a resumed read equals a whole
one, as the split-read tests give for `read_tail`. Reading an appended session again costs what reading
it costs (about 3 ms per MB).

Never kept: standard input; a source that failed (`TraceFailure`); a source any of whose files changed
while it was read, or less than `RACY_NS` before its stamp was taken (a same-size rewrite within the
file system's timestamp granularity would otherwise go unseen, as git's "racily clean" entries); traces
that msgpack cannot hold (a lone surrogate in a file name, an integer past 64 bits).

Trust: an entry is a msgpack document decoded into `list[Trace]` by msgspec's typed decoder (every field
checked against its annotation; no code runs, unlike a pickle), behind a CRC-32 of its key (path,
spelling, reader version, stamp: `stamps.row_checksum`) and its bytes, so a document moved or copied under
another file's key is never served; its tables are checked for the schema's columns of equal lengths. An
entry that fails any of that is deleted and its files read again. A file that is not SQLite, or not this
store's layout, is deleted and rebuilt with a warning. Nothing here ever fails a run: a store that cannot
be opened or written (a read-only folder, or a read-only file in a writable one) is a warning and the run
reads everything, as with `--no-cache`.

Concurrency: WAL journal and a busy timeout, one connection per process (a forked worker opens its own;
one inherited over a fork is never used nor closed), each write its own transaction. Measured (benchmarks/
README.md): msgspec encodes the 230 traces of the 303 MB real-content corpus in 0.04–0.06 s and decodes them
in 0.10 s into 24.5 MB, where pickle took 0.12–0.17 s and 0.14–0.35 s (21.9 MB) and orjson of the
dataclasses 2.1 s to encode; zlib at level 1 would save 18 MB for 0.22 s more per cold run, so entries are
not compressed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from contexttrace.discover.model import TraceSource
from contexttrace.reading import TABLES, Trace
from contexttrace.storage.stamps import entry_key, reader_version, row_checksum, stamp_of

#: Environment variable naming the folder of the store instead of the user's cache folder.
ENV_DIR = "CONTEXTTRACE_CACHE_DIR"
#: The store's file in that folder (with `-wal` and `-shm` beside it while in use). A name no other program
#: would use: a file by this name that is not this store is deleted, and the folder may be the user's own.
FILE_NAME = "contexttrace-store.sqlite3"
#: Seconds a writer waits for another process's write before giving up on this entry.
BUSY_TIMEOUT_S = 10.0
#: A source whose newest file was modified less than this before its stamp was taken is not kept.
RACY_NS = 2_000_000_000
#: An entry no run has used for this many days is deleted (its session deleted or moved, most often), so
#: the store does not grow for ever; pruned at most once a day, by the first run that opens the file.
KEEP_DAYS = 30

#: `meta` rows that mark a file as this store, and the layout of its tables; another layout is rebuilt.
_FORMAT = "contexttrace result store"
_PAGE_BYTES = 16384
_LAYOUT = "3"
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # path: the main file, absolute (os.fsencode); spelling: as the source named it; stamp: `stamp_of`;
    # used: the last day (`current_day`) a run kept or served it. The small columns come before `data`, so a
    # scan of them never reads a blob's overflow pages.
    "CREATE TABLE entries (path BLOB NOT NULL, spelling BLOB NOT NULL, version TEXT NOT NULL, "
    "stamp BLOB NOT NULL, used INTEGER NOT NULL, checksum INTEGER NOT NULL, data BLOB NOT NULL, "
    "PRIMARY KEY (path, spelling))",
    # The reports built from an entry (`storage.reports`): one per source, build and window (-1: none), under
    # the entry's stamp and `reports.code_version` (the reader's version and a hash of the package's code and
    # data).
    "CREATE TABLE reports (path BLOB NOT NULL, spelling BLOB NOT NULL, build TEXT NOT NULL, "
    "window INTEGER NOT NULL, version TEXT NOT NULL, stamp BLOB NOT NULL, checksum INTEGER NOT NULL, "
    "data BLOB NOT NULL, PRIMARY KEY (path, spelling, build, window))",
)
#: The tables of this layout.
_TABLE_SET = {"meta", "entries", "reports"}


def current_day() -> int:
    """Days since the Unix epoch (UTC), the unit in which an entry's last use is dated (`KEEP_DAYS`).

    >>> current_day() > 20_000  # (2024-10-05 was day 20,000)
    True
    """
    return int(time.time() // 86_400)


def cache_dir() -> Path:
    """The folder of the store: `$CONTEXTTRACE_CACHE_DIR` when set and not empty, else the user's cache
    folder for contexttrace (`~/.cache/contexttrace` on Linux, `~/Library/Caches/contexttrace` on macOS)."""
    chosen = os.environ.get(ENV_DIR, "").strip()
    if chosen:
        return Path(chosen).expanduser().absolute()  # workers started elsewhere find the same file
    import platformdirs

    return Path(platformdirs.user_cache_dir("contexttrace", appauthor=False))


def store_path() -> Path:
    """The store's file: `cache_dir() / FILE_NAME`."""
    return cache_dir() / FILE_NAME


@dataclass(frozen=True)
class StoredSource(TraceSource):
    """A source the store did not hold: whoever reads it (this process or a worker) keeps what it read in
    the store at `store`, under `stamp` (taken before reading). It pickles, so a worker gets it whole."""

    store: str = ""
    stamp: bytes = b""


class Found(list[Trace]):
    """The traces the store held for a source (`ResultStore.lookup`), with the stamp they were kept under
    (what a report built from them is kept under: `storage.reports.keep`)."""

    def __init__(self, traces: list[Trace], stamp: bytes) -> None:
        super().__init__(traces)
        self.stamp = stamp


def _sound(traces: Any) -> bool:
    """Whether decoded traces hold what a fresh read gives: at least one trace, each not slim, with the four
    tables as dicts of the schema's columns (in order), each a list, all of one length. (`map` keeps the
    loops over the ~60,000 columns of a large store in C: a generator expression cost 0.07 s.)"""
    if not isinstance(traces, list) or not traces:
        return False
    for trace in traces:
        if trace.slim or list(trace.tables) != _TABLE_NAMES:
            return False
        for name, columns in trace.tables.items():
            if type(columns) is not dict or list(columns) != _COLUMNS[name]:
                return False
            values = columns.values()
            if set(map(type, values)) != {list} or len(set(map(len, values))) != 1:
                return False
    return True


_TABLE_NAMES = list(TABLES)
_COLUMNS = {name: list(schema) for name, schema in TABLES.items()}


def _busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite said busy or locked (another connection holds a lock), not that something is wrong."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _meta(conn: sqlite3.Connection, tables: set[str]) -> dict[str, Any]:
    """The `meta` table's keys and values; empty when there is none, or one not of this store's shape."""
    if "meta" not in tables:
        return {}
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except (sqlite3.OperationalError, ValueError, TypeError):  # a `meta` of other columns: not this store
        return {}


class _Discard(Exception):
    """The file is not this store (or no longer sound): delete it and start afresh."""


@dataclass(frozen=True)
class StoreInfo:
    """What `contexttrace cache info` prints."""

    path: str
    exists: bool
    entries: int
    other_versions: int  # entries kept by another reader version (deleted at the next run that writes)
    bytes: int  # the file and its -wal and -shm, on disk
    reader_version: str  # the version this code serves (`reader_version`)
    state: str = ""  # empty when the file is a store this code uses; else what is wrong, or that it is not there


class ResultStore:
    """The store in one SQLite file: `lookup` before a run reads, `keep` after a source is read.

    One instance per process and file (`for_path`): its connection is opened on first use and never used
    from another process (a forked child opens its own). Thread-safe. Nothing raises out of it; what went
    wrong with the file is appended to `warnings` (the run prints them on stderr).
    """

    _instances: ClassVar[dict[tuple[int, str], ResultStore]] = {}
    _instances_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.warnings: list[str] = []
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._off = False  # could not be opened: every lookup misses, nothing is kept
        self.lock = threading.RLock()
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder: msgspec.msgpack.Decoder[list[Trace]] | None = None
        self._used: list[int] = []  # rowids of the hits of this lookup last used on another day

    @classmethod
    def for_path(cls, path: str | os.PathLike[str] | None = None) -> ResultStore:
        """This process's instance for `path` (default `store_path()`)."""
        key = (os.getpid(), str(path if path is not None else store_path()))
        with cls._instances_lock:
            store = cls._instances.get(key)
            if store is None:
                store = cls._instances[key] = cls(key[1])
            return store

    # -- the connection -----------------------------------------------------------------------------

    def connection(self) -> sqlite3.Connection | None:
        """This process's connection to the file, opened (and the file created, checked, or discarded and
        rebuilt) on first use; None when the store cannot be used (a warning says why, and every lookup
        misses from then on). Call it holding `lock`. Raises nothing from SQLite."""
        if self._pid != os.getpid():  # a fork's copy: the parent's connection is never touched here
            self._conn, self._pid, self._off = None, os.getpid(), False
        if self._conn is not None or self._off:
            return self._conn
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        attempt = 0
        discarded = False
        while True:
            try:
                self._conn = self._connect()
                return self._conn
            except _Discard as exc:
                reason = str(exc)
            except sqlite3.OperationalError as exc:  # cannot open, read-only, locked past the timeout
                if _busy(exc) and time.monotonic() < deadline:
                    # Another process is creating the file or switching it to WAL: SQLite answers that at
                    # once, without its busy handler (seen with two first runs at once). Try again.
                    time.sleep(0.005 * 2 ** min(attempt, 6))
                    attempt += 1
                    continue
                self._turn_off(f"cannot be used ({exc})")
                return None
            except sqlite3.DatabaseError as exc:  # not a database, malformed
                reason = f"{exc}"
            except OSError as exc:
                self._turn_off(f"cannot be used ({exc.strerror or exc})")
                return None
            if discarded or not self._discard():
                self._turn_off(f"cannot be rebuilt ({reason})")
                return None
            discarded = True
            self.warnings.append(f"result store {self.path}: {reason}; discarded and rebuilt")

    def _turn_off(self, why: str) -> None:
        self._off = True
        self.warnings.append(f"result store {self.path} {why}; every trace was read")

    def _connect(self) -> sqlite3.Connection:
        # Entries hold what the traces hold (tool inputs, paths): a folder this code makes is its owner's only.
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for file in self.files():  # SQLite would open them for reading without a word and fail each write
            if os.path.exists(file) and not os.access(file, os.W_OK):
                raise sqlite3.OperationalError(f"{Path(file).name} is read-only")
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            # 16 KiB pages for a new file (a no-op on an existing one): entries are 10-500 KB blobs, and
            # against the default 4 KiB, measured on 25 MB of them, writing took 0.17 s instead of 0.27 s
            # and reading 0.01 s instead of 0.03 s.
            conn.execute(f"PRAGMA page_size={_PAGE_BYTES}")
            conn.execute("PRAGMA journal_mode=WAL").fetchall()  # "file is not a database" shows here
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL: no fsync per write; a crash loses writes, not the file
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._check_layout(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_layout(self, conn: sqlite3.Connection) -> None:
        """Create the tables in an empty file; else check that the file is this store, of this layout, and
        delete the entries of other reader versions once (when the file was last written by another)."""
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = reader_version()
        if not tables:
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [("format", _FORMAT), ("layout", _LAYOUT), ("reader", version), ("pruned", str(current_day()))],
            )
            return
        meta = _meta(conn, tables)
        if meta.get("format") != _FORMAT:
            raise _Discard("not a contexttrace result store")
        if meta.get("layout") != _LAYOUT:  # (checked before the tables: an older layout has fewer)
            raise _Discard(f"layout {meta.get('layout')!r} of another contexttrace version, not {_LAYOUT!r}")
        if tables != _TABLE_SET:
            raise _Discard("not a contexttrace result store")
        if meta.get("reader") != version:
            conn.execute("DELETE FROM entries WHERE version != ?", (version,))
            conn.execute("DELETE FROM reports")  # (built from entries of the other version)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('reader', ?)", (version,))
        today = current_day()
        if meta.get("pruned") != str(today):
            conn.execute("DELETE FROM entries WHERE used < ?", (today - KEEP_DAYS,))
            # reports whose entry is gone (pruned, or replaced under another stamp) go with it
            conn.execute(
                "DELETE FROM reports WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.path = reports.path "
                "AND e.spelling = reports.spelling AND e.stamp = reports.stamp)"
            )
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('pruned', ?)", (str(today),))

    def files(self) -> list[str]:
        """The store's file and the `-wal` and `-shm` SQLite keeps beside it while in use."""
        return [f"{self.path}{suffix}" for suffix in ("", "-wal", "-shm")]

    def _close(self) -> None:
        """Close this process's connection, if it has one (one inherited over a fork is left alone)."""
        if self._conn is not None and self._pid == os.getpid():
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None

    def _discard(self) -> bool:
        """Delete the file (and its -wal, -shm); False when it cannot be deleted."""
        self._close()
        try:
            for file in self.files():
                Path(file).unlink(missing_ok=True)
        except OSError:
            return False
        return True

    def corrupt(self, exc: sqlite3.DatabaseError) -> None:
        """Handle what a statement raised: a damaged file (not merely busy, full or read-only) is discarded
        with a warning, and rebuilt on next use; a file SQLite opened for reading only (made read-only once
        open: `_connect` checks before) turns the store off with a warning; another `OperationalError`
        costs only the entry at hand."""
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_READONLY:
            self._close()
            self._off = True
            self.warnings.append(f"result store {self.path} cannot be used ({exc}); what it did not hold was read")
            return
        if isinstance(exc, sqlite3.OperationalError):
            return  # busy past the timeout, disk full: this entry only
        self.warnings.append(f"result store {self.path}: {exc}; discarded and rebuilt")
        self._discard()

    # -- entries ------------------------------------------------------------------------------------

    def lookup(self, sources: Sequence[TraceSource]) -> list[list[Trace] | TraceSource]:
        """For each source, its traces when the store holds them for its files as they are now; else the
        source to read: a `StoredSource` (kept once read), or the source itself when it cannot be kept."""
        out: list[list[Trace] | TraceSource] = []
        with self.lock:
            self._used = []
            for source in sources:
                now = time.time_ns()
                stamp = stamp_of(source)
                conn = self.connection() if stamp is not None else None
                if stamp is None or conn is None:
                    out.append(source)
                    continue
                traces = self._get(conn, source, stamp[0])
                if traces is not None:
                    out.append(Found(traces, stamp[0]))
                elif stamp[1] > now - RACY_NS:
                    out.append(source)  # changed a moment ago: it may change again within the same mtime
                else:
                    fields = {f.name: getattr(source, f.name) for f in dataclasses.fields(TraceSource)}
                    out.append(StoredSource(**fields, store=str(self.path), stamp=stamp[0]))
            self._mark_used()
        return out

    def _mark_used(self) -> None:
        """Date the entries served today (one transaction; an entry is written at most once a day)."""
        if not self._used:
            return
        today = current_day()
        self.write_many("UPDATE entries SET used = ? WHERE rowid = ?", [(today, r) for r in self._used])

    def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Run `sql` for each of `rows` in one transaction on the connection already open (rolled back
        whole if one fails; nothing when no connection is open). A damaged file is `corrupt`'s to handle.
        Call it holding `lock`. Raises nothing from SQLite."""
        conn = self._conn
        if not rows or conn is None:
            return
        try:
            conn.execute("BEGIN")
            try:
                conn.executemany(sql, rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            self.corrupt(exc)

    def _get(self, conn: sqlite3.Connection, source: TraceSource, stamp: bytes) -> list[Trace] | None:
        path, spelling = entry_key(source)
        try:
            rows = conn.execute(
                "SELECT rowid, used, checksum, data FROM entries "
                "WHERE path = ? AND spelling = ? AND version = ? AND stamp = ?",
                (path, spelling, reader_version(), stamp),
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            self.corrupt(exc)
            return None
        if not rows:
            return None
        rowid, used, checksum, data = rows[0]
        traces = self._decode((path, spelling, reader_version(), stamp), checksum, data)
        if traces is None:  # kept damaged, or by a writer that is not this code: never trusted
            try:
                conn.execute("DELETE FROM entries WHERE path = ? AND spelling = ?", (path, spelling))
            except sqlite3.DatabaseError as exc:
                self.corrupt(exc)
        elif used != current_day():
            self._used.append(rowid)
        return traces

    def _decode(self, key: tuple[bytes, bytes, str, bytes], checksum: Any, data: Any) -> list[Trace] | None:
        """The traces of a row found under `key`, or None: a checksum that does not cover this key and these
        bytes (the row was kept under another key, or damaged), a document not of `list[Trace]`, or traces
        not `_sound`."""
        if not isinstance(data, bytes) or row_checksum(key, data) != checksum:
            return None
        if self._decoder is None:
            self._decoder = msgspec.msgpack.Decoder(list[Trace])
        try:
            traces = self._decoder.decode(data)
        except (msgspec.DecodeError, ValueError, TypeError):
            return None
        return traces if _sound(traces) else None

    def keep(self, source: StoredSource, traces: list[Trace]) -> bool:
        """Keep what was read from `source` under the stamp it had before reading, unless its files changed
        since. Returns whether it was kept; raises nothing."""
        try:
            return self._keep(source, traces)
        except Exception:  # the firewall: the store never fails a read that succeeded
            return False

    def _keep(self, source: StoredSource, traces: list[Trace]) -> bool:
        if not _sound(traces):
            return False
        now = stamp_of(source)
        if now is None or now[0] != source.stamp:  # changed while it was read
            return False
        try:
            data = self._encoder.encode(traces)
        except (TypeError, ValueError, OverflowError):  # UnicodeEncodeError is a ValueError
            return False
        key = (*entry_key(source), reader_version(), source.stamp)
        with self.lock:
            conn = self.connection()
            if conn is None:
                return False
            try:
                conn.execute(
                    "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (*key, current_day(), row_checksum(key, data), data),
                )
            except sqlite3.DatabaseError as exc:
                self.corrupt(exc)
                return False
        return True

    # -- the cache command --------------------------------------------------------------------------

    def info(self) -> StoreInfo:
        """What the store holds, read without changing it (`contexttrace cache info`): entries of this reader
        version and of others, bytes on disk; `state` says when the file is not there yet, or is not a
        store this code can use (the next run discards and rebuilds it)."""
        entries = others = 0
        state = ""
        if not self.path.is_file():
            state = "not created yet (the next run that reads a trace file creates it)"
        else:
            try:
                conn = sqlite3.connect(self.path.as_uri() + "?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
                try:
                    state, entries, others = self._read_counts(conn)
                finally:
                    conn.close()
            except sqlite3.DatabaseError as exc:
                state = f"cannot be read ({exc}); the next run discards and rebuilds it"
        return StoreInfo(str(self.path), self.path.is_file(), entries, others, self._bytes(), reader_version(), state)

    @staticmethod
    def _read_counts(conn: sqlite3.Connection) -> tuple[str, int, int]:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        meta = _meta(conn, tables)
        if meta.get("format") != _FORMAT:
            return "not a contexttrace result store; the next run discards and rebuilds it", 0, 0
        if meta.get("layout") != _LAYOUT:
            layout = f"layout {meta.get('layout')!r} of another contexttrace version, not {_LAYOUT!r}"
            return f"{layout}; the next run discards and rebuilds it", 0, 0
        if tables != _TABLE_SET:
            return "not a contexttrace result store; the next run discards and rebuilds it", 0, 0
        rows = conn.execute("SELECT version = ?, count(*) FROM entries GROUP BY 1", (reader_version(),))
        counts = dict(rows.fetchall())
        return "", counts.get(1, 0), counts.get(0, 0)

    def _bytes(self) -> int:
        size = 0
        for file in self.files():
            with contextlib.suppress(OSError):
                size += os.path.getsize(file)
        return size

    def clear(self) -> int:
        """Delete the store's file (and its -wal, -shm); returns the bytes they held. Raises OSError when
        they cannot be deleted. A run going on meanwhile keeps writing to the deleted file, harmlessly."""
        with self.lock:
            size = self._bytes()
            self._close()
            for file in self.files():
                Path(file).unlink(missing_ok=True)
            self._off = False
        return size

    def take_warnings(self, into: list[str]) -> None:
        """Move this store's warnings to `into`."""
        with self.lock:
            into.extend(self.warnings)
            self.warnings.clear()

    def close(self) -> None:
        """Close this process's connection; a later use opens it again (and retries a store that could
        not be used: a long-lived process, such as a notebook's, recovers once the folder is fixed)."""
        with self.lock:
            self._close()
            self._off = False


def keep(source: StoredSource, traces: list[Trace]) -> None:
    """Keep what was read from `source` in the store it names (`work.read_source`, in whichever process
    read it), unless its files changed since its stamp was taken. Raises nothing."""
    ResultStore.for_path(source.store).keep(source, traces)


def lookup(sources: Sequence[TraceSource], warnings: list[str]) -> list[list[Trace] | TraceSource]:
    """Look each source up in the default store (`store_path()`), before a run reads.

    Parameters
    ----------
    sources
        The run's sources, in order.
    warnings
        The run's warnings: the store's (a damaged file discarded, a store that cannot be used) are
        moved here.

    Returns
    -------
    list
        For each source, in order: its traces as kept (a `Found`, with the stamp they were kept under)
        when the store holds them for its files as they are now; else the source to read, a
        `StoredSource` (kept once read) or the source itself when it cannot be kept (`ResultStore.lookup`).

    Raises nothing: anything unexpected (a `Trace` type msgspec cannot describe after a reader change,
    say) is a warning, and every source is read as with `--no-cache`.
    """
    store = ResultStore.for_path()
    try:
        found = store.lookup(sources)
    except Exception as exc:  # the firewall: the store never fails a run
        found = list(sources)
        store.warnings.append(f"result store {store.path} not used ({type(exc).__name__}: {exc}); every trace was read")
    store.take_warnings(warnings)
    return found


def finish(warnings: list[str]) -> None:
    """End a run in this process: the default store's warnings (a damaged file found while this process
    kept what it read) moved to `warnings`, its connection closed (the next run opens it again: about a
    millisecond, where an open connection per store left behind would hold three files open)."""
    store = ResultStore.for_path()
    store.take_warnings(warnings)
    store.close()
