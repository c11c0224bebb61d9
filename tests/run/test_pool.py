"""The worker pool (`runner._run`, `_worker.py`): fixed shares decided before the workers start, and a run
whose workers fail (a task that raises, an answer that cannot be pickled, a worker that dies) is still the
one-process run."""

from __future__ import annotations

import os

import pytest

from contexttrace.discover.local import SourceFile, TraceSource
from contexttrace.run import runner
from contexttrace.run.runner import _shares, analyze

from .conftest import SAMPLES


def _source(name: str, subagents: int = 0) -> TraceSource:
    return TraceSource(name, tuple(SourceFile(f"{name}-{i}") for i in range(subagents)))


def test_shares_largest_first_to_the_least_loaded():
    """Every source is read once; the largest go first, each to the process with the least to read (a
    tie to a worker); a split file's head is this process's first task and its tail a worker's."""
    sizes = [(100, 0), (90, 0), (10, 0), (10, 0), (5, 0), (80, 0)]
    sources = [_source(str(i)) for i in range(len(sizes))]
    shares = _shares(sources, [(s * 2**20, sub) for s, sub in sizes], {}, 2)
    assert sorted(i for share in shares for i in share) == list(range(len(sizes)))
    # 100 MB to the worker (a tie), 90 here, 80 here (90 < 100), the rest to the worker (100 + ... < 170)
    assert shares == [[1, 5], [0, 2, 3, 4]]
    split = _shares(sources, [(s * 2**20, 0) for s, _ in sizes], {5: 40 * 2**20}, 3)
    assert split[0][0] == 5 and split[1][0] == 5 and 5 not in split[2]


def test_shares_balance_within_the_largest_file():
    """With many files of mixed sizes, no process is given more than the largest file above another."""
    sizes = [((i * 7919) % 97 + 1) * 2**20 for i in range(200)]
    sources = [_source(str(i)) for i in range(len(sizes))]
    for n in (2, 3, 4):
        shares = _shares(sources, [(s, 0) for s in sizes], {}, n)
        loads = [sum(sizes[i] for i in share) for share in shares]
        assert max(loads) - min(loads) <= max(sizes)


@pytest.fixture
def serial(monkeypatch):
    # Forked workers whatever ran before in this process (a frame's thread pool makes `_fork_safe` false;
    # the workers here read and report only, never through those threads).
    monkeypatch.setattr(runner, "_fork_safe", lambda: True)
    return analyze([str(SAMPLES)], workers=1)


def _same(run, serial):
    assert [r.__dict__ for r in run.reports] == [r.__dict__ for r in serial.reports]
    assert [f.__dict__ for f in run.failures] == [f.__dict__ for f in serial.failures]


def test_a_worker_that_dies_leaves_its_tasks_here(monkeypatch, serial):
    """A forked worker that dies in the middle of its share (here: at its second task): the tasks it did
    not answer are done by this process, and the run is the one-process run."""
    real = runner.read_built
    pid = os.getpid()
    calls = {"n": 0}

    def dying(*args, **kwargs):
        if os.getpid() != pid:
            calls["n"] += 1
            if calls["n"] == 2:
                os._exit(3)
        return real(*args, **kwargs)

    here = {"n": 0}

    def counting(*args, **kwargs):
        here["n"] += os.getpid() == pid
        return dying(*args, **kwargs)

    shares = []
    real_shares = runner._shares
    monkeypatch.setattr(runner, "_shares", lambda *a: shares.append(real_shares(*a)) or shares[-1])
    monkeypatch.setattr(runner, "read_built", counting)
    _same(analyze([str(SAMPLES)], workers=2), serial)
    [(mine, theirs)] = shares
    assert here["n"] == len(mine) + len(theirs) - 1  # all but the one task the worker answered


def test_a_worker_answer_that_cannot_be_pickled_is_done_here(monkeypatch, serial):
    """A build whose report cannot be pickled (a lambda in it): the worker answers None, this process
    builds that report itself; the run is the one-process run."""
    from contexttrace.reports.trace import build_report

    class Odd:
        def __reduce__(self):
            raise TypeError("not picklable")

    def build(trace, window):
        report = build_report(trace, window)
        if os.getpid() != parent:
            report.extra["odd"] = Odd()
        return report

    parent = os.getpid()
    monkeypatch.setattr(runner, "_picklable", lambda obj: True)  # send the build to the worker anyway
    run = analyze([str(SAMPLES)], workers=2, build=build)
    _same(run, serial)


def test_a_task_that_cannot_be_sent_to_a_worker_started_afresh_is_done_here(monkeypatch, serial):
    """A worker started afresh is sent its share: a task that cannot be pickled is not sent, and this
    process does it (the run is the one-process run); the worker's stderr stays clean."""
    monkeypatch.setattr(runner, "_fork_safe", lambda: False)
    monkeypatch.setattr(runner, "_picklable", lambda obj: True)
    from contexttrace.reports.trace import build_report

    def build(trace, window):  # a local function: cannot be pickled
        return build_report(trace, window)

    _same(analyze([str(SAMPLES)], workers=2, build=build), serial)


def test_a_worker_started_afresh_says_nothing_on_stderr():
    """`python -m contexttrace.run.pool` runs without a warning (the package never imports `_worker`)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "contexttrace.run.pool"], input=b"", capture_output=True, check=True)
    assert done.stderr == b""
