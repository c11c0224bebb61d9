"""Files behind fsspec URLs (``s3://``, ``gs://``, ``file://``, ``memory://``): telling a URL, opening one.

What a reader needs to open a trace file or a subagent's ``.meta.json`` that lives on an object store, and
what discovery (`discover.remote`) and the filters need to ask of one. fsspec is imported only when a URL
is met (`import contexttrace` never imports it); ``s3://`` needs `s3fs`, ``gs://`` `gcsfs` (the ``s3`` and
``gcs`` extras), and a missing plugin is named in the error. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import IO, Any

#: A URL: a scheme of two or more characters, then ``://`` (a Windows drive, ``C:\\``, is not one).
_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
#: What to install to read URLs at all, and per scheme the extra that brings its fsspec plugin.
INSTALL_HINT = "pip install 'contexttrace[dask]'"
_PLUGIN_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}


def is_url(path: str) -> bool:
    """Whether a path argument is an fsspec URL (``scheme://...``).

    >>> is_url("s3://bucket/traces/"), is_url("memory://t/a.jsonl"), is_url("runs/a.jsonl"), is_url("C:\\\\t")
    (True, True, False, False)
    """
    return _URL_RE.match(path) is not None


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec file system of a URL and the URL's path on it. Raises ImportError (fsspec, or the
    scheme's plugin, missing: the message names what to install), ValueError for an unknown scheme."""
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise ImportError(f"reading URLs needs fsspec: {INSTALL_HINT}") from None
    try:
        return url_to_fs(url)  # type: ignore[no-any-return]
    except ImportError as exc:  # fsspec's own message ("Install s3fs to access S3"), with our extra
        scheme = url.split("://", 1)[0].lower()
        extra = _PLUGIN_EXTRAS.get(scheme)
        hint = f": pip install 'contexttrace[{extra}]'" if extra else ""
        raise ImportError(f"{exc}{hint}") from None


def reason(exc: BaseException) -> str:
    """An exception met while listing or reading a URL, as a reason in a message."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot read: {exc.strerror.lower()}"
    return f"cannot read: {exc}" if str(exc) else f"cannot read: {type(exc).__name__}"


def open_url(url: str) -> IO[bytes]:
    """Open the file at a URL for reading, buffered (``peek`` works: `files.open_trace` looks for UTF-16).

    Raises
    ------
    TraceReadError
        The file is missing, a folder, or cannot be read (no credentials, the scheme's plugin missing: the
        reason names what to install).
    """
    from contexttrace.errors import TraceReadError

    try:
        fs, path = filesystem(url)
    except (ImportError, ValueError) as exc:
        raise TraceReadError(url, reason(exc)) from None
    try:
        raw = fs.open(path, "rb")  # (the file system's own block size: one request per block on a store)
    except (OSError, ValueError) as exc:
        # asked only now: one request more for a file that cannot be opened, none for every other file
        folder = False
        with contextlib.suppress(Exception):
            folder = bool(fs.isdir(path))
        raise TraceReadError(url, "is a directory where a file was expected" if folder else reason(exc)) from None
    return io.BufferedReader(raw, buffer_size=256 * 1024)


def read_meta(url: str) -> dict[str, Any] | None:
    """`claude.feed.agent_meta` for a subagent file behind a URL: the JSON object in the ``.meta.json``
    file at `url`; None when it is missing, cannot be read or is not a JSON object. Raises nothing."""
    import orjson

    try:
        fs, path = filesystem(url)
        loaded = orjson.loads(fs.cat_file(path))
    except Exception:  # a meta file is optional: missing, unreadable or damaged, it is the same
        return None
    return loaded if isinstance(loaded, dict) else None


def is_folder(url: str) -> bool:
    """Whether a URL names a folder (an object-store prefix): `filters.is_scan` for a URL. Raises nothing."""
    try:
        fs, path = filesystem(url)
        return bool(fs.isdir(path))
    except Exception:  # cannot be listed: not a folder scan (its error is reported by discovery)
        return False


def modified_ms(url: str) -> int:
    """When the file at a URL was last written, in Unix epoch ms (`facts.trace_facts` dates a stream-json
    run without timestamps by it, as it dates a file on disk by its ``st_mtime``).

    Raises
    ------
    OSError
        The file is gone, or its file system tells no modification time.
    """
    try:
        fs, path = filesystem(url)
        info = fs.info(path)
        mtime = info.get("mtime")  # the local file system's st_mtime, as `os.stat` gives it
        if isinstance(mtime, (int, float)):
            return int(mtime * 1000)
        return int(fs.modified(path).timestamp() * 1000)
    except OSError:
        raise
    except Exception as exc:  # no modification time (NotImplementedError), the plugin missing, ...
        raise OSError(f"{url}: no modification time ({type(exc).__name__})") from None
