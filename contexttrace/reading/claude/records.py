"""One line's bytes → one record: the typed Structs the builder reads, and the lenient path for the rest.

A record is decoded by `msgspec` into `MessageLine` (an assistant or user line), or into `Line` (any other
type: decoded a second time), Structs that declare only the fields the reader and its next features read:
unknown fields are skipped without building objects. A line that the typed
decoder refuses — not JSON, a truncated tail, a lone surrogate escape, a number JSON can spell but no float
holds, nesting past msgspec's depth, a container of the wrong type — takes the lenient path (`decode`):
orjson, else the standard library with lone surrogates replaced by U+FFFD, exactly as the
reader always decoded, then `to_struct` turns the decoded object into the same Struct, dropping each value
whose type a field does not take. So the builder reads one shape whatever the line went through.

How the fields are typed (the rule every field here follows):

* A scalar the builder checks itself (`type(x) is str`, `x is True`, a count's range) is `Any`: its value
  arrives exactly as JSON wrote it, and the builder's checks decide, as they did on dicts. Decoding a short
  string or a number as `Any` costs what decoding it typed costs.
* A string the builder reads only when it is one, treating any other value as an absent one (a uuid, a
  timestamp, an id, a model), is `str | None`: another value fails the typed decode, and the lenient path
  drops it (the field reads as absent, as the builder would have read it), so the builder tests none of
  them (a `type(x) is str` per field per line, ~2 % of a read).
* A field whose *presence* means something (`sessionId` is transcript evidence even when it is not a
  string; `toolUseResult: null` still hides `tool_use_result`) defaults to `UNSET`.
* A container the builder reads into (`message`, `usage`, content blocks) is a Struct. Where the builder
  treats a value of another type exactly as an absent one (a `message` that is a string), the field takes
  the Struct or null, and another type is dropped by `to_struct` (the line goes the lenient way). Where
  another type counts for something (a content block that is not an object is an unknown block; a
  `toolUseResult` that is a string hides `tool_use_result`), the field is a catch-all union
  (`Struct | str | int | float | bool | None | list[Raw]`) that every JSON value decodes into; the array
  alternative's elements are never read.
* Large values read only for their size or only sometimes are `msgspec.Raw` (the line's bytes, not
  decoded): tool inputs (decoded by the builder for tool_use blocks it keeps: `raw_value`) and base64
  image data (its length is what counts). The lenient path cannot make a `Raw` from a decoded value, so
  there they hold a `Decoded` wrapper; `raw_value` and `raw_text` read either.

It imports neither the builder nor Polars, and raises nothing: every decode error (`msgspec.DecodeError`,
`RecursionError`, a JSON error of orjson or the standard library) is caught here, and such a line is `NOT_JSON`
(or `TOO_DEEP`: nested deeper than the standard library decodes).
"""

from __future__ import annotations

import json
import re
import types
import typing
from typing import Any, Union

import msgspec
import orjson
from msgspec import UNSET, Raw, Struct, UnsetType

#: A line that is not JSON at all (the lenient path could not decode it either).
NOT_JSON = object()
#: A line nested deeper than the reader reads (the standard library's decoder ran out of recursion): JSON, maybe,
#: but no figure can be read from it.
TOO_DEEP = object()

_NULL = Raw(b"null")
#: The default of every `Raw` field: a field the line does not write holds this very object (`is` tests it).
NULL_RAW = _NULL


class Decoded:
    """A value the lenient path decoded where the fast path keeps `Raw` bytes (`raw_value` reads both)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Decoded) and _same(self.value, other.value)

    __hash__ = None  # type: ignore[assignment]


def _same(a: Any, b: Any) -> bool:
    """Equality that counts NaN equal to NaN (a lenient line may hold one; tests compare records)."""
    return a == b or (a != a and b != b)


class _Object(Struct, gc=False):
    """Any JSON object whose fields nothing reads (the object alternative of a catch-all union)."""


class ImageSource(Struct, gc=False):
    """`image.source`: only the base64 `data`, whose length gives the decoded size."""

    data: Raw = _NULL


class InnerBlock(Struct, gc=False):
    """A block of a `tool_result`'s content list (`text`, `image`, others)."""

    type: Any = None
    text: Any = None
    source: ImageSource | None = None


