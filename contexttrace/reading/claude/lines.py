"""Bytes → lines: the lines of an open trace file worth decoding, and what the rest were.

Rules (docs/definitions.md "Bad input"):

* Lines are split on `b"\\n"` only, never on U+2028 or other Unicode breaks (JSON strings may hold them
  raw), read in binary and streamed. A line is handed on with its `\\n` or `\\r\\n` end (JSON
  whitespace), never copied.
* A UTF-8 byte-order mark at the start of the file (or of a run `cat` appended) is dropped; a UTF-16
  capture (Windows PowerShell's `>`) reaches here already decoded to UTF-8 (`files.open_trace`).
* JSON text never holds a raw NUL byte, so NULs are damage left by a crash while appending, never
  content: a line of NULs only is skipped as padding; a record followed by NULs is read without them.
* Blank lines are not records. Lines whose top-level `type` shows they hold no figure
  (`dialects.SKIP_TYPES`) are recognised by their bytes and not decoded; a line above
  `OVERSIZED_LINE_BYTES` that cannot hold a figure is skipped unread and counted (`Trace.oversized_lines`).

This module decodes no JSON: whether a line decodes, and what a line that does not is (not JSON, a
truncated last line), is decided by the reader of these lines (`feed.feed`). It never prints; a read that
fails midway raises `TraceReadError` naming the line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from contexttrace.errors import TraceReadError
from contexttrace.reading.claude.dialects import SKIP_TYPES

if TYPE_CHECKING:
    from contexttrace.reading.claude.builder import Diagnostics

#: Above this size a line is decoded only if its bytes show it can hold a figure (a file-history snapshot can be
#: a line of hundreds of MB).
OVERSIZED_LINE_BYTES = 8 * 1024 * 1024
_OVERSIZED_NEEDED = (b'"usage"', b'"tool_use"', b'"tool_result"', b'"subtype"')
_TYPE_KEY = b'"type":"'
#: The first bytes of each type in `SKIP_TYPES` (as many as the shortest has): a line whose first type does not
#: start with one of them names no skipped type, and its type is not cut out of it (`Lines.__iter__`).
_HEAD_LEN = min(map(len, SKIP_TYPES))
_SKIP_HEADS = frozenset(t[:_HEAD_LEN] for t in SKIP_TYPES)


class Head(io.RawIOBase):
    """The first `size` bytes of a raw binary file, as a raw stream (`io.BufferedReader` splits its lines):
    the head of a file read in two parts (`split.read_head`)."""

    def __init__(self, raw: IO[bytes], size: int) -> None:
        self._raw = raw
        self._left = size

    def readable(self) -> bool:
        """Always True: a head is read, never written."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Read into `buffer` up to the head's end; returns the number of bytes read (0 at the end)."""
        if self._left <= 0:
            return 0
        with memoryview(buffer) as view:
            got = self._raw.readinto(view[: self._left])  # type: ignore[attr-defined]
        self._left -= got
        return int(got)

    def close(self) -> None:
        """Close the head and the file under it."""
        self._raw.close()
        super().close()


#: How a whole record's line ends (with its line end, or the file's last line without one).
_WHOLE_ENDS = (b"}\n", b"}\r\n", b"}")
# The two tests that scan a whole line, as compiled searches: `re` finds a literal by its first byte with
# memchr, 2-3x faster than `in` on these lines (0.12 s against 0.24 s over the 315 MB real-content corpus,
# benchmarks/README.md); `}\r{` is looked for only in a line that holds a CR at all (a memchr).
#: Two records on one line (a lost newline): `}{"` never occurs inside a JSON string, whose quotes are escaped.
_GLUED = re.compile(rb'\}\{"').search
#: Line ends written as CR alone (an old Mac's): `}\r{` between two records.
_CR_ENDS = re.compile(rb"\}\r\{").search
#: The bytes CR and NUL as ints: `int in bytes` is a memchr, where `b"\r" in bytes` first tries to read its
#: argument as an int (a TypeError made and cleared: ~1,800 instructions a test, 1.5 % of a read).
_CR, _NUL = ord("\r"), ord("\x00")


