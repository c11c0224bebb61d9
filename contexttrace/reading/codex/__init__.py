"""OpenAI Codex CLI's reader: session rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`).

`CODEX_CLI` is the reader behind the `formats.TraceFormat` seam; `rollout` holds the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from contexttrace.reading.codex.rollout import is_rollout, read_rollout
from contexttrace.reading.contract import FORMAT_CODEX
from contexttrace.reading.model import SourceFile, Trace


class CodexCLI:
    """Codex CLI rollouts behind the seam: recognised by their first line, read whole (never split)."""

    agent: str = "Codex CLI"
    formats: tuple[str, ...] = (FORMAT_CODEX,)
    split_min_bytes: int | None = None

    def sniff(self, head: bytes) -> bool:
        """`rollout.is_rollout`: the first line is a rollout line."""
        return is_rollout(head)

    def read(self, path: str, fh: IO[bytes], companions: Sequence[SourceFile]) -> list[Trace]:
        """`rollout.read_rollout`."""
        return read_rollout(path, fh, companions)

    def split_point(self, path: str, after_bytes: int) -> int | None:
        """None: a rollout is read in one part."""
        del path, after_bytes
        return None


CODEX_CLI = CodexCLI()

__all__ = ["CODEX_CLI", "CodexCLI"]
