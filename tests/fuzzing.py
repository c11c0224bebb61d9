"""Mutations of the bundled real traces, shared by the fuzz properties (`tests/test_fuzz.py`) and long campaigns.

A mutation damages one file of one sample (`samples/*.jsonl`, or any file of a session folder under `samples/`,
its subagent files included) the ways real captures get damaged (docs/cases.md "Fuzz finds"): cut at any byte;
one line decoded with `json`, one value changed (a key deleted at any depth, a value swapped to another JSON
type, a huge or non-finite number, a lone surrogate inside a string, 990-deep lists), and the line written back
with `json.dumps` (compact, as Claude Code writes; `ensure_ascii` either way, so a lone surrogate is written as
an escape or as its raw, invalid-UTF-8 bytes); or NUL bytes inside a line, as a line, or as a tail block. A
neutral edit (UTF-8 BOM, CRLF line ends, blank lines, no final newline) changes no figure.

Choices are made through a `Chooser`: hypothesis' `draw` in the tests (`mutations()`, `neutral_edits()`), a
seeded `random.Random` in a campaign (`RandomChooser`), so both try the same kinds of damage. Nothing here
asserts: the `*_problems` functions return what is wrong, and exceptions from the code under test propagate.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import random
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

T = TypeVar("T")

#: The line-level mutation kinds (one decoded line changed, or raw bytes of one line), then the file-level ones.
LINE_KINDS = ("delete-key", "swap-type", "huge-number", "surrogate", "deep-nesting", "nul-in-line", "bad-moment")
FILE_KINDS = ("truncate", "nul-line", "nul-tail")
KINDS = LINE_KINDS + FILE_KINDS
#: Slow kinds a campaign may add (not drawn by the properties): a string grown past the reader's 8 MB line limit.
SLOW_KINDS = ("huge-string",)

#: Keys the reader and the reports read: a mutation aims at one of them half of the time (the rest of a
#: line, mostly text, is aimed at through "any node").
KEYS_READ = frozenset(
    """type subtype message id model role usage input_tokens output_tokens cache_creation_input_tokens
    cache_read_input_tokens cache_creation ephemeral_5m_input_tokens ephemeral_1h_input_tokens service_tier
    speed server_tool_use content tool_use_id is_error name input text thinking source data media_type
    timestamp sessionId session_id uuid parentUuid logicalParentUuid isSidechain agentId parent_tool_use_id
    requestId stop_reason compactMetadata microcompactMetadata preTokens postTokens trigger isMeta
    isCompactSummary isApiErrorMessage toolUseResult totalDurationMs totalTokens totalToolUseCount status
    modelUsage inputTokens outputTokens cacheReadInputTokens cacheCreationInputTokens costUSD total_cost_usd
    duration_ms duration_api_ms num_turns result version cwd tools mcp_servers permissionMode apiKeySource
    slash_commands agents skills plugins output_style claude_code_version origin kind durationMs toolDenialKind
    subagent_type description prompt file_path command""".split()  # noqa: SIM905 (a word list reads better than 85 lines)
)

#: Values a "huge-number" mutation writes: beyond int64 and uint64 on both sides, negative counts, and numbers
#: JSON can spell but no float holds (`1e999`) or that only Python's json writes (NaN, Infinity).
HUGE_NUMBERS = (
    "9223372036854775808",  # 2**63
    "9223372036854775809",
    "18446744073709551616",  # 2**64
    "18446744073709551617",
    "340282366920938463463374607431768211456",  # 2**128
    "-1",
    "-9223372036854775809",  # -(2**63) - 1
    "-18446744073709551616",
    "1e999",
    "-1e999",
    "1.5e300",
    "NaN",
    "Infinity",
)
SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff", "\ud83d")
#: Keys whose value is a moment or a duration: a "bad-moment" mutation aims at one (a line with none gets a
#: `timestamp`).
MOMENT_KEYS = frozenset({"timestamp", "durationMs", "totalDurationMs", "duration_ms", "duration_api_ms"})
#: Stamps a "bad-moment" mutation writes: dates a parser reads that name no moment `datetime` can hold in UTC
#: (year 0 or 10000 once the offset is applied), the edges just inside, and dates that are no date.
BAD_MOMENTS = (
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T00:00:00.000+23:59",
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.999999-23:59",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999Z",
    "0000-01-01T00:00:00Z",
    "10000-01-01T00:00:00Z",
    "2026-13-45T99:99:99Z",
    "1970-01-01T00:00:00Z",
    "2026-01-01",
)
#: Durations (ms) a "bad-moment" mutation writes: counts a reader takes (below 2**53) that no run lasts, up to past
#: year 9999 from the epoch, and 0.
BAD_DURATIONS = (2**53 - 1, 253_402_300_800_000, 10**15, 0)
DEEP_LEVELS = (990, 990, 990, 300, 256)
NUL_RUNS = (1, 2, 64, 1000, 5000)
BLANKS = (b"", b" ", b"\t", b"\r", b"  \t ")

_RAW = "@@contexttrace-fuzz-raw@@"  # stands in for raw JSON text (deep lists, 1e999) until the line is dumped
_NOT_JSON = object()


class Chooser(Protocol):
    """Where a mutation's choices come from."""

    def integer(self, lo: int, hi: int) -> int: ...

    def choice(self, options: Sequence[T]) -> T: ...


class DrawChooser:
    """Choices drawn by hypothesis (shrinkable; shown in a failing example's draws)."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return int(self._draw(st.integers(lo, hi)))

    def choice(self, options: Sequence[T]) -> T:
        return self._draw(st.sampled_from(options))  # type: ignore[no-any-return]


class RandomChooser:
    """Choices from a seeded `random.Random` (a campaign: thousands of mutations a minute)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi)

    def choice(self, options: Sequence[T]) -> T:
        return options[self._rng.randrange(len(options))]


# -- the samples --------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class SampleFile:
    """One trace file of a bundled sample: `sample` names a file or a session folder under samples/, `rel` is
    the file's path inside that folder ("" for a single-file sample)."""

    sample: str
    rel: str = ""

    @property
    def source(self) -> Path:
        return SAMPLES / self.sample / self.rel if self.rel else SAMPLES / self.sample

    def __str__(self) -> str:
        return f"{self.sample}/{self.rel}" if self.rel else self.sample


