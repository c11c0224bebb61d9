"""Traces behind fsspec URLs and quoted globs: finding sessions and subagent files, opening files (issue 17).

A path argument that starts with a scheme (``s3://bucket/traces/``, ``gs://...``, ``file:///srv/traces``,
``memory://...``) is a URL, listed and read through `fsspec` (``s3://`` needs `s3fs`, ``gs://`` `gcsfs`: the
``s3`` and ``gcs`` extras). Discovery follows `sources.py` rule for rule, so a folder on an object store
gives the same sessions, in the same order, with the same subagent files as the same folder on disk:

* a URL to a folder (an object-store prefix) is searched recursively: every ``*.jsonl`` not named
  ``agent-*`` outside a ``subagents`` folder is a session; ``<session>/**/subagents/**/agent-*.jsonl``
  files are attached to ``<session>.jsonl`` (sorted by path), then the flat ``agent-*.jsonl`` beside it
  whose lines name its `sessionId`; the rest are orphans (counted, never read);
* a URL to a file is one trace, with its subagent files found as `sources._subagents_of` finds them.

Names keep the argument's spelling: a file found under ``s3://b/traces/`` is ``s3://b/traces/<rest>``.
A path argument with ``*``, ``?`` or ``[`` that names no file is a glob, expanded (sorted) here: on disk
with `glob.glob` (``**`` recursive), behind a URL with the file system's `glob`.

Reading: `open_url` and `read_meta` are what `reading.files.open_trace` and `reading.claude.feed.agent_meta`
call for a URL. fsspec is imported only when a URL is met (`import contexttrace` never imports it). This
module never prints; a URL that cannot be listed is that argument's error (`TraceSource.error`), one that
cannot be read is that trace's `TraceReadError`. The result store never keeps a trace read from a URL
(it stamps files with `os.stat`).
"""

from __future__ import annotations

import glob
import os
from typing import TYPE_CHECKING, Any

from contexttrace.reading.urls import filesystem, is_url, reason

if TYPE_CHECKING:
    from contexttrace.discover.local import TraceSource
    from contexttrace.reading.model import SourceFile

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


def sources_of(arg: str) -> list[TraceSource]:
    """The sources a URL or a glob argument names (`sources.find_traces` calls this for either).

    A glob is expanded (`expand_glob`) and each match read as its own argument: a URL as below, a path on
    disk by `sources._sources_of`. A URL to a folder is searched (`_scan`), a URL to a file is one trace
    with its subagent files (`_file_source`), a URL to nothing is a trace whose reading says "no such
    file". Raises what `sources._sources_of` raises for a path on disk; a URL that cannot be listed is its
    `TraceSource.error`, never an exception.
    """
    from contexttrace.discover.local import TraceSource, _sources_of

    if is_glob(arg) and (is_url(arg) or not os.path.lexists(arg)):  # (a file may be named with a `*`)
        try:
            matches = expand_glob(arg)
        except (OSError, ImportError, ValueError) as exc:
            return [TraceSource(arg, error=f"cannot read this path ({reason(exc).removeprefix('cannot read: ')})")]
        if matches == [arg]:
            return _url_sources(arg) if is_url(arg) else [TraceSource(arg)]
        return [s for m in matches for s in (_url_sources(m) if is_url(m) else _sources_of(m))]
    return _url_sources(arg)


def _url_sources(arg: str) -> list[TraceSource]:
    """The sources of one URL (no glob in it): a folder searched, a file with its subagent files."""
    from contexttrace.discover.local import TraceSource

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


def _is_agent_name(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")


def _agent_file(url: str) -> SourceFile:
    """`sources._agent_source` for a URL (a `Path` would fold its ``//``)."""
    from contexttrace.reading.contract import THREAD_COMPACTION, THREAD_SUBAGENT
    from contexttrace.reading.model import SourceFile

    agent_id = url.rsplit("/", 1)[1][len("agent-") : -len(".jsonl")]
    kind = THREAD_COMPACTION if agent_id.startswith("acompact") else THREAD_SUBAGENT
    return SourceFile(url, thread_kind=kind, agent_id=agent_id)


def _session_id_of(fs: Any, path: str) -> str | None:
    """`sources._session_id_of` through a file system: the first top-level `sessionId` string of a flat
    agent file, looked for on the lines whose bytes hold ``"sessionId"``. Raises nothing."""
    from contexttrace.discover.local import session_id_in

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
    """The source of a URL that names a file (`sources._sources_of` for a file)."""
    from contexttrace.discover.local import SUBAGENT_ALONE, TraceSource

    name = url.rsplit("/", 1)[-1]
    if not name.endswith(".jsonl"):
        return TraceSource(url)
    if _is_agent_name(name):
        return TraceSource(url, unreadable=(SUBAGENT_ALONE,))
    parent, stem = path.rsplit("/", 1)[0], name[: -len(".jsonl")]
    url_parent = url.rsplit("/", 1)[0]
    nested: list[tuple[tuple[str, ...], str]] = []  # (folders under the session's folder, name): walk order
    if fs.isdir(f"{parent}/{stem}"):
        for rel in _relative_files(fs, f"{parent}/{stem}"):
            *folders, file_name = rel.split("/")
            if "subagents" in folders and _is_agent_name(file_name):
                nested.append((tuple(folders), file_name))
    files = [f"{url_parent}/{stem}/" + "/".join((*folders, n)) for folders, n in sorted(nested)]
    flat = sorted(n for n in (f.rsplit("/", 1)[-1] for f in fs.ls(parent, detail=False)) if _is_agent_name(n))
    files += [f"{url_parent}/{n}" for n in flat if _session_id_of(fs, f"{parent}/{n}") == stem]
    return TraceSource(url, tuple(_agent_file(f) for f in files))


def _scan(fs: Any, root: str, spelling: str) -> list[TraceSource]:
    """`sources._scan` over a folder of a file system: sessions sorted by path, their nested subagent files
    (sorted by path) then their flat ones, then the orphans sorted; names spelled from `spelling`."""
    from contexttrace.discover.local import TraceSource

    sessions: list[str] = []
    nested: dict[str, list[str]] = {}  # session `<folder>/<stem>` (relative) -> its agent files
    flat: dict[str, list[str]] = {}  # folder (relative, "" for the root) -> its flat agent files
    for rel in sorted(_relative_files(fs, root)):
        *folders, name = rel.split("/")
        folder = "/".join(folders)
        if "subagents" in folders:
            if _is_agent_name(name):
                nested.setdefault("/".join(folders[: folders.index("subagents")]), []).append(rel)
        elif _is_agent_name(name):
            flat.setdefault(folder, []).append(rel)
        elif name.endswith(".jsonl"):
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
        stem = name[: -len(".jsonl")]
        files = sorted(nested.pop(f"{folder}/{stem}" if folder else stem, []), key=url)
        files += flat_by_session.get((folder, stem), [])
        attached.add((folder, stem))
        out.append(TraceSource(url(session), tuple(_agent_file(url(f)) for f in files), explicit=False))
    orphans = [f for files in nested.values() for f in files]
    orphans += [f for key, files in flat_by_session.items() if key not in attached for f in files]
    out.extend(TraceSource(url(f), explicit=False, orphan=True) for f in sorted(orphans, key=url))
    return out
