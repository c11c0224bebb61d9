"""Whole-command replay: a reading command run again over files that did not change prints what it printed.

A run of `context trace`, `usage`, `tools`, `sources` or `files` with the result store on keeps its finished
output: the bytes it wrote to stdout and stderr, in the order written, and its exit code. A later run of the
same command line whose every input is as it was writes those bytes again and exits with that code, before
Typer, the readers or the report code are imported (`replay_or_run`, called by the console script's `main`).

**The key** (`command_key`): the arguments after the program's name and the program's name, the working
folder, the user id, the package's version, the Python (version, executable, prefix), the encodings of stdout
and stderr, and the environment variables the program or its libraries read (`ENV_VARS`, and every
``CONTEXTTRACE_*`` and ``POLARS_*``). An entry holds its key, checked whole: the file's name is only a hash.

**The inputs** (`_inputs`), stat'ed when the run ends and compared (type and mode, size, modification and
change times in ns, inode) before each replay, absent ones as absent:

* every file read: each source's main file, its subagent files and their `.meta.json` (every `.jsonl` and
  `.json` file in a folder discovery listed, and the path arguments the command read, `note_paths`), and
  any other file this process opened for reading (a time zone file);
* every folder discovery listed (a new file in a project folder, a new `subagents/` folder changes its
  modification time), each path argument and, for those that do not exist, their nearest existing folder;
  without a path, every session root discovery looks at (`discover.local.root_candidates`), likewise;
* `/etc/localtime`; every module and data file of the package (the reader's version, `READER_VERSION`, and
  every report's code live there) and of every other module the run imported outside the standard library
  (Typer, msgspec, orjson, tabulate...).

**Never replayed nor kept**: `--no-cache`; `--output`, `--db` and `--label` (they write files), `--engine`
and `--scheduler`, `--help`; standard input (``-``), URLs and quoted globs; a `--since` or `--until` relative
to the clock (``7d``, ``today``: `clock_relative`); any other short option than ``-q`` and ``-v``, and any
long one not in `ALLOWED_OPTIONS`; a run whose stdout or stderr is a terminal (a progress bar, grouped notes
and colour depend on it); a run that raised, or ended with another code than 0 or 3 (a trace that failed may
fail for a reason no stamp shows); a run that warned about the result store; a run any input of which was
modified less than `RACY_NS` before the run began (it may change again within the same timestamp), or whose
stamp changed while the run read it. Paths are stamped as the system resolves them (`absolute`).

**Bounded**: at most `MAX_ENTRIES` entries and `MAX_BYTES` in all in `<cache folder>/contexttrace-replay/`
(the least recently used go first); a run's output above `MAX_ENTRY_BYTES` is not kept. `cache info` counts
them and `cache clear` deletes them with the store.

**Trust**: an entry's head is a `marshal` document of strings, ints, tuples and lists (no code runs) behind a
CRC-32, followed by the output (copied to stdout and stderr with `os.sendfile`, never read into this process;
its length checked, not its bytes: a CRC of megabytes would cost more than the rest of a replay), in a folder
of mode 700, written with mode 600 and moved into place whole; a head that fails its CRC, its shape or its
key, or a file of another length, is a miss. This module never fails a run: anything unexpected is a miss,
or an output not kept.
"""

from __future__ import annotations

import contextlib
import errno
import io
import marshal
import os
import re
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from typing import Any

