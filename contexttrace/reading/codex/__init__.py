"""OpenAI Codex CLI's reader: session rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`).

`CODEX_CLI` is the reader behind the `formats.TraceFormat` seam; `rollout` holds the rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import IO

from contexttrace.reading.codex.rollout import is_rollout, read_rollout
from contexttrace.reading.contract import FORMAT_CODEX
from contexttrace.reading.model import SourceFile, Trace

#: The opening of a rollout's first line as Codex CLI writes it (serde's field order): where that line is longer
#: than the head the seam sniffs (a large `instructions` or `base_instructions`), it cannot be decoded there.
_SESSION_META_OPENING = re.compile(rb'[\xef\xbb\xbf \t\r\n]*\{"timestamp":"[^"\\]*","type":"session_meta","payload":\{')


def cut_session_meta(head: bytes) -> bool:
    """Whether `head` is the start of a rollout's `session_meta` line cut before its end (no line end in
    `head`): the line opens as Codex CLI writes it. Raises nothing.

    >>> cut_session_meta(b'{"timestamp":"2026-03-06T14:08:30.115Z","type":"session_meta","payload":{"id":"0","ins')
    True
    >>> cut_session_meta(b'{"timestamp":"2026-03-06","type":"user","payload":{'), cut_session_meta(b'{"type":"x"}\\n')
    (False, False)
    """
    return b"\n" not in head and _SESSION_META_OPENING.match(head) is not None


class CodexCLI:
    """Codex CLI rollouts behind the seam: recognised by their first line, read whole (never split)."""

    agent: str = "Codex CLI"
    formats: tuple[str, ...] = (FORMAT_CODEX,)
    split_min_bytes: int | None = None

    def sniff(self, head: bytes) -> bool:
        """`rollout.is_rollout`: the first line is a rollout line; or `cut_session_meta`: the head is the start
        of a `session_meta` line longer than the head."""
        return is_rollout(head) or cut_session_meta(head)

    def read(self, path: str, fh: IO[bytes], companions: Sequence[SourceFile]) -> list[Trace]:
        """`rollout.read_rollout`."""
        return read_rollout(path, fh, companions)

    def split_point(self, path: str, after_bytes: int) -> int | None:
        """None: a rollout is read in one part."""
        del path, after_bytes
        return None


CODEX_CLI = CodexCLI()

__all__ = ["CODEX_CLI", "CodexCLI"]
