"""`cli.console`: `main`, then the process ends without freeing what the command made (`os._exit`).

The fast end is checked against `main` with Python's own exit, in the same process kind: the same bytes on
stdout and stderr and the same exit code, with the exit functions run; and the usual exit where the fast
one would change something (a thread still running).
"""

from __future__ import annotations

import os
import subprocess
import sys
import weakref

import pytest

from contexttrace.reading import collector

from ..conftest import CASES, GOOD, ROOT

#: A program that runs the command line through `console` (FAST) or `main` with Python's exit (SLOW), with an
#: exit function that writes to both streams, and says on stderr when it ends through `os._exit`.
PROGRAM = """
import atexit, os, sys
sys.argv = ["contexttrace", *sys.argv[2:]]
atexit.register(lambda: (print("exit function ran"), print("on stderr too", file=sys.stderr)))
real_exit = os._exit
def spy(code):
    print(f"os._exit({code})", file=sys.stderr, flush=True)
    real_exit(code)
os._exit = spy
from contexttrace.cli import console, main
if sys.argv[1:2] == ["THREAD"]:
    import threading, time
    sys.argv.pop(1)
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread ended", flush=True))).start()
(console if os.environ["HOW"] == "FAST" else main)()
"""


def _run(how: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # (buffered, as streams usually are)
    env |= {"HOW": how, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", PROGRAM, "-", *args], cwd=ROOT, env=env, capture_output=True)


ARGS = [
    ["context", "trace", GOOD, "--json", "--no-cache"],
    ["context", "trace", GOOD, "--no-cache"],
    ["context", "usage", str(CASES), "--json", "--no-cache"],
    ["context", "trace", "/no/such/file", "--no-cache"],  # exit 1
    ["context", "trace", GOOD, "--no-cache", "--fail-on", "peak>1"],  # exit 3
    ["context", "trace", "--no-such-option"],  # exit 2
    ["--version"],
]


@pytest.mark.parametrize("args", ARGS, ids=lambda a: " ".join(a[1:3]) or a[0])
def test_console_ends_as_main_does(args):
    """The same output, exit code and exit functions as `main` ended by Python; through `os._exit`."""
    fast, slow = _run("FAST", *args), _run("SLOW", *args)
    assert (fast.stdout, fast.returncode) == (slow.stdout, slow.returncode)
    assert fast.stdout.endswith(b"exit function ran\n")
    marker = f"os._exit({fast.returncode})\n".encode()
    assert fast.stderr.endswith(marker)
    assert fast.stderr.removesuffix(marker) == slow.stderr
    assert b"os._exit" not in slow.stderr


def test_console_waits_for_a_running_thread():
    """With another thread still running, the process ends as Python ends it: the thread finishes."""
    proc = _run("FAST", "THREAD", "context", "trace", GOOD, "--json", "--no-cache")
    assert proc.returncode == 0
    assert b"thread ended" in proc.stdout
    assert b"os._exit" not in proc.stderr


def test_leave_for_exit_keeps_values_only_when_asked(monkeypatch):
    """`leave_for_exit` keeps nothing unless the process ends without freeing; then until `free_left`."""

    class Value:
        pass

    monkeypatch.setattr(collector.gc, "freeze", lambda: None)  # (this process goes on)
    monkeypatch.setattr(collector, "_left", None)
    value = Value()
    gone = weakref.ref(value)
    collector.leave_for_exit(value)
    del value
    assert gone() is None
    monkeypatch.setattr(collector, "_left", [])  # as `end_without_freeing` sets it, undone after the test
    value = Value()
    kept = weakref.ref(value)
    collector.leave_for_exit(value)
    del value
    assert kept() is not None
    collector.free_left()
    assert kept() is None


def test_a_run_frees_what_the_last_one_left(monkeypatch):
    """Each run frees what the run before it left before it reads: a command of several runs (compare,
    report) holds no more while a run reads than when each run freed its traces as it ended."""
    from contexttrace.run.runner import analyze

    monkeypatch.setattr(collector.gc, "freeze", lambda: None)  # (this process goes on)
    monkeypatch.setattr(collector, "_left", [])
    analyze([GOOD])
    first = list(collector._left)
    assert first and all(isinstance(v, tuple) for v in first)
    analyze([GOOD])
    assert len(collector._left) == len(first)
    assert all(v is not w for v, w in zip(collector._left, first, strict=True))


def test_free_left_hands_frozen_cycles_back_to_the_collector(monkeypatch):
    """`leave_for_exit` freezes every object then alive (`gc.freeze`); `free_left` (a next run) unfreezes
    them, so a cycle an earlier run left is collected again rather than kept to the process's end."""
    import gc

    class Node:
        pass

    monkeypatch.setattr(collector, "_left", [])
    node = Node()
    node.self = node  # a cycle: only the collector frees it
    gone = weakref.ref(node)
    try:
        collector.leave_for_exit(())
        assert gc.get_freeze_count() > 0
        del node
        gc.collect()
        assert gone() is not None  # frozen: out of the collector's reach
        collector.free_left()
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
