"""Lines → records → builders: reading one file into a trace's builder (or one builder per stream-json run).

`feed` takes the lines worth decoding (`lines.Lines`), decodes each (`records.decode`: a message line
once, a line of another type again as a whole `Line`), skips and counts what is not a record (not JSON,
not an object, a truncated last line, a repeated uuid), starts a new builder at each stream-json run
(`dialects.starts_run`), and hands each record to its builder behind a firewall: a record that raises
while it is routed costs its line only, named with the exception.
`finish` names the runs, decides each one's format and reads a transcript's subagent files after it.

It never prints; a line that cannot be read is counted and named, never raised, and only a file that cannot
be read at all (or holds no record of either format) raises.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import IO, Any

import orjson

from contexttrace.errors import TraceReadError
from contexttrace.reading.claude.builder import Builder
from contexttrace.reading.claude.dialects import dialect_of, starts_run
from contexttrace.reading.claude.lines import Lines
from contexttrace.reading.claude.records import (
    DECODE_FAILED,
    FULL_DECODE,
    NOT_JSON,
    TOO_DEEP,
    TYPED_DECODE,
    Line,
    MessageLine,
    decode_lenient,
)
from contexttrace.reading.contract import FORMAT_TRANSCRIPT
from contexttrace.reading.files import open_trace
from contexttrace.reading.model import SourceFile, Trace
from contexttrace.reading.urls import is_url, read_meta

#: The note of a line nested deeper than the standard library decodes (`records.TOO_DEEP`).
TOO_DEEP_NOTE = "JSON nested deeper than the reader reads (about 1,000 levels)"


def feed(builders: list[Builder], src: SourceFile, fh: IO[bytes], split_runs: bool) -> int:
    """Read one file into the last builder of `builders`, starting a new one at each run when asked.

    With `split_runs` (the file a trace is named by), a `system/init` line after a run's init or calls
    starts a new run when `dialects.starts_run` says so (a stream-json run so far, another session); non-JSON
    lines after a `result` line are counted in the run that follows them.
    Returns the number of lines read.

    Raises
    ------
    TraceReadError
        The file could not be read to its end.
    """
    cur = builders[-1]
    cur.facts.files.append(src.path)
    cur.prev_ts = None
    path = src.path
    lines = Lines(fh, path, cur.diag)
    after_result = False
    pending_bad: list[tuple[int, str]] = []  # bad lines after a result: counted in the next run
    typed, full, failed = TYPED_DECODE, FULL_DECODE, DECODE_FAILED
    seen, uuids = cur.seen, cur.seen.uuids  # (the builder's, while `cur` is the same)
    for raw in lines:
        try:  # `records.decode`, inlined: a message line, else the line again as any type; else the lenient path
            rec = typed(raw)
            kind = rec.type
            if kind != "assistant" and kind != "user":
                rec = full(raw)
                if type(kind) is not str:
                    kind = None  # a `type` that is not a string (a list, say) is an unknown line type
        except failed:
            rec = decode_lenient(raw)
            if type(rec) is not MessageLine and type(rec) is not Line:  # (what the typed decoders give, always)
                if lines.retry(raw):
                    continue  # damage the lines' rules repair: what the line holds is yielded next
                if rec is not NOT_JSON and rec is not TOO_DEEP:
                    cur.diag.skip(path, lines.number, f"not a JSON object ({type(rec).__name__})")
                elif not raw.endswith(b"\n"):
                    cur.diag.truncated_last = True  # a file still being written: one quiet note
                    cur.diag.skipped += 1
                else:
                    reason = "not JSON" if rec is NOT_JSON else TOO_DEEP_NOTE
                    if after_result:
                        pending_bad.append((lines.number, reason))
                    else:
                        cur.diag.skip(path, lines.number, reason)
                continue
            kind = rec.type
            if type(kind) is not str:
                kind = None
        uid = rec.uuid
        if uid:  # (a string or None: `records`)
            if uid in uuids:  # a record written again (the same uuid): one record, the copy counted
                seen.repeated += 1
                continue
            uuids.add(uid)
        if (
            split_runs
            and kind == "system"
            and starts_run(rec, kind, cur.evidence.has_init or bool(cur.calls.rows), cur.evidence, cur.facts.session_id)
        ):
            cur.evidence.count_skipped(lines.take_skipped())
            cur = Builder(path, path, cur.words, cur.inputs)
            cur.facts.files.append(path)
            builders.append(cur)
            lines.diag = cur.diag
            seen, uuids = cur.seen, cur.seen.uuids
        if pending_bad:
            for n, reason in pending_bad:
                cur.diag.skip(path, n, reason)
            pending_bad.clear()
        after_result = kind == "result"
        try:
            cur.add(rec, kind, lines.number, src)
        except Exception as exc:  # the line firewall: a value no rule expected costs this line only
            cur.diag.skip(path, lines.number, f"not read ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})")
    for n, reason in pending_bad:
        cur.diag.skip(path, n, reason)
    cur.evidence.count_skipped(lines.take_skipped())
    return lines.number


def finish(main: str, builders: list[Builder], subagents: Iterable[SourceFile]) -> list[Trace]:
    """The traces of a main file read into `builders`: runs named, a transcript's subagent files read.

    Raises what `dialects.dialect_of` raises for a file of no known format.
    """
    runs = [b for b in builders if b.evidence.records or b.diag.skipped] or builders[:1]
    subagents = tuple(subagents)
    if len(runs) == 1 and subagents and not runs[0].evidence.records:
        # A session file with no record left (cut short, damaged): its intact subagent files still count.
        read_subagents(runs[0], subagents)
        subagents = ()
    formats = [dialect_of(b.evidence, b.has_rows(), b.diag.skipped, b.diag.nul_seen, main) for b in runs]
    if len(runs) > 1:
        for i, b in enumerate(runs, 1):
            b.name = f"{main}#{i}"
    elif formats[0] == FORMAT_TRANSCRIPT:
        read_subagents(runs[0], subagents)
    return [b.build(f) for b, f in zip(runs, formats, strict=True)]


def read_subagents(builder: Builder, subagents: Iterable[SourceFile]) -> None:
    """Read a session's subagent files into its builder, after its main file, in the order given.

    Each file's rows take its `SourceFile.thread_kind` and agent id; its `agent-<id>.meta.json` is read
    into `Facts.agents`. A file that cannot be read is a warning naming it, never an error.
    """
    for sub in subagents:
        try:
            with open_trace(sub.path) as sub_fh:
                feed([builder], sub, sub_fh, split_runs=False)
        except TraceReadError as exc:
            builder.diag.warnings.append(f"{sub.path}: {exc.reason}")
            continue
        if sub.agent_id is not None:
            meta = agent_meta(sub.path)
            builder.facts.agents[sub.agent_id] = {"file": sub.path, "kind": sub.thread_kind, **(meta or {})}


def agent_meta(path: str) -> dict[str, Any] | None:
    """The `agent-<id>.meta.json` beside a subagent file (`agentType`, `description`, ...) as a dict; None
    when the file has no `.jsonl` name, the meta file is missing, unreadable or not a JSON object. Raises
    nothing."""
    meta_path = path[: -len(".jsonl")] + ".meta.json" if path.endswith(".jsonl") else None
    if meta_path is not None and is_url(meta_path):  # a subagent file behind an fsspec URL
        return read_meta(meta_path)
    if meta_path is None or not os.path.isfile(meta_path):
        return None
    try:
        with open(meta_path, "rb") as fh:
            loaded = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        return None
    return loaded if isinstance(loaded, dict) else None
