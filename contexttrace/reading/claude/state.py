"""The builder's state, one small class per concern, each declaring its fields next to its own `merge`.

A large transcript is read in two parts (`split`): a worker reads the tail into a builder of its own, and
`builder.Builder.merge_tail` merges each piece of state here as if one builder had read both parts in
order. A field added to a class must be merged in that class's `merge`, or named in its `NOT_MERGED` with
the reason (tests/reading/test_claude_state.py checks that every field is one or the other).

Row layouts: rows are tuples in their table's column order (`contract.py`), less the columns `builder.build`
adds (`USE_ROW`, `RESULT_ROW`); call rows live in `calls.Calls`.

State only: no I/O, nothing printed, no rule about what a record means (the builder decides; this keeps).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from contexttrace.reading.claude.content import MAX_TOKENS
from contexttrace.reading.contract import EVENT_SCHEMA, THREAD_MAIN, TOOL_RESULT_SCHEMA
from contexttrace.reading.model import LineNote
from contexttrace.reading.values import MAX_MOMENT_MS, MIN_MOMENT_MS

#: How many bad lines per file are named one by one before the rest are only counted.
MAX_LINE_NOTES = 3
#: A tool-use row as the builder holds it: the row of its call in place of its thread (set by `build`),
#: and no `input_chars` (the length of `input_json`, set by `build`).
USE_ROW = (
    "seq", "line", "tool_use_id", "message_id", "call_row", "name", "input_json", "file_path", "ts_ms",
    "agent_type", "agent_description", "agent_prompt_chars", "read_path", "cwd", "server_side",
)  # fmt: skip
#: A tool-result row as the builder holds it: `TOOL_RESULT_SCHEMA` but `cleared_seq` (set by `build`).
RESULT_ROW = tuple(c for c in TOOL_RESULT_SCHEMA if c != "cleared_seq")
_USE_ID, _RESULT_ID = USE_ROW.index("tool_use_id"), RESULT_ROW.index("tool_use_id")
_KIND, _THREAD_KIND = list(EVENT_SCHEMA).index("kind"), list(EVENT_SCHEMA).index("thread_kind")


class Seen:
    """Record uuids seen: a repeated uuid is one record, its copies dropped and counted."""

    __slots__ = ("repeated", "uuids")
    NOT_MERGED: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.uuids: set[str] = set()
        self.repeated = 0

    def merge(self, tail: Seen) -> None:
        """Add a tail's uuids and repeats (a uuid in both parts makes `split.read_head` read the whole file)."""
        self.uuids |= tail.uuids
        self.repeated += tail.repeated


