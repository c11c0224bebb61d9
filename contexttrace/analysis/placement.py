"""Where content sits in a context window: the classification and boundaries `context sources`,
`context files` and `context tools` share (one module, so the three commands cannot disagree).

Three things live here, each a pure function over a read `Trace` (tables through `Trace.view`, plain
lists, no Polars) or over plain values; nothing here prints or formats numbers:

* `result_source`: the kind of a tool result, spec 001 "Tokens by source" (files, bash output, mcp
  results, agent returns, web, other results).
* `file_of_tool_use`: the one file a tool use touches (spec 001 "Per-file tokens", "Files panel"), its
  path resolved against the session's cwd and Windows paths normalised.
* `boundaries` / `removed_by`: the points where a thread's window lost content (spec 001 "Context
  reference", "Context anatomy"): a compaction, a microcompaction (only the results it cleared), a
  `/clear`, or a drop of at least 30 % with no marker; and whether a given result was removed by one.

What a boundary is, decided (docs/sources.md states it with its sources):

* ``compaction``: a `system/compact_boundary` line of the thread (exact).
* ``microcompaction``: a `system/microcompact_boundary` line; it removes only the results its
  `compactedToolIds` name (`tool_results.cleared_seq`), everything else stays.
* ``clear``: a `/clear` slash-command line of the thread (`events.command_name`, the name in its
  `<command-name>` tag) after the thread's first call, whatever the prompt did after it (exact). A `/clear`
  before any call of the thread clears nothing this trace shows: no boundary.
* ``drop``: between two measured calls of the thread with no marker (compaction, microcompaction,
  `/clear`) between them, the prompt fell by at least 30 % (spec 001; `is_drop`, in integers). Any other
  slash command between them (`/model`, `/cost`) does not change that: it is a ``drop``.
* ``resume``: in `KINDS` for the contract, never emitted yet: the tables keep no per-line session id or
  process start, so a resume that shrinks the window by 30 % or more is reported as ``drop`` and one that
  keeps it is no boundary.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contexttrace.reading.contract import AGENT_TOOLS, THREAD_MAIN

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: The kinds of tool result, in the order of spec 001's "Context sources" rows.
RESULT_SOURCES = ("files", "bash", "mcp", "agent", "web", "other_results")

#: Tools whose result is fetched from the web.
WEB_TOOLS = frozenset({"WebFetch", "WebSearch"})
#: Tools whose `file_path` (or notebook path) input names the one file they touch.
FILE_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit"})
#: A drop of at least this many tenths of the previous call's prompt, with no marker, is a boundary (spec
#: 001: 30 %); tested in integers (`is_drop`).
DROP_TENTHS = 3
#: The slash command that empties the window (`events.command_name`, with or without its leading ``/``).
CLEAR_COMMAND = "clear"

#: The kinds of boundary, in the contract's order (see the module docstring for each).
KINDS = ("compaction", "microcompaction", "clear", "drop", "resume")

_DRIVE = re.compile(r"^([A-Za-z]):(?:/|$)")


def result_source(tool: str | None, read_path: str | None) -> str:
    """The kind of a tool result: one of `RESULT_SOURCES` (spec 001 "Tokens by source").

    Parameters
    ----------
    tool
        The tool's name as written (`tool_uses.name`; full MCP names such as ``mcp__server__tool``); None
        when the trace lacks the call.
    read_path
        `tool_uses.read_path`: for Bash, the one path its command prints with cat / sed -n / head / tail,
        else None (a command reading two or more files has none: it stays in bash output).

    Returns
    -------
    str
        ``files`` (Read, or a Bash with a `read_path`), ``bash`` (other Bash), ``mcp`` (``mcp__*``),
        ``agent`` (Task / Agent), ``web`` (WebFetch / WebSearch), else ``other_results``.

    >>> result_source("Read", None), result_source("Bash", "/a.py"), result_source("Bash", None)
    ('files', 'files', 'bash')
    >>> result_source("mcp__github__get_issue", None), result_source("Agent", None), result_source(None, None)
    ('mcp', 'agent', 'other_results')
    """
    if tool == "Read":
        return "files"
    if tool == "Bash":
        return "files" if read_path else "bash"
    if tool is None:
        return "other_results"
    if tool.startswith("mcp__"):
        return "mcp"
    if tool in AGENT_TOOLS:
        return "agent"
    if tool in WEB_TOOLS:
        return "web"
    return "other_results"


def normalize_path(path: str, cwd: str | None = None) -> str:
    """Write a path as one spelling.

    Returns
    -------
    str
        Backslashes as ``/``, a drive letter upper-cased (``C:/x``), ``.`` and ``..`` collapsed, and a
        relative path joined to `cwd` (normalised the same way) when one is given; a ``~`` path is never
        joined (the trace names no home directory: it is kept as written, normalised). String rules
        only; no file system access.

    >>> normalize_path("src/a.py", "/home/u/proj"), normalize_path("c:\\\\Users\\\\u\\\\x.py")
    ('/home/u/proj/src/a.py', 'C:/Users/u/x.py')
    >>> normalize_path("../b.py", "D:\\\\w\\\\proj"), normalize_path("./a.py")
    ('D:/w/b.py', 'a.py')
    >>> normalize_path("~/notes.md", "/home/u/proj")
    '~/notes.md'
    """
    p = path.replace("\\", "/")
    m = _DRIVE.match(p)
    if m:
        p = m.group(1).upper() + p[1:]
    elif not p.startswith(("/", "~")) and cwd:
        p = normalize_path(cwd).rstrip("/") + "/" + p
    drive = ""
    m = _DRIVE.match(p)
    if m:
        drive, p = p[:2], p[2:] or "/"
    return drive + posixpath.normpath(p)


def file_of_tool_use(tool: str | None, input_path: str | None, read_path: str | None, cwd: str | None) -> str | None:
    """The one file a tool use touches, normalised (`normalize_path`), or None.

    Parameters
    ----------
    tool
        `tool_uses.name`.
    input_path
        The path input of a file tool (`tool_uses.file_path`: ``input.file_path``; for NotebookEdit the
        caller may pass ``input.notebook_path``).
    read_path
        `tool_uses.read_path` (Bash: the one path cat / sed -n / head / tail prints).
    cwd
        The working directory relative paths resolve against: the tool use's own line's (`tool_uses.cwd`)
        when it differs from the session's, else the session's (`Trace.cwd`); None leaves them relative.

    Returns
    -------
    str or None
        Read / Edit / Write / MultiEdit / NotebookEdit: their path input; Bash: `read_path`; else None
        (also when the path is missing or empty).

    >>> file_of_tool_use("Read", "src/a.py", None, "/p"), file_of_tool_use("Bash", None, "b.txt", "/p")
    ('/p/src/a.py', '/p/b.txt')
    >>> file_of_tool_use("Grep", "/p/x", None, "/p") is None, file_of_tool_use("Edit", "", None, None) is None
    (True, True)
    """
    path = touched_path(tool, input_path, read_path)
    return normalize_path(path, cwd) if path else None


def touched_path(tool: str | None, input_path: str | None, read_path: str | None) -> str | None:
    """Return the path a tool use touches, as written (`file_of_tool_use` before normalising).

    Returns
    -------
    str or None
        A file tool's path input (`FILE_TOOLS`), a Bash reader's `read_path`, else None (also for a
        missing or empty path).

    >>> touched_path("Edit", "a.py", None), touched_path("Bash", None, "b.txt"), touched_path("Bash", "x", None)
    ('a.py', 'b.txt', None)
    """
    if tool in FILE_TOOLS:
        path = input_path
    elif tool == "Bash":
        path = read_path
    else:
        return None
    return path or None


@dataclass(frozen=True)
class Boundary:
    """A point where a thread's window lost content.

    `kind`: one of `KINDS`. `seq`: the record order (`seq`) where it takes effect (the marker line, the
    `/clear` line for ``clear``; for ``drop`` the first call after the drop). `call`: the 1-based number
    among the thread's calls (for the main thread, the numbering of `--calls`) of the first call after it,
    None when none followed. `ts_ms`: the marker's timestamp (for ``drop`` that call's), None without one.
    `delta`: Δcontext, prompt tokens of that first call minus those of the last measured call before it
    (exact, from usage), None when either is missing. `cleared`: for a microcompaction, the tool_use_ids
    it removed; None: everything before it left the window.
    """

    kind: str
    seq: int
    call: int | None
    ts_ms: int | None
    delta: int | None
    cleared: frozenset[str] | None


def is_drop(prompt: int, before: int) -> bool:
    """Whether a prompt of `prompt` tokens after one of `before` is a drop of at least 30 % (`DROP_TENTHS`).

    Returns
    -------
    bool
        Exact, in integers: ``10 * prompt <= 7 * before`` (a float product misses some exact 30 % drops).

    >>> is_drop(131068, 187240), is_drop(131069, 187240), is_drop(70, 100), is_drop(71, 100)
    (True, False, True, False)
    """
    return 10 * prompt <= (10 - DROP_TENTHS) * before


def _is_clear(name: str | None) -> bool:
    return name is not None and name.removeprefix("/") == CLEAR_COMMAND


def _thread_calls(trace: Trace, thread: str) -> list[tuple[int, int | None, int | None]]:
    """(seq, prompt_tokens, ts_ms) of the thread's calls, by seq."""
    calls = trace.view("calls")
    rows = [
        (s, p, t)
        for s, p, t, th in zip(
            calls.get_column("seq").to_list(),
            calls.get_column("prompt_tokens").to_list(),
            calls.get_column("ts_ms").to_list(),
            calls.get_column("thread").to_list(),
            strict=True,
        )
        if th == thread
    ]
    rows.sort(key=lambda r: r[0])
    return rows


