"""What a content block measures: characters of text, images and their size, a tool input's canonical text,
refusals, persisted outputs, what a task notification reports, whether a tool cut its result at a cap.

Pure functions over decoded content (the Structs of `records`, or plain JSON values for `result_size`, the
public helper); no state, no I/O. Lengths are Python code points (exact); sizes are bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

import orjson
from msgspec import Raw

from contexttrace.reading.claude.records import Attachment, Block, InnerBlock, ResultCopy, raw_text, raw_text_length

#: Counts at or above this are not counts (JSON numbers past 2**53 lose precision anyway).
MAX_TOKENS = 2**53

#: Texts of a tool result that mean a person or a rule refused the call: a denial, counted apart from failures.
DENIAL_PREFIXES = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action",
    "User rejected",
    "Permission to use ",
    "Claude requested permissions to ",
)
# Permission refusals written by the harness in `-p` mode: "This command requires approval", "This Bash
# command contains multiple operations. The following part requires approval: ...", "ls in '~/.claude' was
# blocked. For security, ..." (seen in the print-mode sample), and hook denials.
_DENIAL_RE = re.compile(
    r"denied this tool|Permission .{0,80} denied|requires approval|was blocked\. For security", re.IGNORECASE
)
#: `_DENIAL_RE` for ASCII text lowercased: the same matches (an ASCII letter folds to one letter, the length
#: kept), in a fifth of the time (a case-insensitive search compares each character folded, at each position)
_DENIAL_LOWER_RE = re.compile(
    r"denied this tool|permission .{0,80} denied|requires approval|was blocked\. for security"
)
_PERSISTED_SIZE_RE = re.compile(r"Output too large \(([\d.]+)\s*(B|KB|MB|GB)\)")
_SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}

#: How many characters of a failed result's text the reader keeps (`tool_results.error_head`): enough for
#: every error class pattern, which all match at the start.
ERROR_HEAD_CHARS = 300


def result_size(content: Any) -> tuple[int, int, int, int]:
    """Measure a tool_result's content: (text chars, image blocks, image bytes, unknown blocks).

    Parameters
    ----------
    content
        `tool_result.content` as plain JSON: a string, a list of blocks (`text`, `image`, others), or None.

    Returns
    -------
    tuple of int
        Characters of text (a string's length, or the sum of its `text` blocks' lengths; Python code
        points, exact), the number of image blocks, their decoded size in bytes (from the base64 length,
        exact to the byte), and the number of blocks of any other type (skipped). The reader measures its
        own records with `measure`, which gives the same four figures (tests/reading/test_claude_records.py).

    Examples
    --------
    >>> result_size([{"type": "text", "text": "Screenshot"}, {"type": "image", "source": {"data": "QUJD"}}])
    (10, 1, 3, 0)
    """
    if content is None:
        return 0, 0, 0, 0
    if isinstance(content, str):
        return len(content), 0, 0, 0
    if not isinstance(content, list):
        return 0, 0, 0, 1
    chars = images = image_bytes = unknown = 0
    for block in content:
        if not isinstance(block, dict):
            unknown += 1
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str):
                chars += len(text)
        elif kind == "image":
            images += 1
            source = block.get("source")
            data = source.get("data") if isinstance(source, dict) else None
            if isinstance(data, str):
                image_bytes += base64_bytes(len(data), data[-2:])
        else:
            unknown += 1
    return chars, images, image_bytes, unknown


def base64_bytes(length: int, end: str) -> int:
    """Decoded size of base64 text of `length` characters ending in `end`: never negative ("==" alone: 0
    bytes, where the plain formula gives -1)."""
    padding = 2 if end.endswith("==") else 1 if end.endswith("=") else 0
    return max(0, length * 3 // 4 - padding)


_BLOCKS = (Block, InnerBlock)


def measure(content: Any) -> tuple[int, int, int, int, int, int]:
    """`result_size` of decoded content (a string, a list of `Block` / `InnerBlock` or other values, None or
    another value), and two more figures: the pixels (width × height, summed) of the images whose header
    states their size, and how many images that is (`image_size`; a header whose size would take the sum to
    2**53 or more is damage: that image is not sized).

    >>> from contexttrace.reading.claude.records import decode
    >>> rec = decode(b'{"message": {"content": [{"type": "text", "text": "see"}, {"type": "image"}, 3]}}')
    >>> measure(rec.message.content)
    (3, 1, 0, 1, 0, 0)
    """
    if content is None:
        return 0, 0, 0, 0, 0, 0
    if type(content) is str:
        return len(content), 0, 0, 0, 0, 0
    if type(content) is not list:
        return 0, 0, 0, 1, 0, 0
    chars = images = image_bytes = unknown = pixels = sized = 0
    for block in content:
        if type(block) not in _BLOCKS:
            unknown += 1
            continue
        kind = block.type
        if kind == "text":
            text = block.text
            if type(text) is str:
                chars += len(text)
        elif kind == "image":
            images += 1
            source = block.source
            if source is not None:
                length = raw_text_length(source.data)
                if length is not None:
                    image_bytes += base64_bytes(*length)
                    size = image_size(source.data)
                    # a size past 2**53 pixels in all is no image's: its header is damage, the image unsized
                    if size is not None and pixels + size[0] * size[1] < MAX_TOKENS:
                        pixels += size[0] * size[1]
                        sized += 1
        else:
            unknown += 1
    return chars, images, image_bytes, unknown, pixels, sized


def canonical(value: Any, line: int = 0, tool_use_id: Any = None) -> str:
    """A tool input as canonical JSON (sorted keys, no spaces): two inputs are identical when these are.

    orjson stops at 255 levels of nesting; the stdlib takes deeper inputs, and an input too deep even
    for it gets a text of its own that equals no other (it cannot be compared, so it is never a repeat),
    named by its line and tool use id: the same every run.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:
        try:
            return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except (ValueError, TypeError, RecursionError):  # (TypeError: `records.TOO_DEEP`, decoded by no one)
            return f"<input nested too deep: line {line}, tool use {tool_use_id}>"


