"""The worker pool (`run/pool.py`, `runner._run`): a task queue that forked workers and this process take
from in turn (fixed shares where workers are started afresh), a run
whose workers fail (a task that raises, an answer that cannot be pickled, a worker that dies) is still the
one-process run, large tasks and answers never deadlock, and a script without a main guard can run one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contexttrace.discover.local import SourceFile, TraceSource, find_traces
from contexttrace.run import runner
from contexttrace.run.runner import _shares, analyze

from ..conftest import ROOT, SAMPLES, assistant, jsonl, result


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

    monkeypatch.setattr(runner, "read_built", counting)
    _same(analyze([str(SAMPLES)], workers=2), serial)
    sources = [s for s in find_traces([str(SAMPLES)]) if not s.orphan]
    assert here["n"] == len(sources) - 1  # all but the one task the worker answered (none is cut in two)


def test_a_worker_that_dies_with_fixed_shares_leaves_its_tasks_here(monkeypatch, serial):
    """As above where no task queue can be made (more files than its pipe holds): fixed shares, and the
    tasks of the worker's share it did not answer are done here."""
    from contexttrace.run import pool

    monkeypatch.setattr(pool.TaskQueue, "make", classmethod(lambda cls, count: None))
    real = runner.read_built
    pid = os.getpid()
    calls = {"n": 0}
    here = {"n": 0}

    def dying(*args, **kwargs):
        here["n"] += os.getpid() == pid
        if os.getpid() != pid:
            calls["n"] += 1
            if calls["n"] == 2:
                os._exit(3)
        return real(*args, **kwargs)

    shares = []
    real_shares = runner._shares
    monkeypatch.setattr(runner, "_shares", lambda *a: shares.append(real_shares(*a)) or shares[-1])
    monkeypatch.setattr(runner, "read_built", dying)
    _same(analyze([str(SAMPLES)], workers=2), serial)
    [(mine, theirs)] = shares
    assert here["n"] == len(mine) + len(theirs) - 1  # all but the one task the worker answered


def test_a_task_queue_gives_each_task_to_one_process():
    """Two forked processes and this one take the places of a queue in turn: each place is taken exactly
    once, and the queue ends for all of them."""
    from contexttrace.run.pool import Pool, TaskQueue

    queue = TaskQueue.make(500)
    assert queue is not None
    pool = Pool([[], []], fork=True, queue=queue, queued=[(k, os.getpid, ()) for k in range(500)])
    try:
        mine = list(queue)
        theirs = pool.drain()
    finally:
        pool.close()
    assert sorted(mine + list(theirs)) == list(range(500))
    assert len(set(theirs.values())) <= 2 and os.getpid() not in theirs.values()


def test_a_task_queue_too_large_for_its_pipe_is_not_made():
    """More places than a pipe's buffer holds: no queue (its writer would wait for a reader that is not
    there yet); a queue of none is made, and ends at once."""
    from contexttrace.run.pool import TaskQueue

    assert TaskQueue.make(4 * 2**20) is None
    empty = TaskQueue.make(0)
    assert empty is not None and list(empty) == []
    empty.close()


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


def test_a_worker_started_afresh_answers(tmp_path, monkeypatch):
    """A worker started as `python -m contexttrace.run.pool` does its share (from any folder, with no
    PYTHONPATH of the caller's): its answers come from another process, none is left to this one. The
    worker's path once held the package folder itself, whose `select` package shadowed the standard
    library's: every such worker died at its first import and this process silently did all the work."""
    from contexttrace.run.pool import Pool

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    pool = Pool([[(0, os.getpid, ()), (1, os.getpid, ())]], fork=False)
    try:
        answers = pool.drain()
    finally:
        pool.close()
    assert set(answers) == {0, 1} and len(set(answers.values())) == 1 and answers[0] != os.getpid()


def test_a_worker_started_afresh_says_nothing_on_stderr():
    """`python -m contexttrace.run.pool` runs without a warning (the package never imports `_worker`)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "contexttrace.run.pool"], input=b"", capture_output=True, check=True)
    assert done.stderr == b""


def test_parallel_analyze_from_an_unguarded_script(tmp_path):
    """A script without `if __name__ == "__main__":` can run a parallel analysis: workers are started as
    `python -m contexttrace.run.pool` and never import the caller's script (the spawn start method would
    re-run it and fail)."""
    script = tmp_path / "notes.py"
    script.write_text(
        "from contexttrace import analyze\n"
        f"run = analyze([{str(SAMPLES)!r}], workers=2)\n"
        "print(len(run.reports), sum(r.calls for r in run.reports))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    from contexttrace import analyze

    serial = analyze([str(SAMPLES)], workers=1)
    assert proc.stdout.split() == [str(len(serial.reports)), str(sum(r.calls for r in serial.reports))]


def _session(path: Path, name: str, calls: int, subagents: int) -> None:
    """A transcript of `calls` Bash calls with their results, and `subagents` one-call subagent files."""
    lines = []
    for i in range(calls):
        ts = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
        lines.append(
            assistant(f"{name}-{i}", 10, 20, 30, 5, tools=[(f"{name}-t{i}", "Bash", {"command": "y" * 400})])
            | {"timestamp": ts, "cwd": "/x", "version": "2.1.0"}
        )
        lines.append(result(f"{name}-t{i}", "ok", timestamp=ts, isSidechain=False))
    (path / f"{name}.jsonl").write_bytes(jsonl(*lines))
    folder = path / name / "subagents"
    folder.mkdir(parents=True)
    for j in range(subagents):
        (folder / f"agent-{'x' * 150}{j:04d}.jsonl").write_bytes(
            jsonl(assistant(f"{name}-s{j}", 1, 2, 3, sidechain=True))
        )


def test_workers_never_wait_on_each_other_with_large_tasks_and_answers(tmp_path):
    """Tasks over a pipe's 64 KiB (sessions with 300 subagent files) and answers over 1 MiB (tails) at
    once, every session cut in two: the run ends (in a child process, so a deadlock fails the test
    instead of hanging it) and agrees with a one-process run. (Before the writer thread, a collector
    blocked writing a task while its worker blocked writing an answer.)"""
    for s in range(2):
        _session(tmp_path, f"big{s}", 6000, 0)
    for s in range(20):
        _session(tmp_path, f"small{s:02d}", 1500, 300)
    code = (
        "from contexttrace.run import runner; from contexttrace.reading.claude import split\n"
        "split.SPLIT_MIN_BYTES = 1\n"
        f"two = runner.analyze([{str(tmp_path)!r}], workers=2); one = runner.analyze([{str(tmp_path)!r}], workers=1)\n"
        "assert [r.__dict__ for r in two.reports] == [r.__dict__ for r in one.reports]\n"
        "print(len(two.reports), sum(r.calls for r in two.reports))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["22", str(2 * 6000 + 20 * 1500)]
