"""A share of one computation done in a forked child process while this process does the rest.

`elsewhere(function, *args)` forks a child that calls `function(*args)` on the memory it inherited (nothing
is sent to it) and sends back only its pickled result, while this process goes on; awaiting it gives that
result. It forks only inside a `second_core()` block (the runner opens one when it was given more than one
process), only while `fork_safe()`, and only when a core is idle (`core_free()`); anywhere else, or when the
child fails (it raised, its result could not be pickled, it died), the function is called here when its
result is awaited: the same call, so the same result or the same exception. Nothing here prints.

The module imports only the standard library: every layer may use it (`reports` splits a large trace's
report with it, `run.runner` forks its workers where `fork_safe` allows).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

#: Open `second_core` blocks in this process (any thread).
_second_cores = 0
_LOCK = threading.Lock()


def fork_safe() -> bool:
    """Whether this process may fork a child that runs Python (a worker, or `elsewhere`'s share).

    A fork starts in milliseconds where a new interpreter needs about 0.4 s. Only on Linux, and only while
    this process runs a single thread (`/proc/self/task`): another thread, such as Polars' pool once a
    frame was built, could hold a lock that the fork would copy held.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def core_free() -> bool:
    """Whether a core of this machine is idle now: fewer tasks runnable (this process included: the fourth
    field of `/proc/loadavg`) than cores this process may run on. False where that cannot be read.

    A fork pays for itself only on an idle core: it write-protects every page of this process, and each page
    either process then writes costs a fault (a copy while the child lives). On the 303 MB transcript the
    child's weather took 0.09 s off this process's report and its faults added 0.08 s of CPU across both:
    with every core busy (other work on the machine) the run was that much slower.
    """
    try:
        with open("/proc/loadavg") as fh:
            running = int(fh.read().split()[3].split("/")[0])
        cores = len(os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError, AttributeError):
        return False
    return running < cores


@contextlib.contextmanager
def second_core() -> Iterator[None]:
    """Let `elsewhere` fork within this block: its caller was given another core (`runner`: a run of more than
    one process). Blocks nest; outside every block `elsewhere` computes in this process."""
    global _second_cores
    with _LOCK:
        _second_cores += 1
    try:
        yield
    finally:
        with _LOCK:
            _second_cores -= 1


def _start(function: Callable[..., Any], args: tuple[Any, ...]) -> tuple[int, int]:
    """Fork a child that writes `function(*args)` pickled (nothing when it raises) to a pipe: (its pid, the
    pipe's read end)."""
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # (no process left, no memory to copy the page tables): the caller computes here
        os.close(read_fd)
        os.close(write_fd)
        raise
    if pid == 0:  # the child: compute, answer, and leave without running this process's exit handlers
        global _second_cores
        _second_cores = 0  # (it forks no child of its own)
        code = 1
        try:
            os.close(read_fd)
            try:
                blob = pickle.dumps(function(*args), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:  # not done: the parent calls the function itself
                blob = b""
            with os.fdopen(write_fd, "wb") as out:
                out.write(blob)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


class _Child:
    """A child forked by `_start`, awaited at most once: its answer read and the child reaped, or ended."""

    def __init__(self, pid: int, read_fd: int) -> None:
        self.pid, self.read_fd = pid, read_fd
        self.reaped = False

    def answer(self) -> tuple[bool, Any]:
        """The child's result as (True, value), or (False, None) when it gave none; the child reaped."""
        try:
            with os.fdopen(self.read_fd, "rb") as fh:
                blob = fh.read()
        finally:
            self.reaped = True  # (before the wait: an interrupted wait must never lead to a kill of its pid)
            _, status = os.waitpid(self.pid, 0)
        if not blob or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return False, None
        try:
            return True, pickle.loads(blob)
        except Exception:  # a result that cannot be unpickled here: computed here
            return False, None

    def end(self) -> None:
        """End the child when its result is no longer wanted (never awaited), and reap it."""
        if self.reaped:
            return
        self.reaped = True
        with contextlib.suppress(OSError):
            os.close(self.read_fd)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)


@contextlib.contextmanager
def elsewhere(function: Callable[..., T], *args: Any, worth: bool = True) -> Iterator[Callable[[], T]]:
    """Call `function(*args)` in a forked child while the block runs; the block gets a function that returns
    its result (waiting for the child).

    Parameters
    ----------
    function, args
        A pure computation on objects this process holds (the child reads them from the memory it
        inherited; only the result is pickled, and it must be picklable).
    worth
        Whether the computation is large enough to pay for a fork (a few milliseconds, and the pages both
        processes then touch are copied); False computes it here.

    Returns
    -------
    context manager
        Yields `result()`: the value `function(*args)` returns, computed by the child when it could fork
        (inside `second_core`, `worth`, `fork_safe`, `core_free`) and the child answered, else by this process when
        `result()` is called (so it raises what the function raises). A block left before `result()` is
        called ends the child.
    """
    child = None
    if worth and _second_cores and fork_safe() and core_free():
        try:
            child = _Child(*_start(function, args))
        except OSError:  # a pipe or a fork refused: computed here, as without a second core
            child = None
    answered: list[Any] = []

    def result() -> T:
        if not answered:
            done, value = child.answer() if child is not None else (False, None)
            answered.append(value if done else function(*args))
        return answered[0]  # type: ignore[no-any-return]

    try:
        yield result
    finally:
        if child is not None:
            child.end()
