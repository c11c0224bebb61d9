"""The run history: each run's JSON records appended to a SQLite file, read back as metrics over time.

`context trace --db FILE --label L` (and `context usage`) append one run: its label, when, the git commit
of the working directory, and each trace's JSON record exactly as `--json` prints it (with its
`schema_version`). `context history --db FILE` reads the runs back (`load_runs`) and `history_rows`
gives each metric per run with its change against the label's previous run, so a CI job sees a context
regression across commits.

The file is the standard library's `sqlite3` in WAL mode (readers never block the writer), with a busy
timeout so two CI jobs appending at once wait their turn instead of failing, and each run written in one
`BEGIN IMMEDIATE` transaction: a run is in the file whole or not at all. The layout is versioned with
`PRAGMA user_version` (`LAYOUT_VERSION`); a file of a newer layout is refused, never rewritten. This
module never prints.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contexttrace.errors import ContextTraceError
from contexttrace.reports.schemas import SCHEMA_VERSIONS
from contexttrace.select.thresholds import METRICS, Metric, aggregate
from contexttrace.version import __version__

#: `PRAGMA user_version` of the file's tables; bump it with a migration when they change.
LAYOUT_VERSION = 1

#: Seconds a writer waits for another one to finish before giving up (two CI jobs at once).
BUSY_TIMEOUT_S = 60.0

_LAYOUT = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recorded_at TEXT NOT NULL,          -- ISO 8601 UTC, microseconds
    label TEXT NOT NULL,
    command TEXT NOT NULL,              -- 'trace' | 'usage'
    git_commit TEXT,                    -- HEAD of the working directory, NULL outside a repository
    cwd TEXT,
    contexttrace_version TEXT NOT NULL,
    breaches INTEGER NOT NULL DEFAULT 0 -- --fail-on breaches of the run
);
CREATE TABLE IF NOT EXISTS records (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,          -- order in the run's output, from 0
    trace TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    record TEXT NOT NULL,               -- the JSON object as --json prints it
    PRIMARY KEY (run_id, position)
);
CREATE INDEX IF NOT EXISTS runs_by_label ON runs (command, label, id);
"""

#: Metrics `context history` shows when none is named, per command (those with no value are left out).
DEFAULT_METRICS = {
    "trace": ("peak", "fill", "calls", "compact", "repeat", "health", "weather", "cost"),
    "usage": ("cost", "calls", "output", "hit"),
}

#: The label of runs recorded without `--label`.
DEFAULT_LABEL = "default"


class HistoryError(ContextTraceError):
    """The history file cannot be used: not a SQLite file, a newer layout, missing when read."""


@dataclass(frozen=True)
class Run:
    """One recorded run: its id (increasing in recording order), label, time, commit and records."""

    id: int
    label: str
    command: str
    recorded_at: str
    git_commit: str | None
    records: list[dict[str, Any]] = field(default_factory=list)


