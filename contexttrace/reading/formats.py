"""The seam between trace formats: each agent's reader behind one small protocol, and how a file picks one.

A format is recognised from a file's first bytes (`TraceFormat.sniff`), never from its name, and reads
the file with its companion files (a session's subagent files) into `Trace` objects (`TraceFormat.read`).
`api.FORMATS` lists the readers in the order they are asked: a reader that recognises its own records
only comes first; Claude Code's reader comes last and takes every other file, because it is the one that
names what a file is when it is no trace (not JSON, empty, another record shape).

Code above `reading/` never asks which format a trace came from: it asks the trace what it records
(`Trace.has`, `contract.Capabilities`).
This module imports no reader (`api` lists them) and reads no file but its first bytes (`head_of`).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Protocol

from contexttrace.reading.files import first_bytes

if TYPE_CHECKING:
    from contexttrace.reading.model import SourceFile, Trace

#: How many bytes of a file's start a reader may look at to recognise it.
HEAD_BYTES = 64 * 1024


class TraceFormat(Protocol):
    """One agent's trace format: how to recognise a file of it and read one into traces."""

    #: The agent, as a person names it ("Claude Code").
    agent: str
    #: The `Trace.format` names this reader gives its traces (each with its `contract.Capabilities`).
    formats: tuple[str, ...]

    def sniff(self, head: bytes) -> bool:
        """Whether a file starting with `head` (up to `HEAD_BYTES`, perhaps cut mid-line) is this format's."""
        ...

    def read(self, path: str, fh: IO[bytes], companions: Sequence[SourceFile]) -> list[Trace]:
        """Read the open file `fh` (named `path`) and its `companions` (subagent files) into traces.

        Raises `errors.ContextTraceError` subclasses for a file that cannot be read or holds no trace.
        """
        ...

    @property
    def split_min_bytes(self) -> int | None:
        """The least size of a file this reader reads in two parts at once; None when it never does."""
        ...

    def split_point(self, path: str, after_bytes: int) -> int | None:
        """Where a large file can be cut to be read in two parts at once, or None (never, or not this one)."""
        ...


def peekable(fh: IO[bytes]) -> IO[bytes]:
    """`fh`, or `fh` wrapped so that its first bytes can be looked at without consuming them."""
    if hasattr(fh, "peek"):
        return fh
    return io.BufferedReader(fh, buffer_size=HEAD_BYTES)  # type: ignore[arg-type,type-var]


def head_of(fh: IO[bytes], from_start: bool = False) -> bytes:
    """The first bytes of a peekable file (at most `HEAD_BYTES`; fewer when its buffer holds fewer), not
    consumed; `from_start`: a file just opened, read where its bytes are (`files.first_bytes`)."""
    return first_bytes(fh, HEAD_BYTES, from_start)
