"""`--engine dask` against the local engine on the real-content corpus (issue 17), and the per-file costs
that the projection of a month of traces (benchmarks/README.md, "Dask engine") is made from.

1. Outputs checked first: `context trace --json --calls --no-cache` and `context usage --json --no-cache`
   print the same bytes (stdout, stderr, exit code) with `--engine local` and `--engine dask`.
2. Paired rounds, alternating order, whole processes (outputs to /dev/null): `context trace PROJECTS --json
   --no-cache --engine local` against `--engine dask` (which starts a LocalCluster of `--workers` worker
   processes and shuts it down: what a user pays). The ratio of each round, then their median and range.
3. The same in one process with the cluster already up (what the engine itself adds: the scheduler, the
   pickled answers), `runner.analyze` local against `analyze(engine=DaskEngine(client))`, paired rounds.
4. Per-file costs: each source read and built alone in this process (`work.read_built`, as a worker
   does it), its bytes and the pickled size of its answer; a least-squares line `seconds = a + b * MB`;
   and the scheduler's cost per task (`client.map` of a no-op over 2,000 tasks).

    python benchmarks/daskbench.py [--rounds 5] [--workers 2] [--mb 300] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import pickle
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import realcorpus

from contexttrace.discover.local import find_traces
from contexttrace.reports.trace import build_report
from contexttrace.run.dask_engine import DaskEngine
from contexttrace.run.runner import analyze
from contexttrace.run.work import read_built

CLI = [sys.executable, "-m", "contexttrace", "context"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds of one whole-process run, and the CPU seconds of it and its children (the cluster's)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    errors = [line for line in done.stderr.decode(errors="replace").splitlines() if line.startswith("Error")]
    assert done.returncode == 0, f"{' '.join(cmd)}: exit {done.returncode}: {errors[:3]}"
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)


def check_outputs(projects: str, workers: int) -> None:
    """Both engines print the same bytes for `context trace --calls` and `context usage` (and exit alike)."""
    for command in (["trace", projects, "--calls"], ["usage", projects]):
        runs = [
            subprocess.run([*CLI, *command, "--json", "--no-cache", "--engine", e], capture_output=True, env=_env())
            for e in ("local", "dask")
        ]
        local, dask = ((r.returncode, r.stdout, r.stderr) for r in runs)
        assert local == dask, f"context {command[0]}: --engine dask differs from --engine local"
        print(f"  context {command[0]}: identical ({len(local[1]):,} bytes of JSON, exit {local[0]})")


def paired_processes(projects: str, rounds: int) -> dict[str, Any]:
    """Whole-process `context trace --json --no-cache` on each engine, alternating order each round."""
    cmds = {e: [*CLI, "trace", projects, "--json", "--no-cache", "--engine", e] for e in ("local", "dask")}
    for cmd in cmds.values():
        _timed(cmd)  # untimed warm-up: bytecode, page cache
    times: dict[str, list[tuple[float, float]]] = {"local": [], "dask": []}
    for r in range(rounds):
        for e in ("local", "dask") if r % 2 == 0 else ("dask", "local"):
            times[e].append(_timed(cmds[e]))
    return _ratios(times)


def _ratios(times: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    wall = [d[0] / loc[0] for d, loc in zip(times["dask"], times["local"], strict=True)]
    cpu = [d[1] / loc[1] for d, loc in zip(times["dask"], times["local"], strict=True)]
    return {
        "local_s": statistics.median(t[0] for t in times["local"]),
        "dask_s": statistics.median(t[0] for t in times["dask"]),
        "ratio": statistics.median(wall),
        "ratio_range": [min(wall), max(wall)],
        "cpu_ratio": statistics.median(cpu),
        "times": times,
    }


def paired_in_process(projects: str, rounds: int, client: Any) -> dict[str, Any]:
    """`analyze` with the local engine against the warm cluster, in this process, alternating order."""
    engine = DaskEngine(client=client)
    runs = {"local": lambda: analyze([projects]), "dask": lambda: analyze([projects], engine=engine)}
    for run in runs.values():
        run()
    times: dict[str, list[tuple[float, float]]] = {"local": [], "dask": []}
    for r in range(rounds):
        for e in ("local", "dask") if r % 2 == 0 else ("dask", "local"):
            start, cpu = time.perf_counter(), time.process_time()
            runs[e]()
            times[e].append((time.perf_counter() - start, time.process_time() - cpu))
    return _ratios(times)


def per_file_costs(projects: str, client: Any) -> dict[str, Any]:
    """Each source read and built alone (as one task), its bytes and the pickled size of its answer; the
    line through (MB, seconds); the scheduler's cost per task."""
    sources = [s for s in find_traces([projects]) if not s.orphan]
    rows = []
    for source in sources:
        size = sum(os.path.getsize(p) for p in [source.path, *(s.path for s in source.subagents)])
        start = time.perf_counter()
        answer = read_built(source, build_report, None, slim=True)
        rows.append((size / 2**20, time.perf_counter() - start, len(pickle.dumps(answer))))
    mb = [r[0] for r in rows]
    secs = [r[1] for r in rows]
    slope, intercept = statistics.linear_regression(mb, secs)
    n = 2000
    start = time.perf_counter()
    client.gather(client.map(_noop, range(n), pure=False))
    per_task = (time.perf_counter() - start) / n
    return {
        "sources": len(rows),
        "files": sum(1 + len(s.subagents) for s in sources),
        "mb": sum(mb),
        "seconds": sum(secs),
        "s_per_mb": slope,
        "s_per_source": intercept,
        "answer_bytes": sum(r[2] for r in rows),
        "scheduler_s_per_task": per_task,
    }


def _noop(x: int) -> int:
    return x


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=300.0, help="corpus size, MiB (default 300)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2, help="the LocalCluster's worker processes")
    parser.add_argument("--json", type=Path, help="write the figures (and every time) here")
    args = parser.parse_args(argv)
    corpus = realcorpus.ensure(realcorpus.copies_for(args.mb))
    projects = str(corpus.projects)
    print(f"corpus: {projects} ({corpus.bytes / 2**20:.1f} MiB)")
    check_outputs(projects, args.workers)
    from distributed import Client, LocalCluster

    out: dict[str, Any] = {"cores": os.cpu_count(), "workers": args.workers, "rounds": args.rounds}
    out["processes"] = paired_processes(projects, args.rounds)
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
            silence_logs=logging.ERROR,
            memory_limit=0,
        ) as cluster,
        Client(cluster) as client,
    ):
        out["in_process"] = paired_in_process(projects, args.rounds, client)
        out["per_file"] = per_file_costs(projects, client)
    for name in ("processes", "in_process"):
        f = out[name]
        print(
            f"{name}: local {f['local_s']:.2f} s, dask {f['dask_s']:.2f} s, ratio {f['ratio']:.2f} "
            f"({f['ratio_range'][0]:.2f}-{f['ratio_range'][1]:.2f}), CPU ratio {f['cpu_ratio']:.2f}"
        )
    c = out["per_file"]
    print(
        f"per file: {c['sources']} sources ({c['files']} files, {c['mb']:.1f} MiB) in {c['seconds']:.2f} s one "
        f"process; {c['s_per_mb'] * 1000:.2f} ms per MiB + {c['s_per_source'] * 1000:.2f} ms per source; answers "
        f"{c['answer_bytes'] / 2**20:.1f} MiB pickled; scheduler {c['scheduler_s_per_task'] * 1000:.2f} ms per task"
    )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