def git_commit(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The commit checked out in `cwd` (``git rev-parse HEAD``), or None: not a repository, git missing,
    or git too slow (5 s)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


@contextmanager
def _connect(path: str | os.PathLike[str], create: bool) -> Iterator[sqlite3.Connection]:
    """A connection in WAL mode with the layout in place; `create` False refuses a missing file."""
    where = str(path)
    if not create and not Path(where).is_file():
        raise HistoryError(where, "no history file here (write one with --db on context trace or context usage)")
    try:
        conn = sqlite3.connect(where, timeout=BUSY_TIMEOUT_S, isolation_level=None)  # transactions by hand
    except sqlite3.Error as exc:
        raise HistoryError(where, f"cannot open the history file ({exc})") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _set_up(conn, where, create)
        yield conn
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise HistoryError(where, f"another writer held the file for {BUSY_TIMEOUT_S:.0f} s ({exc})") from None
        raise HistoryError(where, f"cannot use the history file ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise HistoryError(where, f"not a contexttrace history file ({exc})") from None
    finally:
        conn.close()


def _set_up(conn: sqlite3.Connection, where: str, create: bool) -> None:
    """WAL mode, foreign keys and the layout, retried while another process holds the file: switching a
    new file to WAL (or creating its tables) while a second writer does the same is answered "database is
    locked" at once, without SQLite's busy handler (seen with two first runs at once)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    attempt = 0
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")  # a no-op once set: the mode is kept in the file
            conn.execute("PRAGMA foreign_keys = ON")
            _ensure_layout(conn, where, create)
            return
        except sqlite3.OperationalError as exc:
            busy = getattr(exc, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() >= deadline:
                raise
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            time.sleep(0.005 * 2 ** min(attempt, 6))
            attempt += 1


def _ensure_layout(conn: sqlite3.Connection, where: str, create: bool) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > LAYOUT_VERSION:
        raise HistoryError(
            where, f"written by a newer contexttrace (layout {version}; this one reads {LAYOUT_VERSION})"
        )
    if version == LAYOUT_VERSION:
        return
    if not create:
        raise HistoryError(where, "not a contexttrace history file (no runs table)")
    conn.execute("BEGIN IMMEDIATE")  # two first writers at once: the second waits, then finds it made
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
            tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            if tables:
                raise HistoryError(where, "a SQLite file with other tables, not a contexttrace history file")
            for statement in _LAYOUT.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def record_run(
    path: str | os.PathLike[str],
    command: str,
    records: Sequence[Mapping[str, Any]],
    label: str | None = None,
    commit: str | None = None,
    cwd: str | None = None,
    breaches: int = 0,
    now: datetime | None = None,
) -> int:
    """Append one run to the history file (made when missing).

    Parameters
    ----------
    path
        The SQLite file.
    command
        ``trace`` or ``usage``: whose records these are.
    records
        JSON records as `--json` prints them (each with `trace` and `schema_version`).
    label
        The run's label (`DEFAULT_LABEL` when None): runs compare with the previous run of their label.
    commit, cwd
        The git commit and working directory to store (`git_commit`).
    breaches
        `--fail-on` breaches of the run.
    now
        The time to record (default: now, UTC).

    Returns
    -------
    int
        The run's id.

    Raises
    ------
    HistoryError
        Not a SQLite file, another program's file, or a newer layout.
    """
    when = (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    with _connect(path, create=True) as conn:
        conn.execute("BEGIN IMMEDIATE")  # the write lock first: a concurrent writer waits (busy timeout)
        try:
            cur = conn.execute(
                "INSERT INTO runs (recorded_at, label, command, git_commit, cwd, contexttrace_version, breaches)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (when, label or DEFAULT_LABEL, command, commit, cwd, __version__, breaches),
            )
            run_id = int(cur.lastrowid or 0)
            conn.executemany(
                "INSERT INTO records (run_id, position, trace, schema_version, record) VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, i, rec.get("trace", ""), rec.get("schema_version", SCHEMA_VERSIONS[command]),
                     json.dumps(rec, sort_keys=True, ensure_ascii=False, allow_nan=False))
                    for i, rec in enumerate(records)
                ],
            )  # fmt: skip
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return run_id


def load_runs(path: str | os.PathLike[str], command: str = "trace", labels: Sequence[str] = ()) -> list[Run]:
    """Read the runs of one command (and labels, when given), by label in order of first appearance, then
    in recording order.

    Raises
    ------
    HistoryError
        The file is missing or not a history file.
    """
    with _connect(path, create=False) as conn:
        query = "SELECT id, label, command, recorded_at, git_commit FROM runs WHERE command = ?"
        args: list[Any] = [command]
        if labels:
            query += f" AND label IN ({', '.join('?' * len(labels))})"
            args += list(labels)
        runs = {row[0]: Run(*row) for row in conn.execute(query + " ORDER BY id", args)}
        if runs:
            rows = conn.execute(
                "SELECT run_id, record FROM records WHERE run_id >= ? ORDER BY run_id, position", (min(runs),)
            )
            for run_id, text in rows:
                if run_id in runs:
                    runs[run_id].records.append(json.loads(text))
    order = list(dict.fromkeys(r.label for r in runs.values()))
    return sorted(runs.values(), key=lambda r: (order.index(r.label), r.id))


def history_rows(runs: Sequence[Run], metric_names: Sequence[str] = ()) -> tuple[list[dict[str, Any]], list[str]]:
    """Each run's metrics, with the change against the previous run of the same label.

    Parameters
    ----------
    runs
        From `load_runs` (one command), by label then in recording order.
    metric_names
        Metrics to show (`thresholds.METRICS` of the command). Empty: `DEFAULT_METRICS`, less those no
        run has a value of.

    Returns
    -------
    (rows, names)
        One dict per run, as the ``history`` schema describes: `schema_version`, `label`, `run`,
        `recorded_at`, `git_commit`, `command`, `traces`, and `metrics` → name → `value` (the run's
        traces combined: `thresholds.aggregate`, e.g. the largest peak, the summed calls, the worst
        grade), `previous`, `change` (value − previous, numbers only) and `change_frac` (change ÷ previous).
        `names` are the metrics shown, in order.

    Raises
    ------
    ValueError
        An unknown metric name (the message lists the valid ones).
    """
    command = runs[0].command if runs else "trace"
    known: dict[str, Metric] = METRICS[command]
    names = [n.strip().lower().replace("-", "_") for n in metric_names]
    for name in names:
        if name not in known:
            raise ValueError(f"{name!r} is not a metric of context {command}; valid: {', '.join(known)}")
    values = {run.id: {n: aggregate(m, [m.get(r) for r in run.records]) for n, m in known.items()} for run in runs}
    if not names:
        names = [n for n in DEFAULT_METRICS[command] if any(v[n] is not None for v in values.values())]
    rows = []
    previous: dict[str, dict[str, Any]] = {}  # label -> the previous run's values
    for run in runs:
        before = previous.get(run.label)
        metrics = {}
        for name in names:
            value, prior = values[run.id][name], (before or {}).get(name)
            numeric = known[name].kind not in ("grade", "level")
            change = value - prior if numeric and value is not None and prior is not None else None
            metrics[name] = {
                "value": value,
                "previous": prior,
                "change": change,
                "change_frac": change / prior if change is not None and prior else None,
            }
        previous[run.label] = values[run.id]
        rows.append(
            {
                "schema_version": SCHEMA_VERSIONS["history"],
                "label": run.label,
                "run": run.id,
                "recorded_at": run.recorded_at,
                "git_commit": run.git_commit,
                "command": run.command,
                "traces": len(run.records),
                "metrics": metrics,
            }
        )
    return rows, names
