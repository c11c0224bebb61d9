"""`read_trace`: one trace file, of any agent's format, and its companion files → `Trace` objects.

The file is opened once (`files.open_trace`: standard input, URLs, UTF-16 decoded), its first bytes pick
the reader (`format_of`, over `FORMATS`), and that reader reads it. `split_point` asks the same reader
whether a large file can be read in two parts at once.

This module knows no format's records: it only opens, picks and hands over. It never prints; the readers'
errors (`errors.ContextTraceError` subclasses) pass through it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import IO

from contexttrace.reading.claude import CLAUDE_CODE
from contexttrace.reading.claude.api import read_claude
from contexttrace.reading.claude.split import PendingTail, TailPart
from contexttrace.reading.codex import CODEX_CLI
from contexttrace.reading.files import open_trace
from contexttrace.reading.formats import HEAD_BYTES, TraceFormat, head_of, peekable
from contexttrace.reading.gemini import GEMINI_CLI
from contexttrace.reading.model import SourceFile, Trace

#: The readers, in the order a file is offered to them: Claude Code's, the catch-all, last.
FORMATS: tuple[TraceFormat, ...] = (CODEX_CLI, GEMINI_CLI, CLAUDE_CODE)


def format_of(head: bytes) -> TraceFormat:
    """The reader of a file that starts with `head`: the first of `FORMATS` that recognises it.

    Parameters
    ----------
    head
        The file's first bytes (up to `formats.HEAD_BYTES`; a short file gives fewer, perhaps cut mid-line).

    Returns
    -------
    TraceFormat
        The first reader whose `sniff` says yes, else the last of `FORMATS` (Claude Code's, the catch-all,
        which names what a file that is no trace is). Raises nothing.

    Examples
    --------
    >>> format_of(b'{"type":"system","subtype":"init"}').agent
    'Claude Code'
    """
    for fmt in FORMATS[:-1]:
        if fmt.sniff(head):
            return fmt
    return FORMATS[-1]


def read_trace(
    main: str | os.PathLike[str],
    subagents: Iterable[SourceFile] = (),
    fh: IO[bytes] | None = None,
    tail: TailPart | PendingTail | None = None,
    words: bool = True,
    inputs: bool = True,
) -> list[Trace]:
    """Read one trace file and its companion files (a session's subagent files) into traces.

    Parameters
    ----------
    main
        Path of the file, an fsspec URL, or ``"-"`` for standard input.
    subagents
        The session's subagent files, as `discover.find_traces` finds them; a reader whose format has
        none ignores them.
    fh
        An already open binary file to read instead of opening `main` (left open).
    tail
        The end of a large session transcript read apart (`read_tail`), for a file `split_point` cut:
        only the bytes before it are read here, with the same result as reading the whole file (read with
        the same `words` and `inputs`, else the whole file is read here).
    words
        Fill the calls' `path_words` and the tool uses' `read_path` columns (what `context files` and
        `context sources` read); False lets Claude Code's reader leave them null (about 5 % of its read
        time; the seam's other readers always fill them). Every other column is the same either way.
    inputs
        Fill the tool uses' `input_json` (and `input_chars`, the calls' `tool_input_chars`), the results'
        `content_hash` and the part reads' `capped` (what `context usage` never reads); False lets Claude Code's
        reader leave them null (a tool input is then decoded only for a column that reads it: an agent's).
        Every other column is the same either way.

    Returns
    -------
    list of Trace
        One per run, in file order; never empty (a stream-json file with several runs gives several).

    Raises
    ------
    TraceReadError
        The file is missing, a directory, unreadable or binary.
    EmptyTraceError
        The file holds no JSON record at all.
    TraceFormatError
        No line is a record of any format read here.

    Examples
    --------
    >>> import io
    >>> line = b'{"type":"assistant","sessionId":"s","message":{"id":"m1","usage":{"input_tokens":5,'
    >>> line += b'"cache_creation_input_tokens":0,"cache_read_input_tokens":95,"output_tokens":7}}}\\n'
    >>> [trace] = read_trace("t.jsonl", fh=io.BytesIO(line))
    >>> trace.format, trace.view("calls").get_column("prompt_tokens").to_list()
    ('transcript', [100])
    """
    main = os.fspath(main)
    if tail is not None and fh is None:  # only Claude Code's reader splits a file (`split_point` asked it)
        return read_claude(main, subagents, tail=tail, words=words, inputs=inputs)
    handle = peekable(open_trace(main) if fh is None else fh)
    try:
        fmt = format_of(head_of(handle, from_start=fh is None and main != "-"))
        if (words and inputs) or fmt is not CLAUDE_CODE:
            return fmt.read(main, handle, tuple(subagents))
        return CLAUDE_CODE.read(main, handle, tuple(subagents), words=words, inputs=inputs)
    finally:
        if fh is None and handle is not sys.stdin.buffer:
            handle.close()


def split_point(path: str, after_bytes: int = 0) -> int | None:
    """Where to cut a large trace file to read it in two parts at once, as its reader decides.

    Parameters
    ----------
    path
        A file on disk (not a URL nor ``"-"``).
    after_bytes
        Bytes of companion files (a session's subagent files) the tail's reader reads after the tail: the
        cut moves towards the file's end so that both parts take about as long.

    Returns
    -------
    int or None
        The byte offset of a line start, from the file's start; None for a file smaller than any reader
        splits (`TraceFormat.split_min_bytes`), one that cannot be read, or one its reader reads whole.
        Raises nothing.
    """
    least = min((f.split_min_bytes for f in FORMATS if f.split_min_bytes is not None), default=None)
    try:
        if least is None or os.path.getsize(path) < least:
            return None
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    return format_of(head).split_point(path, after_bytes)
