"""Traces behind fsspec URLs, and quoted globs: listing sessions and their subagent files, expanding globs.

A path argument that starts with a scheme (``s3://bucket/traces/``, ``gs://...``, ``file:///srv/traces``,
``memory://...``) is a URL, listed and read through `fsspec` (``s3://`` needs `s3fs`, ``gs://`` `gcsfs`: the
``s3`` and ``gcs`` extras). Discovery follows `local`'s rules one for one, so a folder on an object store
gives the same sessions, in the same order, with the same subagent files as the same folder on disk:

* a URL to a folder (an object-store prefix) is searched recursively: every file `model.is_session_name`
  names outside a ``subagents`` folder is a session (``*.jsonl`` not named ``agent-*``, Gemini CLI's
  ``chats/session-*.json``); ``<session>/**/subagents/**/agent-*.jsonl``
  files are attached to ``<session>.jsonl`` (sorted by path), then the flat ``agent-*.jsonl`` beside it
  whose lines name its `sessionId`; the rest are orphans (counted, never read);
* a URL to a file is one trace, with its subagent files found as `local` finds them beside a file.

Names keep the argument's spelling: a file found under ``s3://b/traces/`` is ``s3://b/traces/<rest>``.
A path argument with ``*``, ``?`` or ``[`` that names no file is a glob, expanded (sorted) here: on disk
with `glob.glob` (``**`` recursive), behind a URL with the file system's `glob`; `local.find_traces` takes
each match as an argument of its own.

Opening a URL to read it is `reading.urls`'s. fsspec is imported only when a URL is met (`import
contexttrace` never imports it). This module never prints; a URL that cannot be listed is that
argument's error (`TraceSource.error`), one that cannot be read is that trace's `TraceReadError`. The
result store never keeps a trace read from a URL (it stamps files with `os.stat`). It imports nothing of
`discover` but `model`.
"""

from __future__ import annotations

import glob
import os
from typing import Any

from contexttrace.discover.model import (
    SUBAGENT_ALONE,
    TraceSource,
    is_agent_name,
    is_session_name,
    session_id_in,
    session_stem,
    subagent_file,
)
from contexttrace.reading.model import SourceFile
from contexttrace.reading.urls import filesystem, is_url, reason

#: Characters that make a path argument a glob (`glob.has_magic`'s set).
_GLOB_CHARS = frozenset("*?[")


def is_glob(path: str) -> bool:
    """Whether a path argument holds a glob character (``*``, ``?``, ``[``).

    >>> is_glob("runs/*.jsonl"), is_glob("runs/a.jsonl")
    (True, False)
    """
    return not _GLOB_CHARS.isdisjoint(path)


def expand_glob(pattern: str) -> list[str]:
    """The paths a glob argument matches, sorted; ``[pattern]`` when it matches nothing (reading it then
    says "no such file") or names an existing file. Behind a URL, the matches keep the URL's spelling up
    to its first folder with a glob character. Raises ImportError and OSError as `fsspec` does."""
    if not is_url(pattern):
        if os.path.lexists(pattern):
            return [pattern]
        return sorted(glob.glob(os.path.expanduser(pattern), recursive=True)) or [pattern]
    fs, path = filesystem(pattern)
    if fs.exists(path):
        return [pattern]
    first = min(pattern.find(c) for c in _GLOB_CHARS if c in pattern)
    literal = pattern[: pattern.rfind("/", 0, first) + 1]  # the URL up to the folder the glob starts in
    base = filesystem(literal)[1].rstrip("/") + "/" if literal.partition("://")[2] else None
    out = []
    for match in sorted(fs.glob(path)):
        if base is not None and match.startswith(base):
            out.append(literal + match[len(base) :])
        else:
            out.append(fs.unstrip_protocol(match))
    return out or [pattern]


def url_sources(arg: str) -> list[TraceSource]:
    """The sources one URL names (a glob in it taken literally; `expand_glob` expands globs).

    Parameters
    ----------
    arg
        A URL as the argument spelled it (``s3://bucket/traces/``); the sources' names keep that spelling.

    Returns
    -------
    list of TraceSource
        A folder: its sessions sorted by path, each with its subagent files, then the orphan agent files
        (`_scan`); ``[source]`` with the error ``is a directory where a file was expected`` for a folder
        named ``*.jsonl`` that holds none. A file: one source with its subagent files (`_file_source`). A
        URL to nothing: one source whose reading says "no such file". A URL that cannot be listed: one
        source whose `error` says why.

    The OSError, ImportError (fsspec or the scheme's package missing) and ValueError that listing raises
    are the argument's `TraceSource.error`, never raised.
    """
    try:
        fs, path = filesystem(arg)
        if fs.isdir(path):
            found = _scan(fs, path, arg.rstrip("/"))
            if not found and arg.rstrip("/").endswith(".jsonl"):
                return [TraceSource(arg, error="is a directory where a file was expected (no trace inside)")]
            return found
        if not fs.isfile(path):
            return [TraceSource(arg)]  # missing: reading it says so
        return [_file_source(fs, path, arg)]
    except (OSError, ImportError, ValueError) as exc:
        why = "no such file" if isinstance(exc, FileNotFoundError) else reason(exc).removeprefix("cannot read: ")
        return [TraceSource(arg, error=f"cannot read this path ({why})")]


