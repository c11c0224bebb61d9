"""Worker processes of `runner`: both ends of the protocol, and `python -m contexttrace.run.pool`.

A run over many files forks its workers once (Linux, while this process runs a single thread); the
tasks are decided before the fork, so a forked worker finds them in the memory it inherited and no task
crosses a pipe: each worker first does its own (the tail of a file read in two parts), then takes the
others in turn with the parent from a `TaskQueue`, largest first. Where fork is not safe (`forked.fork_safe`:
macOS, Windows, or a host process running other threads, whose locks a fork would copy held) a worker is started as
`python -m contexttrace.run.pool` instead (never `multiprocessing`'s spawn, which would import the
caller's main script: a script that calls `analyze` without an `if __name__ == "__main__":` guard still
works) and given a fixed share of the tasks (`runner._shares`), sent to it over its standard input.

A task is a function of the package and its arguments (`work.read_built`, `reading.read_tail`); a
worker answers each task in order as soon as it is done, over a pipe, as a frame: the task's number and
the answer's size (`HEADER`), then the pickled answer. A task that raises, or whose answer cannot be
pickled, is answered with None; an answer that cannot be unpickled here is taken as None; a worker that
dies leaves its unanswered tasks: in each case the parent does the task itself, where the same exception
becomes that trace's failure (the firewall, `work.read_source`).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from queue import SimpleQueue
from typing import IO, Any

#: A frame's header: the task's number and the size of the pickle that follows (little-endian).
HEADER = struct.Struct("<qQ")

#: A task: its number, the function to call and its arguments.
Task = tuple[int, Callable[..., Any], tuple[Any, ...]]

#: What a worker's collector queues when the worker's answers end (its number as the "task").
DONE = -1

#: The folder holding the `contexttrace` package (this file is contexttrace/run/pool.py): put first on a
#: worker's path, never the package folder itself, whose `select` package would shadow the standard library's.
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: Linux's `fcntl.F_SETPIPE_SZ` (Python 3.10+ names it; spelled out for type checkers on other systems).
_F_SETPIPE_SZ = 1031
#: A task's place in a `TaskQueue`, as written to its pipe (little-endian).
_SLOT = struct.Struct("<I")
#: Bytes a worker can write before this process reads them: a report and its trace's tables are 20–200 KB,
#: and with the default 64 KiB a worker would wait for this process's collector thread (which needs the
#: GIL) after every answer: measured 0.26 s of 2.1 s idle on 200 transcripts.
_PIPE_BYTES = 1024 * 1024


# -- the worker's end ---------------------------------------------------------------------------------------


def answer(tasks: Iterable[Task], out: IO[bytes]) -> None:
    """Do each task and write its answer to `out` (None for a task that raises or cannot be pickled).

    The cyclic garbage collector stays off for the worker's life, as in the parent's run
    (`runner._run_gc_paused`): the tasks make no reference cycles, and each collection would walk every
    object the last answer left alive.
    """
    gc.disable()
    for i, function, args in tasks:
        try:
            blob = pickle.dumps(function(*args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # the firewall: None means "not done", and the parent does the task itself
            blob = pickle.dumps(None)
        out.write(HEADER.pack(i, len(blob)))
        out.write(blob)
        out.flush()


def read_frames(inp: IO[bytes]) -> Iterable[tuple[int, bytes]]:
    """The frames of a pipe, as (number, pickled bytes), until it ends (or ends mid-frame)."""
    while True:
        header = _read_exact(inp, HEADER.size)
        if header is None:
            return
        i, size = HEADER.unpack(header)
        blob = _read_exact(inp, size)
        if blob is None:
            return
        yield i, blob


def serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """A worker started afresh: answer the tasks read from `inp` (frames of pickled `Task`s) until it ends."""
    answer((pickle.loads(blob) for _, blob in read_frames(inp)), out)


def _read_exact(stream: Any, size: int) -> bytes | None:
    """Read exactly `size` bytes from a pipe (raw reads may return less), or None at its end."""
    parts = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


# -- the parent's end ---------------------------------------------------------------------------------------


class TaskQueue:
    """Tasks taken in turn by this process and the workers it forks, each task by exactly one of them.

    The tasks' places (0, 1, ...) are written to a pipe before any worker is forked, and its write end is
    closed: each process takes the next place with one 4-byte read (the pipe's reads are serialized, and
    one that finds bytes waiting returns them all), and the end of the pipe ends everyone's tasks. Taken
    largest first, the processes end within about one small task of each other, whatever else slows one
    of them down (this process also receives the answers; the machine may run other work): fixed shares
    decided beforehand left one process idle while the other read, 0.2 s of a 2.5 s run (measured).

    `make` returns None where the places do not fit in the pipe's buffer (the write would wait for a
    reader): the caller then gives each process a fixed share.
    """

    def __init__(self, read_fd: int) -> None:
        self._fd = read_fd

    @classmethod
    def make(cls, count: int) -> TaskQueue | None:
        """A queue of the places 0 .. `count` - 1, or None when they do not fit in a pipe."""
        read_fd, write_fd = os.pipe()
        _widen(write_fd)
        data = b"".join(_SLOT.pack(k) for k in range(count))
        try:
            os.set_blocking(write_fd, False)
            written = os.write(write_fd, data) if data else 0
        except OSError:  # BlockingIOError: not one byte fits
            written = -1
        finally:
            os.close(write_fd)
        if written != len(data):
            os.close(read_fd)
            return None
        return cls(read_fd)

    def __iter__(self) -> Iterator[int]:
        """The places this process takes, one at a time, until none is left (or the pipe is closed)."""
        while True:
            try:
                got = os.read(self._fd, _SLOT.size)
            except OSError:
                return
            if len(got) != _SLOT.size:
                return
            yield _SLOT.unpack(got)[0]

    def fds(self) -> list[int]:
        """The pipe's end in this process (kept open in the workers, which take from it)."""
        return [self._fd]

    def close(self) -> None:
        """Close this process's end of the pipe (the places still in it are taken by no one)."""
        with contextlib.suppress(OSError):
            os.close(self._fd)


