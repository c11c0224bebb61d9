"""`read_claude`: one Claude Code trace file (either format) and its subagent files → `Trace` objects.

The entry of Claude Code's reader: it opens the file (or reads a large one's head and merges its tail,
`split`), feeds it into builders (`feed`) with the garbage collector paused, and returns the built traces.
It never prints; every problem is an `errors.ContextTraceError` or a count and a warning in the `Trace`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import IO

from contexttrace.reading.claude.builder import Builder
from contexttrace.reading.claude.feed import feed, finish
from contexttrace.reading.claude.split import PendingTail, TailPart, read_head
from contexttrace.reading.collector import gc_paused
from contexttrace.reading.files import open_trace
from contexttrace.reading.model import SourceFile, Trace


def read_claude(
    main: str | os.PathLike[str],
    subagents: Iterable[SourceFile] = (),
    fh: IO[bytes] | None = None,
    tail: TailPart | PendingTail | None = None,
    words: bool = True,
    inputs: bool = True,
) -> list[Trace]:
    """Read one trace file (either format) and, for a session transcript, its subagent files.

    A stream-json file gives one trace per run: a run goes from one `system/init` line to the next init
    that names another session (`dialects.starts_run`), and a file with more than one run names its traces
    `path#1`, `path#2`, ... in file order. A session
    transcript gives one trace: main-thread rows from the session file's non-sidechain lines, subagent
    rows from its inline sidechain lines and from `subagents`, read after the main file.

    Parameters
    ----------
    main
        Path of the file, or ``"-"`` for standard input.
    subagents
        The session's subagent files (`<session>/subagents/agent-*.jsonl`, flat `agent-*.jsonl` with
        its `sessionId`, `agent-acompact-*` summariser files), as `discover.find_traces` finds them.
        Ignored when `main` turns out to be stream-json.
    fh
        An already open binary file to read instead of opening `main`.
    tail
        The end of `main` read by `read_tail`, or being read (`PendingTail`, awaited once the bytes before
        it are read): only those bytes are read here and the tail is merged after them, with the same
        result as reading the whole file. Ignored with `fh`, when the file turns out not to be a session
        transcript, and when the tail was read with other `words` or `inputs` (the whole file is read).
    words
        Fill the calls' `path_words` (`text.path_words`: only `context files` reads it) and the tool uses'
        `read_path` (`text.shell_read_path`: `context sources` and `files`). False may leave them null;
        every other column is the same either way.
    inputs
        Fill the tool uses' `input_json` (and its lengths), the results' `content_hash` and the part reads'
        `capped` (`context usage` reads none). False may leave them null.

    Returns
    -------
    list of Trace
        One per run, in file order; never empty. Tables: `contract.CALL_SCHEMA`, `TOOL_USE_SCHEMA`,
        `TOOL_RESULT_SCHEMA`, `EVENT_SCHEMA`.

    Raises
    ------
    TraceReadError
        The file is missing, a directory, unreadable or binary.
    EmptyTraceError
        The file holds no JSON record at all.
    TraceFormatError
        No line is a record of either format.

    Examples
    --------
    `reading.api.read_trace` (which hands Claude Code's files here) shows one on a two-line transcript.
    """
    main = os.fspath(main)
    with gc_paused():
        if tail is not None and fh is None:
            head = read_head(main, tail, words, inputs)
            if head is not None:
                return finish(main, [head], () if head.facts.subagents_read else subagents)
        handle = open_trace(main) if fh is None else fh
        builders = [Builder(main, main, words, inputs)]
        try:
            feed(builders, SourceFile(main), handle, split_runs=True)
        finally:
            if fh is None and handle is not sys.stdin.buffer:
                handle.close()
        return finish(main, builders, subagents)