class Lines:
    """The lines of a binary trace file worth decoding, in order; iterate once.

    Each line yielded is a record to decode (with its line end); `number` is its 1-based line number
    while it is being handled, and the file's line count once iteration ends. The lines not yielded are
    accounted for as they pass: NUL padding and oversized lines in `diag` (the builder being filled; the
    reader swaps it when a stream-json run starts), lines skipped by their type in `take_skipped()`.

    The type test: the first `"type":"` of a line is a key of the outermost object when exactly one `{`
    comes before it (JSON escapes every quote inside a string, so `"type":"` is never text, and a nested
    object would open a second `{`). When the test cannot tell (a `{` inside an earlier string, a nested
    `type` first), the line is yielded: the test only saves work, it never decides a figure.

    Damage is looked for only in a line that does not decode: a byte-order mark, a NUL byte and `}\r{`
    (two records on CR line ends) each make a line malformed JSON, so a line that decodes holds none of
    them, and scanning every line for them would cost more than the rare retry. The reader hands a line
    that did not decode to `retry`, which reads it as the rules above say and yields what it holds next
    (tests/reading/test_claude_lines.py checks both ways on every sample, case and fuzz file).
    """

    def __init__(self, fh: IO[bytes], path: str, diag: Diagnostics) -> None:
        self.fh = fh
        self.path = path
        self.diag = diag
        self.number = 0
        self._skipped: list[bytes] = []
        self._again: list[bytes] = []  # what `retry` found in the line just yielded: yielded next
        self._retried = False  # the lines being yielded are those: never retried again

    def take_skipped(self) -> list[bytes]:
        """The top-level types of the lines skipped by their type since the last call."""
        out, self._skipped = self._skipped, []
        return out

    def __iter__(
        self,
    ) -> Iterator[bytes]:  # the per-line loop, inlined on purpose (equivalence: test_claude_lines, test_samples)
        path = self.path
        number = 0
        skip_types, skip_heads, head_len = SKIP_TYPES, _SKIP_HEADS, _HEAD_LEN
        type_key = _TYPE_KEY
        key_len = len(_TYPE_KEY)
        oversized = OVERSIZED_LINE_BYTES
        skipped = self._skipped
        glued, cr_ends = _GLUED, _CR_ENDS
        try:
            for raw in self.fh:
                number += 1
                at = raw.find(type_key)
                if at > 0:  # `skipped_type`, inlined (the per-line loop)
                    start = at + key_len
                    # skipped when the type named first is one of them (most lines name a block's or a
                    # message's type first, and the other tests are not needed), it is the outermost
                    # object's (one `{` before it), and the line is one whole record: it ends with `}` (not
                    # cut short) and no `}{"` shows another record glued on (a lost newline; `}{"` never
                    # occurs inside a JSON string, whose quotes are escaped), nor `}\r{` (CR-only line ends);
                    # a line with a NUL is decoded (and counted when it holds one: `retry`). Otherwise it is
                    # decoded (or split at its CRs), and counted if bad.
                    if (
                        raw[start : start + head_len] in skip_heads  # (a cheap first test: most lines fail it)
                        and (top := raw[start : raw.find(b'"', start)]) in skip_types
                        and raw.count(b"{", 0, at) == 1
                        and raw.endswith(_WHOLE_ENDS)
                        and glued(raw) is None
                        and (_CR not in raw or cr_ends(raw) is None)
                        and _NUL not in raw
                    ):
                        skipped.append(top)
                        continue
                elif at < 0 and raw.isspace():
                    continue  # a blank line
                if len(raw) > oversized and not any(m in raw for m in _OVERSIZED_NEEDED) and not _damaged(raw):
                    self.diag.oversized += 1
                    continue
                self.number = number
                yield raw
                if self._again:
                    again, self._again = self._again, []
                    self._retried = True
                    yield from again
                    self._retried = False
        except OSError as exc:
            raise TraceReadError(path, f"read failed at line {number + 1}: {exc.strerror or exc}") from None
        self.number = number

    def retry(self, raw: bytes) -> bool:
        """Whether the line just yielded, which did not decode, holds damage these rules repair (a byte-order
        mark, NUL bytes, CR-only line ends): then the lines to decode in its place are yielded next (none for
        NUL padding or a line skipped by its type once repaired), and the line itself is not to be counted.
        False for a line yielded by a retry, and for one with no such damage: it is bad as it is."""
        if self._retried or not (_damaged(raw) or (_CR in raw and _CR_ENDS(raw) is not None)):
            return False
        self._again = self._repaired(raw)
        return True

    def _repaired(self, raw: bytes) -> list[bytes]:
        """The lines to decode of a damaged line: every rule of the class read in order."""
        if raw.startswith(_BOM):
            raw = raw[3:]  # a UTF-8 byte-order mark, at the file's start or a run's (`cat`)
        if _NUL in raw:
            raw = raw.replace(b"\x00", b"")
            diag = self.diag
            diag.nul_seen = True
            if not raw.strip():
                diag.nul_lines += 1
                diag.skip(self.path, self.number, "NUL padding (left by a crash while writing)")
                return []
        top = skipped_type(raw)
        if top is not None:
            self._skipped.append(top)
            return []
        if raw.isspace():
            return []  # a blank line
        if len(raw) > OVERSIZED_LINE_BYTES and not any(m in raw for m in _OVERSIZED_NEEDED):
            self.diag.oversized += 1
            return []
        if _CR in raw and _CR_ENDS(raw) is not None:  # line ends written as CR alone: one record per part
            return [part for part in raw.split(b"\r") if part.strip()]
        return [raw]


_BOM = b"\xef\xbb\xbf"


def skipped_type(raw: bytes) -> bytes | None:
    """The top-level type of a line skipped unread by its type (`dialects.SKIP_TYPES`), else None: the
    first `"type":"` after exactly one `{`, in a line that is one whole record (it ends with `}`, no `}{"`
    glued record, no `}\\r{` CR-only line ends). `Lines.__iter__` inlines this test in its loop (with a NUL
    test: a line with one is repaired first); tests/reading/test_claude_lines.py holds the two equal."""
    at = raw.find(_TYPE_KEY)
    if at <= 0 or raw.count(b"{", 0, at) != 1:
        return None
    start = at + len(_TYPE_KEY)
    top = raw[start : raw.find(b'"', start)]
    whole = raw.endswith(_WHOLE_ENDS) and _GLUED(raw) is None and (_CR not in raw or _CR_ENDS(raw) is None)
    return top if whole and top in SKIP_TYPES else None


def _damaged(raw: bytes) -> bool:
    """Whether a line starts with a UTF-8 byte-order mark or holds a NUL byte (either makes it malformed JSON)."""
    return raw.startswith(_BOM) or _NUL in raw