@functools.cache
def sample_names() -> tuple[str, ...]:
    """The bundled samples: the `*.jsonl` files, then the session folders, each sorted by name."""
    files = sorted(p.name for p in SAMPLES.glob("*.jsonl"))
    folders = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())
    return tuple(files + folders)


@functools.cache
def sample_files(meta: bool = False) -> tuple[SampleFile, ...]:
    """Every trace file of every sample (subagent files included), in a stable order; with `meta`, the
    subagents' `.meta.json` files too."""
    out = []
    for name in sample_names():
        path = SAMPLES / name
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if is_trace_file(p.name) or (meta and p.name.endswith(".json")))
            out.extend(SampleFile(name, p.relative_to(path).as_posix()) for p in found)
        else:
            out.append(SampleFile(name))
    return tuple(out)


def is_trace_file(name: str) -> bool:
    """A file a reader reads: a `.jsonl` file, or a Gemini CLI saved session (`session-*.json`, a document)."""
    return name.endswith(".jsonl") or is_document(name)


def is_document(name: str) -> bool:
    """A trace written as one JSON document (Gemini CLI's `session-*.json`), not one record per line: any
    damage may cost the whole file (a bad file costs that file), so it is fuzzed as one record."""
    return name.startswith("session-") and name.endswith(".json")


@functools.cache
def file_bytes(sf: SampleFile) -> bytes:
    return sf.source.read_bytes()


def split_lines(data: bytes) -> list[bytes]:
    """Lines as the reader sees them: split after each b"\\n" only (the last may lack one)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@functools.cache
def file_lines(sf: SampleFile) -> tuple[bytes, ...]:
    if is_document(sf.source.name):
        return (file_bytes(sf),)  # one record: the whole document
    return tuple(split_lines(file_bytes(sf)))


def _decode(line: bytes) -> Any:
    try:
        return json.loads(line.decode("utf-8", errors="surrogatepass"))
    except (ValueError, RecursionError):
        return _NOT_JSON


@functools.cache
def file_records(sf: SampleFile) -> tuple[Any, ...]:
    """Each line decoded with the stdlib (`_NOT_JSON` where it is not JSON)."""
    return tuple(_decode(line) for line in file_lines(sf))


def carried(record: Any) -> int:
    """An upper bound on the model calls one line carries: 1 for a Claude assistant line with a message or a
    Codex `token_count` event with usage, the calls of a whole Gemini session document, else 0.

    Conservative: a call written over several lines (CASES B01) is counted on each of them, and an assistant
    line without `message.id` (B03) counts too.
    """
    if not isinstance(record, dict):
        return 0
    if record.get("type") == "assistant" and isinstance(record.get("message"), dict):
        return 1
    payload = record.get("payload")
    if record.get("type") == "event_msg" and isinstance(payload, dict) and payload.get("type") == "token_count":
        return 1
    messages = record.get("messages")
    if isinstance(messages, list):
        return sum(1 for m in messages if isinstance(m, dict) and m.get("type") == "gemini" and m.get("tokens"))
    return 0


@functools.cache
def line_groups(sf: SampleFile) -> dict[str, tuple[int, ...]]:
    """Line indexes (0-based) by the line's top-level type (assistant, user, system, result, other), and
    `json`: every line that decodes."""
    groups: dict[str, list[int]] = {}
    for i, rec in enumerate(file_records(sf)):
        if rec is _NOT_JSON:
            continue
        kind = rec.get("type") if isinstance(rec, dict) else None
        key = kind if kind in ("assistant", "user", "system", "result") else "other"
        groups.setdefault(key, []).append(i)
        groups.setdefault("json", []).append(i)
    return {k: tuple(v) for k, v in sorted(groups.items())}


def _paths(value: Any, limit: int = 20_000) -> list[tuple[Any, ...]]:
    """Every node of a decoded JSON value (the root is `()`), depth first, at most `limit`."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack and len(out) < limit:
        path, node = stack.pop()
        out.append(path)
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))
    return out


@functools.lru_cache(maxsize=4096)
def node_paths(sf: SampleFile, index: int) -> tuple[tuple[tuple[Any, ...], ...], tuple[tuple[Any, ...], ...]]:
    """(every node, the nodes under a key the reader reads) of one line."""
    every = _paths(file_records(sf)[index])
    read = tuple(p for p in every if p and isinstance(p[-1], str) and p[-1] in KEYS_READ)
    return tuple(every), read


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "list" if isinstance(value, list) else "object"


def _as_type(value: Any, new: str, variant: int) -> Any:
    """`value` turned into another JSON type (`variant` picks among a few natural ways)."""
    if new == "string":
        options: list[Any] = ["", str(value) if not isinstance(value, dict | list) else "x", "12"]
    elif new == "number":
        options = [0, 1, -1, 1.5, 123456789]
    elif new == "list":
        options = [[], [value], [1, "a"]]
    elif new == "object":
        options = [{}, {"value": value}, {"type": "text"}]
    elif new == "bool":
        options = [True, False, True]
    else:
        options = [None]
    return options[variant % len(options)]