class Diagnostics:
    """What was skipped, marked or doubted, and said: skipped lines (the first `MAX_LINE_NOTES` per file
    named), NUL damage, values that are not counts, stamps that may name no moment, unreadable subagent
    files."""

    __slots__ = (
        "bad_numbers",
        "bad_usage",
        "notes",
        "notes_per_file",
        "nul_lines",
        "nul_seen",
        "odd_stamps",
        "oversized",
        "skipped",
        "truncated_last",
        "warnings",
    )
    NOT_MERGED: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.skipped = 0
        self.oversized = 0  # lines above `lines.OVERSIZED_LINE_BYTES` that hold no figure
        self.truncated_last = False
        self.notes: list[LineNote] = []
        #: file -> lines skipped in it (a truncated last line not included)
        self.notes_per_file: dict[str, int] = {}
        self.nul_lines = 0  # lines that were only NUL padding
        self.nul_seen = False  # any NUL byte (no record decoded and NULs seen: a binary file)
        self.bad_usage = 0  # usage counts that were not plausible token counts, read as 0
        self.bad_numbers = 0  # other counts out of range or of the wrong type, read as unknown
        #: stamps outside the years 1000 to 2999 (`odd_stamp`) -> (file, line) of the first line writing each
        self.odd_stamps: dict[str, tuple[str, int]] = {}
        self.warnings: list[str] = []

    def skip(self, path: str, line: int, reason: str) -> None:
        """Count a skipped line of `path`, naming it when fewer than `MAX_LINE_NOTES` of the file were."""
        self.skipped += 1
        shown = self.notes_per_file.get(path, 0)
        self.notes_per_file[path] = shown + 1
        if shown < MAX_LINE_NOTES:
            self.notes.append(LineNote(path, line, reason))

    def number(self, raw: Any) -> int | None:
        """A count other than usage (tokens a boundary states, a duration in ms): the int when it fits
        0 <= n < 2**53, else None (unknown), counted when a value was written."""
        if type(raw) is int and 0 <= raw < MAX_TOKENS:
            return raw
        if raw is not None:
            self.bad_numbers += 1
        return None

    def odd_stamp(self, stamp: str, path: str, line: int) -> None:
        """Note where a stamp that does not start with 1 or 2 is first written (text, or a year outside 1000 to
        2999): `Builder.build` warns of those that are date-times naming no moment, by this line."""
        self.odd_stamps.setdefault(stamp, (path, line))

    def moment_warnings(self, ms: dict[str | None, int | None]) -> list[str]:
        """The warning of the stamps read (`ms`: the trace's, parsed by `epoch_ms`) that name no moment, naming
        the line of the first; [] when there is none."""
        lost = [where for stamp, where in self.odd_stamps.items() if stamp in ms and names_no_moment(stamp)]
        if not lost:
            return []
        path, line = lost[0]
        return [
            f"{len(lost)} timestamp(s) name no moment every time zone can show "
            "(a date outside 0001-01-02 to 9999-12-30, UTC), read as unknown; "
            f"the first at {path}:{line}"
        ]

    def count_warnings(self) -> list[str]:
        """The warnings of the counts read as 0 (usage) or unknown (other counts), when there are any."""
        out = []
        if self.bad_usage:
            out.append(
                f"{self.bad_usage} usage field(s) not a count of tokens (negative, huge or not a number), read as 0"
            )
        if self.bad_numbers:
            out.append(
                f"{self.bad_numbers} count(s) of tokens or ms out of range or not a number (negative, huge, a "
                "string), read as unknown"
            )
        return out

    def merge(self, tail: Diagnostics, main_path: str, line0: int, uncounted_usage: int) -> None:
        """Add a tail's: its main-file notes' lines continue this part's (`line0`); the first
        `MAX_LINE_NOTES` bad lines of each file stay named; `uncounted_usage` bad usage fields are those a
        whole read would not have met (`calls.Calls.merge`)."""
        self.skipped += tail.skipped
        self.oversized += tail.oversized
        self.truncated_last = self.truncated_last or tail.truncated_last  # (the head's: cut short since)
        for path, count in tail.notes_per_file.items():
            shown = self.notes_per_file.get(path, 0)
            shift = line0 if path == main_path else 0
            named = [LineNote(n.path, n.line + shift, n.reason) for n in tail.notes if n.path == path]
            self.notes.extend(named[: max(0, MAX_LINE_NOTES - shown)])
            self.notes_per_file[path] = shown + count
        self.nul_lines += tail.nul_lines
        self.nul_seen = self.nul_seen or tail.nul_seen
        self.bad_usage += tail.bad_usage - uncounted_usage
        self.bad_numbers += tail.bad_numbers
        for stamp, (path, line) in tail.odd_stamps.items():
            self.odd_stamps.setdefault(stamp, (path, line + line0 if path == main_path else line))
        self.warnings.extend(tail.warnings)


class Facts:
    """What the trace says about itself, outside its rows."""

    __slots__ = (
        "agents",
        "cli_version",
        "cwd",
        "denied_ids",
        "files",
        "inits",
        "result",
        "session_id",
        "subagents_read",
        "surface",
        "synthetic",
    )  # fmt: skip
    #: stream-json only (a tail that shows stream-json is never merged: `split.read_tail`)
    NOT_MERGED = frozenset({"surface", "result", "denied_ids", "inits"})

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.cli_version: str | None = None
        self.cwd: str | None = None
        self.surface: dict[str, Any] | None = None  # from stream-json's system/init
        self.result: dict[str, Any] | None = None  # stream-json's last result line (`dialects.run_totals`)
        self.denied_ids: set[str] = set()  # tool uses a result line lists as refused
        #: (seq, line, timestamp) of each main-thread system/init line (stream-json: one per message read on
        #: standard input when a run goes on past its first init)
        self.inits: list[tuple[int, int, str | None]] = []
        self.files: list[str] = []
        self.agents: dict[str, dict[str, Any]] = {}
        self.synthetic = 0  # synthetic assistant lines: API errors, not calls
        self.subagents_read = False  # the session's subagent files are read in (by a tail's reader)

    def merge(self, tail: Facts, with_subagents: bool) -> None:
        """Take a tail's facts where this part has none, its subagent files and agents, its synthetic lines."""
        self.session_id = self.session_id if self.session_id is not None else tail.session_id
        self.cli_version = self.cli_version if self.cli_version is not None else tail.cli_version
        self.cwd = self.cwd if self.cwd is not None else tail.cwd
        self.files.extend(tail.files[1:])  # the subagent files it read
        self.agents.update(tail.agents)
        self.synthetic += tail.synthetic
        self.subagents_read = with_subagents


