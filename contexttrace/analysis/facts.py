"""The facts every per-trace JSON record carries: its short label, project, working directory and start.

`trace_facts` reads them from a `Trace` (a trace with no timestamp has no start: never its file's
modification time); every report builder stores them in its record, and `select.filters` filters, sorts
and groups the records by them (`--since`, `--until`, `--project`, `--session`, `--group-by`). Nothing here
prints or formats a number beyond the ISO 8601 text of `start`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: `start_source`: the trace's first timestamp. A trace without one (a stream-json run: no line has one)
#: has no start: its file's modification time is when the file was last written, not when the run began,
#: and every run of one capture would share it.
START_FROM_TIMESTAMP = "timestamp"

#: How many characters of the session id the short label keeps (`project/4d5611e5`).
SESSION_ID_CHARS = 8


def trace_facts(trace: Trace) -> dict[str, Any]:
    """The facts of one trace that `--since`, `--project`, `--session` and the short label read.

    Parameters
    ----------
    trace
        A trace from `read_trace` (its path, name, session id, `cwd`, timestamps and capabilities).

    Returns
    -------
    dict
        `label` (str): ``<project>/<first 8 characters of the session id>`` for a session transcript named
        by its session id (as Claude Code names them under ``projects/<folder>/``), else the file name
        (``run.jsonl#2`` for run 2 of a stream-json file; ``-`` for standard input).
        `cwd` (str or None): the working directory Claude Code ran in, as the trace writes it (the first
        `cwd` seen: transcript lines, the stream-json init line).
        `project` (str or None): the last part of `cwd`; without a `cwd`, a transcript's folder name
        (Claude Code's encoded project folder, kept as written: ``-home-me-src-app`` cannot be decoded
        for sure, since ``-`` stands for ``/``, ``.`` and ``-`` alike).
        `start` (str or None): ISO 8601 UTC with milliseconds (``2026-02-12T16:02:25.284Z``): the first
        timestamp of the trace's lines (all threads), exact; None when no line has one (a stream-json run:
        unknown, never its file's modification time).
        `start_source`: `START_FROM_TIMESTAMP`, or None with `start`. Never raises.

    Examples
    --------
    >>> from contexttrace.reading import Trace
    >>> t = Trace(name="p/4d5611e5-aaaa.jsonl", path="p/4d5611e5-aaaa.jsonl", format="transcript",
    ...           session_id="4d5611e5-aaaa", cwd="/home/me/app", timestamps_ms=[1770912145284])
    >>> f = trace_facts(t)
    >>> f["label"], f["project"], f["start"], f["start_source"]
    ('app/4d5611e5', 'app', '2026-02-12T16:02:25.284Z', 'timestamp')
    """
    path = Path(trace.path)
    cwd = trace.cwd
    project = _last_part(cwd) if cwd else (path.parent.name or None if trace.has.project_folder else None)
    suffix = trace.name[len(trace.path) :] if trace.name.startswith(trace.path) else ""
    if trace.has.project_folder and trace.session_id and path.stem == trace.session_id and project:
        label = f"{project}/{trace.session_id[:SESSION_ID_CHARS]}{suffix}"
    else:
        label = (path.name if trace.path != "-" else "-") + suffix
    start_ms: int | None = trace.timestamps_ms[0] if trace.timestamps_ms else None
    source = START_FROM_TIMESTAMP if start_ms is not None else None
    return {"label": label, "cwd": cwd, "project": project, "start": iso_utc(start_ms), "start_source": source}


def _last_part(cwd: str) -> str | None:
    """The folder name at the end of a path written on any system (``C:\\src\\app`` → ``app``)."""
    return cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or None


def iso_utc(ms: int | None) -> str | None:
    """Unix epoch ms as ISO 8601 UTC with milliseconds and ``Z``; None stays None.

    >>> iso_utc(1770912145284), iso_utc(None)
    ('2026-02-12T16:02:25.284Z', None)
    """
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
