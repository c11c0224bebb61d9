"""Claude Code's reader: stream-json captures and session transcripts (with their subagent files).

The stages, each a module (docs/architecture.md draws the data flow): `lines` (bytes → the lines worth
decoding), `records` (a line → a typed record), `dialects` (what tells stream-json from transcripts:
evidence, threads, key spellings, runs), `calls` (which lines are one model call), `content` (what a
content block measures), `builder` and `state` (records → rows, in state classes that merge
themselves), `feed` and `api` (a file read into builders), `split` (a large transcript read in two parts
at once). `CLAUDE_CODE` is the reader behind the `formats.TraceFormat` seam.

Nothing here prints; code above `reading/` reaches this reader through `reading.read_trace`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from contexttrace.reading.claude import split
from contexttrace.reading.claude.api import read_claude
from contexttrace.reading.contract import FORMAT_STREAM_JSON, FORMAT_TRANSCRIPT
from contexttrace.reading.model import SourceFile, Trace


class ClaudeCode:
    """Claude Code's two formats behind the seam; the catch-all reader (it names what a non-trace file is)."""

    agent: str = "Claude Code"
    formats: tuple[str, ...] = (FORMAT_STREAM_JSON, FORMAT_TRANSCRIPT)

    @property
    def split_min_bytes(self) -> int:
        """`split.SPLIT_MIN_BYTES`: a smaller file is read in one part."""
        return split.SPLIT_MIN_BYTES

    def sniff(self, head: bytes) -> bool:
        """Always True: asked last, this reader takes every file no other reader recognised."""
        del head
        return True

    def read(
        self, path: str, fh: IO[bytes], companions: Sequence[SourceFile], words: bool = True, inputs: bool = True
    ) -> list[Trace]:
        """`api.read_claude` on an open file: one `Trace` per run (stream-json), or one with its `companions`
        (a transcript); `words` and `inputs` as there. Raises `TraceReadError`, `EmptyTraceError` or
        `TraceFormatError` as `read_claude` does."""
        return read_claude(path, companions, fh, words=words, inputs=inputs)

    def split_point(self, path: str, after_bytes: int) -> int | None:
        """`split.split_point`: a session transcript of `split.SPLIT_MIN_BYTES` or more."""
        return split.split_point(path, after_bytes)


CLAUDE_CODE = ClaudeCode()

__all__ = ["CLAUDE_CODE", "ClaudeCode"]