# -- mutations ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """One damaged file of one sample.

    `carried` bounds the model calls the damage may cost: the touched line's (`carried`), or for a cut the
    calls of every line not kept whole. `line` is 1-based (the cut line for a truncation).
    """

    target: SampleFile
    kind: str
    line: int | None
    detail: str
    carried: int
    data: bytes = field(repr=False)
    path_key: str = ""  # a line mutation's last key ("[]" for a list item, "<root>" for the line itself)

    def __str__(self) -> str:
        at = f" line {self.line}" if self.line is not None else ""
        return f"{self.kind} in {self.target}{at}: {self.detail} (carried ≤ {self.carried} call(s))"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # hypothesis prints this, not the bytes
        p.text(f"<{self}>")


def _dump(record: Any, ensure_ascii: bool, raw: str | None) -> bytes:
    text = json.dumps(record, ensure_ascii=ensure_ascii, separators=(",", ":"))
    if raw is not None:
        text = text.replace(json.dumps(_RAW), raw, 1)
    return text.encode("utf-8", errors="surrogatepass")  # a raw lone surrogate: bytes that are not UTF-8


def _pick_line(c: Chooser, sf: SampleFile, decoded: bool) -> int:
    """A line: any line at all, or (`decoded`) one that decodes, half of the time of a given type."""
    groups = line_groups(sf)
    group = c.choice(("any", *groups))
    if group == "any":
        if decoded:
            return groups["json"][c.integer(0, len(groups["json"]) - 1)]
        return c.integer(0, len(file_lines(sf)) - 1)
    return c.choice(groups[group])


def _pick_path(c: Chooser, sf: SampleFile, index: int, keys_only: bool = False) -> tuple[Any, ...]:
    """A node of the line (with `keys_only`, one under a key; the root when there is none), half of the time
    under a key the reader reads."""
    every, read = node_paths(sf, index)
    if keys_only:
        every = tuple(p for p in every if p and isinstance(p[-1], str)) or ((),)
    return c.choice(read if read and c.choice((False, True)) else every)


def _line_mutation(c: Chooser, sf: SampleFile, kind: str) -> Mutation:
    lines = list(file_lines(sf))
    records = file_records(sf)
    index = _pick_line(c, sf, decoded=kind != "nul-in-line")
    line = lines[index]
    end = b"\n" if line.endswith(b"\n") else b""
    path: tuple[Any, ...] = ()
    if kind == "nul-in-line":
        body = line[: len(line) - len(end)]
        at = c.integer(0, len(body))
        run = c.choice(NUL_RUNS)
        lines[index] = body[:at] + b"\0" * run + body[at:] + end
        detail = f"{run} NUL byte(s) at byte {at} of {len(body)}"
    else:
        record = json.loads(line.decode("utf-8", errors="surrogatepass"))  # a private copy to change
        path = _pick_path(c, sf, index, keys_only=kind == "delete-key")
        raw = None
        if kind == "delete-key" and not path:
            record, detail = {}, "the line's only content deleted: {}"
        elif kind == "delete-key":
            del _get(record, path[:-1])[path[-1]]
            detail = f"deleted {list(path)}"
        else:
            old = _get(record, path)
            if kind == "swap-type":
                new_type = c.choice([t for t in ("string", "number", "list", "object", "null", "bool")
                                     if t != _json_type(old)])  # fmt: skip
                new = _as_type(old, new_type, c.integer(0, 2))
                detail = f"{list(path)}: {_json_type(old)} -> {json.dumps(new)[:60]}"
            elif kind == "huge-number":
                raw = c.choice(HUGE_NUMBERS)
                new = _RAW
                detail = f"{list(path)} = {raw}"
            elif kind == "huge-string":
                new = "x" * (9 * 1024 * 1024)
                detail = f"{list(path)} = a 9 MiB string"
            elif kind == "surrogate":
                lone = c.choice(SURROGATES)
                if path and isinstance(path[-1], str) and c.choice((False, False, True)):
                    key = path[-1]
                    at = c.integer(0, len(key))
                    parent = _get(record, path[:-1])
                    renamed = key[:at] + lone + key[at:]
                    items = [(renamed if k == key else k, v) for k, v in parent.items()]
                    parent.clear()
                    parent.update(items)
                    new, path = old, (*path[:-1], renamed)  # the value stays, under the renamed key
                    detail = f"key {list(path)}: {lone!r} at char {at} of the key"
                elif isinstance(old, str):
                    at = c.integer(0, len(old))
                    new = old[:at] + lone + old[at:]
                    detail = f"{list(path)}: {lone!r} at char {at} of {len(old)}"
                else:
                    new = "x" + lone
                    detail = f"{list(path)} = {new!r}"
            elif kind == "bad-moment":
                new, path, detail = _bad_moment(c, record, path, sf, index)
            else:  # deep-nesting
                depth = c.choice(DEEP_LEVELS)
                if c.choice((True, True, False)):
                    raw, shape = "[" * depth + "]" * depth, "lists"
                else:
                    raw, shape = '{"a":' * depth + "1" + "}" * depth, "objects"
                new = _RAW
                detail = f"{list(path)} = {depth}-deep {shape}"
            if path:
                _get(record, path[:-1])[path[-1]] = new
            else:
                record = new
        ensure_ascii = c.choice((False, True))
        detail += "" if ensure_ascii else " (written raw)"
        lines[index] = _dump(record, ensure_ascii, raw) + end
    key = "" if kind == "nul-in-line" else "<root>" if not path else "[]" if isinstance(path[-1], int) else path[-1]
    return Mutation(sf, kind, index + 1, detail, carried(records[index]), b"".join(lines), key)


def _bad_moment(c: Chooser, record: Any, path: tuple[Any, ...], sf: SampleFile, index: int) -> tuple[Any, Any, str]:
    """(new value, its path, detail) of a "bad-moment" mutation: a stamp or duration of the line (a node under
    a `MOMENT_KEYS` key, half of the time the one drawn if it is one) replaced by one of `BAD_MOMENTS` or
    `BAD_DURATIONS`; a line with none gets a root `timestamp` (a line that is no object becomes one)."""
    every, _ = node_paths(sf, index)
    moments = [p for p in every if p and isinstance(p[-1], str) and p[-1] in MOMENT_KEYS]
    if path and isinstance(path[-1], str) and path[-1] in MOMENT_KEYS and c.choice((False, True)):
        where = path
    elif moments:
        where = c.choice(moments)
    else:
        where = ("timestamp",)
        if not isinstance(record, dict):  # (the caller sets the value; the root is replaced by an object)
            return {"timestamp": c.choice(BAD_MOMENTS)}, (), "the line replaced by an object with a bad timestamp"
    new = c.choice(BAD_MOMENTS) if where[-1] == "timestamp" else c.choice(BAD_DURATIONS)
    return new, where, f"{list(where)} = {json.dumps(new)}"


def _file_mutation(c: Chooser, sf: SampleFile, kind: str) -> Mutation:
    data = file_bytes(sf)
    lines = file_lines(sf)
    records = file_records(sf)
    if kind == "truncate":
        # Cuts land anywhere; half of them a few bytes around a line end, where a reader's checks differ.
        if c.choice((True, False)):
            at = c.integer(0, len(data))
        else:
            ends = [0, *itertools.accumulate(len(x) for x in lines)]
            at = min(max(c.choice(ends) + c.integer(-2, 2), 0), len(data))
        kept, total = 0, 0
        for i, line in enumerate(lines):
            if total + len(line) > at:
                break
            kept, total = i + 1, total + len(line)
        lost = sum(carried(r) for r in records[kept:])
        return Mutation(sf, kind, kept + 1 if kept < len(lines) else None, f"cut at byte {at} of {len(data)}",
                        lost, data[:at])  # fmt: skip
    run = c.choice(NUL_RUNS)
    if kind == "nul-line":
        index = c.integer(0, len(lines))
        new = list(lines)
        new.insert(index, b"\0" * run + b"\n")
        return Mutation(sf, kind, index + 1, f"a line of {run} NUL byte(s)", 0, b"".join(new))
    # nul-tail: a crash left zeros after the last record (which had its newline, or not)
    last = carried(records[-1]) if not data.endswith(b"\n") else 0
    return Mutation(sf, kind, None, f"{run} NUL byte(s) at the end", last, data + b"\0" * run)


def draw_mutation(c: Chooser, kinds: Sequence[str] = KINDS, files: Sequence[SampleFile] | None = None) -> Mutation:
    """One mutation of one file of one sample."""
    sf = c.choice(files or sample_files())
    kind = c.choice(kinds)
    return _file_mutation(c, sf, kind) if kind in FILE_KINDS else _line_mutation(c, sf, kind)


def stacked(parts: Sequence[Mutation]) -> Mutation:
    """Several line mutations of the same file at once (a campaign's option; the properties take one):
    each damaged line as its mutation left it, `carried` summed over the distinct lines."""
    first = parts[0]
    assert all(p.target == first.target and p.kind not in FILE_KINDS for p in parts)
    lines = list(file_lines(first.target))
    by_line = {p.line: p for p in parts}  # a line damaged twice keeps the last damage
    for n, p in by_line.items():
        assert n is not None
        lines[n - 1] = split_lines(p.data)[n - 1]
    detail = " + ".join(f"line {p.line}: {p.kind} {p.detail}" for p in by_line.values())
    total = sum(p.carried for p in by_line.values())
    return Mutation(first.target, "stacked", None, detail, total, b"".join(lines), "")


def mutation_at(
    sf: SampleFile,
    find: Callable[[Any], bool],
    path: Callable[[Any], tuple[Any, ...]],
    kind: str,
    value: Any = None,
    raw: str | None = None,
    last: bool = False,
) -> Mutation:
    """A chosen line mutation (a regression example): on the first (`last`: the last) line whose record
    satisfies `find`, the node at `path(record)` deleted (kind "delete-key") or set to `value` (or to the raw
    JSON text `raw`), the line written back with `ensure_ascii=True`."""
    records = file_records(sf)
    found = [i for i, r in enumerate(records) if r is not _NOT_JSON and find(r)]
    index = found[-1] if last else found[0]
    line = file_lines(sf)[index]
    record = json.loads(line.decode("utf-8", errors="surrogatepass"))
    where = path(record)
    if kind == "delete-key":
        del _get(record, where[:-1])[where[-1]]
        detail = f"deleted {list(where)}"
    else:
        _get(record, where[:-1])[where[-1]] = _RAW if raw is not None else value
        shown = raw if raw is not None else json.dumps(value)
        detail = f"{list(where)} = {shown if len(shown) < 60 else shown[:20] + f'... ({len(shown)} chars)'}"
    lines = list(file_lines(sf))
    lines[index] = _dump(record, True, raw) + (b"\n" if line.endswith(b"\n") else b"")
    return Mutation(sf, kind, index + 1, detail, carried(records[index]), b"".join(lines), str(where[-1]))


def _is(kind: str, subtype: str | None = None) -> Callable[[Any], bool]:
    return lambda r: isinstance(r, dict) and r.get("type") == kind and (subtype is None or r.get("subtype") == subtype)


def _task_block(record: Any) -> int:
    blocks = record["message"]["content"]
    return next(k for k, b in enumerate(blocks) if b.get("type") == "tool_use" and b.get("name") in ("Task", "Agent"))


def _has_task(record: Any) -> bool:
    if not _is("assistant")(record):
        return False
    try:
        _task_block(record)
    except (StopIteration, KeyError, TypeError, AttributeError):
        return False
    return True


#: The names of `known_kinds`, for a test's parameters (the mutations are made when first asked for).
KNOWN_KINDS = (
    "01-type-is-list",
    "05-result-modelUsage-tokens-not-a-number",
    "06-task-input-lone-surrogate",
    "06b-task-input-nested-990",
    "08-frames-lone-surrogate-string",
    "09-frames-int-above-int64",
    "10-nul-byte-in-first-4KiB",
    "14-timestamp-year-0",
    "14b-turn-duration-year-10000",
    "15-subagent-bad-timestamp-drops-session",
    "16-stray-init-line-in-transcript",
)


@functools.cache
def known_kinds() -> dict[str, tuple[Mutation, tuple[str, ...]]]:
    """The fuzz finds of CASES.md ("Fuzz finds") that these mutations can make, on the real samples: name ->
    (mutation, the command that showed it). `test_fuzz` runs each of them on every run, whatever the budget."""
    thinking = SampleFile("b-ccl-thinking-sonnet45.jsonl")
    ralph = SampleFile("a-ralph-subagent-opus45-haiku45.jsonl")
    spotter = SampleFile("b-spotter-compaction", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    print_mode = SampleFile("b-ccl-print-mode-sessions", "29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl")
    teams = SampleFile("b-ccl-agent-teams-opus47", "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")

    def task(field: str) -> Callable[[Any], tuple[Any, ...]]:
        return lambda r: ("message", "content", _task_block(r), "input", field)

    usage_json, trace_json = ("context", "usage", "--json"), ("context", "trace", "--json")
    nul = file_bytes(thinking)
    made = {
        "01-type-is-list": (
            mutation_at(thinking, _is("assistant"), lambda r: ("type",), "swap-type", ["assistant"]),
            trace_json,
        ),
        "05-result-modelUsage-tokens-not-a-number": (
            mutation_at(
                ralph,
                _is("result"),
                lambda r: ("modelUsage", next(iter(r["modelUsage"])), "outputTokens"),
                "huge-number",
                raw="1e999",
            ),
            usage_json,
        ),
        "06-task-input-lone-surrogate": (
            mutation_at(print_mode, _has_task, task("description"), "surrogate", "Explore \ud800codebase"),
            ("context", "usage", "--breakdown"),
        ),
        "06b-task-input-nested-990": (
            mutation_at(print_mode, _has_task, task("prompt"), "deep-nesting", raw="[" * 990 + "]" * 990),
            ("context", "usage", "--breakdown"),
        ),
        "08-frames-lone-surrogate-string": (
            mutation_at(thinking, _is("assistant"), lambda r: ("message", "id"), "surrogate", "msg_\ud800"),
            trace_json,
        ),
        "09-frames-int-above-int64": (
            mutation_at(
                spotter,
                _is("system", "turn_duration"),
                lambda r: ("durationMs",),
                "huge-number",
                raw="9223372036854775808",
            ),
            trace_json,
        ),
        "10-nul-byte-in-first-4KiB": (
            Mutation(thinking, "nul-line", 1, "a line of 1 NUL byte(s)", 0, b"\0\n" + nul),
            ("context", "trace", "--explain"),
        ),
        "14-timestamp-year-0": (
            mutation_at(
                thinking, _is("assistant"), lambda r: ("timestamp",), "bad-moment", "0001-01-01T00:00:00+14:00"
            ),
            trace_json,
        ),
        "14b-turn-duration-year-10000": (
            mutation_at(
                spotter,
                _is("system", "turn_duration"),
                lambda r: ("timestamp",),
                "bad-moment",
                "9999-12-31T23:59:59-14:00",
                last=True,
            ),
            ("context", "usage", "--json"),
        ),
        "15-subagent-bad-timestamp-drops-session": (
            mutation_at(
                SampleFile("b-ccl-print-mode-sessions", f"{print_mode.rel[:-6]}/subagents/agent-a2271d1.jsonl"),
                _is("assistant"),
                lambda r: ("timestamp",),
                "bad-moment",
                "0001-01-01T00:00:00+14:00",
            ),
            trace_json,
        ),
        "16-stray-init-line-in-transcript": (stray_init(teams), trace_json),
    }
    assert tuple(made) == KNOWN_KINDS
    return made


def stray_init(sf: SampleFile) -> Mutation:
    """A stream-json `system/init` line pasted into the middle of a transcript (fuzz 16): no call is lost, the
    transcript stays one trace with its subagent files."""
    lines = list(file_lines(sf))
    init = {"type": "system", "subtype": "init", "session_id": "pasted", "tools": [], "mcp_servers": []}
    at = len(lines) // 2
    lines.insert(at, json.dumps(init, separators=(",", ":")).encode() + b"\n")
    return Mutation(sf, "stray-init", at + 1, "a stream-json init line inserted", 0, b"".join(lines))


#: Kinds a long fuzz campaign found (docs/cases.md, after "Fuzz finds"), made on the samples: each a real defect.
CAMPAIGN_FINDS = (
    "nul-byte-before-the-first-record",
    "session-file-without-a-record-loses-its-subagents",
    "result-modelUsage-990-deep-objects",
)


@functools.cache
def campaign_finds() -> dict[str, tuple[Mutation, tuple[str, ...]]]:
    """The kinds the long campaign found that one damage on a sample makes: name -> (mutation, command)."""
    ralph = SampleFile("a-ralph-subagent-opus45-haiku45.jsonl")
    print_mode = SampleFile("b-ccl-print-mode-sessions", "29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl")
    cut = file_bytes(print_mode)[:1]
    lost = sum(carried(r) for r in file_records(print_mode))  # every line of the session file
    deep = '{"a":' * 990 + "1" + "}" * 990
    made = {
        # A NUL ahead of the first `{` reads as UTF-16 without a BOM: the whole file is garbage.
        "nul-byte-before-the-first-record": (
            Mutation(ralph, "nul-in-line", 1, "1 NUL byte(s) at byte 0", 0, b"\0" + file_bytes(ralph)),
            ("context", "trace", "--json"),
        ),
        # The session fails, and its intact subagent file is never read.
        "session-file-without-a-record-loses-its-subagents": (
            Mutation(print_mode, "truncate", 1, f"cut at byte 1 of {len(file_bytes(print_mode))}", lost, cut),
            ("context", "usage", "--json"),
        ),
        # Decoded by the stdlib (orjson stops at 255 levels); quoting it in a warning recurses too deep.
        "result-modelUsage-990-deep-objects": (
            mutation_at(
                ralph,
                _is("result"),
                lambda r: ("modelUsage", next(iter(r["modelUsage"])), "cacheReadInputTokens"),
                "deep-nesting",
                raw=deep,
            ),
            ("context", "usage", "--json"),
        ),
    }
    assert tuple(made) == CAMPAIGN_FINDS
    return made


@st.composite
def mutations(draw: Any, kinds: Sequence[str] = KINDS, files: Sequence[SampleFile] | None = None) -> Mutation:
    """Hypothesis strategy: a `Mutation` of the kinds given, of one of `files` (default: every sample file)."""
    return draw_mutation(DrawChooser(draw), kinds, files)


@functools.cache
def subagent_files() -> tuple[SampleFile, ...]:
    """The sample files that are a session's subagent files (`subagents/agent-*.jsonl`, flat `agent-*.jsonl`)."""
    return tuple(sf for sf in sample_files() if sf.rel and os.path.basename(sf.rel).startswith("agent-"))


def main_calls(run: Any) -> dict[str, int]:
    """Main-thread model calls of each trace of a run, by its name with the copy's folder left out."""
    return {os.path.basename(r.trace): r.calls for r in run.reports}


@functools.cache
def baseline_main_calls(sample: str, folder: bool) -> dict[str, int]:
    from contexttrace import analyze

    copy = pristine_root() / sample / sample
    return main_calls(analyze(named_paths(copy, folder), workers=1))


def failures_problems(copy: Path, folder: bool) -> list[str]:
    """Run `analyze` on a copy damaged by one bad value and return each trace it failed: a bad value costs
    at most its field, a bad line at most that line, never a trace. A trace written as one JSON document
    (`is_document`) is one line: when the damage leaves it no JSON, its failure is its line's cost."""
    from contexttrace import analyze

    run = analyze(named_paths(copy, folder), workers=1)
    return [f"a trace failed: {f.path}: {f.reason}" for f in run.failures if not _broken_document(Path(f.path))]


def _broken_document(path: Path) -> bool:
    """Whether `path` is a one-document trace (`is_document`) that no longer decodes as JSON."""
    if not is_document(path.name):
        return False
    try:
        json.loads(path.read_bytes())
    except ValueError:
        return True
    return False


def subagent_problems(m: Mutation, copy: Path, folder: bool) -> list[str]:
    """Run `analyze` on a copy whose subagent file is damaged and return what breaks the rule that a subagent
    file's damage costs that file's lines only: its session failed, left out, or lost main-thread calls."""
    from contexttrace import analyze

    run = analyze(named_paths(copy, folder), workers=1)
    problems = [f"a trace failed: {f.path}: {f.reason}" for f in run.failures]
    before, after = baseline_main_calls(m.target.sample, folder), main_calls(run)
    problems += [
        f"{name}: main-thread calls {calls} -> {after.get(name, 'missing')}"
        for name, calls in before.items()
        if after.get(name) != calls
    ]
    return problems


# -- neutral edits --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NeutralEdit:
    """Edits that change no figure, applied to one or every file of one sample."""

    sample: str
    detail: str
    files: dict[str, bytes] = field(repr=False)  # rel ("" for a single-file sample) -> edited bytes
    moves_lines: bool = False  # blank lines inserted: line numbers (`turn_rows[].line`) move with them

    def __str__(self) -> str:
        return f"{self.sample}: {self.detail}"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(f"<{self}>")


def _edit(data: bytes, c: Chooser) -> tuple[bytes, str]:
    lines = [line.rstrip(b"\n") for line in split_lines(data)]
    bom, crlf, no_final = c.choice((False, True)), c.choice((False, True)), c.choice((False, True))
    blanks = [(c.integer(0, len(lines)), c.choice(BLANKS)) for _ in range(c.integer(0, 4))]
    if not (bom or crlf or no_final or blanks):
        bom = True
    for at, blank in sorted(blanks, reverse=True):
        lines.insert(at, blank)
    text = (b"\r\n" if crlf else b"\n").join(lines) + (b"" if no_final else b"\r\n" if crlf else b"\n")
    if bom:
        text = b"\xef\xbb\xbf" + text
    done = [n for n, on in (("BOM", bom), ("CRLF", crlf), ("no final newline", no_final)) if on]
    if blanks:
        done.append(f"blank lines {[(at, b.decode()) for at, b in sorted(blanks)]}")
    return text, ", ".join(done)


def draw_neutral_edit(c: Chooser) -> NeutralEdit:
    name = c.choice(sample_names())
    files = [sf for sf in sample_files() if sf.sample == name]
    chosen = files if c.choice((False, True)) else [c.choice(files)]
    out, details = {}, []
    for sf in chosen:
        out[sf.rel], detail = _edit(file_bytes(sf), c)
        details.append(f"{sf.rel or sf.sample}: {detail}")
    return NeutralEdit(name, "; ".join(details), out, moves_lines="blank lines" in "".join(details))


@st.composite
def neutral_edits(draw: Any) -> NeutralEdit:
    """Hypothesis strategy: a `NeutralEdit`."""
    return draw_neutral_edit(DrawChooser(draw))


# -- writing and naming ---------------------------------------------------------------------------------


def write_sample(sample: str, dest: Path, files: dict[str, bytes] | None = None) -> Path:
    """Copy one sample under `dest` (as `dest/<sample>`, a session folder with its subagent files), with
    `files` (rel -> bytes) written over the copies; returns the copy's path. Every file keeps its sample's
    modification time, written or not (a figure may fall back on it: it must not tell copies apart)."""
    target = dest / sample
    dest.mkdir(parents=True, exist_ok=True)
    source = SAMPLES / sample
    if source.is_dir():
        shutil.copytree(source, target)  # copy2: times kept
    elif "" not in (files or {}):
        shutil.copy2(source, target)
    for rel, data in (files or {}).items():
        path, original = (target / rel, source / rel) if rel else (target, source)
        path.write_bytes(data)
        times = original.stat()
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    return target


def write_mutation(m: Mutation, dest: Path) -> Path:
    return write_sample(m.target.sample, dest, {m.target.rel: m.data})


def named_paths(copy: Path, folder: bool) -> list[str]:
    """The paths a user would name for a sample's copy: its folder (a directory scan), or its files (each
    session file of a folder, whose subagent files are then attached)."""
    if folder:
        return [str(copy.parent)]
    if copy.is_dir():
        return sorted(str(p) for p in copy.rglob("*") if is_trace_file(p.name) and not p.name.startswith("agent-")
                      and "subagents" not in p.parts)  # fmt: skip
    return [str(copy)]


@functools.cache
def pristine_root() -> Path:
    """A temporary folder holding an untouched copy of every sample, at `<root>/<sample>/<sample>` (the same
    layout as a mutated copy, so file names match); removed when the process exits."""
    root = Path(tempfile.mkdtemp(prefix="contexttrace-pristine-"))
    import atexit

    atexit.register(shutil.rmtree, root, True)
    for name in sample_names():
        write_sample(name, root / name)
    return root


def total_calls(run: Any) -> int:
    """Model calls of every thread over a run's `TraceReport`s: main, subagents and compaction summariser."""
    return sum(r.calls + r.subagent_calls + r.compaction_calls for r in run.reports)


@functools.cache
def baseline_calls(sample: str, folder: bool) -> int:
    from contexttrace import analyze

    copy = pristine_root() / sample / sample
    return total_calls(analyze(named_paths(copy, folder), workers=1))


def normalised(text: str, root: Path) -> str:
    """Output text with a copy's folder written as `<root>` (paths are the one thing a copy changes)."""
    return text.replace(str(root), "<root>")


# -- checks ---------------------------------------------------------------------------------------------


#: An exception class named in a failure's or a skipped line's reason: the firewall caught what no rule expected.
_EXCEPTION_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")


def analyze_problems(m: Mutation, copy: Path, folder: bool, workers: int | None = 1) -> list[str]:
    """Run `analyze` on a mutated copy (exceptions propagate) and return what breaks properties 1 and 2:
    a failure naming a file outside the copy, a failure or a skipped line that names an exception (the
    runner's or the reader's firewall caught a defect: the damage is data to skip or mark, never a crash),
    or calls lost beyond what the damaged lines carried."""
    from contexttrace import analyze

    run = analyze(named_paths(copy, folder), workers=workers)
    problems = [f"failure names a file outside the copy: {f.path}" for f in run.failures if str(copy) not in f.path]
    problems += [
        f"the firewall caught an exception: {f.path}: {f.reason}"
        for f in run.failures
        if getattr(f, "error", None) or _EXCEPTION_NAME.search(f.reason)
    ]
    problems += [
        f"a line skipped on an exception: {n.path}:{n.line}: {n.reason}"
        for r in run.reports
        for n in r.line_notes
        if _EXCEPTION_NAME.search(n.reason)
    ]
    before, after = baseline_calls(m.target.sample, folder), total_calls(run)
    if after < before - m.carried:
        why = "; ".join(f"{f.path}: {f.reason}" for f in run.failures) or "no failure reported"
        problems.append(f"calls {before} -> {after}, lost more than the {m.carried} the damage carried ({why})")
    return problems


def frame_problems(copy: Path) -> list[str]:
    """Build the four Polars frames of every trace of a copy, alone and with its subagent files attached (as
    a notebook would), and return what breaks the frame contract (`trace_frame_problems`), each prefixed
    with the file read; exceptions other than `ContextTraceError` propagate from `read_trace`."""
    from contexttrace import ContextTraceError, read_trace
    from contexttrace.discover.local import find_traces

    files = sorted(p for p in copy.rglob("*") if is_trace_file(p.name)) if copy.is_dir() else [copy]
    reads: list[tuple[str, Any]] = [(str(f), ()) for f in files]
    reads += [(s.path, s.subagents) for s in find_traces([str(copy)]) if s.subagents]
    problems = []
    for path, subagents in reads:
        try:
            traces = read_trace(path, subagents)
        except ContextTraceError:
            continue
        for trace in traces:
            problems += [f"{path} (subagents: {len(subagents)}): {p}" for p in trace_frame_problems(trace)]
    return problems


def trace_frame_problems(trace: Any) -> list[str]:
    """What breaks the frame contract in one trace's tables (`reading.model.TABLES`: the four tables of
    `reading/contract.py`): a table missing or held as something else, a column missing or extra, columns
    of one table of unequal lengths, a frame that does not build, or a frame whose columns, their order,
    dtypes or height are not the contract's, or a value `Trace.frame` had to null (a value of another type
    than its column's: the reader's defect). Empty when each of `Trace.frame`'s four frames is exactly the
    contract's, built from the reader's columns as they are."""
    from contexttrace.reading.contract import polars_schema
    from contexttrace.reading.model import TABLES

    problems = [f"{trace.name}: table {t!r} is outside the contract" for t in sorted(set(trace.tables) - set(TABLES))]
    for table, columns in TABLES.items():
        where = f"{trace.name}: {table}"
        held = trace.tables.get(table)
        if held is None:
            problems.append(f"{where}: missing")
            continue
        height = None
        if isinstance(held, dict):  # the reader's columns, before a frame is built from them
            wrong = [f"{where}: column {c!r} missing" for c in columns if c not in held]
            wrong += [f"{where}: column {c!r} is outside the contract" for c in held if c not in columns]
            lengths = {c: len(v) for c, v in held.items()}
            if len(set(lengths.values())) > 1:
                wrong.append(f"{where}: columns of unequal lengths {lengths}")
            if wrong:
                problems += wrong
                continue
            height = next(iter(lengths.values()), 0)
        try:
            frame = trace.frame(table)
        except Exception as exc:  # a value the dtype cannot hold, a table of another kind: reported, not raised
            problems.append(f"{where}: the frame does not build ({type(exc).__name__}: {exc})")
            continue
        expected, got = polars_schema(columns), getattr(frame, "schema", None)
        if got is None:
            problems.append(f"{where}: held as {type(frame).__name__}, not a frame")
            continue
        problems += [f"{where}: column {c!r} missing" for c in expected if c not in got]
        problems += [f"{where}: column {c!r} is outside the contract" for c in got if c not in expected]
        problems += [f"{where}: {c} is {got[c]}, not {d}" for c, d in expected.items() if c in got and got[c] != d]
        if set(got) == set(expected) and list(got) != list(expected):
            problems.append(f"{where}: columns in another order than the contract's")
        if height is not None and frame.height != height:
            problems.append(f"{where}: {frame.height} rows built from columns of {height}")
    problems += [f"{trace.name}: {w}" for w in trace.warnings if "its column's type cannot hold" in w]
    return problems


def run_json(paths: list[str], usage: bool) -> str:
    """`render_json` of a run of either command (`context trace --calls` or `context usage`)."""
    from contexttrace import analyze
    from contexttrace.render.trace import render_json
    from contexttrace.reports.usage import build_usage

    if usage:
        return render_json(analyze(paths, workers=1, build=build_usage))
    return render_json(analyze(paths, workers=1), with_calls=True)


@functools.cache
def baseline_json(sample: str, folder: bool, usage: bool) -> str:
    root = pristine_root() / sample
    return normalised(run_json(named_paths(root / sample, folder), usage), root)


def neutral_problems(edit: NeutralEdit, dest: Path, folder: bool) -> list[str]:
    """Figures of an edited copy that differ from the untouched sample's (paths aside)."""
    copy = write_sample(edit.sample, dest, edit.files)
    problems = []
    for usage in (False, True):
        before = json.loads(baseline_json(edit.sample, folder, usage))
        after = json.loads(normalised(run_json(named_paths(copy, folder), usage), dest))
        if edit.moves_lines:
            before, after = _without_lines(before), _without_lines(after)
        if before != after:
            problems.append(f"{'context usage' if usage else 'context trace'}: {first_difference(before, after)}")
    return problems


def _without_lines(value: Any) -> Any:
    """A decoded JSON value without its `line` keys (the line numbers a blank line moves)."""
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items() if k != "line"}
    if isinstance(value, list):
        return [_without_lines(v) for v in value]
    return value


