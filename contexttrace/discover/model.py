"""What discovery finds: `TraceSource` (a trace file to read, with its subagent files) and the rules that
discovery on disk (`local`) and behind URLs (`remote`) share, so that a folder on an object store gives the
same sources as the same folder on disk.

This module imports nothing else of `discover`; both discoveries import it. It never prints.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

import orjson

from contexttrace.reading import SourceFile
from contexttrace.reading.contract import THREAD_COMPACTION, THREAD_SUBAGENT


@dataclass(frozen=True)
class TraceSource:
    """A file to read as a trace, with the subagent files attached to it.

    `explicit` is True when the user named the file itself (a file with no model call is then still
    reported, as a zero row); False when a directory scan found it (such a file is left out).
    """

    path: str
    subagents: tuple[SourceFile, ...] = field(default=())
    explicit: bool = True
    orphan: bool = False  # a flat agent-*.jsonl whose session file is not there: left out, counted
    error: str | None = None  # a path that cannot be a trace (unlistable folder, FIFO, ...): its failure
    #: subagent files or folders that were found but could not be listed or read (a warning of the trace)
    unreadable: tuple[str, ...] = field(default=())


#: The warning of a subagent file named on its own: it has no main thread, so nothing is graded.
SUBAGENT_ALONE = (
    "a subagent file named on its own: its calls are a subagent's (no main thread to grade); name its "
    "session file, or the session's folder, to see them in their session"
)


def is_agent_name(name: str) -> bool:
    """Whether a file name is a subagent file's (``agent-*.jsonl``), never a trace of its own.

    >>> is_agent_name("agent-a1b2.jsonl"), is_agent_name("session.jsonl")
    (True, False)
    """
    return name.startswith("agent-") and name.endswith(".jsonl")


#: Files of a Codex CLI home that hold no session (prompts typed, thread names), left out of a folder scan
#: when a `sessions/` folder is beside them.
CODEX_HOME_FILES = frozenset({"history.jsonl", "session_index.jsonl"})


def is_session_name(folder: str, name: str, sibling_folders: Collection[str] = ()) -> bool:
    """Whether a file found by a folder scan is a session of its own: a `.jsonl` file that is not a
    subagent's (``agent-*.jsonl``) nor a Codex CLI home's own file (`CODEX_HOME_FILES` beside a `sessions`
    folder), or a Gemini CLI saved session ``session-*.json`` in a ``chats`` folder.

    `folder` is the file's folder (its last part is what counts), `sibling_folders` the folders beside the
    file. Which agent wrote a file is decided when it is read, by its content.

    >>> is_session_name("p/chats", "session-2025-12-12T21-46-7c76.json"), is_session_name("p", "a.json")
    (True, False)
    >>> is_session_name(".codex", "history.jsonl", ["sessions"]), is_session_name("x", "history.jsonl")
    (False, True)
    """
    if name.endswith(".jsonl"):
        return not is_agent_name(name) and not (name in CODEX_HOME_FILES and "sessions" in sibling_folders)
    return name.endswith(".json") and name.startswith("session-") and folder.rstrip("/").rsplit("/", 1)[-1] == "chats"


def session_stem(name: str) -> str:
    """A session file's name without its extension: where its subagent folder and files are named from.

    >>> session_stem("0b5e.jsonl"), session_stem("session-2025-12-12T21-46-7c76.json")
    ('0b5e', 'session-2025-12-12T21-46-7c76')
    """
    return name.rsplit(".", 1)[0]


def subagent_file(path: str, agent_id: str) -> SourceFile:
    """The `SourceFile` of a subagent file at `path` (a path on disk or a URL, as spelled) whose name is
    ``agent-<agent_id>.jsonl``: the compaction summariser's thread for an ``acompact`` id, else a subagent's.
    The `.meta.json` beside it is read by the reader, in the process that reads the file.

    >>> subagent_file("s/subagents/agent-acompact-1.jsonl", "acompact-1").thread_kind == THREAD_COMPACTION
    True
    """
    kind = THREAD_COMPACTION if agent_id.startswith("acompact") else THREAD_SUBAGENT
    return SourceFile(path, thread_kind=kind, agent_id=agent_id)


def session_id_in(lines: Iterable[bytes]) -> str | None:
    """The first top-level `sessionId` string among the lines of an open binary file: the session a flat
    agent file belongs to.

    The link may come late (after many lines that carry none), so every line is looked at; only lines
    whose bytes hold ``"sessionId"`` are decoded, NULs dropped, and a line that does not decode (truncated,
    NUL padding, lone surrogates) is passed over.

    Parameters
    ----------
    lines
        The file's lines as bytes (an open binary file, on disk or behind a URL).

    Returns
    -------
    str or None
        The first non-empty `sessionId` string of a JSON object line; None when no line names one.

    Raises
    ------
    OSError
        What reading `lines` raises.

    >>> session_id_in([b'{"type": "user"}', b'{"sessionId": "s1"}'])
    's1'
    """
    for raw in lines:
        if b'"sessionId"' not in raw:
            continue
        try:
            rec = orjson.loads(raw.replace(b"\x00", b""))
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("sessionId"), str) and rec["sessionId"]:
            return str(rec["sessionId"])
    return None