#: The commands replayed: `context <name>`.
COMMANDS = frozenset({"trace", "usage", "tools", "sources", "files"})
#: The long options of those commands whose runs are replayed (a flag or an option with its value); a run
#: with any other long option (`--output`, `--db`, `--label`, `--no-cache`, `--engine`, `--scheduler`,
#: `--help`, and any option added later) runs in full and is not kept.
ALLOWED_OPTIONS = frozenset(
    {
        "--window", "--calls", "--json", "--explain", "--color", "--no-color", "--format", "--fail-on",
        "--since", "--until", "--timezone", "--project", "--session", "--sort", "--desc", "--asc", "--totals",
        "--no-totals", "--wide", "--quiet", "--verbose", "--allow-empty", "--breakdown", "--group-by",
        "--by-tool", "--at", "--steps", "--view", "--thread",
    }
)  # fmt: skip
#: The short options allowed (`-q`, `-v`); any other (`-o FILE`, `-h`, `-` for standard input) is not.
ALLOWED_SHORT = frozenset({"-q", "-v"})
#: Environment variables the program or its libraries read: where traces are (HOME, CLAUDE_CONFIG_DIR,
#: CODEX_HOME), where the store is (XDG_CACHE_HOME), time zone, colour and terminal size, encodings, the
#: modules imported (PYTHONPATH). Every `CONTEXTTRACE_*` and `POLARS_*` variable is in the key too.
ENV_VARS = (
    "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CACHE_HOME", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
    "CLICOLOR_FORCE", "TERM", "COLORTERM", "COLUMNS", "LINES", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING",
    "PYTHONUTF8", "PYTHONPATH", "PYTHONHASHSEED",
)  # fmt: skip
ENV_PREFIXES = ("CONTEXTTRACE_", "POLARS_")
#: An input modified less than this before the run began makes the run's output not kept.
RACY_NS = 2_000_000_000
#: Entries kept, at most; and bytes in all (the least recently used are deleted first).
MAX_ENTRIES = 64
MAX_BYTES = 256 * 2**20
#: A run whose output (stdout and stderr) is larger is not kept.
MAX_ENTRY_BYTES = 64 * 2**20
#: The folder of the entries, in the result store's folder.
DIR_NAME = "contexttrace-replay"

#: An entry: `_MAGIC`, the length and CRC-32 of its head (4 bytes each, big-endian), the head (a `marshal`
#: document: key, input paths, their stamps, the output's spans as (stream, length), exit code), the output.
_MAGIC = b"ctreplay2\n"
_HEAD = len(_MAGIC) + 8
#: The package's folder (`contexttrace/`): its modules and data files are inputs of every run.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The relative `--since`/`--until` values (`select.filters.parse_when`): a time ago, today, yesterday.
_RELATIVE = re.compile(r"(\d+)\s*[dhw]|today|yesterday")
#: Path arguments the store cannot key on files: URLs, globs, standard input.
_NOT_FILES = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|[*?\[]")


def replay_dir() -> str:
    """The entries' folder: `DIR_NAME` in the result store's (`store.cache_dir`; platformdirs imported only then)."""
    chosen = os.environ.get("CONTEXTTRACE_CACHE_DIR", "").strip()
    if chosen:
        return os.path.join(os.path.abspath(os.path.expanduser(chosen)), DIR_NAME)
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("contexttrace", appauthor=False), DIR_NAME)


def clock_relative(value: str) -> bool:
    """Whether a `--since`/`--until` value is relative to the clock (its run is never replayed).

    >>> [clock_relative(v) for v in ("7d", " 12 H", "today", "2026-02-12", "20260212T10:00")]
    [True, True, True, False, False]
    """
    return _RELATIVE.fullmatch(value.strip().lower()) is not None


def replayable(argv: list[str]) -> bool:
    """Whether a command line may be replayed and kept: one of `COMMANDS`, only `ALLOWED_OPTIONS` and
    `ALLOWED_SHORT`, no `--since`/`--until` relative to the clock, no standard input, URL or glob.

    >>> replayable(["context", "trace", "runs", "--json"]), replayable(["context", "trace", "--since", "7d"])
    (True, False)
    >>> replayable(["context", "trace", "-"]), replayable(["context", "trace", "--no-cache"])
    (False, False)
    """
    if len(argv) < 2 or argv[0] != "context" or argv[1] not in COMMANDS:
        return False
    rest = argv[2:]
    for i, arg in enumerate(rest):
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name not in ALLOWED_OPTIONS:
                return False
            if name in ("--since", "--until"):
                value = value if eq else (rest[i + 1] if i + 1 < len(rest) else "")
                if clock_relative(value):
                    return False
        elif (arg.startswith("-") and arg not in ALLOWED_SHORT) or _NOT_FILES.search(arg):
            return False
    return True


