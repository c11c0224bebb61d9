"""A large session transcript read in two parts at once: its tail by a worker, its head here, merged.

`split_point` picks the cut (a line start), `read_tail` reads from it to the end (then the session's
subagent files) into a builder that pickles, and `read_head` reads up to it and merges the tail as if one
builder had read the whole file in order (`builder.Builder.merge_tail`: each piece of state merges
itself). Only session transcripts are read this way: a part that shows stream-json gives None, and the
whole file is read at once instead.

The merged result equals one read of the whole file; where it could not (records repeated across the cut,
sidechain chains whose names a merge cannot settle, a call with compaction passes cut in two, a tail that
could not be read), the whole file is read instead. Nothing here prints; `split_point` and `read_tail` raise nothing.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from contexttrace.errors import TraceReadError
from contexttrace.reading.claude.builder import Builder, epoch_ms
from contexttrace.reading.claude.calls import C_COMPACTION_PROMPT, call_key
from contexttrace.reading.claude.feed import feed, read_subagents
from contexttrace.reading.claude.lines import Head
from contexttrace.reading.collector import gc_paused
from contexttrace.reading.files import is_utf16, open_trace
from contexttrace.reading.model import SourceFile

#: A file at least this large is read in two parts at once when a second core is free (`runner`).
SPLIT_MIN_BYTES = 64 * 1024 * 1024

#: A byte of the tail costs this much more than a byte of the head. The worker reads the tail, then pickles its
#: rows and writes them out; this process reads the head, then unpickles the tail's rows once they have all come
#: (its collector thread), then merges. The unpickling, the merge, the trace and its reports come after both parts
#: whatever the cut, so the cut balances the head's read against the tail's read and pickling: both parts end
#: together. Measured on a 303 MB transcript of real content read with `context trace`'s profile (stamps, 2 runs
#: each): at 1.0 the tail read in 0.49 s and pickled in 0.10 s against the head's 0.49 s, and its rows came
#: 0.16 s after the head was read; at 1.25 the two ended together (then 0.06 s of unpickling), and the merge began
#: 0.045 s earlier; at 1.35 and 1.45 the head ended last.
TAIL_BYTE_COST = 1.25


@dataclass
class TailPart:
    """The end of a large file, from byte `start` (a line start), read alone by `read_tail`.

    `builder` holds its rows numbered from its own first line and record; `lines` is how many lines it
    has. It is picklable, so a worker process can read it while this one reads the bytes before it.
    """

    start: int
    builder: Builder
    lines: int
    #: rows of each table (calls, tool uses, results, events) that come from the main file; the rest,
    #: if any, from the subagent files read after it
    main_rows: tuple[int, int, int, int] = (0, 0, 0, 0)
    #: whether the session's subagent files were read into it too
    with_subagents: bool = False
    #: whether its main-file part showed a transcript record (`sessionId`, a transcript-only line type)
    main_transcript: bool = False


@dataclass
class PendingTail:
    """A `TailPart` being read elsewhere: where it starts, a function that waits for it (None: it could
    not be read, so the whole file is read here), and whether it is read with `stable_text_hash`."""

    start: int
    result: Callable[[], TailPart | None]
    stable_hash: bool = False


def stable_text_hash(text: str) -> int:
    """A hash of a tool result's text that is the same in every process: the first 8 bytes of the
    BLAKE2b digest of its UTF-8 bytes (lone surrogates kept), as a signed 64-bit int (the
    `content_hash` column is Int64). For a file whose two parts are read by processes that do not share
    Python's hash seed; about three times the cost of `hash`, so it is used only then. Raises nothing."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def split_point(path: str, after_bytes: int = 0) -> int | None:
    """Where to cut `path` so that reading its head takes as long as reading its tail and its subagent files.

    Parameters
    ----------
    path
        A session transcript on disk.
    after_bytes
        Size in bytes of the subagent files the tail's reader reads after the tail (each counted as one
        head byte).

    Returns
    -------
    int or None
        The offset in bytes from the file's start (at least 4096) of the first line that starts after
        the point where head bytes equal tail bytes × `TAIL_BYTE_COST` plus `after_bytes`. None when the
        file is smaller than `SPLIT_MIN_BYTES`, is UTF-16 (read whole, decoded), cannot be read, or no line
        starts there. Raises nothing.
    """
    try:
        size = os.path.getsize(path)
        if size < SPLIT_MIN_BYTES or after_bytes >= size:
            return None
        with open(path, "rb") as fh:
            if is_utf16(fh.read(4)):
                return None  # read whole, decoded (`files.open_trace`)
            fh.seek(int((TAIL_BYTE_COST * size + after_bytes) / (1 + TAIL_BYTE_COST)))
            fh.readline()  # the rest of the line the middle falls in
            start = fh.tell()
    except OSError:
        return None
    return start if 4096 <= start < size else None  # (the head reads the file's start: its byte-order mark)


