"""Opening a trace file, whatever its agent: standard input, fsspec URLs, and UTF-16 captures.

Every reader reads bytes from the handle `open_trace` gives: a UTF-16 capture (Windows PowerShell's `>`),
recognised by its byte-order mark or a `{` written as a UTF-16 unit, is decoded and handed on as UTF-8, so
no reader meets UTF-16. `api.format_of` recognises a file by its first bytes without consuming them
(`formats.peekable` wraps a handle that cannot ``peek``).

It knows no trace format and never prints; a file that cannot be opened raises `TraceReadError`.
"""

from __future__ import annotations

import io
import os
import sys
from typing import IO

from contexttrace.errors import TraceReadError
from contexttrace.reading.urls import is_url, open_url

#: Byte-order marks of UTF-16 (Windows PowerShell's `>` and `Out-File` write UTF-16LE with one).
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def open_trace(path: str) -> IO[bytes]:
    """Open a trace file (or standard input for ``"-"``) for reading its lines, decoding UTF-16.

    Parameters
    ----------
    path
        A path on disk, an fsspec URL (``s3://``, ``memory://``, ...), or ``"-"`` for standard input.

    Returns
    -------
    binary file
        Buffered, positioned at the start; a UTF-16 file (byte-order mark, or `{` written as a UTF-16
        unit: `is_utf16`) is read whole and given back as its UTF-8 bytes in memory. The caller closes it
        (standard input excepted).

    Raises
    ------
    TraceReadError
        The file is missing, a directory, or cannot be read.
    """
    if path == "-":
        return _utf8(sys.stdin.buffer)
    if "://" in path and is_url(path):  # an fsspec URL: s3://, gs://, file://, memory://
        return _utf8(open_url(path))
    if os.path.isdir(path):
        raise TraceReadError(path, "is a directory where a file was expected")
    try:
        return _utf8(open(path, "rb", buffering=1024 * 1024), from_start=True)  # 1 MiB: `Lines` reads lines from it
    except FileNotFoundError:
        raise TraceReadError(path, "no such file") from None
    except OSError as exc:
        raise TraceReadError(path, f"cannot read: {exc.strerror or exc}") from None


def is_utf16(start: bytes) -> bool:
    r"""Whether a file starting with these 4 bytes is UTF-16: a UTF-16 byte-order mark, or `{` and another
    ASCII character as two UTF-16 units (one NUL before a UTF-8 record is damage, not UTF-16).

    >>> is_utf16(b'{\x00"\x00'), is_utf16(b'\x00{\x00"'), is_utf16(b'\x00{"t'), is_utf16(b"\xff\xfe{\x00")
    (True, True, False, True)
    """
    if start.startswith(_UTF16_BOMS):
        return True
    le = start[:2] == b"{\x00" and start[3:4] == b"\x00" and start[2:3] not in (b"", b"\x00")
    be = start[:2] == b"\x00{" and start[2:3] == b"\x00" and start[3:4] not in (b"", b"\x00")
    return le or be


def first_bytes(fh: IO[bytes], size: int, from_start: bool = False) -> bytes:
    """The first `size` bytes of `fh` (fewer at its end, or when its buffer holds fewer), without consuming
    them. `from_start`: `fh` is a file just opened, whose bytes are read where they are (`os.pread`: a
    `peek` copies the handle's whole buffer, 1 MiB, into a bytes), else peeked (a named pipe, standard
    input, a URL's handle, Windows). A handle that can do neither gives b"". Raises OSError."""
    pread = getattr(os, "pread", None) if from_start else None  # (Windows has none)
    if pread is not None:
        try:
            return bytes(pread(fh.fileno(), size, 0))
        except (OSError, ValueError):  # not seekable, or no descriptor (io.UnsupportedOperation is both)
            pass
    peek = getattr(fh, "peek", None)
    return b"" if peek is None else bytes(peek(size)[:size])


def _utf8(fh: IO[bytes], from_start: bool = False) -> IO[bytes]:
    """`fh` itself, or for a UTF-16 file its whole text decoded and given back as UTF-8 bytes (a UTF-16
    capture is a Windows run's stdout: small). An undecodable unit becomes U+FFFD. `from_start`: `fh` is a
    file just opened (`first_bytes`). Raises OSError."""
    start = first_bytes(fh, 4, from_start)
    if not is_utf16(start):
        return fh
    data = fh.read()
    if fh is not sys.stdin.buffer:
        fh.close()
    codec = "utf-16" if data.startswith(_UTF16_BOMS) else ("utf-16-le" if data.startswith(b"{") else "utf-16-be")
    return io.BytesIO(data.decode(codec, errors="replace").encode("utf-8", errors="replace"))
