"""What a result store entry is kept under: its source's key, its files' stamp, the reader's version.

An entry (`store`) and the reports built from it (`storage.reports`) are served only when all of these
are as they were when it was kept:

* the key (`entry_key`): the main file's path, absolute, and as it was spelled (trace names carry the
  spelling);
* the stamp (`stamp_of`): the main file's size, modification time (ns), inode and change time (ns: a file
  rewritten with its size and modification time put back, by `cp -p`, `tar x` or `touch -d`, has a new
  one); every subagent file's path, thread kind and agent id, in order, with the same four, and those of the
  `.meta.json` beside it (the reader reads it too), or their absence;
* the reader's version (`reader_version`): `reading.contract.READER_VERSION` and a fingerprint of the
  `Trace` fields and the four tables' columns, so a new column or field never meets an old entry either.

A stored row proves which of these it was kept under: its checksum (`row_checksum`) covers its key and
stamp with its document, so a row moved or copied under another key (two rows' documents swapped, a
damaged index) fails it and is read again, never served.

An appended transcript therefore has another stamp and is read again in full. This module only looks at
files (`os.stat`); it never reads them, never writes, and raises nothing.
"""

from __future__ import annotations

import functools
import hashlib
import os
import zlib
from typing import Any

import msgspec

from contexttrace.discover.model import TraceSource
from contexttrace.reading import TABLES, Trace
from contexttrace.reading.contract import READER_VERSION


@functools.cache
def reader_version() -> str:
    """The version of the reader an entry must have been kept by.

    Returns
    -------
    str
        ``<READER_VERSION>-<12 hex digits>``: `READER_VERSION` and a fingerprint of what an entry holds, the
        typed layout of `Trace` (its fields and their types, docstrings left out) and the four tables'
        columns with their dtypes (blake2b of their JSON Schema and `TABLES`).

    >>> reader_version().startswith(f"{READER_VERSION}-")
    True
    """

    def bare(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: bare(v) for k, v in value.items() if k not in ("title", "description")}
        if isinstance(value, list):
            return [bare(v) for v in value]
        return value

    layout = bare(msgspec.json.schema(list[Trace]))
    blob = msgspec.json.encode([layout, TABLES], order="sorted")
    return f"{READER_VERSION}-{hashlib.blake2b(blob, digest_size=6).hexdigest()}"


def _stat(path: str) -> tuple[int, int, int, int] | None:
    """(size in bytes, st_mtime_ns, inode, st_ctime_ns) of a file, or None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def stamp_of(source: TraceSource) -> tuple[bytes, int] | None:
    """What a source's files are now, to compare with the stamp an entry was kept under.

    Parameters
    ----------
    source
        A source from discovery.

    Returns
    -------
    (bytes, int) or None
        The stamp (msgpack of the stats the module docstring lists) and the newest modification time
        among the files (ns since the epoch). None for standard input, a source that is an error, one
        with a subagent folder that could not be listed, a main file that cannot be stat'ed (reading it
        fails, and failures are not kept), or a subagent path that is not UTF-8: such a source is never
        kept.

    Raises nothing.
    """
    if source.path == "-" or source.error is not None or source.unreadable:
        return None  # (a subagent folder that could not be listed: its warning is added after reading)
    main = _stat(source.path)
    if main is None:
        return None
    parts: list[Any] = [main]
    newest = main[1]
    for sub in source.subagents:
        meta = sub.path[: -len(".jsonl")] + ".meta.json" if sub.path.endswith(".jsonl") else None
        stats = (_stat(sub.path), _stat(meta) if meta is not None else None)
        newest = max([newest, *(s[1] for s in stats if s is not None)])
        parts.append((sub.path, sub.thread_kind, sub.agent_id, *stats))
    try:
        return msgspec.msgpack.encode(parts), newest
    except UnicodeEncodeError:  # a file name that is not UTF-8 (kept as surrogates): not kept
        return None


def entry_key(source: TraceSource) -> tuple[bytes, bytes]:
    """The key of a source's entry (and of the reports built from it): (its main file's absolute path,
    its path as the source spells it), each `os.fsencode`d.

    >>> entry_key(TraceSource("/srv/a.jsonl"))
    (b'/srv/a.jsonl', b'/srv/a.jsonl')
    """
    return os.fsencode(os.path.abspath(source.path)), os.fsencode(source.path)


def row_checksum(key: tuple[Any, ...], data: bytes) -> int:
    """The checksum a stored row is kept with: CRC-32 of its key (for an entry: path, spelling, reader
    version, stamp; for a report, `storage.reports`: with its build and window) and of its document.

    A row whose document was moved under another key (swapped with another row's, copied, a damaged
    index) fails it; so does one whose bytes changed.

    Raises
    ------
    TypeError
        A key msgpack cannot hold (keys are bytes, str and int).

    >>> key = (b"/srv/a.jsonl", b"a.jsonl", "6-000000000000", b"stamp")
    >>> row_checksum(key, b"doc") == row_checksum(key, b"doc") != row_checksum((b"/srv/b.jsonl", *key[1:]), b"doc")
    True
    """
    return zlib.crc32(data, zlib.crc32(msgspec.msgpack.encode(key)))