#: Any element of a tool result's content list: a block, or another JSON value (an unknown block).
InnerItem = InnerBlock | str | int | float | bool | None | list[Raw]


class Block(Struct, gc=False):
    """A block of `message.content`: an assistant's `text` / `thinking` / `tool_use`, a user line's
    `tool_result` / `text` / `image`. One Struct for all kinds (absent fields cost nothing)."""

    type: Any = None
    # tool_use
    id: str | None = None
    name: str | None = None
    input: Raw = _NULL  # decoded only for a tool use the builder keeps (`raw_value`)
    # text / thinking
    text: str | None = None
    thinking: str | None = None
    # tool_result: `content` is a string, a list of blocks, or (an unknown block) any other value
    tool_use_id: str | None = None
    is_error: Any = None
    content: str | list[InnerItem] | _Object | int | float | bool | None = None
    # image (a pasted image in a prompt)
    source: ImageSource | None = None


#: Any element of `message.content`: a block, or a JSON value that is not one (skipped by every reader).
BlockItem = Block | str | int | float | bool | None | list[Raw]


class CacheSplit(Struct, gc=False):
    """`usage.cache_creation`: the cache write by time to live."""

    ephemeral_5m_input_tokens: Any = None
    ephemeral_1h_input_tokens: Any = None


class ServerToolUse(Struct, gc=False):
    """`usage.server_tool_use`."""

    web_search_requests: Any = None


class Usage(Struct, gc=False):
    """`message.usage`. Counts are `Any`: a count that is not a plausible token count is read as 0 and
    counted by the builder, which needs the value as written."""

    input_tokens: Any = None
    cache_creation_input_tokens: Any = None
    cache_read_input_tokens: Any = None
    output_tokens: Any = None
    cache_creation: CacheSplit | None = None
    server_tool_use: ServerToolUse | None = None
    speed: str | None = None
    # the sampling passes of the response (`calls.compaction_passes`): read only when one is a compaction
    iterations: Raw = _NULL


class Message(Struct, gc=False):
    """`message` of an assistant or user line."""

    id: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    usage: Usage | None = None
    content: str | list[BlockItem] | None = None


class FileLines(Struct, gc=False):
    """`toolUseResult.file` of a Read: only its line counts are read (its `content` is skipped unbuilt)."""

    numLines: Any = None  # lines the Read returned
    startLine: Any = None  # the first of them (1-based)
    totalLines: Any = None  # lines the file has


class ResultCopy(Struct, gc=False):
    """The structured copy of a tool result (`toolUseResult` / `tool_use_result`): only a subagent's id and
    duration, the copy's type and its cap flags are read; the copy itself (a Read's file, an Edit's
    original) is skipped unbuilt."""

    agentId: Any = None
    totalDurationMs: Any = None
    type: Any = None  # "file_unchanged": a Read answered that the file is unchanged since read
    truncated: Any = None  # true: the tool cut its result at a cap (Glob)
    truncatedByTokenCap: Any = None  # true: the result was cut at the token cap
    # Grep's cap (`context tools`' ⊘ capped): the head_limit it applied, and what it counted in its mode
    appliedLimit: Any = None
    mode: Any = None  # "content" (numLines counts), "files_with_matches" / "count" (numFiles counts)
    numLines: Any = None
    numFiles: Any = None
    file: FileLines | None = None  # Read: the lines it returned of the file (a Read cut at its default limit)
    isAsync: Any = None  # true: an agent launched to run in the background (this result is its receipt)
    status: Any = None  # "async_launched": the same


#: A tool result copy: an object, or any other JSON value (a string "Error: ...", an MCP result's list).
CopyItem = ResultCopy | str | int | float | bool | None | list[Raw]


class Attachment(Struct, gc=False):
    """`attachment` of an `attachment` line: what the harness added to the next prompt."""

    type: Any = None
    content: Any = None
    filename: Any = None  # edited_text_file: the file edited outside the model
    addedLines: Any = None  # deferred_tools_delta, agent_listing_delta: the lines the listing adds
    addedBlocks: Any = None  # mcp_instructions_delta: each MCP server's instructions added
    files: Any = None  # instructions: the memory files loaded, each {path, type, content}


