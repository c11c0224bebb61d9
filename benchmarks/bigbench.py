"""One large transcript read by both cores (`bigfile.py`): wall, CPU and peak memory, as whole processes.

Each round runs, in alternating order, the bare one-core loop over the file (`baseline.py`) and
`contexttrace context trace FILE --json --no-cache` (and, with `--before DIR`, the same command with
`PYTHONPATH=DIR`, another checkout). For each run: wall seconds, CPU seconds (user + system of the
process and every process it started, `RUSAGE_CHILDREN`), CPU ÷ wall, and the peak resident memory of
each of its processes (`VmHWM`, sampled from /proc every 10 ms while they live: the main process and
its largest worker). Ratios are per round, then the median and range over the rounds. Outputs are
checked first against the file's known answers (`bigfile.expected`).

    python benchmarks/bigbench.py [--mb 300] [--rounds 5] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bigfile
import orjson
import realbench

HERE = Path(__file__).resolve().parent


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants alive now (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
    return out


def _hwm(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _cpu(pid: int) -> float | None:
    """User + system CPU seconds of `pid` so far (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(cmd: list[str], env: dict[str, str], cwd: str | None = None) -> dict[str, Any]:
    """Wall, CPU and per-process peak RSS of one run of `cmd` (its output to /dev/null), started in the
    folder `cwd` (`python -m` looks in the working folder first: the checkout to measure)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peaks: dict[int, int] = {}
    cpus: dict[int, float] = {}
    while proc.poll() is None:
        for p in _tree(proc.pid):
            got = _hwm(p)
            if got is not None:
                peaks[p] = max(peaks.get(p, 0), got)
            used = _cpu(p)
            if used is not None:
                cpus[p] = used
        time.sleep(0.01)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    main = peaks.pop(proc.pid, 0)
    main_cpu = cpus.pop(proc.pid, 0.0)
    return {
        "wall": wall,
        "cpu": cpu,
        "rss_main": main,
        "rss_worker": max(peaks.values(), default=0),
        "cpu_main": main_cpu,
        "cpu_worker": max(cpus.values(), default=0.0),
    }


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=300.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None, help="another checkout's package parent")
    args = parser.parse_args(argv)
    made = bigfile.ensure(bigfile.copies_for(args.mb))
    realbench.compile_bytecode(HERE.parent, *([args.before] if args.before else []))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    trees = {"trace": str(HERE.parent), **({"before": str(args.before)} if args.before else {})}
    want = bigfile.expected(made.copies)
    for name, tree in trees.items():
        out = subprocess.run(
            [sys.executable, "-m", "contexttrace", "context", "trace", str(made.path), "--json", "--no-cache"],
            env={**env, "PYTHONPATH": tree},
            cwd=tree,
            capture_output=True,
            check=True,
        ).stdout
        got = orjson.loads(out)[0]
        assert {k: got[k] for k in want} == want, (name, {k: got[k] for k in want}, want)
    commands = {"base": ([sys.executable, str(HERE / "baseline.py"), str(made.path.parent)], {**env, "PYTHONPATH": ""})}
    for name, tree in trees.items():
        cmd = [sys.executable, "-m", "contexttrace", "context", "trace", str(made.path), "--json", "--no-cache"]
        commands[name] = (cmd, {**env, "PYTHONPATH": tree})
    results: dict[str, list[dict[str, Any]]] = {n: [] for n in commands}
    for r in range(args.rounds):
        order = list(commands) if r % 2 == 0 else list(reversed(commands))
        for name in order:
            cmd, cenv = commands[name]
            results[name].append(run(cmd, cenv, cenv["PYTHONPATH"] or None))
        line = "  ".join(
            f"{n}: {x[-1]['wall']:.2f}s cpu {x[-1]['cpu']:.2f}s rss {x[-1]['rss_main'] / 2**20:.0f}/"
            f"{x[-1]['rss_worker'] / 2**20:.0f}MB cpu main/worker {x[-1]['cpu_main']:.2f}/{x[-1]['cpu_worker']:.2f}s"
            for n, x in results.items()
        )
        print(f"round {r + 1}: {line}", flush=True)
    print(f"file: {made.path} {made.bytes / 2**20:.0f} MiB, {made.copies} copies; load {os.getloadavg()}")
    base = results["base"]
    for name in trees:
        runs = results[name]

        def med(f: Any, runs: list[dict[str, Any]] = runs) -> str:
            return _median([f(x, b) for x, b in zip(runs, base, strict=True)])

        print(
            f"{name}: wall {med(lambda x, b: x['wall'])} s, cpu/wall {med(lambda x, b: x['cpu'] / x['wall'])},"
            f" ÷ base wall {med(lambda x, b: x['wall'] / b['wall'])},"
            f" cpu ÷ base cpu {med(lambda x, b: x['cpu'] / b['cpu'])},"
            f" rss main {med(lambda x, b: x['rss_main'] / 2**20)} MB,"
            f" worker {med(lambda x, b: x['rss_worker'] / 2**20)} MB,"
            f" cpu main {med(lambda x, b: x['cpu_main'])} s, worker {med(lambda x, b: x['cpu_worker'])} s"
        )
    print(f"base: wall {_median([x['wall'] for x in results['base']])} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
