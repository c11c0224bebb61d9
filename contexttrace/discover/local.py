"""Find traces on disk: which files are traces, and which subagent files belong to each.

A path argument is a file (one trace, or one per stream-json run), ``-`` (standard input) or a
directory, searched recursively for session files. Subagent files are never traces of their own; they
are attached to their session:

* `<session>/subagents/agent-*.jsonl` (CLI 2.1.x; `workflows/<id>/agent-*.jsonl` below it too), with the
  `agent-<id>.meta.json` beside each; `agent-acompact-*` files are the compaction summariser's;
* flat `agent-*.jsonl` beside the session file whose lines carry the session's `sessionId` (2.0.x);
* inline `isSidechain` lines inside the session file (1.0.x) need no attaching.

Other agents' sessions in a folder are found too: Codex CLI rollouts are `.jsonl` files (its
`history.jsonl` and `session_index.jsonl`, beside a `sessions/` folder, hold no session and are left out);
Gemini CLI's saved sessions are `chats/session-*.json` (or `.jsonl`). Which agent wrote a file is decided
when it is read, by its content.

A URL (``s3://...``, ``file:///...``) and a quoted glob that names no file are `remote`'s to list and
expand; `find_traces` takes every kind of argument. With no path, the session roots are searched
(`default_roots`): Claude Code's (`$CLAUDE_CONFIG_DIR/projects` for each comma-separated entry of
`CLAUDE_CONFIG_DIR` when it is set, else `~/.config/claude/projects` and `~/.claude/projects`), Codex
CLI's (`$CODEX_HOME/sessions`, else `~/.codex/sessions`) and Gemini CLI's (`~/.gemini/tmp`). This module
reads at most the first lines of flat agent files; it never prints.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from contexttrace.discover.model import (
    SUBAGENT_ALONE,
    TraceSource,
    is_agent_name,
    is_session_name,
    session_id_in,
    session_stem,
    subagent_file,
)
from contexttrace.discover.remote import expand_glob, is_glob, url_sources
from contexttrace.reading import SourceFile
from contexttrace.reading.urls import is_url, reason


def default_roots() -> list[Path]:
    """Return the directories that hold sessions when no path is given: Claude Code's, then the other agents'.

    Returns
    -------
    list of Path
        `claude_roots()`, then `$CODEX_HOME/sessions` (else `~/.codex/sessions`) and `~/.gemini/tmp`, each
        when it exists.
    """
    codex_home = os.environ.get("CODEX_HOME", "").strip()
    codex = Path(codex_home).expanduser() if codex_home else Path.home() / ".codex"
    others = (codex / "sessions", Path.home() / ".gemini" / "tmp")
    return [*claude_roots(), *(p for p in others if p.is_dir())]


def claude_roots() -> list[Path]:
    """Return the directories that hold Claude Code's session transcripts.

    Returns
    -------
    list of Path
        `$CLAUDE_CONFIG_DIR/projects` for each comma-separated entry when the variable is set (and only
        those), else whichever of `~/.config/claude/projects` and `~/.claude/projects` exist.
    """
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    if configured:
        return [Path(p.strip()).expanduser() / "projects" for p in configured.split(",") if p.strip()]
    home = Path.home()
    return [p for p in (home / ".config" / "claude" / "projects", home / ".claude" / "projects") if p.is_dir()]


def root_candidates() -> list[Path]:
    """Return every folder `default_roots` looks at, whether it exists or not (a folder that appears changes
    what a run without a path finds: `storage.replay` stamps them).

    >>> all(p in root_candidates() for p in default_roots())
    True
    """
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    home = Path.home()
    if configured:
        claude = [Path(p.strip()).expanduser() / "projects" for p in configured.split(",") if p.strip()]
    else:
        claude = [home / ".config" / "claude" / "projects", home / ".claude" / "projects"]
    codex_home = os.environ.get("CODEX_HOME", "").strip()
    codex = Path(codex_home).expanduser() if codex_home else home / ".codex"
    return [*claude, codex / "sessions", home / ".gemini" / "tmp"]


def _is_agent_file(path: Path) -> bool:
    return is_agent_name(path.name)


def _agent_source(path: Path) -> SourceFile:
    return subagent_file(str(path), path.stem.removeprefix("agent-"))


def _agent_file_source(path: str) -> SourceFile:
    """`_agent_source` of a path a folder scan found (its name ``agent-<id>.jsonl``), without a `Path`."""
    return subagent_file(path, os.path.basename(path)[: -len(".jsonl")].removeprefix("agent-"))


def _session_id_of(path: Path) -> str | None:
    """The session a flat agent file names in its lines (`model.session_id_in`). Raises nothing: None when
    no line names one or the file cannot be read."""
    try:
        with path.open("rb") as fh:
            return session_id_in(fh)
    except OSError:
        return None


def _subagents_of(session: Path) -> tuple[tuple[SourceFile, ...], tuple[str, ...]]:
    """The subagent files of one session file, in a stable order (nested first, then flat), and the
    folders under it that could not be listed (each a warning of the trace, never a crash)."""
    found: list[str] = []
    unreadable: list[str] = []

    def cannot_list(exc: OSError) -> None:
        unreadable.append(f"{exc.filename or session}: cannot read this folder ({(exc.strerror or 'error').lower()})")

    nested = session.parent / session.stem
    try:
        listed = nested.is_dir()
    except OSError as exc:  # the session's folder itself cannot be looked into
        cannot_list(exc)
        listed = False
    if listed:
        for dirpath, dirnames, filenames in os.walk(nested, onerror=cannot_list, followlinks=True):
            dirnames.sort()
            if "subagents" in Path(dirpath).relative_to(nested).parts:
                found.extend(os.path.join(dirpath, n) for n in sorted(filenames) if is_agent_name(n))
    found.extend(str(p) for p in _flat_agents(session.parent).get(session.stem, []))
    return tuple(_agent_source(Path(p)) for p in found), tuple(unreadable)


def _not_a_file(path: str | Path) -> str | None:
    """Why `path` cannot be read as a trace file (a FIFO, a socket, a device: reading it could block for
    ever), or None for a regular file (or one that does not exist: reading it says so)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device or special file"
    return f"not a regular file ({kind}), not read"