class MessageLine(Struct, gc=False):
    """One `assistant` or `user` line (either format), as the builder reads it: the envelope keys of both
    formats and the fields of message lines. Nine lines in ten are message lines; a Struct of these fields
    alone decodes them about a tenth faster than `Line` (each field a line does not write is still filled
    in and freed), so a line of another type is decoded a second time, as a `Line` (`decode`).
    """

    type: Any = None
    uuid: str | None = None
    parentUuid: Any = None
    sessionId: Any = UNSET
    session_id: Any = UNSET  # presence is stream-json evidence
    parent_tool_use_id: Any = UNSET  # presence is stream-json evidence; a string names the thread
    isSidechain: Any = None
    agentId: Any = None
    timestamp: str | None = None
    requestId: str | None = None
    isMeta: Any = None
    isCompactSummary: Any = None
    isApiErrorMessage: Any = None
    version: str | None = None
    cwd: str | None = None
    toolDenialKind: Any = None
    origin: Any = None
    message: Message | None = None
    toolUseResult: CopyItem | UnsetType = UNSET
    tool_use_result: CopyItem | UnsetType = UNSET


class Line(MessageLine, gc=False):
    """One record of any other type (system / result / attachment lines, and unknown types): a message line's
    fields, the fields of system, result and attachment lines the reader uses, and the few of `system/init`
    and `result` lines (rare: `Any`, decoded as dicts).
    """

    subtype: Any = None
    attachment: Attachment | None = None
    # system lines (compaction metadata in both spellings: `dialects.COMPACT_KEYS`)
    compact_metadata: Any = None
    compactMetadata: Any = None
    microcompactMetadata: Any = None
    microcompact_metadata: Any = None
    durationMs: Any = None
    # system/init (stream-json): what start-up offered
    claude_code_version: Any = None
    model: Any = None
    tools: Any = None
    skills: Any = None
    agents: Any = None
    slash_commands: Any = None
    mcp_servers: Any = None
    plugins: Any = None
    permissionMode: Any = None
    apiKeySource: Any = None
    # result (stream-json): the run's totals, kept as written and decoded as orjson decodes them
    # (`dialects.run_totals`: an integer past 64 bits is a float there, where msgspec keeps it an int)
    is_error: Raw = _NULL
    total_cost_usd: Raw = _NULL
    usage: Raw = _NULL
    modelUsage: Raw = _NULL
    duration_ms: Raw = _NULL
    duration_api_ms: Raw = _NULL
    num_turns: Raw = _NULL
    permission_denials: Any = None


_FAILED = (msgspec.DecodeError, RecursionError)  # (a ValidationError is a DecodeError)
#: The typed decoders of one line (`decode`'s steps: a `MessageLine`, then a `Line` when its type is another)
#: and the errors that send a line the lenient way (`decode_lenient`): the reader's loop calls them itself,
#: saving a call per line.
TYPED_DECODE = msgspec.json.Decoder(MessageLine).decode
FULL_DECODE = msgspec.json.Decoder(Line).decode
DECODE_FAILED = _FAILED


def decode(raw: bytes) -> Any:
    """Decode one line: a `MessageLine` (an `assistant` or `user` line), a `Line` (any other type), `NOT_JSON`,
    `TOO_DEEP`, or the decoded value when it is JSON but not an object.

    Lines are taken as they are (a trailing `\\n` or `\\r\\n` is JSON whitespace). The typed decoders take
    every well-formed line whose containers have the types the Structs declare; any other line takes the
    lenient path (`loads_lenient` then `to_struct`), which gives what the typed decoder would have given
    had it accepted the line (tests/reading/test_claude_records.py checks both paths on every sample line).
    """
    try:
        rec = TYPED_DECODE(raw)
        kind = rec.type
        return rec if kind == "assistant" or kind == "user" else FULL_DECODE(raw)
    except _FAILED:
        return decode_lenient(raw)