def first_difference(a: Any, b: Any, where: str = "") -> str:
    """Where two decoded JSON values first differ, e.g. `[0].calls: 36 != 35`."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k, _NOT_JSON) != b.get(k, _NOT_JSON):
                return first_difference(a.get(k), b.get(k), f"{where}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
    return f"{where or 'value'}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"


#: The commands of property 1, as `contexttrace` arguments.
COMMANDS = (
    ("context", "trace", "--json"),
    ("context", "trace", "--explain"),
    ("context", "usage", "--json"),
    ("context", "usage", "--breakdown"),
)
#: Clean samples named beside a damaged one (the second when the first is the one damaged).
GOOD_SAMPLES = ("b-ccl-thinking-sonnet45.jsonl", "b-ccl-image-and-errors.jsonl")


def good_sample(damaged: str) -> str:
    """The path of a clean sample other than `damaged`."""
    return str(SAMPLES / next(g for g in GOOD_SAMPLES if g != damaged))


@functools.cache
def store_dir() -> str:
    """A result store of this process's own (the CLI keeps what it read there unless `--no-cache`): never the
    user's cache folder; removed when the process exits."""
    import atexit

    path = tempfile.mkdtemp(prefix="contexttrace-fuzz-store-")
    atexit.register(shutil.rmtree, path, True)
    return path


