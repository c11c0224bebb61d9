"""The garbage collector paused while traces are read (`reading/collector.py`)."""

from __future__ import annotations

import sys

from contexttrace import reading as reader
from contexttrace.run.runner import analyze

from ..conftest import assistant


def test_the_collector_is_paused_for_a_whole_run_only_without_other_threads(write):
    """The cyclic collector is off between traces when this process runs one thread (nothing of a run
    makes cycles); with another Python thread alive (a notebook's, a server's) it runs between traces,
    so that thread's cycles are still collected during a long run, and it is on again after the run."""
    import gc
    import threading

    folder = write("p/a.jsonl", assistant("m1", 1, 1, 1)).rsplit("/", 1)[0]
    write("p/b.jsonl", assistant("m2", 1, 1, 1))
    write("p/c.jsonl", assistant("m3", 1, 1, 1))

    def between_traces() -> list[bool]:
        seen: list[bool] = []
        analyze([folder], workers=1, progress=lambda done, total: seen.append(gc.isenabled()))
        assert gc.isenabled()
        return seen

    assert gc.isenabled()
    alone = between_traces()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with_thread = between_traces()
    finally:
        stop.set()
        other.join()
    assert (alone, with_thread) == ([False] * 3, [True] * 3)


def test_gc_paused_from_several_threads_restores_the_collector():
    """`gc_paused` entered and left by several threads at once leaves the collector as it found it (each
    thread used to remember the state another had just changed: off in 34 of 50 trials)."""
    import gc
    import threading

    def work() -> None:
        for _ in range(300):
            with reader.gc_paused():
                sum(range(20))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        left_off = 0
        for _ in range(20):
            threads = [threading.Thread(target=work) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            left_off += not gc.isenabled()
            gc.enable()
    finally:
        sys.setswitchinterval(interval)
    assert left_off == 0
    gc.disable()
    with reader.gc_paused():
        pass
    assert not gc.isenabled()  # off before: still off
    gc.enable()
