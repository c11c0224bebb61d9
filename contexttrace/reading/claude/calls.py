"""Model calls: which lines are one call, which line a call keeps, and calls copied across sessions.

Rules:

* A model call is one API response, written as one `assistant` line per content block with the same
  `message.id`. Lines with the same `message.id` **and** the same input-side usage (`input_tokens`,
  `cache_creation_input_tokens`, `cache_read_input_tokens`) are one call (`requestId` is not part of
  the identity: it may be missing, and a replayed copy carries another); the same id with other input-side
  usage is another call, and the id is reported as not unique (a gateway may reuse one id for every
  response). A line without a `message.id` is a call of its own.
* The call keeps the values of its line with the highest `output_tokens` (streamed counts grow), the last
  such line on a tie (`KEPT_LINE_COLUMNS`).
* A call written both on the main thread and in a sidechain (a `/btw` replay) is a main-thread call;
  its text and thinking are counted from the lines of its best-ranked thread only (so a replayed copy does
  not count them twice).
* A call copied into several session files (`--resume`, `--continue`, forks) belongs to the session
  that wrote it first (`reading.identity`: `inherited_calls`, `drop_inherited_calls`).

Pure functions and one state class over rows: no I/O, no Polars, nothing printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec import Raw

from contexttrace.reading.claude.content import MAX_TOKENS
from contexttrace.reading.claude.records import NULL_RAW, Message, MessageLine, Usage, raw_value
from contexttrace.reading.contract import CALL_SCHEMA, THREAD_COMPACTION, THREAD_MAIN, THREAD_SUBAGENT

#: Columns filled in by `rows_of` when the tables are built (from the tool-use rows), not while reading.
BUILT_COLUMNS = ("tool_input_chars",)
#: The usage of the compaction passes inside a response (`compaction_passes`), in `CALL_SCHEMA` order.
COMPACTION_COLUMNS = (
    "compaction_input_tokens", "compaction_cache_write_tokens", "compaction_cache_write_1h_tokens",
    "compaction_cache_read_tokens", "compaction_output_tokens", "compaction_prompt_tokens",
)  # fmt: skip
#: Columns a call takes from its kept line (the one with the highest output_tokens).
KEPT_LINE_COLUMNS = (
    "request_id", "model", "output_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "cache_split_known",
    "web_search_requests", "stop_reason", "speed", *COMPACTION_COLUMNS,
)  # fmt: skip
#: A call row's columns, in the order a row (a list) holds them: `CALL_SCHEMA`'s, less `BUILT_COLUMNS`, with
#: `KEPT_LINE_COLUMNS` last (a line the call keeps replaces them in one slice: `Calls.keep`).
CALL_ROW = (
    *(c for c in CALL_SCHEMA if c not in BUILT_COLUMNS and c not in KEPT_LINE_COLUMNS),
    *KEPT_LINE_COLUMNS,
)
#: Positions of columns in a call row.
_POS = {name: i for i, name in enumerate(CALL_ROW)}
C_SEQ, C_LINE, C_MID, C_THREAD, C_KIND, C_OUT = (
    _POS[n] for n in ("seq", "line", "message_id", "thread", "thread_kind", "output_tokens")
)
C_INPUT, C_CACHE_WRITE, C_CACHE_READ = (_POS[n] for n in ("input_tokens", "cache_write_tokens", "cache_read_tokens"))
C_PROMPT = _POS["prompt_tokens"]
C_END_TS, C_PREV_TS, C_LINES = (_POS[n] for n in ("end_ts_ms", "prev_ts_ms", "n_lines"))
C_THINKING, C_TEXT, C_HAS_THINKING = (_POS[n] for n in ("thinking_chars", "text_chars", "has_thinking"))
C_KEPT = tuple(_POS[n] for n in KEPT_LINE_COLUMNS)
#: Where the kept line's columns start (they end the row).
C_KEPT_START = C_KEPT[0]
C_COMPACTION_PROMPT = _POS["compaction_prompt_tokens"]
#: Where a call row holds its path-like words.
C_WORDS = _POS["path_words"]
#: The input side of a placeholder line (`Calls.find`): all zero.
_NO_INPUT = (0, 0, 0)
_THREAD_RANK = {THREAD_MAIN: 0, THREAD_SUBAGENT: 1, THREAD_COMPACTION: 2}


def count_tokens(raw: Any) -> tuple[int, int]:
    """A usage count: (the value when it is a plausible token count, else 0; 1 when a value was written
    that is not one, else 0). Plausible: an int with 0 <= n < 2**53."""
    if type(raw) is int and 0 <= raw < MAX_TOKENS:
        return raw, 0
    return 0, raw is not None


def input_side(usage: Usage) -> tuple[int, int, int, int, int]:
    """(input, cache write, cache read, output tokens, bad fields) of a usage object.

    The four counts are tokens, exact as `message.usage` writes them (`input_tokens`,
    `cache_creation_input_tokens`, `cache_read_input_tokens`, `output_tokens`); a value that is not a
    plausible count (`count_tokens`) is read as 0 and adds 1 to bad fields. Raises nothing.
    """
    inp = usage.input_tokens
    cw = usage.cache_creation_input_tokens
    cr = usage.cache_read_input_tokens
    out = usage.output_tokens
    # The common case inline: four plausible ints.
    if (
        type(inp) is int
        and type(cw) is int
        and type(cr) is int
        and type(out) is int
        and 0 <= inp < MAX_TOKENS
        and 0 <= cw < MAX_TOKENS
        and 0 <= cr < MAX_TOKENS
        and 0 <= out < MAX_TOKENS
    ):
        return inp, cw, cr, out, 0
    (inp, b1), (cw, b2), (cr, b3), (out, b4) = map(count_tokens, (inp, cw, cr, out))
    return inp, cw, cr, out, b1 + b2 + b3 + b4


def compaction_passes(usage: Usage) -> tuple[tuple[int, ...], list[int], int]:
    """The compaction passes inside a response: `usage.iterations[]` entries whose `type` is "compaction".

    With the API's threshold compaction one response holds two sampling passes: a summary of the full
    history, then the answer over the summary. Top-level `usage` covers the answer alone; each pass is only
    in `iterations` (entries of type "message" are the answer's own, already in the top-level usage).

    Returns
    -------
    (tuple of int, list of int, int)
        The values of `COMPACTION_COLUMNS` (tokens, exact sums over the passes: input, cache write, of which
        1-hour, cache read, output; and the largest pass's prompt), each pass's prompt (input + cache write
        + cache read, in order: the context it summarised), and how many of their counts are not plausible
        token counts (read as 0, `count_tokens`). All 0 and no pass when `iterations` holds none.
    """
    raw = usage.iterations
    # none written (the field's default, by identity), `"iterations":[]`, or only the answer's passes
    if raw is NULL_RAW or (type(raw) is Raw and b'"compaction"' not in bytes(raw)):
        return (0, 0, 0, 0, 0, 0), [], 0
    entries = raw_value(raw)
    if type(entries) is not list:
        return (0, 0, 0, 0, 0, 0), [], 0
    sums = [0, 0, 0, 0, 0]
    prompts: list[int] = []
    bad = 0
    for entry in entries:
        if type(entry) is not dict or entry.get("type") != "compaction":
            continue
        split = entry.get("cache_creation")
        one_hour = split.get("ephemeral_1h_input_tokens") if type(split) is dict else None
        counts = [
            count_tokens(entry.get(k))
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
        ]
        (inp, b1), (cw, b2), (cr, b3), (out, b4) = counts
        c1, b5 = count_tokens(one_hour)
        bad += b1 + b2 + b3 + b4 + b5
        for i, n in enumerate((inp, cw, min(c1, cw), cr, out)):
            sums[i] += n
        prompts.append(inp + cw + cr)
    return (*sums, max(prompts, default=0)), prompts, bad


def kept_line(
    rec: MessageLine, msg: Message, usage: Usage, model: Any, out: int
) -> tuple[tuple[Any, ...], int, Sequence[int]]:
    """The values of `KEPT_LINE_COLUMNS` a call takes from this line, how many usage fields of it are
    not plausible counts (read as 0), and the prompts of the compaction passes it states (`compaction_passes`)."""
    split = usage.cache_creation
    bad = 0
    if split is not None:
        c5, c1 = split.ephemeral_5m_input_tokens, split.ephemeral_1h_input_tokens
        if not (type(c5) is int and type(c1) is int and 0 <= c5 | c1 < MAX_TOKENS):  # (both in range when their OR is)
            (c5, b5), (c1, b1) = count_tokens(c5), count_tokens(c1)
            bad = b5 + b1
        known = True
    else:
        c5, c1, known = 0, 0, False  # no split written: `usage` counts the write as 5-minute, marked assumed
    server = usage.server_tool_use
    web = 0
    if server is not None:
        web = server.web_search_requests
        if not (type(web) is int and 0 <= web < MAX_TOKENS):  # (`count_tokens`, its common case inline)
            web, b = count_tokens(web)
            bad += b
    # (a string field is a string or None: `records`; an empty request id is none)
    req = rec.requestId or None
    speed = usage.speed
    stop = msg.stop_reason
    if usage.iterations is NULL_RAW:  # no pass written (the common case, `compaction_passes`' first test)
        return (req, model, out, c5, c1, known, web, stop, speed, 0, 0, 0, 0, 0, 0), bad, ()
    compaction, prompts, passes_bad = compaction_passes(usage)
    return (req, model, out, c5, c1, known, web, stop, speed, *compaction), bad + passes_bad, prompts


#: What a placeholder line of a call with real lines adds to it (`Calls.another_line`): nothing.
NO_CONTENT = (0, 0, False, None)


def call_key(row: list[Any]) -> Any:
    """A call row's identity: message id and input-side usage, or the seq of a line without a message id."""
    mid = row[C_MID]
    return (mid, row[C_INPUT], row[C_CACHE_WRITE], row[C_CACHE_READ]) if mid is not None else row[C_SEQ]


class Calls:
    """The call rows of one trace (lists in `CALL_ROW` order: the kept line's columns last; merged lines update
    them in place)."""

    __slots__ = ("at", "clashing_ids", "kept_bad", "key_of_id", "last_of_id", "placeholder_of_id", "rows")

    def __init__(self) -> None:
        self.rows: list[list[Any]] = []
        self.at: dict[Any, int] = {}  # call identity key -> its row
        self.key_of_id: dict[str, Any] = {}  # message.id -> the first identity key seen with it (placeholders aside)
        self.last_of_id: dict[str, int] = {}  # message.id -> the last row made with it
        self.placeholder_of_id: dict[str, int] = {}  # message.id -> a row written by placeholder lines only
        self.clashing_ids: set[str] = set()  # message ids seen with different input-side usage
        # Usage fields found bad while taking a call's kept line: row -> [(output_tokens of the line, bad
        # fields)], so a merge across a cut can leave out those a whole read would not have counted.
        self.kept_bad: dict[int, list[tuple[int, int]]] = {}

    def find(self, key: Any, mid: str | None) -> int | None:
        """The row of the call `key`, or None (a new call: its id is checked against earlier keys).

        A line whose input-side usage is all zero is a placeholder of its call (a proxy writes one before the
        real line, with the same id; no response reads an empty prompt): it is the last call made with its
        id, or a new call when there is none. The first real line of a call made by placeholders only gives
        it its identity: its input side, and its text and thinking in place of the placeholders'.
        """
        at = self.at.get(key)
        if at is not None or mid is None:
            return at
        if key[1:] == _NO_INPUT:
            return self.last_of_id.get(mid)
        at = self.placeholder_of_id.pop(mid, None)
        if at is not None:
            row = self.rows[at]
            row[C_INPUT], row[C_CACHE_WRITE], row[C_CACHE_READ] = key[1:]
            row[C_PROMPT] = key[1] + key[2] + key[3]
            row[C_THINKING], row[C_TEXT], row[C_HAS_THINKING], row[C_WORDS] = 0, 0, False, None
            self.at[key] = at
        if self.key_of_id.setdefault(mid, key) != key:
            self.clashing_ids.add(mid)  # the same id with other input-side usage
        return at

    def is_placeholder(self, at: int) -> bool:
        """Whether call `at` was written by placeholder lines only (its input side all zero)."""
        row = self.rows[at]
        return not (row[C_INPUT] or row[C_CACHE_WRITE] or row[C_CACHE_READ])

    def add(self, key: Any, row: list[Any], bad: int) -> int:
        """A new call's row (`bad`: bad usage fields of its kept line); returns its index."""
        at = self.at[key] = len(self.rows)
        self.rows.append(row)
        self._index(at, row)
        if bad:
            self.kept_bad.setdefault(at, []).append((row[C_OUT], bad))
        return at

    def _index(self, at: int, row: list[Any]) -> None:
        mid = row[C_MID]
        if mid is not None:
            self.last_of_id[mid] = at
            if self.is_placeholder(at):
                self.placeholder_of_id[mid] = at

    def another_line(
        self, at: int, thread: str, kind: str, ts: Any, out: int, content: tuple[int, int, bool, str | None]
    ) -> bool:
        """Count another line of call `at`: its timestamp ends the call, the best-ranked thread wins,
        its text, thinking and path-like words are added (or replace those of a worse-ranked copy). Returns
        whether the line is kept (its output_tokens is the highest so far, the later on a tie): the caller then takes
        its values with `keep`."""
        row = self.rows[at]
        row[C_LINES] += 1
        if ts is not None:
            row[C_END_TS] = ts
        rank, old = _THREAD_RANK[kind], _THREAD_RANK[row[C_KIND]]
        if rank < old:
            row[C_THREAD] = thread
            row[C_KIND] = kind
            row[C_THINKING], row[C_TEXT], row[C_HAS_THINKING], row[C_WORDS] = content
        elif rank == old:
            row[C_THINKING] += content[0]
            row[C_TEXT] += content[1]
            row[C_HAS_THINKING] = row[C_HAS_THINKING] or content[2]
            if content[3] is not None:
                row[C_WORDS] = content[3] if row[C_WORDS] is None else row[C_WORDS] + " " + content[3]
        return out >= row[C_OUT]

    def keep(self, at: int, values: tuple[Any, ...], bad: int) -> None:
        """Take a line's `KEPT_LINE_COLUMNS` values for call `at`."""
        row = self.rows[at]
        row[C_KEPT_START:] = values  # (`KEPT_LINE_COLUMNS`, in order, end the row)
        if bad:
            self.kept_bad.setdefault(at, []).append((row[C_OUT], bad))

    # -- a tail read elsewhere -------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """What a pickle carries: the rows as columns (a third of the time to load), without the indexes
        that `__setstate__` rebuilds from them."""
        return {
            "columns": [list(column) for column in zip(*self.rows, strict=True)],
            "clashing_ids": self.clashing_ids,
            "kept_bad": self.kept_bad,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.rows = [list(row) for row in zip(*state["columns"], strict=True)]
        self.clashing_ids = state["clashing_ids"]
        self.kept_bad = state["kept_bad"]
        self.at = {call_key(row): at for at, row in enumerate(self.rows)}
        self.key_of_id = {}
        self.last_of_id = {}
        self.placeholder_of_id = {}
        for at, row in enumerate(self.rows):
            self._index(at, row)
            if row[C_MID] is not None and not self.is_placeholder(at):
                self.key_of_id.setdefault(row[C_MID], call_key(row))  # the first key seen with the id

    def merge(
        self, tail: Calls, seq0: int, line0: int, main_rows: int, rename: dict[str, str], prev_ts: Any
    ) -> tuple[list[int], int]:
        """Add a tail's calls as if read after this part's, in order.

        Rows from the main file (the first `main_rows`) continue this part's line numbers (`line0`); seqs
        continue `seq0`; a call without an earlier timestamped line in the tail takes `prev_ts`. A call
        whose lines straddle the cut is one call: lines counted, the kept line the later on a tie, the main
        thread winning, and usage fields the tail found bad on a line a whole read would not have kept are
        not counted. Returns (this part's row of each tail row, bad usage fields not to count).
        """
        moved: list[int] = []
        uncounted = 0
        for at, row in enumerate(tail.rows):
            key = call_key(row)
            key = key if type(key) is tuple else key + seq0  # a call without a message id is keyed by its seq
            thread = rename.get(row[C_THREAD], row[C_THREAD])
            mine = self.find(key, row[C_MID])
            if mine is None:
                new = list(row)
                new[C_SEQ] += seq0
                new[C_THREAD] = thread
                if at < main_rows:  # from the main file
                    new[C_LINE] += line0
                    if new[C_PREV_TS] is None:  # no timestamped line before it in the tail: the head's last
                        new[C_PREV_TS] = prev_ts
                mine = self.at[key] = len(self.rows)
                self.rows.append(new)
                self._index(mine, new)
                if at in tail.kept_bad:
                    self.kept_bad[mine] = tail.kept_bad[at]
            else:
                old = self.rows[mine]
                old_out = old[C_OUT]
                placeholder = tail.is_placeholder(at) and not self.is_placeholder(mine)  # (its text is the call's)
                self.another_line(
                    mine,
                    thread,
                    row[C_KIND],
                    row[C_END_TS],
                    row[C_OUT],
                    NO_CONTENT if placeholder else (row[C_THINKING], row[C_TEXT], row[C_HAS_THINKING], row[C_WORDS]),
                )
                old[C_LINES] += row[C_LINES] - 1  # (`another_line` counted one)
                if row[C_OUT] >= old_out:
                    for col in C_KEPT:
                        old[col] = row[col]
                # The tail took a kept line whenever output_tokens reached its own highest so far; reading
                # in order would also have needed this part's highest.
                for out, bad in tail.kept_bad.get(at, ()):
                    if out < old_out:
                        uncounted += bad
                    else:
                        self.kept_bad.setdefault(mine, []).append((out, bad))
            moved.append(mine)
        self.clashing_ids |= tail.clashing_ids
        return moved, uncounted