def read_tail(
    path: str,
    start: int,
    subagents: Iterable[SourceFile] = (),
    stable_hash: bool = False,
    words: bool = True,
    inputs: bool = True,
) -> TailPart | None:
    """Read `path` from byte `start` (a line start) to its end, then the session's `subagents` files, for
    `api.read_trace(..., tail=...)`. With `stable_hash`, tool results are hashed with `stable_text_hash` (a
    process that does not share this one's hash seed reads the head: a worker started afresh), and the
    head must be read with a `PendingTail(..., stable_hash=True)`. `words` and `inputs` are the reading
    profile (`builder.Builder`'s): the head must be read with the same (`read_head`).

    Returns None when the part cannot be read or shows a stream-json record (`session_id`, a
    `system/init` or `result` line): only session transcripts are read in two parts; the caller then
    reads the whole file at once. Raises nothing.
    """
    try:
        return _read_tail(path, start, subagents, stable_hash, words, inputs)
    except Exception:  # anything unexpected: the whole file is read by the caller (where it is reported)
        return None


def _read_tail(
    path: str, start: int, subagents: Iterable[SourceFile], stable_hash: bool, words: bool, inputs: bool
) -> TailPart | None:
    builder = Builder(path, path, words, inputs)
    if stable_hash:
        builder.text_hash = stable_text_hash
    with gc_paused():
        try:
            with open_trace(path) as fh:
                fh.seek(start)
                lines = feed([builder], SourceFile(path), fh, split_runs=False)
        except (TraceReadError, OSError):
            return None
        if builder.evidence.shows_stream():
            return None
        b = builder
        main_rows = (len(b.calls.rows), len(b.uses.rows), len(b.results.rows), len(b.events.rows))
        main_transcript = b.evidence.seen_transcript
        subagents = list(subagents)
        read_subagents(builder, subagents)
        stamps = builder.stamps
        stamps.ms = epoch_ms(dict.fromkeys(stamps.stamps))  # parsed here, not by the merging process
    return TailPart(start, builder, lines, main_rows, bool(subagents), main_transcript)


def _passes_across_the_cut(head: Builder, tail: Builder) -> bool:
    """Whether a call with compaction passes inside it (`calls.compaction_passes`) has lines on both sides of
    the cut: each part made its compaction events, which a merge would count twice (the whole file is read)."""
    at = head.calls.at
    return any(row[C_COMPACTION_PROMPT] and type(k := call_key(row)) is tuple and k in at for row in tail.calls.rows)


def read_head(main: str, tail: TailPart | PendingTail, words: bool = True, inputs: bool = True) -> Builder | None:
    """Read `main` up to `tail.start` with the reading profile `words`, `inputs` (`builder.Builder`'s) and
    merge the tail into it; None when the file is not a session transcript after all (stream-json: its runs
    are read from the whole file), the tail is missing, or it was read with another profile."""
    builder = Builder(main, main, words, inputs)
    # tool results hashed as the tail's reader hashes them
    if isinstance(tail, PendingTail):
        builder.text_hash = stable_text_hash if tail.stable_hash else hash
    else:
        builder.text_hash = tail.builder.text_hash
    try:
        raw = open(main, "rb", buffering=0)  # noqa: SIM115 (closed by the BufferedReader below)
    except OSError:
        return None  # the whole-file read that follows says why
    with io.BufferedReader(Head(raw, tail.start), buffer_size=1024 * 1024) as fh:
        builders = [builder]
        lines = feed(builders, SourceFile(main), fh, split_runs=True)
    if len(builders) > 1 or builder.evidence.shows_stream():
        return None  # stream-json: not waiting for the tail (its answer is dropped when it comes)
    part = tail if isinstance(tail, TailPart) else tail.result()
    if (
        part is None
        or (part.builder.words, part.builder.inputs) != (words, inputs)
        or part.builder.threads.chains_ambiguous
        or not builder.seen.uuids.isdisjoint(part.builder.seen.uuids)
        or _passes_across_the_cut(builder, part.builder)
    ):
        return None  # (records repeated across the cut: the whole read drops the later copies in order)
    if not (builder.evidence.seen_transcript or builder.has_rows() or part.main_transcript or any(part.main_rows)):
        return None  # the main file alone is no transcript: the whole read says what it is (`dialects.dialect_of`)
    builder.merge_tail(part.builder, lines, part.main_rows, part.with_subagents)
    return builder