def command_key(argv: list[str]) -> tuple[Any, ...]:
    """What an entry is kept under besides its inputs' stamps (the module docstring lists it)."""
    from contexttrace.version import __version__

    env = tuple((k, v) for k, v in sorted(os.environ.items()) if k in ENV_VARS or k.startswith(ENV_PREFIXES))
    streams = tuple((s.encoding, s.errors) for s in (sys.stdout, sys.stderr))
    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    uid = os.geteuid() if hasattr(os, "geteuid") else -1
    where = (sys.version, sys.executable, sys.prefix, _PACKAGE)
    return (tuple(argv), program, os.getcwd(), uid, __version__, where, streams, env)


def _entry_name(key: tuple[Any, ...]) -> str:
    blob = marshal.dumps(key)
    return f"{zlib.crc32(blob):08x}{zlib.adler32(blob):08x}.bin"


def _stamp(path: str) -> tuple[int, ...] | None:
    """(mode, size, mtime ns, ctime ns, inode) of a path (symbolic links followed), or None when absent."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _plain_streams() -> bool:
    """Whether stdout and stderr are the process's own streams (with a file descriptor), neither a terminal."""
    try:
        return not any(os.isatty(s.fileno()) for s in (sys.stdout, sys.stderr))
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False


# -- replaying --------------------------------------------------------------------------------------------


def _load(fd: int, key: tuple[Any, ...]) -> tuple[list[tuple[int, int]], int, int] | None:
    """The spans (stream, length) of the output kept in the open entry `fd` for `key`, its exit code and
    where its output starts, when its every input is as it was; else None."""
    head = os.pread(fd, _HEAD, 0)
    if len(head) != _HEAD or head[: len(_MAGIC)] != _MAGIC:
        return None
    size, checksum = int.from_bytes(head[-8:-4], "big"), int.from_bytes(head[-4:], "big")
    blob = os.pread(fd, size, _HEAD)
    if len(blob) != size or zlib.crc32(blob) != checksum:
        return None
    try:
        kept_key, paths, stamps, spans, code = marshal.loads(blob)
    except (ValueError, TypeError, EOFError):
        return None
    if kept_key != key or type(paths) is not list or type(stamps) is not list or len(paths) != len(stamps):
        return None
    if list(map(_stamp, paths)) != stamps:
        return None
    if type(code) is not int or type(spans) is not list or not all(map(_is_span, spans)):
        return None
    if os.fstat(fd).st_size != _HEAD + size + sum(n for _, n in spans):
        return None
    return spans, code, _HEAD + size


def _is_span(span: Any) -> bool:
    return type(span) is tuple and len(span) == 2 and span[0] in (0, 1) and type(span[1]) is int and span[1] >= 0


def _copy(src: int, dst: int, offset: int, length: int) -> None:
    """Write `length` bytes of the file `src` from `offset` to `dst`: `os.sendfile` (no copy through this
    process), or reads and writes where the system refuses it."""
    while length > 0:
        try:
            n = os.sendfile(dst, src, offset, min(length, 2**30))
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSOCK, errno.EOPNOTSUPP):
                raise
            n = _write_all(dst, os.pread(src, min(length, 2**20), offset))
        if n <= 0:
            raise EOFError(f"entry shorter than its spans by {length} bytes")
        offset += n
        length -= n


def _write_all(fd: int, data: bytes) -> int:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return len(data)