def _flat_agents(directory: Path) -> dict[str, list[Path]]:
    by_session: dict[str, list[Path]] = {}
    try:
        candidates = sorted(p for p in directory.glob("agent-*.jsonl") if p.is_file() and _not_a_file(p) is None)
    except OSError:
        return by_session
    for path in candidates:
        sid = _session_id_of(path)
        if sid is not None:
            by_session.setdefault(sid, []).append(path)
    return by_session


def find_traces(paths: list[str]) -> list[TraceSource]:
    """Expand path arguments into the traces to read, in argument order.

    Parameters
    ----------
    paths
        Files, directories or ``"-"``; empty means the default session roots (`default_roots`).

    Returns
    -------
    list of TraceSource
        One per file argument (even a missing one: reading it reports the error), and one per session
        file found under each directory, sorted by path within the directory. Subagent files are
        attached, never listed; flat agent files whose session is not in their directory are listed with
        `orphan=True` (to be counted, not read). A file reached twice (named twice, or named and inside a
        named directory) is listed once, where it first appears; so is ``-``.
    """
    if isinstance(paths, (str, os.PathLike)):
        raise TypeError(f"paths must be a list of paths, not one {type(paths).__name__} (write [path])")
    if not paths:
        paths = [str(p) for p in default_roots()]
    out: list[TraceSource] = []
    for arg in paths:
        try:
            out.extend(_sources_of(os.fspath(arg)))
        except (OSError, ValueError) as exc:  # a name too long, a NUL in it, ...: this path's error, no crash
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            out.append(TraceSource(str(arg), error=f"cannot read this path ({reason})"))
    return _first_of_each(out)


def _sources_of(arg: str) -> list[TraceSource]:
    """The sources one path argument names (`find_traces`). Raises OSError or ValueError for a path the
    system refuses (too long, a NUL byte in it)."""
    if arg == "-":
        return [TraceSource("-")]
    if arg.startswith("~") and not os.path.lexists(arg):  # a quoted '~/dir': expanded, as a quoted glob's ~
        arg = os.path.expanduser(arg)
    if is_url(arg) or (is_glob(arg) and not os.path.lexists(arg)):  # fsspec URLs, quoted globs
        return _url_or_glob_sources(arg)
    p = Path(arg)
    if p.is_dir():
        if not os.access(p, os.R_OK | os.X_OK):
            return [TraceSource(arg, error="cannot read this folder (permission denied)")]
        found = _scan(p)
        if not found and p.suffix == ".jsonl":
            return [TraceSource(arg, error="is a directory where a file was expected (no trace inside)")]
        return found
    special = _not_a_file(p)
    if special is not None:
        return [TraceSource(arg, error=special)]
    if p.is_file() and p.suffix == ".jsonl" and not _is_agent_file(p):
        subagents, unreadable = _subagents_of(p)
        return [TraceSource(arg, subagents, unreadable=unreadable)]
    if p.is_file() and _is_agent_file(p):
        return [TraceSource(arg, unreadable=(SUBAGENT_ALONE,))]
    return [TraceSource(arg)]


