"""A share of a computation done in a forked child (`contexttrace/forked.py`): the child's result when it
could fork and answered, else the same call made here (outside `second_core`, not `worth` it, not
`fork_safe`, or a child that raised, died or gave a result that cannot be pickled); no child is left behind."""

from __future__ import annotations

import contextlib
import os

import pytest

from contexttrace import forked


@pytest.fixture
def forks(monkeypatch):
    """The children `elsewhere` forks, counted; `fork_safe` taken as true (these tests' functions are pure
    Python, safe in a child whatever threads pytest runs)."""
    started: list[int] = []
    real = forked._start

    def start(function, args):
        pid, fd = real(function, args)
        started.append(pid)
        return pid, fd

    monkeypatch.setattr(forked, "_start", start)
    monkeypatch.setattr(forked, "fork_safe", lambda: True)
    monkeypatch.setattr(forked, "core_free", lambda: True)
    return started


def _pid_and(value):
    return os.getpid(), value


def _reaped(pids: list[int]) -> bool:
    """Whether every child of `pids` was reaped (none left running, none a zombie)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def test_the_share_is_computed_by_a_child_inside_second_core(forks):
    with forked.second_core(), forked.elsewhere(_pid_and, [1, 2]) as result:
        pid, value = result()
        assert result() == (pid, value)  # awaited once, kept
    assert pid != os.getpid() and pid == forks[0] and value == [1, 2]
    assert _reaped(forks)


@pytest.mark.parametrize("why", ["outside", "not worth", "not fork safe", "every core busy"])
def test_the_share_is_computed_here_when_no_fork_is_allowed(forks, monkeypatch, why):
    if why == "not fork safe":
        monkeypatch.setattr(forked, "fork_safe", lambda: False)
    if why == "every core busy":
        monkeypatch.setattr(forked, "core_free", lambda: False)
    opened = forked.second_core() if why != "outside" else contextlib.nullcontext()
    with opened, forked.elsewhere(_pid_and, "x", worth=why != "not worth") as result:
        assert result() == (os.getpid(), "x")
    assert forks == []


def _raise(kind):
    raise kind("from the share")


def _die_in_a_child(parent: int) -> int:
    if os.getpid() != parent:
        os._exit(3)
    return os.getpid()


def _unpicklable_in_a_child(parent: int):
    return (lambda: None) if os.getpid() != parent else "here"


def test_a_child_that_fails_leaves_the_share_to_this_process(forks):
    """A child that raised, died, or computed what cannot be pickled: the same call is made here (so a bug
    surfaces here, as the report's failure, as it would without a fork)."""
    with forked.second_core():
        with forked.elsewhere(_raise, ValueError) as result, pytest.raises(ValueError, match="from the share"):
            result()
        with forked.elsewhere(_die_in_a_child, os.getpid()) as result:
            assert result() == os.getpid()
        with forked.elsewhere(_unpicklable_in_a_child, os.getpid()) as result:
            assert result() == "here"
    assert len(forks) == 3
    assert _reaped(forks)


def test_a_block_left_before_the_result_ends_its_child(forks):
    with pytest.raises(KeyError), forked.second_core(), forked.elsewhere(_pid_and, 1):
        raise KeyError("the block failed")
    assert len(forks) == 1 and _reaped(forks)


def test_second_core_blocks_nest():
    assert forked._second_cores == 0
    with forked.second_core():
        with forked.second_core():
            assert forked._second_cores == 2
        assert forked._second_cores == 1
    assert forked._second_cores == 0


def test_a_core_is_free_when_fewer_tasks_run_than_there_are_cores(monkeypatch, tmp_path):
    """`/proc/loadavg`'s fourth field counts the runnable tasks, this process included."""
    import builtins

    real_open = builtins.open
    loadavg = tmp_path / "loadavg"

    def fake_open(path, *args, **kwargs):
        return real_open(loadavg if path == "/proc/loadavg" else path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    for line, free in [("0.5 0.4 0.3 1/120 999", True), ("2.0 1.5 1.0 2/120 999", False), ("garbled", False)]:
        loadavg.write_text(line)
        assert forked.core_free() is free, line


def test_a_refused_fork_leaves_the_share_to_this_process_and_no_pipe_open(forks, monkeypatch):
    """`os.fork` refused (no process or memory left): computed here, as without a second core, and the pipe
    made for the child closed."""

    def refuse():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    before = len(os.listdir("/proc/self/fd"))
    with forked.second_core(), forked.elsewhere(_pid_and, "x") as result:
        assert result() == (os.getpid(), "x")
    assert len(os.listdir("/proc/self/fd")) == before and forks == []


def test_a_result_computed_here_is_computed_once(forks, monkeypatch):
    """Awaited twice, a result computed here (no fork, or a failed child) is the first call's, as a child's is."""
    calls: list[int] = []

    def counted(value):
        calls.append(value)
        return value

    with forked.elsewhere(counted, 7) as result:
        assert result() == result() == 7
    with forked.second_core(), forked.elsewhere(_die_in_a_child, os.getpid()) as result:
        assert result() == result() == os.getpid()
    assert calls == [7]