def replay(argv: list[str]) -> int | None:
    """Write the output kept for this command line and return its exit code, or None (nothing written)
    when it may not be replayed, is not kept, or any of its inputs changed."""
    if not replayable(argv) or not _plain_streams():
        return None
    try:
        key = command_key(argv)
        path = os.path.join(replay_dir(), _entry_name(key))
        fd = os.open(path, os.O_RDONLY)
    except Exception:  # a miss, never a failure
        return None
    try:
        try:
            found = _load(fd, key)
        except Exception:
            return None
        if found is None:
            return None
        spans, code, offset = found
        fds = (sys.stdout.fileno(), sys.stderr.fileno())
        try:
            for stream, length in spans:
                _copy(fd, fds[stream], offset, length)
                offset += length
        except BrokenPipeError:  # the reader went away: the command's own exit code, as a full run ends
            return code
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.utime(path)  # its last use, for `_prune`
    return code


# -- keeping --------------------------------------------------------------------------------------------


class _Tee(io.RawIOBase):
    """The raw stream under a swapped stdout or stderr: writes to the file descriptor and keeps what it
    wrote, in order, with the stream's number (0 stdout, 1 stderr)."""

    def __init__(self, fd: int, stream: int, rec: _Recording) -> None:
        super().__init__()
        self._fd, self._stream, self._rec = fd, stream, rec

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def fileno(self) -> int:
        return self._fd

    def write(self, b: Any) -> int:
        data = bytes(b)
        if self._rec.reader_gone:
            return len(data)
        try:
            n = os.write(self._fd, data)
        except BrokenPipeError:  # the reader went away (`| head`): the rest dropped, the run's own exit code
            self._rec.reader_gone = True  # (a cut output is never kept)
            return len(data)
        self._rec.chunks.append((self._stream, data[:n]))
        return n


class _Recording:
    """What one run wrote and looked at: its output chunks, the folders it listed, the files it opened for
    reading, and the path arguments its command read (`note_paths`)."""

    def __init__(self) -> None:
        self.chunks: list[tuple[int, bytes]] = []
        self.listed: list[Any] = []
        self.opened: list[Any] = []
        self.paths: list[list[str]] = []
        self.reader_gone = False  # a pipe's reader closed it
        self.when_read: dict[str, tuple[int, ...] | None] = {}  # path -> its stamp when first opened