def _url_or_glob_sources(arg: str) -> list[TraceSource]:
    """The sources of a URL or of a glob argument that names no file.

    A glob is expanded (`remote.expand_glob`: on disk, or behind a URL) and each match taken as its own
    argument: a URL by `remote.url_sources`, a path on disk by `_sources_of`; a glob that matches nothing
    is a trace whose reading says "no such file". A URL is `remote.url_sources`'. Raises what `_sources_of`
    raises for a path on disk; a glob or URL that cannot be listed is its `TraceSource.error`.
    """
    if is_glob(arg) and (is_url(arg) or not os.path.lexists(arg)):  # (a file may be named with a `*`)
        try:
            matches = expand_glob(arg)
        except (OSError, ImportError, ValueError) as exc:
            return [TraceSource(arg, error=f"cannot read this path ({reason(exc).removeprefix('cannot read: ')})")]
        if matches == [arg]:
            return url_sources(arg) if is_url(arg) else [TraceSource(arg)]
        return [s for m in matches for s in (url_sources(m) if is_url(m) else _sources_of(m))]
    return url_sources(arg)


def _first_of_each(sources: list[TraceSource]) -> list[TraceSource]:
    seen: set[str] = set()
    out = []
    folders: dict[str, str] = {}  # folder -> its real path, resolved once for all its files
    for source in sources:
        try:
            key = source.path if source.path == "-" or source.error else _real_path(source.path, folders)
        except (OSError, ValueError):
            key = source.path
        if key in seen:
            continue
        seen.add(key)
        out.append(source)
    return out


def _real_path(path: str, folders: dict[str, str]) -> str:
    """`os.path.realpath(path)`, its folder's real path taken from `folders` (filled here): a file that is no
    symbolic link is its folder's real path joined with its name. Raises what `os.path.realpath` raises."""
    folder, name = os.path.split(path)
    try:
        linked = not folder or name in ("", ".", "..") or stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:  # (missing, or its folder cannot be looked into)
        linked = True
    if linked:
        return os.path.realpath(path)
    real = folders.get(folder)
    if real is None:
        real = folders[folder] = os.path.realpath(folder)
    return os.path.join(real, name)


def _scan(root: Path) -> list[TraceSource]:
    """Walk a directory once: session files, their nested and flat subagent files, and the orphans."""
    sessions: list[str] = []
    nested: dict[str, list[str]] = {}  # session folder `<dir>/<stem>` -> its agent files under subagents/
    flat: dict[str, list[str]] = {}  # folder -> the flat agent-*.jsonl files in it
    unreadable: list[TraceSource] = []  # folders inside the tree that could not be listed: each an error

    def cannot_list(exc: OSError) -> None:
        reason = exc.strerror or type(exc).__name__
        unreadable.append(
            TraceSource(str(exc.filename or root), explicit=False, error=f"cannot read this folder ({reason.lower()})")
        )

    seen_dirs: set[tuple[int, int]] = set()  # (device, inode) of each folder walked: a link loop is walked once
    for dirpath, dirnames, filenames in os.walk(root, onerror=cannot_list, followlinks=True):
        try:
            st = os.stat(dirpath)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen_dirs:
            dirnames[:] = []
            continue
        seen_dirs.add((st.st_dev, st.st_ino))
        dirnames.sort()
        parts = Path(dirpath).parts[len(root.parts) :]
        agents = sorted(n for n in filenames if n.startswith("agent-") and n.endswith(".jsonl"))
        if "subagents" in parts:
            session_dir = os.path.join(root, *parts[: parts.index("subagents")])
            nested.setdefault(session_dir, []).extend(os.path.join(dirpath, n) for n in agents)
            continue
        for n in filenames:
            if n not in agents and is_session_name(dirpath, n, dirnames):
                special = _not_a_file(os.path.join(dirpath, n))
                if special is None:
                    sessions.append(os.path.join(dirpath, n))
                else:
                    unreadable.append(TraceSource(os.path.join(dirpath, n), explicit=False, error=special))
        if agents:
            flat[dirpath] = [os.path.join(dirpath, n) for n in agents]
    sessions.sort()  # one order for the whole tree, not directory by directory
    # A flat agent file names its session in its lines (2.0.x): read the first lines of each, once.
    flat_by_session: dict[tuple[str, str | None], list[str]] = {}
    for directory, files in flat.items():
        for f in files:
            flat_by_session.setdefault((directory, _session_id_of(Path(f))), []).append(f)
    out = []
    attached: set[tuple[str, str | None]] = set()
    for session in sessions:
        directory, name = os.path.split(session)
        stem = session_stem(name)
        files = sorted(nested.pop(os.path.join(directory, stem), []))
        files += flat_by_session.get((directory, stem), [])
        attached.add((directory, stem))
        out.append(TraceSource(session, tuple(map(_agent_file_source, files)), explicit=False))
    # Subagent files whose session file is not beside them cannot be attached: counted, never reported.
    orphans = [f for files in nested.values() for f in files]
    orphans += [f for key, files in flat_by_session.items() if key not in attached for f in files]
    out.extend(TraceSource(f, explicit=False, orphan=True) for f in sorted(orphans))
    return out + unreadable