def _widen(fd: int) -> None:
    """Grow a pipe's buffer to `_PIPE_BYTES` where the system allows it (Linux); else leave it."""
    if sys.platform.startswith("linux"):
        import fcntl

        with contextlib.suppress(OSError):  # above /proc/sys/fs/pipe-max-size, or not permitted
            fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_BYTES)


class Worker:
    """One worker process doing a fixed share of the tasks, and a thread that queues its answers.

    `results` receives (task number, answer) for each answer, then (`DONE`, None) when the worker's
    answers end (all given, or the worker died). Start every worker of a run before any of them `start`s
    its threads: a fork copies only the forking thread, never the collectors.
    """

    def __init__(
        self,
        share: list[Task],
        results: SimpleQueue[tuple[int, Any]],
        fork: bool,
        close_in_child: list[int],
        queue: TaskQueue | None = None,
        queued: Sequence[Task] = (),
    ) -> None:
        self.share = share
        self._results = results
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0
        self._send: list[bytes] = []  # the share's frames, for a worker started afresh
        if fork:
            answer_r, answer_w = os.pipe()
            _widen(answer_w)
            pid = os.fork()
            if pid == 0:  # the child: answer its share, then leave without running the parent's exit handlers
                code = 1
                try:
                    for fd in (answer_r, *close_in_child):
                        os.close(fd)
                    taken = (queued[k] for k in queue) if queue is not None else ()
                    with os.fdopen(answer_w, "wb") as out:
                        answer(itertools.chain(share, taken), out)
                    code = 0
                finally:
                    os._exit(code)
            os.close(answer_w)
            self.pid = pid
            self.stdin: IO[bytes] | None = None
            self.stdout: IO[bytes] = os.fdopen(answer_r, "rb", buffering=0)
        else:
            # The worker imports this very package, wherever it was imported from (a checkout, say).
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_PARENT, env.get("PYTHONPATH")]))
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "contexttrace.run.pool"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                env=env,
            )
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
            _widen(self.stdout.fileno())
            for task in share:
                try:
                    blob = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # never sent, so never answered: the parent does it
                    continue
                self._send.append(HEADER.pack(task[0], len(blob)) + blob)
        self._threads = [threading.Thread(target=self._collect, daemon=True)]
        if self.stdin is not None:
            # Written by a thread of its own: the worker may answer before it has read its whole share.
            self._threads.append(threading.Thread(target=self._write, daemon=True))

    def fds(self) -> list[int]:
        """This worker's pipe ends in this process (a later fork must close them: else no EOF is seen)."""
        return [f.fileno() for f in (self.stdin, self.stdout) if f is not None]

    def start(self) -> None:
        """Start the collector (and the writer of a worker started afresh)."""
        for thread in self._threads:
            thread.start()

    def _write(self) -> None:
        assert self.stdin is not None
        with contextlib.suppress(OSError):  # the worker died: its unanswered tasks are redone by the parent
            for frame in self._send:
                self.stdin.write(frame)
        with contextlib.suppress(OSError):
            self.stdin.close()

    def _collect(self) -> None:
        put = self._results.put
        try:
            for i, blob in read_frames(self.stdout):
                try:
                    value = pickle.loads(blob)
                except Exception:  # an answer that cannot be unpickled here: the parent does the task
                    value = None
                put((i, value))
        finally:
            put((DONE, None))  # wakes a parent waiting for answers

    def finish(self, timeout: float) -> None:
        """Wait for the process to end, killing it after `timeout` seconds."""
        if self.proc is not None:
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            return
        deadline = time.monotonic() + timeout
        while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                return
            time.sleep(0.005)