_ACTIVE: _Recording | None = None
_HOOKED = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: folders listed and files opened while a run is recorded (never raises)."""
    rec = _ACTIVE
    if rec is None:
        return
    if event == "open":
        if args[1] is None or "r" in args[1]:  # (os.open passes no mode: kept, its path filtered later)
            rec.opened.append(args[0])
            _stamp_when_read(rec, args[0])
    elif event == "os.scandir":  # (discovery's os.walk and globs; never the import system's os.listdir)
        rec.listed.append(args[0])
        _stamp_when_read(rec, args[0])


def _stamp_when_read(rec: _Recording, path: Any) -> None:
    """Stamp what the run opens: another stamp at its end means it changed while read (the output not kept)."""
    if isinstance(path, (str, bytes, os.PathLike)):
        with contextlib.suppress(Exception):
            if (where := absolute(os.fsdecode(path))) not in rec.when_read:
                rec.when_read[where] = _stamp(where)


def note_paths(paths: list[str]) -> None:
    """Say which path arguments the command being recorded reads (the command line's own: empty for the
    default session roots). Called by the CLI for each analysis it runs; nothing when no run is recorded."""
    if _ACTIVE is not None:
        _ACTIVE.paths.append([os.fspath(p) for p in paths])


def replay_or_run(run: Callable[[], object], argv: list[str] | None = None) -> None:
    """Replay this command line's kept output, or run it (`run`, the Typer app) and keep its output.

    Parameters
    ----------
    run
        What runs the command in full (it ends with `SystemExit`, as click's standalone mode does).
    argv
        The arguments after the program's name (default: `sys.argv[1:]`).

    Raises
    ------
    SystemExit
        With the kept exit code on a replay; whatever `run` raises otherwise.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    code = replay(argv)
    if code is not None:
        sys.exit(code)
    if not (replayable(argv) and _plain_streams() and hasattr(os, "pread")):  # (no os.pread: Windows, never kept)
        run()
        return
    _record(argv, run)


def _swap(rec: _Recording) -> tuple[Any, Any]:
    """Put tee streams of the same encoding and buffering in place of stdout and stderr; the old ones."""
    old = (sys.stdout, sys.stderr)
    new = []
    for number, stream in enumerate(old):
        stream.flush()
        raw = _Tee(stream.fileno(), number, rec)
        new.append(
            io.TextIOWrapper(
                io.BufferedWriter(raw),
                encoding=stream.encoding,
                errors=stream.errors,
                newline="\n",
                line_buffering=bool(stream.line_buffering),
                write_through=bool(getattr(stream, "write_through", False)),
            )
        )
    sys.stdout, sys.stderr = new
    return old


def _record(argv: list[str], run: Callable[[], object]) -> None:
    """Run the command with its output teed and its reads audited; keep the output when it may be kept."""
    global _ACTIVE, _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True
    rec = _Recording()
    start = time.time_ns()
    try:
        key = command_key(argv)
    except Exception:  # (a working folder deleted under the shell): the run goes on, nothing kept
        run()
        return
    old = _swap(rec)
    _ACTIVE = rec
    code: object = "raised"
    try:
        run()
        code = 0
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
        raise
    finally:
        _ACTIVE = None
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        sys.stdout, sys.stderr = old
        if isinstance(code, int) and int(code) in (0, 3):  # (an `ExitCode`, or click's int)
            with contextlib.suppress(Exception):  # the firewall: keeping never fails a run
                _keep(key, rec, start, int(code))


def _keep(key: tuple[Any, ...], rec: _Recording, start_ns: int, code: int) -> bool:
    """Keep a finished run's output under `key` with its inputs' stamps; False when it may not be kept."""
    size = sum(len(d) for _, d in rec.chunks)
    warned = any(b"result store " in d for s, d in rec.chunks if s == 1)
    if rec.reader_gone or not rec.paths or size > MAX_ENTRY_BYTES or warned:
        return False
    paths = _inputs(rec)
    stamps = list(map(_stamp, paths))
    if any(s is not None and s[2] >= start_ns - RACY_NS for s in stamps):
        return False  # modified a moment before or during the run: it may change again unseen
    if any(rec.when_read.get(p, s) != s for p, s in zip(paths, stamps, strict=True)):
        return False  # changed while the run read it (its ctime moved, even with its mtime set back)
    spans = _merged(rec.chunks)
    blob = marshal.dumps((key, paths, stamps, [(stream, len(data)) for stream, data in spans], code))
    folder = replay_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, _entry_name(key))
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(_MAGIC + len(blob).to_bytes(4, "big") + zlib.crc32(blob).to_bytes(4, "big") + blob)
            fh.writelines(data for _, data in spans)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _prune(folder)
    return True