class ToolUses:
    """Tool-use rows (`USE_ROW` order), deduplicated by tool_use id."""

    __slots__ = ("ids", "rows")
    NOT_MERGED: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.ids: set[str] = set()

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.rows,)  # (a pickle carries the rows; `__setstate__` rebuilds the ids from them)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        (self.rows,) = state
        self.ids = {row[_USE_ID] for row in self.rows if row[_USE_ID] is not None}

    def merge(self, tail: ToolUses, seq0: int, line0: int, main_rows: int, moved: list[int]) -> None:
        """Add a tail's tool uses not seen here: seqs after `seq0`, main-file lines after `line0`, each
        pointing at its call's row here (`moved`, from `calls.Calls.merge`)."""
        for k, use in enumerate(tail.rows):
            tid = use[2]
            if tid is not None and tid in self.ids:
                continue
            line = use[1] + line0 if k < main_rows else use[1]
            self.rows.append((use[0] + seq0, line, tid, use[3], moved[use[4]], *use[5:]))
        self.ids |= tail.ids


class ToolResults:
    """Tool-result rows (`RESULT_ROW` order), deduplicated by tool_use id, and the results a
    microcompaction cleared (their tool uses' ids)."""

    __slots__ = ("cleared", "ids", "rows")
    NOT_MERGED: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.ids: set[str] = set()
        self.cleared: dict[str, int] = {}  # tool_use_id -> seq of the microcompaction that cleared it

    def __getstate__(self) -> tuple[Any, ...]:
        return self.rows, self.cleared

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.rows, self.cleared = state
        self.ids = {row[_RESULT_ID] for row in self.rows if row[_RESULT_ID] is not None}

    def merge(self, tail: ToolResults, seq0: int, line0: int, main_rows: int, rename: dict[str, str]) -> None:
        """Add a tail's results not seen here (seqs and main-file lines shifted, threads renamed) and the
        results its microcompactions cleared."""
        for k, res in enumerate(tail.rows):
            tid = res[2]
            if tid is not None and tid in self.ids:
                continue
            line = res[1] + line0 if k < main_rows else res[1]
            self.rows.append((res[0] + seq0, line, tid, rename.get(res[3], res[3]), *res[4:]))
        self.ids |= tail.ids
        for tid, seq in tail.cleared.items():
            self.cleared.setdefault(tid, seq + seq0)


class Events:
    """Event rows (`EVENT_SCHEMA` order): compactions, prompts, errors, durations, attachments."""

    __slots__ = ("rows",)
    NOT_MERGED: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def add(
        self,
        seq: int,
        line: int,
        thread: str,
        thread_kind: str,
        kind: str,
        *,
        ts: str | None = None,
        trigger: str | None = None,
        pre_tokens: int | None = None,
        post_tokens: int | None = None,
        duration_ms: int | None = None,
        text_chars: int | None = None,
        tokens_saved: int | None = None,
        cleared_results: int | None = None,
        images: int | None = None,
        attachment_type: str | None = None,
        attachment_path: str | None = None,
        command_name: str | None = None,
        tool_use_id: str | None = None,
        report_chars: int | None = None,
    ) -> None:
        """Add an event row (`EVENT_SCHEMA` order); the fields an event kind does not state are null."""
        self.rows.append(
            (seq, line, thread, thread_kind, kind, trigger, pre_tokens, post_tokens, duration_ms, text_chars,
             ts, tokens_saved, cleared_results, images, attachment_type, attachment_path, command_name,
             tool_use_id, report_chars)
        )  # fmt: skip

    def input_prompts(self, inits: list[tuple[int, int, str | None]]) -> None:
        """The prompts of a stream-json run that went on past its first `system/init` (`inits`: each main-thread
        init's seq, line and timestamp): Claude Code reading its messages on standard input (`--input-format
        stream-json`) writes an init for each, and writes none of them as a line. Each init is then a `prompt`
        event (its text unknown), unless the run writes its prompts as lines (replayed user messages): a turn
        per message either way."""
        rows = self.rows
        if len(inits) < 2 or any(r[_KIND] == "prompt" and r[_THREAD_KIND] == THREAD_MAIN for r in rows):
            return
        for seq, line, ts in inits:
            row = dict.fromkeys(EVENT_SCHEMA)
            row.update(seq=seq, line=line, thread=THREAD_MAIN, thread_kind=THREAD_MAIN, kind="prompt", ts_ms=ts)
            rows.append(tuple(row.values()))
        rows.sort(key=itemgetter(0))  # (stable: the rows were in seq order)

    def merge(self, tail: Events, seq0: int, line0: int, main_rows: int, rename: dict[str, str]) -> None:
        """Add a tail's events: seqs and main-file lines shifted, threads renamed."""
        for k, ev in enumerate(tail.rows):
            line = ev[1] + line0 if k < main_rows else ev[1]
            self.rows.append((ev[0] + seq0, line, rename.get(ev[2], ev[2]), *ev[3:]))