class Pool:
    """Workers, each with its fixed share, and the answers they send back (`wait_for`, `ready`, `drain`)."""

    def __init__(
        self, shares: list[list[Task]], fork: bool, queue: TaskQueue | None = None, queued: Sequence[Task] = ()
    ) -> None:
        """Start a worker per share. With a `queue` (forked workers only), each worker then takes the tasks
        of `queued` in turn with this process, by their places in it; the pool closes the queue."""
        self.results: SimpleQueue[tuple[int, Any]] = SimpleQueue()
        self.stash: dict[int, Any] = {}  # answers received while waiting for another (`wait_for`)
        self.forked = fork
        self.queue = queue if fork else None
        self.workers: list[Worker] = []
        for share in shares:
            held = [fd for w in self.workers for fd in w.fds()]
            self.workers.append(Worker(share, self.results, fork, held, self.queue, queued))
        for w in self.workers:
            w.start()
        self._running = len(self.workers)

    def _take(self, block: bool) -> bool:
        """Move one queued answer to the stash (waiting for one if `block`); False when none is left."""
        if not block and self.results.empty():
            return False
        i, value = self.results.get()
        if i == DONE:
            self._running -= 1
        else:
            self.stash[i] = value
        return True

    def wait_for(self, task: int) -> Any:
        """The answer to `task`, waiting for it; None if its worker ended without answering it."""
        while task not in self.stash:
            if self._running == 0 and self.results.empty():
                return None
            self._take(block=True)
        return self.stash.pop(task)

    def ready(self) -> dict[int, Any]:
        """The answers received so far (and not taken yet), by task number."""
        while self._take(block=False):
            pass
        out, self.stash = self.stash, {}
        return out

    def drain(self) -> dict[int, Any]:
        """Every answer still to come, waiting until every worker's answers end."""
        while self._running:
            self._take(block=True)
        return self.ready()

    def close(self) -> None:
        """Close the queue; wait for every worker to end, killing one still running after 10 seconds."""
        if self.queue is not None:
            self.queue.close()
        for w in self.workers:
            w.finish(timeout=10)


if __name__ == "__main__":
    answers = sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed by accident must not corrupt the result stream
    serve(sys.stdin.buffer, answers)