def _cleared_ids(trace: Trace, thread: str) -> dict[int, set[str]]:
    """microcompaction seq → the tool_use_ids of the thread's results it cleared."""
    results = trace.view("tool_results")
    out: dict[int, set[str]] = {}
    for tid, th, cleared in zip(
        results.get_column("tool_use_id").to_list(),
        results.get_column("thread").to_list(),
        results.get_column("cleared_seq").to_list(),
        strict=True,
    ):
        if cleared is not None and tid is not None and th == thread:
            out.setdefault(cleared, set()).add(tid)
    return out


def _delta_at(seq: int, calls: list[tuple[int, int | None, int | None]], seqs: list[int]) -> tuple[int | None, ...]:
    """(call number of the first call after `seq`, its Δcontext) over the thread's calls."""
    at = bisect_right(seqs, seq)
    if at >= len(calls):
        return None, None
    after = calls[at][1]
    before = next((p for _, p, _ in reversed(calls[:at]) if p), None)
    return at + 1, (after - before if after and before is not None else None)


def boundaries(trace: Trace, thread: str = THREAD_MAIN) -> list[Boundary]:
    """The boundaries of one thread's window, in seq order.

    Parameters
    ----------
    trace
        A trace from `reader.read_trace`.
    thread
        The thread's name (`calls.thread`): ``"main"`` (default) or a subagent's id.

    Returns
    -------
    list of Boundary
        Compactions, microcompactions and `/clear` lines from the thread's `events` (`compact_boundary`,
        `microcompact_boundary`, `command` with `command_name` ``/clear``; the cleared ids from
        `tool_results.cleared_seq`), and the ``drop`` boundaries from its calls' `prompt_tokens` (exact,
        from usage; a call whose usage could not be read, prompt 0, is skipped), as the module docstring
        defines them. [] for a thread with no calls and no markers. Never raises on missing values.
    """
    calls = _thread_calls(trace, thread)
    seqs = [c[0] for c in calls]
    first = seqs[0] if seqs else None
    events = trace.view("events")
    markers: list[tuple[int, str, int | None]] = []
    for seq, th, kind, ts, name in zip(
        events.get_column("seq").to_list(),
        events.get_column("thread").to_list(),
        events.get_column("kind").to_list(),
        events.get_column("ts_ms").to_list(),
        events.get_column("command_name").to_list(),
        strict=True,
    ):
        if th != thread:
            continue
        if kind == "compact_boundary":
            markers.append((seq, "compaction", ts))
        elif kind == "microcompact_boundary":
            markers.append((seq, "microcompaction", ts))
        elif kind == "command" and _is_clear(name) and first is not None and seq > first:
            markers.append((seq, "clear", ts))
    markers.sort()
    cleared = _cleared_ids(trace, thread) if any(k == "microcompaction" for _, k, _ in markers) else {}
    out = []
    for seq, kind, ts in markers:
        call, delta = _delta_at(seq, calls, seqs)
        ids = frozenset(cleared.get(seq, ())) if kind == "microcompaction" else None
        out.append(Boundary(kind, seq, call, ts, delta, ids))
    marker_seqs = [m[0] for m in markers]
    prev: tuple[int, int] | None = None  # (seq, prompt) of the last measured call
    for i, (seq, prompt, ts) in enumerate(calls):
        if not prompt:
            continue
        if prev is not None and is_drop(prompt, prev[1]):
            lo, hi = prev[0], seq
            if bisect_right(marker_seqs, lo) == bisect_left(marker_seqs, hi):  # no marker between the two calls
                out.append(Boundary("drop", seq, i + 1, ts, prompt - prev[1], None))
        prev = (seq, prompt)
    out.sort(key=lambda b: b.seq)
    return out


