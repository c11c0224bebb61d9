"""Pausing Python's cyclic garbage collector while traces are read (and reports built).

Decoded records, the builder's rows and the reports hold no reference cycles, so a collection finds
nothing; but every full pass walks all the objects still alive. The runner pauses it for a whole run
(`runner._run_gc_paused`), the reader for each trace. It touches nothing but the collector's on/off
switch: no object is freed or kept by it.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

#: `gc_paused` bookkeeping: pauses in progress in this process, and the collector's state before the first.
_GC_LOCK = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a trace is read.

    Decoded records and the builder's rows hold no reference cycles, so the collector would find nothing;
    but every full pass walks all the rows held so far: 0.35 s of the 4.2 s of CPU that reading the
    458 MB benchmark transcript took (measured with `gc.callbacks`). Reference counting still frees
    every record.

    Safe from several threads at once (a notebook running two reads): the collector's state is one per
    process, so the first pause to begin remembers it and the last to end restores it; a pause begun
    while the collector is already off leaves it off.
    """
    global _gc_pauses, _gc_was_enabled
    with _GC_LOCK:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


#: What the runs of this process leave to its end (`leave_for_exit`), when it ends without freeing its
#: objects (`end_without_freeing`); None: objects are freed as usual.
_left: list[object] | None = None


def end_without_freeing() -> None:
    """Say that this process ends without freeing its objects (the command line's `cli.console` ends it with
    `os._exit`): from now on `leave_for_exit` keeps what it is given until then."""
    global _left
    if _left is None:
        _left = []


def leave_for_exit(value: object) -> None:
    """Keep `value` (what a run read, or its result) alive until the process ends, when it ends without
    freeing (`end_without_freeing`); otherwise nothing (`value` is freed when its last reference goes).

    Kept, it is not freed one object at a time after the run: 11 ms for the traces of the 851 traces of the
    real-content corpus, 4.5 ms for their reports. Every object then alive lives until the end too, so all
    leave the collector's generations (`gc.freeze`): else the collector's first pass once a run ends walks
    all it made, for nothing (10 ms after those 851 traces; measured with `gc.callbacks`).
    """
    if _left is not None:
        _left.append(value)
        gc.freeze()


def free_left() -> None:
    """Free what `leave_for_exit` kept (a run about to start: memory then peaks as if the last run had freed
    its traces when it ended), and hand the objects `gc.freeze` set aside back to the collector, so that
    cycles an earlier run left are collected again."""
    if _left is not None:
        _left.clear()
        gc.unfreeze()