def decode_lenient(raw: bytes) -> Any:
    """`decode` of a line the typed decoders refused: `loads_lenient`, then `to_struct` for an object (a
    `MessageLine` for a message line, else a `Line`)."""
    value = loads_lenient(raw)
    if type(value) is dict:
        kind = value.get("type")
        return to_struct(value, MessageLine if kind == "assistant" or kind == "user" else Line)
    return value


# -- the lenient path ------------------------------------------------------------------------------------


def loads_lenient(raw: bytes | memoryview) -> Any:
    """Decode JSON the way the reader always has: orjson, else the standard library (which accepts
    escaped lone surrogates), or `NOT_JSON` (`TOO_DEEP` when the standard library ran out of recursion: nested
    deeper than it decodes, about 1,000 levels).

    Each lone surrogate is replaced by U+FFFD (one code point for one, so every length stays exact), in
    keys and values at any depth, so no string that reaches a frame or the JSON output can fail to encode
    (Claude Code writes them for undecodable bytes and emoji cut in half). A raw byte that is not UTF-8 is read
    as U+FFFD too, so its line still counts. Nesting too deep to decode is `TOO_DEEP`: no figure is read from it.
    """
    if JSON_VALUE_START(raw) is None:  # no JSON value starts the text (a separator line, say): both decoders
        return NOT_JSON  # would refuse it, at a hundred times the cost of this test
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _loads_standard(raw)


def _loads_standard(raw: bytes | memoryview) -> Any:
    """`loads_lenient` once orjson refused the bytes: the standard library's reading, lone surrogates and
    bytes that are not UTF-8 as U+FFFD, else `NOT_JSON` (`TOO_DEEP` past its recursion)."""
    data = bytes(raw)
    try:
        value = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError:  # JSONDecodeError is a ValueError
        return NOT_JSON
    except RecursionError:
        return TOO_DEEP
    return scrubbed(value) if _SURROGATE_ESCAPE.search(data) else value


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
#: What the standard library's decoder accepts first, after JSON whitespace: an object, array, string, number,
#: true / false / null, or its NaN / Infinity / -Infinity (a byte-order mark or any other byte it refuses).
JSON_VALUE_START = re.compile(rb'[ \t\n\r]*[{\["\-0-9tfnNI]').match
_SURROGATE = re.compile("[\ud800-\udfff]")


def scrubbed(value: Any) -> Any:
    """`value` (decoded JSON) with every lone surrogate in its strings and keys replaced by U+FFFD; walked
    without recursion (a line may nest hundreds of levels deep). Containers are changed in place."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in list(node):
                item = node[key]
                if isinstance(item, str):
                    item = _SURROGATE.sub("\ufffd", item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
                if _SURROGATE.search(key):
                    del node[key]
                    key = _SURROGATE.sub("\ufffd", key)
                node[key] = item
        elif isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    node[i] = _SURROGATE.sub("\ufffd", item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    return value


#: `to_struct` drops a value whose type its field does not take: this marks it.
_DROP = object()


def to_struct(value: dict[str, Any], cls: type[Struct]) -> Any:
    """`value` (a decoded JSON object) as a `cls` Struct, as the typed decoder would have made it, except
    that a value of a type its field does not take is dropped (the field keeps its default) instead of
    failing the line, and a `Raw` field holds a `Decoded`. Every field type of this module is one of: `Any`,
    `Raw`, a Struct, a list of one of those, or a union of them with scalars and None."""
    out = {}
    for attr, key, convert in _plan(cls):
        if key in value:
            got = convert(value[key])
            if got is not _DROP:
                out[attr] = got
    return cls(**out)


_PLANS: dict[type, list[tuple[str, str, Any]]] = {}


def _plan(cls: type[Struct]) -> list[tuple[str, str, Any]]:
    """Per field of `cls`: attribute name, JSON key and the function converting a decoded value to it."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = typing.get_type_hints(cls)
        plan = _PLANS[cls] = [(f.name, f.encode_name, _converter(hints[f.name])) for f in msgspec.structs.fields(cls)]
    return plan