def _merged(chunks: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """The chunks with those written one after another to the same stream joined: the same bytes on each
    stream, in the same order between the two, in fewer writes.

    >>> _merged([(1, b"a"), (1, b"b"), (0, b"c"), (1, b"d")])
    [(1, b'ab'), (0, b'c'), (1, b'd')]
    """
    out: list[tuple[int, bytes]] = []
    for stream, data in chunks:
        if out and out[-1][0] == stream:
            out[-1] = (stream, out[-1][1] + data)
        elif data:
            out.append((stream, data))
    return out


def _inputs(rec: _Recording) -> list[str]:
    """Every path whose stamp a replay compares (the module docstring lists them), absolute, each once.

    The files a reader reads (a main file, its subagent files, each `.meta.json` beside one) are path
    arguments or lie in a folder discovery listed; so each listed folder's `.jsonl` and `.json` entries are
    stamped (a superset, cheaper than running discovery again)."""
    from contexttrace.discover.local import root_candidates

    found: dict[str, None] = {}
    add = found.setdefault
    for paths in rec.paths:
        named = [os.path.expanduser(p) for p in paths] if paths else [str(p) for p in root_candidates()]
        for path in named:
            for probe in _with_nearest_folder(absolute(path)):
                add(probe)
    for folder in rec.listed:
        if not isinstance(folder, (str, bytes, os.PathLike)):
            continue  # a file descriptor
        folder = absolute(os.fsdecode(folder))
        add(folder)
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith((".jsonl", ".json")):
                    add(entry.path)
    for path in _opened_data(rec.opened):
        add(path)
    add("/etc/localtime")
    for path in _code_files():
        add(path)
    return list(found)


def absolute(path: str) -> str:
    """`path` joined to the working folder without removing `..` by text: `link/../x` names what the system
    opens (the parent of the folder `link` points to), where `os.path.abspath` would name `./x`."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _with_nearest_folder(path: str) -> Iterable[str]:
    """`path`, and when it does not exist each folder above it up to the first that does (whose
    modification time changes when what is below it appears)."""
    yield path
    while not os.path.lexists(path) and (parent := os.path.dirname(path)) != path:
        path = parent
        yield path


def _opened_data(opened: list[Any]) -> Iterable[str]:
    """The files opened for reading that are data: not a module (those are `_code_files`), not in /dev,
    /proc or /sys, not the store's own folder."""
    store = os.path.dirname(replay_dir())
    for path in opened:
        if not isinstance(path, (str, bytes, os.PathLike)):
            continue  # a file descriptor
        path = absolute(os.fsdecode(path))
        if path.endswith((".py", ".pyc", ".so", ".pth")) or path.startswith(("/dev/", "/proc/", "/sys/", store)):
            continue
        yield path


def _code_files() -> list[str]:
    """The package's folders and files (outside `__pycache__`), and the file of every module imported that
    is not in the standard library."""
    files = []
    for folder, dirs, names in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files.append(folder)
        files.extend(os.path.join(folder, n) for n in sorted(names))
    stdlib = os.path.dirname(os.__file__) + os.sep
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or path.startswith(_PACKAGE + os.sep):
            continue
        if path.startswith(stdlib) and "-packages" not in path:
            continue
        files.append(path)
    return files


def _prune(folder: str) -> None:
    """Delete the least recently used entries past `MAX_ENTRIES` or `MAX_BYTES`, and temporary files left
    by a run that ended while writing (an hour old)."""
    entries = []
    stale = time.time_ns() - 3600 * 10**9
    for entry in os.scandir(folder):
        with contextlib.suppress(OSError):
            st = entry.stat()
            if entry.name.endswith(".bin"):
                entries.append((st.st_mtime_ns, st.st_size, entry.path))
            elif st.st_mtime_ns < stale:
                os.unlink(entry.path)
    entries.sort(reverse=True)
    total = 0
    for n, (_, size, path) in enumerate(entries):
        total += size
        if n >= MAX_ENTRIES or total > MAX_BYTES:
            with contextlib.suppress(OSError):
                os.unlink(path)


def info(folder: str | None = None) -> tuple[int, int]:
    """(entries, bytes) of the replay folder (`replay_dir()` by default); (0, 0) when there is none."""
    count = size = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder or replay_dir()):
            with contextlib.suppress(OSError):
                size += entry.stat().st_size
                count += entry.name.endswith(".bin")
    return count, size


def clear(folder: str | None = None) -> int:
    """Delete the replay folder (`replay_dir()` by default); returns the bytes its files held. Raises
    OSError when a file cannot be deleted."""
    folder = folder or replay_dir()
    size = info(folder)[1]
    if os.path.isdir(folder):
        for entry in os.scandir(folder):
            os.unlink(entry.path)
        os.rmdir(folder)
    return size