def invoke(args: Sequence[str]) -> Any:
    """Run the CLI in-process; an exception other than an exit propagates with its traceback."""
    from typer.testing import CliRunner

    from contexttrace.cli.app import app

    return CliRunner().invoke(app, list(args), env={"CONTEXTTRACE_CACHE_DIR": store_dir()}, catch_exceptions=False)


@functools.cache
def good_output(command: tuple[str, ...], good: str) -> str:
    result = invoke([*command, good])
    assert result.exit_code == 0, result.stderr
    return str(result.stdout)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _named(text: str, good: str) -> str:
    """Output with every spelling of the clean sample's name (its path, or any shorter tail of it that ends
    in its file name: how a trace is labelled depends on the other paths named) written as `<good>`.

    Linear in the text: a regex like `[^\\s]*name` backtracks over every long run of non-space (a damaged
    9 MiB string printed whole) and takes minutes."""
    name = os.path.basename(good)
    out, done = [], 0
    at = text.find(name)
    while at >= 0:
        start = at
        while start > done and text[start - 1] not in ' \t\n\r"|':
            start -= 1
        out += [text[done:start], "<good>"]
        done = at + len(name)
        at = text.find(name, done)
    out.append(text[done:])
    return "".join(out)


def _table_rows(text: str) -> tuple[list[dict[str, str]], list[str]]:
    """The rows of every pipe table in `text`, each keyed by its table's headers, and the other lines."""
    rows: list[dict[str, str]] = []
    other: list[str] = []
    lines = text.splitlines()
    header: list[str] | None = None
    for i, line in enumerate(lines):
        if not line.startswith("|"):
            header = None
            other.append(line)
        elif i + 1 < len(lines) and lines[i + 1].startswith("|-"):
            header = _cells(line)
        elif not line.startswith("|-") and header is not None:
            rows.append(dict(zip(header, _cells(line), strict=False)))
    return rows, other