def _converter(kind: Any) -> Any:
    """A function from a decoded JSON value to the value a field of annotation `kind` holds, or `_DROP`."""
    if kind is Any:
        return lambda v: v
    if kind is Raw:
        return Decoded
    if isinstance(kind, type) and issubclass(kind, Struct):
        return lambda v: to_struct(v, kind) if type(v) is dict else _DROP
    origin = typing.get_origin(kind)
    if origin is list:
        (item,) = typing.get_args(kind)
        if item is Raw:  # the array alternative of a catch-all union: its elements are never read
            return lambda v: v if type(v) is list else _DROP
        each = _converter(item)
        return lambda v: [x for x in map(each, v) if x is not _DROP] if type(v) is list else _DROP
    if origin is Union or origin is types.UnionType:
        return _union(typing.get_args(kind))
    raise TypeError(f"no lenient conversion for {kind!r}")


def _union(options: tuple[Any, ...]) -> Any:
    """The converter of a union: a dict to its Struct option, a list to its list option, a scalar when
    the union names its type (every union here that takes numbers takes both int and float)."""
    scalars = tuple(t for t in options if t in (str, int, float, bool, type(None)))
    struct = next((_converter(t) for t in options if isinstance(t, type) and issubclass(t, Struct)), None)
    array = next((_converter(t) for t in options if typing.get_origin(t) is list), None)

    def convert(v: Any) -> Any:
        t = type(v)
        if t is dict:
            return struct(v) if struct is not None else _DROP
        if t is list:
            return array(v) if array is not None else _DROP
        if t in scalars:
            return v
        return _DROP

    return convert


# -- values kept as bytes --------------------------------------------------------------------------------


def raw_value(raw: Raw | Decoded) -> Any:
    """The JSON value a `Raw` field holds (a tool input), decoded as `loads_lenient` decodes a line.

    On the fast path the bytes are a well-formed JSON value, so orjson takes them, except an escaped lone
    surrogate or a raw byte that is not UTF-8 (msgspec does not check strings it skips), which the standard
    library reads as it would have read the whole line (`loads_lenient`'s second step). Raises nothing.
    """
    if type(raw) is Decoded:
        return raw.value
    data = memoryview(raw)  # type: ignore[arg-type]
    try:  # (`loads_lenient`'s first step: a Raw value always starts as JSON does)
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _loads_standard(data)


def raw_text(raw: Raw | Decoded) -> str | None:
    """The string a `Raw` field holds (base64 image data), or None when it holds another JSON value."""
    if type(raw) is Decoded:
        return raw.value if type(raw.value) is str else None
    data = bytes(raw)  # type: ignore[arg-type]
    if data[:1] != b'"':
        return None
    if b"\\" not in data and data.isascii():
        return data[1:-1].decode("ascii")  # no escape, no multi-byte character: the text itself
    value = loads_lenient(data)
    return value if type(value) is str else None


def raw_text_length(raw: Raw | Decoded) -> tuple[int, str] | None:
    """(length in code points, last two characters) of the string a `Raw` field holds, or None when it
    holds another JSON value; without building the string when its bytes are plain ASCII (base64)."""
    if type(raw) is not Decoded:
        data = bytes(raw)  # type: ignore[arg-type]
        if data[:1] == b'"' and b"\\" not in data and data.isascii():
            return len(data) - 2, data[-3:-1].decode("ascii")
    text = raw_text(raw)
    return None if text is None else (len(text), text[-2:])


def same_record(a: Any, b: Any) -> bool:
    """Whether two decoded records are equal, reading `Raw` and `Decoded` fields by their values, and a
    `Raw` element of a catch-all union's array against the lenient path's plain value (tests)."""
    if isinstance(a, Struct) and isinstance(b, Struct):
        return type(a) is type(b) and all(same_record(getattr(a, f), getattr(b, f)) for f in a.__struct_fields__)
    if isinstance(a, (Raw, Decoded)) or isinstance(b, (Raw, Decoded)):
        return _same(_plain(a), _plain(b))
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(same_record(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and _same(a, b)


def _plain(value: Any) -> Any:
    return raw_value(value) if isinstance(value, (Raw, Decoded)) else value