def first_text(content: Any) -> str:
    """The text of decoded content: a string itself, else its first `text` block's text, else ""."""
    if type(content) is str:
        return content
    if type(content) is list:
        for block in content:
            if type(block) in _BLOCKS and block.type == "text" and type(block.text) is str:
                return str(block.text)
    return ""


def is_denial(text: str) -> bool:
    """Whether an error result's text is a person's or a rule's refusal (a denial, not a failure of the tool):
    it starts with one of `DENIAL_PREFIXES`, or its first 300 characters hold a permission or hook refusal."""
    head = text[:300]
    if head.startswith(DENIAL_PREFIXES):
        return True
    if head.isascii():
        return _DENIAL_LOWER_RE.search(head.lower()) is not None
    return _DENIAL_RE.search(head) is not None


def persisted_bytes(text: str) -> int | None:
    """≈ bytes of a persisted output as its preview states them ("Output too large (1.2MB)"); None when
    the preview states no size, or one that is not a number or out of range (the result still counts)."""
    match = _PERSISTED_SIZE_RE.search(text[:400])
    if match is None:
        return None
    try:
        size = int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])
    except (ValueError, OverflowError):
        return None
    return size if 0 <= size < MAX_TOKENS else None


def is_task_notification(origin: Any, text: str) -> bool:
    """A user line the harness writes when a background command or agent finishes (not a prompt a person typed): its
    `origin.kind` is `task-notification`, or (older lines) its text starts with `<task-notification>`."""
    if type(origin) is dict and origin.get("kind") == "task-notification":
        return True
    return text.lstrip().startswith("<task-notification>")


_NOTIFIED_CALL = re.compile(r"<tool-use-id>\s*([^<\s]{1,200})\s*</tool-use-id>")