class Stamps:
    """Timestamps of every user/assistant/system line (any thread), in reading order, and those parsed
    already (a tail's reader parses its own, so the merging process does not)."""

    __slots__ = ("ms", "stamps")
    NOT_MERGED: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.stamps: list[str] = []
        self.ms: dict[str | None, int | None] = {}

    def merge(self, tail: Stamps) -> None:
        """Add a tail's timestamps after this part's, and those it parsed already."""
        self.stamps.extend(tail.stamps)
        self.ms.update(tail.ms)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_ms(
    stamps: Iterable[str | None], known: dict[str | None, int | None] | None = None
) -> dict[str | None, int | None]:
    """Unix epoch ms (floored) of every ISO-8601 timestamp in `stamps` (and of None: None); None for a value
    that is not a date with a time, or one that names no moment (outside `values.is_moment`: year 0 or
    10000 in UTC). A timestamp without an offset is read as UTC. `known`: values already parsed, not parsed
    again.

    >>> epoch_ms(["2026-01-24T04:08:00.123Z", "2026-01-24T06:08:00.5+02:00", "soon"])
    {None: None, '2026-01-24T04:08:00.123Z': 1769227680123, '2026-01-24T06:08:00.5+02:00': 1769227680500, 'soon': None}
    """
    out: dict[str | None, int | None] = {None: None}
    if known:
        out.update(known)
    parse = datetime.fromisoformat
    for value in stamps:
        if value in out:
            continue
        try:
            if value is None or len(value) <= 10:  # a date without a time
                raise ValueError
            moment = parse(value)
        except ValueError:
            out[value] = None
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        since = moment - _EPOCH  # (its fields summed: half the time of `// timedelta(milliseconds=1)`, same floor)
        ms = since.days * 86_400_000 + since.seconds * 1000 + since.microseconds // 1000
        out[value] = ms if MIN_MOMENT_MS <= ms <= MAX_MOMENT_MS else None  # (`values.is_moment`, inline: per stamp)
    return out


def names_no_moment(stamp: str) -> bool:
    """Whether a stamp is a date with a time that names no moment: it parses, but falls outside
    `values.is_moment` (``0001-01-01T00:00:00+14:00`` is in year 0 in UTC). Text that is no date is not one
    (it is no timestamp, as `epoch_ms` reads it).

    >>> names_no_moment("9999-12-31T23:59:59-14:00"), names_no_moment("soon"), names_no_moment("2026-01-01T00:00Z")
    (True, False, False)
    """
    return len(stamp) > 10 and _is_date_time(stamp) and epoch_ms([stamp])[stamp] is None


def _is_date_time(stamp: str) -> bool:
    try:
        datetime.fromisoformat(stamp)
    except ValueError:
        return False
    return True


def columns(rows: list[Any], names: Iterable[str]) -> dict[str, list[Any]]:
    """Rows (sequences in `names` order) as a dict of column lists."""
    names = tuple(names)
    if not rows:
        return {n: [] for n in names}
    return dict(zip(names, map(list, zip(*rows, strict=True)), strict=True))