def _agent_file(url: str) -> SourceFile:
    """The `SourceFile` of a subagent file's URL (split by hand: a `Path` would fold its ``//``)."""
    return subagent_file(url, url.rsplit("/", 1)[1][len("agent-") : -len(".jsonl")])


def _session_id_of(fs: Any, path: str) -> str | None:
    """The session a flat agent file names in its lines (`model.session_id_in`), read through a file
    system. Raises nothing: None when no line names one or the file cannot be read."""
    try:
        with fs.open(path, "rb") as fh:
            return session_id_in(fh)
    except Exception:  # an unreadable agent file names no session (it stays an orphan)
        return None


def _relative_files(fs: Any, root: str) -> list[str]:
    """Every file under `root` (a folder path on `fs`), as paths relative to it with ``/`` separators."""
    root = root.rstrip("/")
    found = fs.find(root, withdirs=False)
    return [f[len(root) + 1 :] for f in found if f.startswith(root + "/")]


def _file_source(fs: Any, path: str, url: str) -> TraceSource:
    """The source of a URL that names a file, as `local` makes one for a file on disk."""
    name = url.rsplit("/", 1)[-1]
    if not name.endswith(".jsonl"):
        return TraceSource(url)
    if is_agent_name(name):
        return TraceSource(url, unreadable=(SUBAGENT_ALONE,))
    parent, stem = path.rsplit("/", 1)[0], name[: -len(".jsonl")]
    url_parent = url.rsplit("/", 1)[0]
    nested: list[tuple[tuple[str, ...], str]] = []  # (folders under the session's folder, name): walk order
    if fs.isdir(f"{parent}/{stem}"):
        for rel in _relative_files(fs, f"{parent}/{stem}"):
            *folders, file_name = rel.split("/")
            if "subagents" in folders and is_agent_name(file_name):
                nested.append((tuple(folders), file_name))
    files = [f"{url_parent}/{stem}/" + "/".join((*folders, n)) for folders, n in sorted(nested)]
    flat = sorted(n for n in (f.rsplit("/", 1)[-1] for f in fs.ls(parent, detail=False)) if is_agent_name(n))
    files += [f"{url_parent}/{n}" for n in flat if _session_id_of(fs, f"{parent}/{n}") == stem]
    return TraceSource(url, tuple(_agent_file(f) for f in files))


def _scan(fs: Any, root: str, spelling: str) -> list[TraceSource]:
    """A folder of a file system searched as `local` searches one on disk: sessions sorted by path, their
    nested subagent files (sorted by path) then their flat ones, then the orphans sorted; names spelled
    from `spelling`."""
    sessions: list[str] = []
    nested: dict[str, list[str]] = {}  # session `<folder>/<stem>` (relative) -> its agent files
    flat: dict[str, list[str]] = {}  # folder (relative, "" for the root) -> its flat agent files
    rels = sorted(_relative_files(fs, root))
    children: dict[str, set[str]] = {}  # folder (relative) -> the folders directly in it
    for rel in rels:
        parts = rel.split("/")[:-1]
        for i, part in enumerate(parts):
            children.setdefault("/".join(parts[:i]), set()).add(part)
    for rel in rels:
        *folders, name = rel.split("/")
        folder = "/".join(folders)
        if "subagents" in folders:
            if is_agent_name(name):
                nested.setdefault("/".join(folders[: folders.index("subagents")]), []).append(rel)
        elif is_agent_name(name):
            flat.setdefault(folder, []).append(rel)
        elif is_session_name(folder, name, children.get(folder, ())):
            sessions.append(rel)

    def url(rel: str) -> str:
        return f"{spelling}/{rel}"

    def path(rel: str) -> str:
        return f"{root.rstrip('/')}/{rel}"

    flat_by_session: dict[tuple[str, str | None], list[str]] = {}
    for folder, files in flat.items():
        for f in files:
            flat_by_session.setdefault((folder, _session_id_of(fs, path(f))), []).append(f)
    sessions.sort(key=url)
    out = []
    attached: set[tuple[str, str | None]] = set()
    for session in sessions:
        folder, _, name = session.rpartition("/")
        stem = session_stem(name)
        files = sorted(nested.pop(f"{folder}/{stem}" if folder else stem, []), key=url)
        files += flat_by_session.get((folder, stem), [])
        attached.add((folder, stem))
        out.append(TraceSource(url(session), tuple(_agent_file(url(f)) for f in files), explicit=False))
    orphans = [f for files in nested.values() for f in files]
    orphans += [f for key, files in flat_by_session.items() if key not in attached for f in files]
    out.extend(TraceSource(url(f), explicit=False, orphan=True) for f in sorted(orphans, key=url))
    return out