def notification_report(text: str) -> tuple[str | None, int | None]:
    """What a task notification says of the background task it reports on: the Task/Agent call its
    `<tool-use-id>` tag names, and the characters of its `<result>` text (the agent's report, as written,
    between the first `<result>` and the last `</result>`); None for what it does not state.

    >>> notification_report("<task-notification>\\n<tool-use-id>toolu_1</tool-use-id>\\n<result>done</result>")
    ('toolu_1', 4)
    >>> notification_report("<task-notification><status>killed</status></task-notification>")
    (None, None)
    """
    m = _NOTIFIED_CALL.search(text)
    start = text.find("<result>")
    end = text.rfind("</result>") if start >= 0 else -1
    report = end - start - len("<result>") if end >= start + len("<result>") else None
    return (m.group(1) if m else None), report


def attachment_text(attachment: Attachment) -> Any:
    """The part of an attachment the model reads, for `attachment_chars`: its `content`, except that a
    listing delta writes its text as `addedLines` / `addedBlocks`, an ``instructions`` attachment as the
    memory files it loaded (`files`, each ``{path, type, content}``: their contents, a list of strings) and a
    ``nested_memory`` one as a ``{path, type, content}`` object (its `content` string). None without text.

    >>> attachment_text(Attachment(type="instructions", files=[{"path": "/p/CLAUDE.md", "content": "abc"}, {}]))
    ['abc']
    >>> attachment_text(Attachment(type="nested_memory", content={"path": "/p/a/CLAUDE.md", "content": "ab"}))
    'ab'
    """
    content = attachment.content
    if content is None and attachment.files is not None:  # instructions: the memory files, their text
        files = attachment.files if type(attachment.files) is list else []
        return [f["content"] for f in files if type(f) is dict and type(f.get("content")) is str]
    if content is None:
        return attachment.addedLines if attachment.addedLines is not None else attachment.addedBlocks
    if attachment.type == "nested_memory" and type(content) is dict and type(content.get("content")) is str:
        return content["content"]
    return content


def attachment_chars(content: Any) -> int | None:
    """Characters an attachment's `content` holds: a string's length, the sum of a list of strings'
    lengths, else the length of the value's compact JSON text; None without content."""
    if content is None:
        return None
    if type(content) is str:
        return len(content)
    if type(content) is list and all(type(item) is str for item in content):
        return sum(map(len, content))
    try:
        return len(orjson.dumps(content).decode())
    except orjson.JSONEncodeError:
        try:
            return len(json.dumps(content, separators=(",", ":"), ensure_ascii=False))
        except (ValueError, RecursionError):
            return None


# -- image sizes ---------------------------------------------------------------------------------------

#: Base64 characters decoded to find a JPEG's frame header (64 KiB of image: past the usual EXIF block).
_JPEG_SCAN_CHARS = 4 * 64 * 1024 // 3
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOFn markers (not DHT, JPG, DAC)