def removed_by(tool_use_id: str | None, landed_seq: int, bounds: list[Boundary]) -> Boundary | None:
    """Find the boundary that removed a tool result from the window.

    Returns
    -------
    Boundary or None
        The first of `bounds` (in seq order) after `landed_seq` that removed it; None while it is still
        in the window. A boundary with `cleared` None removes everything before it; a microcompaction
        removes the ids it names only (a result with no id is never cleared by one).

    >>> b = [Boundary("microcompaction", 5, 2, None, -10, frozenset({"t1"})),
    ...      Boundary("compaction", 9, 3, None, -99, None)]
    >>> removed_by("t1", 1, b).kind, removed_by("t2", 1, b).kind, removed_by("t1", 9, b)
    ('microcompaction', 'compaction', None)
    """
    for b in bounds:
        if b.seq <= landed_seq:
            continue
        if b.cleared is None or (tool_use_id is not None and tool_use_id in b.cleared):
            return b
    return None


def compaction_seqs(trace: Trace) -> dict[Any, list[int]]:
    """List each thread's compactions, for `context tools`' re-read tax.

    Returns
    -------
    dict
        Thread (`events.thread`) → the seqs of its `compact_boundary` events, ascending; every thread
        with one. Exact.
    """
    events = trace.view("events")
    out: dict[Any, list[int]] = {}
    for seq, thread, kind in zip(
        events.get_column("seq").to_list(),
        events.get_column("thread").to_list(),
        events.get_column("kind").to_list(),
        strict=True,
    ):
        if kind == "compact_boundary":
            out.setdefault(thread, []).append(seq)
    for seqs in out.values():
        seqs.sort()
    return out


def left_context(seq: int, cleared: int | None, bounds: list[int]) -> int | None:
    """Find where a tool result that landed at `seq` left its thread's context.

    Parameters
    ----------
    seq
        The result's seq.
    cleared
        The seq of the microcompaction that cleared it (`tool_results.cleared_seq`), or None.
    bounds
        The thread's `compact_boundary` seqs, ascending (`compaction_seqs`).

    Returns
    -------
    int or None
        The seq of the first compaction after it or of the microcompaction that cleared it, whichever
        comes first; None while it is still in the context. Exact.

    >>> left_context(3, None, [2, 8]), left_context(3, 5, [2, 8]), left_context(9, None, [2, 8]) is None
    (8, 5, True)
    """
    i = bisect_right(bounds, seq)
    end = bounds[i] if i < len(bounds) else None
    if cleared is not None and cleared > seq and (end is None or cleared < end):
        end = cleared
    return end