def good_rows_missing(command: tuple[str, ...], good: str, stdout: str) -> list[str]:
    """What the clean trace printed alone and is missing beside a damaged one: its JSON object; or each row
    of its tables, cell by cell under the same column header (a run of several traces may add columns and
    rows, never drop or change its cells), and every other line verbatim (its name however it is spelled)."""
    alone, stdout = _named(good_output(command, good), good), _named(stdout, good)
    if "--json" in command:
        try:
            rows = json.loads(stdout)
        except ValueError:
            return ["stdout is not JSON"]
        return [f"JSON row of {good}" for row in json.loads(alone) if row not in rows]
    want_rows, want_other = _table_rows(alone)
    got_rows, got_other = _table_rows(stdout)
    missing = [
        " | ".join(f"{h}: {v}" for h, v in row.items())
        for row in want_rows
        if not any(all(got.get(h) == v for h, v in row.items()) for got in got_rows)
    ]
    got_text = set(got_other)
    return missing + [line for line in want_other if line not in got_text]


def cli_problems(
    command: tuple[str, ...], paths: list[str], good: str, good_first: bool, twice: bool = True
) -> list[str]:
    """Run one command on a damaged copy's paths with a clean sample beside them: exit 0 or 1, no traceback,
    the clean sample's output in full, only the damaged files named in `Error:` lines and none of them for an
    exception (the firewall caught a defect: `analyze_problems`). With `twice`, the
    command is run again (its traces then come from the result store) and must print the same."""
    args = [*command, good, *paths] if good_first else [*command, *paths, good]
    result = invoke(args)
    out, err = str(result.stdout), str(result.stderr)
    problems = []
    if result.exit_code not in (0, 1):
        problems.append(f"exit code {result.exit_code}")
    if "Traceback" in out + err:
        problems.append("a traceback in the output")
    problems += [f"missing: {line}" for line in good_rows_missing(command, good, out)]
    problems += [f"the clean sample failed: {line}" for line in err.splitlines() if line.startswith(f"Error: {good}")]
    errors = [line for line in err.splitlines() if line.startswith("Error: ")]
    if result.exit_code == 1 and not errors:
        problems.append("exit 1 with no Error: line on stderr")
    problems += [f"the firewall caught an exception: {line}" for line in errors if _EXCEPTION_NAME.search(line)]
    if twice:
        again = invoke(args)
        if (again.exit_code, str(again.stdout)) != (result.exit_code, out):
            first, second = out.splitlines(), str(again.stdout).splitlines()
            diff = next((f"{a!r} != {b!r}" for a, b in zip(first, second, strict=False) if a != b), "lengths differ")
            problems.append(f"run again (from the result store): exit {again.exit_code}, stdout differs: {diff[:300]}")
        invoke(["cache", "clear"])  # the store would grow by every damaged copy of a long run
    return [f"{' '.join(command)}: {p}" for p in problems]