def image_size(data: Any) -> tuple[int, int] | None:
    """(width, height) in pixels that a base64 image's header states (PNG, GIF, WebP, JPEG), else None.

    `data` is the `Raw` (or lenient `Decoded`) of `image.source.data`; only its first characters are
    decoded (40 for PNG, GIF and WebP, up to 64 KiB of image for a JPEG's frame header).

    >>> import base64
    >>> from contexttrace.reading.claude.records import Decoded
    >>> png = b"\\x89PNG\\r\\n\\x1a\\n\\x00\\x00\\x00\\rIHDR" + (640).to_bytes(4, "big") + (480).to_bytes(4, "big")
    >>> image_size(Decoded(base64.b64encode(png).decode()))
    (640, 480)
    """
    head = _b64(data, 40)
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR" and len(head) >= 24:
        return _positive(int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big"))
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return _positive(int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little"))
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg(_b64(data, _JPEG_SCAN_CHARS))
    return None


def _b64(data: Any, chars: int) -> bytes:
    """The bytes of the first `chars` (rounded down to 4) base64 characters of the string `data` holds,
    or b"" (not a string, not base64)."""
    if type(data) is Raw:
        prefix = bytes(memoryview(data)[: chars + 1])  # type: ignore[arg-type]
        if prefix[:1] != b'"' or b"\\" in prefix or not prefix.isascii():
            text = raw_text(data)  # escapes or other characters: the string itself
            if text is None:
                return b""
            prefix = b'"' + text[:chars].encode("ascii", "replace")
        cut = prefix[1:].split(b'"', 1)[0]
    else:
        text = raw_text(data)
        if text is None:
            return b""
        cut = text[:chars].encode("ascii", "replace")
    cut = cut[: len(cut) - len(cut) % 4]
    try:
        return base64.b64decode(cut, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _positive(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


def _webp(head: bytes) -> tuple[int, int] | None:
    kind = head[12:16]
    if kind == b"VP8 " and len(head) >= 30:
        return _positive(int.from_bytes(head[26:28], "little") & 0x3FFF, int.from_bytes(head[28:30], "little") & 0x3FFF)
    if kind == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return _positive((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if kind == b"VP8X" and len(head) >= 30:
        return _positive(int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1)
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """The size in a JPEG's first frame header (SOFn), walking its marker segments."""
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        if marker in _JPEG_FRAMES:
            return _positive(int.from_bytes(data[at + 7 : at + 9], "big"), int.from_bytes(data[at + 5 : at + 7], "big"))
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    return None


# -- the slash command a user line runs -------------------------------------------------------------------

#: The command's name as Claude Code writes a slash-command line (`<command-name>/clear</command-name>`; the
#: `<command-message>` tag may come first).
_COMMAND_NAME = re.compile(r"<command-name>\s*([^<\s]{1,100})\s*</command-name>")


def command_name(text: str) -> str | None:
    """The slash command a user line runs, as written (``"/clear"``), from its `<command-name>` tag; None
    when the text has none (a command's output, `<local-command-stdout>`, names no command).

    >>> command_name("<command-message>clear</command-message>\\n<command-name>/clear</command-name>")
    '/clear'
    >>> command_name("<local-command-stdout></local-command-stdout>") is None
    True
    """
    if "<command-name>" not in text:
        return None
    m = _COMMAND_NAME.search(text)
    return m.group(1) if m else None


# -- whether the tool cut its result at a cap (`context tools`' ⊘ capped) ----------------------------------------

#: `cap_of`'s answer for a result that returned part of a file: capped or not is decided in `build`, by its
#: tool use's input (`read_caps`). Compared by equality (the only string among the booleans of `capped`), so
#: a row that went through a pickle (the tail of a file read in two parts) keeps its meaning.
PART_READ = "part"


def cap_of(copy: ResultCopy) -> bool | str:
    """Whether the tool cut its result at a cap, from its structured copy (⊘ capped in `context tools`): True when
    `truncated` or `truncatedByTokenCap` is true (Glob; an MCP result cut at the token cap), or when a Grep
    stopped at its `appliedLimit` (the head_limit: `numLines` in content mode, else `numFiles`, at least
    the limit, more lines may have matched); `PART_READ` when a Read's `file` returned fewer lines than the
    file has from its `startLine` (cut at the default line limit, unless its input set a `limit`); else False.
    """
    if copy.truncated is True or copy.truncatedByTokenCap is True:
        return True
    limit = copy.appliedLimit
    if type(limit) is int and limit > 0:
        count = copy.numLines if copy.mode == "content" else copy.numFiles
        return type(count) is int and count >= limit
    f = copy.file
    if f is not None:
        n, start, total = f.numLines, f.startLine, f.totalLines
        if type(n) is int and type(start) is int and type(total) is int and n > 0 and start + n - 1 < total:
            return PART_READ
    return False


def read_caps(capped: list[Any], ids: list[Any], uses: dict[str, list[Any]]) -> list[bool]:
    """`tool_results.capped` with each `PART_READ` decided: a result that returned part of a file
    is cut at a cap when its tool use is a Read that set no `limit` (the Read stopped at its default line
    limit); a Read with a `limit` asked for that part. Only the inputs of those results' tool uses are read."""
    part = {tid for c, tid in zip(capped, ids, strict=True) if c == PART_READ and tid is not None}
    limited = {
        tid: not (name == "Read" and type(inp := _loads(text)) is dict and inp.get("limit") is None)
        for tid, name, text in zip(uses["tool_use_id"], uses["name"], uses["input_json"], strict=True)
        if tid in part
    }
    return [c is True or (c == PART_READ and not limited.get(tid, True)) for c, tid in zip(capped, ids, strict=True)]


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
