"""A large trace's report with its weather computed by a forked child (`reports.trace.build_report` with
`forked.elsewhere`, in a run of more than one process): exactly the report one process builds, on every
sample, case and fuzz file; and a run of one process never forks.

The comparison runs in a fresh interpreter, which runs no other thread (`forked.fork_safe` holds there as it
does in the command line's process), with `FORK_MIN_CALLS` at 0 so that every trace's weather is forked."""

from __future__ import annotations

import subprocess
import sys

import orjson

from contexttrace import forked
from contexttrace.reports import trace as trace_report
from contexttrace.run.runner import analyze

from ..conftest import CASES, FUZZ, ROOT, SAMPLES

#: Builds every trace's report in one process and with its weather forked; prints the traces whose reports
#: differ (by `repr`: every field, NaN included) and how many children were forked.
_COMPARE = """
import sys, orjson
from contexttrace import forked, reading
from contexttrace.reports import trace as trace_report
started = []
real = forked._start
forked._start = lambda f, a: started.append(1) or real(f, a)
forked.core_free = lambda: True  # (whatever else the machine runs)
trace_report.FORK_MIN_CALLS = 0
differ, traces = [], 0
for path in sys.argv[1:]:
    try:
        found = reading.read_trace(path)
    except Exception:
        continue  # (a file that is no trace: no report)
    for trace in found:
        traces += 1
        for window in (None, 200_000):
            alone = trace_report.build_report(trace, window)
            with forked.second_core():
                shared = trace_report.build_report(trace, window)
            if repr(shared) != repr(alone):
                differ.append([trace.name, window])
print(orjson.dumps({"forks": len(started), "traces": traces, "differ": differ}).decode())
"""


def _inputs() -> list[str]:
    found = [p for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir()]
    found += CASES.rglob("*.jsonl")
    found += [p for p in FUZZ.iterdir() if p.suffix == ".jsonl" or p.is_dir()]
    return sorted(map(str, found))


def test_a_report_whose_weather_is_forked_equals_the_one_process_report():
    done = subprocess.run(
        [sys.executable, "-c", _COMPARE, *_inputs()],
        capture_output=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=600,
    )
    got = orjson.loads(done.stdout)
    assert got["traces"] >= 60 and got["forks"] == 2 * got["traces"]  # every report forked its weather
    assert got["differ"] == []


def test_a_run_of_one_process_never_forks(monkeypatch):
    """`--workers 1` (or a run too small for workers) opens no `second_core`: the report is built here alone."""

    def refuse(function, args):
        raise AssertionError("forked in a one-process run")

    monkeypatch.setattr(forked, "_start", refuse)
    monkeypatch.setattr(forked, "fork_safe", lambda: True)
    monkeypatch.setattr(forked, "core_free", lambda: True)
    monkeypatch.setattr(trace_report, "FORK_MIN_CALLS", 0)
    result = analyze([str(SAMPLES / "b-spotter-compaction")], workers=1)
    assert result.reports and not result.failures
    assert forked._second_cores == 0


#: `context trace`'s run of one session read in two parts (the tail by a forked worker), its report's weather
#: forked once the worker is done, against the run of one process; prints whether they are equal, how many
#: children the report forked and whether the two parts were merged. `fork_safe` waits (up to 5 s) for the
#: worker's collector thread to end, as it has in the command line's run by the time the report is built (the
#: merge and the trace come first).
_RUN = """
import os, sys, time, orjson
from contexttrace import forked
from contexttrace.reading.claude import api, split
from contexttrace.reports import trace as trace_report
from contexttrace.render.trace import render_json
from contexttrace.run.runner import analyze

def alone_soon():
    deadline = time.monotonic() + 5
    while len(os.listdir("/proc/self/task")) > 1 and time.monotonic() < deadline:
        time.sleep(0.001)
    return len(os.listdir("/proc/self/task")) == 1

alone = render_json(analyze(sys.argv[1:], workers=1), with_calls=True)
started = []
real = forked._start
forked._start = lambda f, a: started.append(1) or real(f, a)
forked.fork_safe = alone_soon
forked.core_free = lambda: True  # (whatever else the machine runs)
split.SPLIT_MIN_BYTES = 0
merged = []
api.read_head = lambda *a: merged.append(split.read_head(*a)) or merged[-1]
trace_report.FORK_MIN_CALLS = 0
shared = render_json(analyze(sys.argv[1:], workers=2), with_calls=True)
out = {"forks": len(started), "same": shared == alone, "merged": [m is not None for m in merged]}
print(orjson.dumps({**out, "reports": shared.count('"trace":')}).decode())
"""


def test_a_run_in_two_processes_forks_the_weather_and_reports_as_one_process():
    """One session read in two parts by two processes, then its weather forked: the run of one process."""
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(SAMPLES / "b-spotter-compaction")],
        capture_output=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=120,
    )
    assert orjson.loads(done.stdout) == {"forks": 1, "same": True, "merged": [True], "reports": 1}
