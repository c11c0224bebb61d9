"""Google Gemini CLI's reader: saved sessions (`~/.gemini/tmp/<project>/chats/session-*.json` or `.jsonl`).

`GEMINI_CLI` is the reader behind the `formats.TraceFormat` seam; `session` holds the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from contexttrace.reading.contract import FORMAT_GEMINI
from contexttrace.reading.gemini.session import is_session, read_session
from contexttrace.reading.model import SourceFile, Trace


class GeminiCLI:
    """Gemini CLI sessions behind the seam: recognised by their first bytes, read whole (never split)."""

    agent: str = "Gemini CLI"
    formats: tuple[str, ...] = (FORMAT_GEMINI,)
    split_min_bytes: int | None = None

    def sniff(self, head: bytes) -> bool:
        """`session.is_session`: a session document or its metadata line."""
        return is_session(head)

    def read(self, path: str, fh: IO[bytes], companions: Sequence[SourceFile]) -> list[Trace]:
        """`session.read_session`."""
        return read_session(path, fh, companions)

    def split_point(self, path: str, after_bytes: int) -> int | None:
        """None: a session is read in one part."""
        del path, after_bytes
        return None


GEMINI_CLI = GeminiCLI()

__all__ = ["GEMINI_CLI", "GeminiCLI"]
