"""`--engine dask`: the same output as the local engine on a 2-worker LocalCluster, failures that
stay per trace, a worker killed mid-run, `file://` and fsspec's in-memory file system as object stores.

One LocalCluster (2 worker processes of one thread) serves the module; each test hands it to the engine
through `DaskEngine(client=...)` (the CLI's own cluster start is exercised once, in
`test_cli_starts_its_own_local_cluster`). The reference of every comparison is the local engine's
output of the same command on the same inputs, computed in the same test.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import fsspec
import pytest
from distributed import Client, LocalCluster
from typer.testing import CliRunner

from contexttrace.cli import analyze as cli_analyze
from contexttrace.cli.app import app
from contexttrace.discover.local import TraceSource, find_traces
from contexttrace.render.diagnostics import render_diagnostics
from contexttrace.render.trace import render_json
from contexttrace.reports.trace import build_report
from contexttrace.reports.usage import build_usage
from contexttrace.run import engine
from contexttrace.run.dask_engine import DaskEngine
from contexttrace.run.engine import EngineError, open_engine
from contexttrace.run.runner import analyze
from contexttrace.storage import store

from ..conftest import BAD, CASES, ROOT, SAMPLES, assistant, generated_corpus, result

runner = CliRunner()

SAMPLE_PATHS = sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())
COMMANDS = (["trace", "--calls"], ["usage", "--breakdown"], ["tools"])


@pytest.fixture(scope="module", autouse=True)
def _no_thread_left() -> Iterator[None]:
    """After the module, no thread of distributed's is left in this process: its offload executor's thread
    (made on first use, kept for the process's life) would make later tests see a second thread, and the
    runner then pauses the collector per trace only (`runner._run_gc_paused`). The executor is replaced by
    a fresh one, which starts its thread again only if used."""
    yield
    from concurrent.futures import ThreadPoolExecutor

    import distributed.utils

    distributed.utils._offload_executor.shutdown(wait=True)
    distributed.utils._offload_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="Dask-Offload")


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    """A LocalCluster of 2 worker processes (one thread each) and its client, for the whole module. A task
    on a worker that dies is rerun once (`allowed-failures` 1); a second death makes it fail (KilledWorker)."""
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
            silence_logs=logging.ERROR,
        )
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


@pytest.fixture
def dask_cli(client: Client, monkeypatch: pytest.MonkeyPatch) -> Client:
    """The CLI's `--engine dask` runs on the module's cluster (instead of starting a LocalCluster per run)."""
    real = cli_analyze.open_engine

    @contextlib.contextmanager
    def on_module_cluster(name, scheduler=None, workers=None, paths=None):
        if name == "dask":
            yield DaskEngine(client=client, keep_in_store=True)
        else:
            with real(name, scheduler, workers, paths) as e:
                yield e

    monkeypatch.setattr(cli_analyze, "open_engine", on_module_cluster)
    return client


def _cli(args: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    out = runner.invoke(app, args, input=stdin, catch_exceptions=False)
    return out.exit_code, out.stdout, out.stderr


def _both(command: list[str], paths: list[str], *extra: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """The CLI's (exit code, stdout, stderr) for `context <command> PATHS --json` on each engine."""
    args = ["context", command[0], *paths, *command[1:], "--json", "--no-cache", *extra]
    return _cli([*args, "--engine", "local"]), _cli([*args, "--engine", "dask"])


# -- the same output ----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_sample_same_json_stderr_and_exit_code(dask_cli, command):
    """Each bundled sample alone, and the samples folder as one scan: `--engine dask` prints the JSON, the
    stderr lines and the exit code of `--engine local`, byte for byte."""
    for paths in [[p] for p in SAMPLE_PATHS] + [[str(SAMPLES)]]:
        local, dask = _both(command, paths)
        assert dask == local, paths
        assert local[0] == 0 and local[1].startswith("[")


def test_cases_and_bad_files_same_output_and_exit_code(dask_cli):
    """The case files and the bad files (missing, binary, empty, truncated ...): the same failures on stderr
    (each named once) and exit 1 on both engines."""
    local, dask = _both(["trace", "--calls"], [str(CASES), str(BAD), "nope.jsonl"])
    assert dask == local
    assert local[0] == 1
    assert "Error: nope.jsonl: no such file" in local[2]


def test_standard_input_read_in_this_process(dask_cli):
    """`-` is read by the client, not sent to a worker: the same output as the local engine."""
    data = (SAMPLES / "b-ccl-image-and-errors.jsonl").read_bytes()
    args = ["context", "trace", "-", "--json", "--calls", "--no-cache"]
    assert _cli([*args, "--engine", "dask"], stdin=data) == _cli([*args, "--engine", "local"], stdin=data)


def _outputs(paths: list[str], **kw) -> tuple[str, str, list[str], list[str]]:
    """`context trace --json --calls` and `context usage --json` of a run, its diagnostics and failures."""
    trace = analyze(paths, **kw)
    usage = analyze(paths, build=build_usage, **kw)
    return (
        render_json(trace, with_calls=True),
        render_json(usage),
        render_diagnostics(trace),
        [f.path for f in trace.failures],
    )


def test_generated_corpus_same_output(client, tmp_path):
    """The generator's corpus: trace (with calls) and usage JSON and the diagnostics are the same on the
    cluster as in this process and in the local engine's worker processes; every session is reported."""
    paths = generated_corpus(tmp_path)
    dask = _outputs(paths, engine=DaskEngine(client=client))
    assert dask == _outputs(paths, workers=1)
    assert dask == _outputs(paths, workers=2)
    assert dask[0].count('"trace": ') >= 6 and not dask[3]


def test_inherited_calls_dropped_as_locally(client, write):
    """B06 across sessions: session sB copies sA's three calls (a resumed session). The cluster sends slim
    traces back; sB is read again here and its report rebuilt: sA 3 calls, sB 1 call and 3 inherited, as
    `reading/test_claude_calls.py::test_b06_resumed_session_copies_count_once` computes them."""
    read = [("tu1", "Read", {"file_path": "a.py"})]

    def line(mid, sid, ts, cr, tools=()):
        return dict(assistant(mid, 1, 10, cr, tools=tools), sessionId=sid, timestamp=ts)

    a = [
        line("msg_1", "sA", "2026-01-01T10:00:00.000Z", 1000, read),
        result("tu1", "x" * 10),
        line("msg_2", "sA", "2026-01-01T10:01:00.000Z", 2000),
        line("msg_3", "sA", "2026-01-01T10:02:00.000Z", 3000),
    ]
    b = [dict(r, sessionId="sB") for r in a] + [
        line("msg_4", "sB", "2026-01-02T09:00:00.000Z", 4000, [("tu4", "Read", {"file_path": "a.py"})])
    ]
    folder = write("proj/sA.jsonl", *a).rsplit("/", 1)[0]
    write("proj/sB.jsonl", *b)
    run = analyze([folder], engine=DaskEngine(client=client))
    by = {r.session_id: r for r in run.reports}
    assert (by["sA"].calls, by["sB"].calls, by["sB"].inherited_calls, by["sB"].prompt_tokens) == (3, 1, 3, [4011])
    assert render_json(run, with_calls=True) == render_json(analyze([folder], workers=1), with_calls=True)


def test_progress_counts_each_source_once(client):
    """The progress callback sees (done, total) once per source, done rising 1..total, as answers arrive."""
    sources = [s for s in find_traces([str(SAMPLES)]) if not s.orphan]
    seen: list[tuple[int, int]] = []
    out = DaskEngine(client=client).run(sources, build_report, None, lambda d, t: seen.append((d, t)), None)
    n = len(sources)
    assert seen == [(i, n) for i in range(1, n + 1)]
    assert len(out) == n


# -- the result store ---------------------------------------------------------------------------------


def test_store_kept_by_workers_and_served(client):
    """With the store, the cluster's workers keep what they read (a LocalCluster shares this machine's
    store); the warm run reads nothing and prints the same JSON as a run without the store."""
    e = DaskEngine(client=client, keep_in_store=True)
    paths = [str(SAMPLES)]
    cold = _outputs(paths, engine=e, cache=True)
    kept = store.ResultStore.for_path().info().entries
    warm = _outputs(paths, engine=e, cache=True)
    assert cold == warm == _outputs(paths, workers=1)
    assert kept == len([s for s in find_traces(paths) if not s.orphan])


def test_store_not_kept_by_remote_workers(client):
    """Workers of a scheduler given by address may not see this machine's store folder: their sources go
    as plain TraceSources (nothing kept there), and the output is the same."""
    e = DaskEngine(client=client, keep_in_store=False)
    stored = store.StoredSource(str(SAMPLES / "b-ccl-image-and-errors.jsonl"), store="/x/s.sqlite3", stamp=b"1")
    portable = e._portable(stored)
    assert type(portable) is TraceSource and portable.path == stored.path
    assert _outputs([str(SAMPLES)], engine=e, cache=True) == _outputs([str(SAMPLES)], workers=1)
    assert store.ResultStore.for_path().info().entries == 0


# -- failures -----------------------------------------------------------------------------------------


def _dies_once(marker: str, name_end: str, trace, window):
    """`build_report`, but the first worker to build the trace named `name_end` is killed (SIGKILL) as it
    does: `marker` is created first (O_EXCL: only one process ever wins it)."""
    if trace.name.endswith(name_end):
        with contextlib.suppress(FileExistsError):
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            os.kill(os.getpid(), signal.SIGKILL)
    return build_report(trace, window)


def _dies_in_workers(parent: int, name_end: str, built_here: str, trace, window):
    """`build_report`, but any process other than `parent` that builds the trace named `name_end` is killed;
    `parent` notes in the file `built_here` each trace it builds."""
    if os.getpid() == parent:
        with open(built_here, "a") as fh:
            fh.write(trace.name + "\n")
    elif trace.name.endswith(name_end):
        os.kill(os.getpid(), signal.SIGKILL)
    return build_report(trace, window)


def _workers(client: Client) -> set[str]:
    client.wait_for_workers(2, timeout=60)
    return set(client.scheduler_info()["workers"])


def test_worker_killed_mid_run_nothing_lost_nothing_doubled(client, tmp_path):
    """A worker dies (SIGKILL) while it builds one sample's report: Dask reruns that task (and any other the
    dead worker held) on a live worker; every trace is reported once, the JSON is the local engine's."""
    before = _workers(client)
    marker = str(tmp_path / "killed")
    build = functools.partial(_dies_once, marker, "b-ccl-image-and-errors.jsonl")
    run = analyze([str(SAMPLES)], engine=DaskEngine(client=client), build=build)
    reference = analyze([str(SAMPLES)], workers=1)
    assert os.path.exists(marker)  # the worker was killed ...
    assert _workers(client) != before  # ... and restarted by its nanny under a new address
    assert [r.trace for r in run.reports] == [r.trace for r in reference.reports]  # none lost, none twice
    assert render_json(run, with_calls=True) == render_json(reference, with_calls=True)
    assert not run.failures


def test_task_that_kills_every_worker_done_here(client, tmp_path):
    """A task that kills each worker it runs on fails on the cluster (KilledWorker after its allowed
    failures); it is then done in this process, as the local engine does with a task its worker could
    not answer: the output is still the local engine's, that trace was built here once, and no trace twice.
    (The other trace may be built here too: when the scheduler had put it on the same worker, each death
    counts against it as well, and after the allowed failures it has no answer either: 2 runs in 10 here.)"""
    built_here = tmp_path / "built-here"
    built_here.touch()
    killer = SAMPLES / "b-ccl-thinking-sonnet45.jsonl"
    build = functools.partial(_dies_in_workers, os.getpid(), killer.name, str(built_here))
    paths = [str(killer), str(SAMPLES / "b-ccl-image-and-errors.jsonl")]
    run = analyze(paths, engine=DaskEngine(client=client), build=build)
    built = built_here.read_text().splitlines()
    assert str(killer) in built and len(built) == len(set(built)) and set(built) <= set(paths)
    assert render_json(run, with_calls=True) == render_json(analyze(paths, workers=1), with_calls=True)
    _workers(client)  # (both back for the next test)


# -- object stores: file:// and memory:// ---------------------------------------------------------------


def test_file_urls_same_output_as_paths(dask_cli):
    """`file://` URLs (read through fsspec) give the output of the same folder and files named as paths,
    on either engine, the URL in place of the path; discovery attaches the same subagent files."""
    root = str(SAMPLES.resolve())
    url = "file://" + root
    by_path = _cli(["context", "trace", root, "--json", "--calls", "--no-cache"])
    for e in ("local", "dask"):
        code, out, err = _cli(["context", "trace", url, "--json", "--calls", "--no-cache", "--engine", e])
        assert (code, out.replace(url, root), err.replace(url, root)) == by_path
    files = [f"{url}/b-spotter-compaction/{p.name}" for p in (SAMPLES / "b-spotter-compaction").glob("*.jsonl")]
    assert _both(["usage"], files)[0] == _both(["usage"], files)[1]


def _memory_files() -> dict[str, bytes]:
    """The samples folder as in-memory files under /corpus (fsspec's memory:// file system)."""
    out = {}
    for dirpath, _dirs, names in os.walk(SAMPLES):
        for name in names:
            path = os.path.join(dirpath, name)
            out["/corpus" + path[len(str(SAMPLES)) :]] = Path(path).read_bytes()
    return out


#: The modification time of every in-memory file: one object store shows one time per object to every
#: process, where each process's memory:// copy would otherwise carry the time it was written there.
MEMORY_MTIME = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def _fill_memory(files: dict[str, bytes]) -> int:
    """Write `files` into this process's memory:// file system (run in each worker by `client.run`), each
    modified at `MEMORY_MTIME`."""
    fs = fsspec.filesystem("memory")
    for path, data in files.items():
        fs.pipe_file(path, data)
        fs.store[path].modified = MEMORY_MTIME
    return len(files)


def _clear_memory() -> None:
    fs = fsspec.filesystem("memory")
    if fs.exists("/corpus"):
        fs.rm("/corpus", recursive=True)


@pytest.fixture
def memory_corpus(client: Client) -> Iterator[None]:
    """The samples in memory:// here and in each worker: an object store every process sees."""
    files = _memory_files()
    _fill_memory(files)
    client.run(_fill_memory, files)
    try:
        yield
    finally:
        _clear_memory()
        client.run(_clear_memory)


def test_memory_store_discovery_same_as_on_disk(memory_corpus):
    """Sessions, their nested and flat subagent files (kind, agent id, order) and orphans found under a
    memory:// prefix are those found in the folder on disk, URL for path."""

    def shape(sources, prefix):
        def files(s):
            return [(f.path.removeprefix(prefix), f.thread_kind, f.agent_id) for f in s.subagents]

        return [(s.path.removeprefix(prefix), files(s), s.explicit, s.orphan, s.error) for s in sources]

    on_disk = shape(find_traces([str(SAMPLES)]), str(SAMPLES))
    assert shape(find_traces(["memory://corpus"]), "memory://corpus") == on_disk
    assert sum(len(s[1]) for s in on_disk) >= 3  # nested and flat subagent files among them
    # a session named alone finds its subagent files too
    one = "b-spotter-compaction/" + next(p.name for p in (SAMPLES / "b-spotter-compaction").glob("*.jsonl"))
    assert shape(find_traces([f"memory://corpus/{one}"]), "memory://corpus") == shape(
        find_traces([str(SAMPLES / one)]), str(SAMPLES)
    )


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_memory_store_same_output_on_both_engines(dask_cli, memory_corpus, command):
    """A memory:// prefix as an object store: `--engine dask` (workers read their memory:// copy) prints what
    `--engine local` prints; and the figures are those of the folder on disk, URL for path (the start
    of a stream-json run is its file's modification time: dated on disk, so left out of the comparison)."""
    local, dask = _both(command, ["memory://corpus"])
    assert dask == local
    assert local[0] == 0
    on_disk = _cli(["context", command[0], str(SAMPLES), *command[1:], "--json", "--no-cache"])
    if command[0] != "trace":
        return
    import orjson

    def undated(text: str, prefix: str) -> list[dict]:
        rows = orjson.loads(text.replace(prefix, "X"))
        return [{k: v for k, v in r.items() if k not in ("start", "start_source")} for r in rows]

    assert undated(local[1], "memory://corpus") == undated(on_disk[1], str(SAMPLES))


def test_url_read_errors_name_their_reason():
    """Opening a URL that is a folder, names nothing, or needs a plugin that is missing is that file's
    TraceReadError with the reason the local reader gives (or what to install)."""
    from contexttrace.errors import TraceReadError
    from contexttrace.reading.urls import open_url

    fsspec.filesystem("memory").pipe_file("/reasons/a/s.jsonl", b"{}\n")
    reasons = {}
    for url in ("memory://reasons/a", "memory://reasons/none.jsonl", "unknownscheme://x/y.jsonl"):
        with pytest.raises(TraceReadError) as caught:
            open_url(url)
        reasons[url] = caught.value.reason
    assert reasons["memory://reasons/a"] == "is a directory where a file was expected"
    assert reasons["memory://reasons/none.jsonl"] == "no such file"
    assert reasons["unknownscheme://x/y.jsonl"] == "cannot read: Protocol not known: unknownscheme"
    with open_url("memory://reasons/a/s.jsonl") as fh:
        assert fh.peek(2)[:2] == b"{}" and fh.read() == b"{}\n"
    fsspec.filesystem("memory").rm("/reasons", recursive=True)


def test_url_glob_expanded(memory_corpus):
    """A quoted glob behind a URL names the files it matches, sorted, spelled from the URL."""
    found = [s.path for s in find_traces(["memory://corpus/*.jsonl"])]
    assert found == sorted(f"memory://corpus/{p.name}" for p in SAMPLES.glob("*.jsonl"))


def test_local_glob_expanded():
    """A quoted glob on disk names the files it matches, sorted; one matching nothing is a missing file."""
    found = [s.path for s in find_traces([f"{SAMPLES}/*.jsonl"])]
    assert found == sorted(str(p) for p in SAMPLES.glob("*.jsonl")) and len(found) == 9
    assert [s.path for s in find_traces([f"{SAMPLES}/zz*.jsonl"])] == [f"{SAMPLES}/zz*.jsonl"]


def test_unreadable_url_is_that_trace_error(dask_cli):
    """A URL whose scheme's plugin is missing (s3:// without s3fs) and a missing memory:// file fail alone,
    each named with its reason and what to install; the good trace beside them is reported; exit 1."""
    good = str(SAMPLES / "b-ccl-image-and-errors.jsonl")
    local, dask = _both(["trace"], [good, "s3://bucket/traces/", "memory://nowhere/x.jsonl"])
    assert dask == local
    code, out, err = local
    assert code == 1 and out.count('"trace": ') == 1
    assert "Error: memory://nowhere/x.jsonl: no such file" in err
    if importlib.util.find_spec("s3fs") is None:
        assert "Error: s3://bucket/traces/: cannot read this path (Install s3fs to access S3: " in err
        assert "pip install 'contexttrace[s3]')" in err


# -- a plain `dask scheduler` and `dask worker` (docs/dask.md) ---------------------------------------------


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `dask scheduler` and one `dask worker` (one thread) started as docs/dask.md says, in a folder of
    their own (so a relative path of this process names nothing there); yields the scheduler's address."""
    import json
    import subprocess
    import time

    folder = tmp_path_factory.mktemp("dask-cluster")
    info = folder / "scheduler.json"
    bin_dir = Path(sys.executable).parent
    common = {"cwd": folder, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [
        subprocess.Popen(
            [bin_dir / "dask", "scheduler", "--scheduler-file", info, "--port", "0", "--dashboard-address", ":0"],
            **common,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        procs.append(
            subprocess.Popen(
                [bin_dir / "dask", "worker", "--scheduler-file", info, "--nworkers", "1", "--nthreads", "1"], **common
            )
        )
        address = json.loads(info.read_text())["address"]
        with Client(address, timeout=30) as c:
            c.wait_for_workers(1, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=30)


def test_plain_scheduler_and_worker_same_output(scheduler, monkeypatch):
    """`--engine dask --scheduler ADDRESS` on a plain `dask scheduler` / `dask worker`: the local engine's
    output for the same absolute paths (trace with calls; usage). No other client is this process's
    default (the engine's own is not made one: it must not lean on the module's)."""
    import weakref

    import distributed.client

    monkeypatch.setattr(distributed.client, "_global_clients", weakref.WeakValueDictionary())
    root = str(SAMPLES.resolve())
    for command in (["trace", root, "--calls"], ["usage", root]):
        args = ["context", *command, "--json", "--no-cache"]
        assert _cli([*args, "--engine", "dask", "--scheduler", scheduler]) == _cli(args)


def test_scheduler_refuses_relative_paths(scheduler, monkeypatch):
    """A relative path means another file (or none) in a worker's folder: a usage error naming it, before
    any task is sent."""
    monkeypatch.chdir(ROOT)
    code, out, err = _cli(["context", "trace", "samples", "--json", "--engine", "dask", "--scheduler", scheduler])
    assert (code, out) == (2, "")
    assert f"Error: --scheduler {scheduler}: a relative path (samples) means nothing" in err


def test_scheduler_workers_of_another_version_refused(scheduler, monkeypatch):
    """Workers that run another contexttrace could print other figures: refused, each worker named."""
    from contexttrace import version as package_version
    from contexttrace.run.dask_engine import version

    theirs = version()  # what the worker runs: this checkout
    monkeypatch.setattr(package_version, "__version__", "9.9.9")
    code, out, err = _cli(["context", "trace", str(SAMPLES.resolve()), "--engine", "dask", "--scheduler", scheduler])
    assert (code, out) == (2, "")
    assert f"Error: --scheduler {scheduler}: workers run another contexttrace than 9.9.9/" in err
    assert f" has {theirs}\n" in err


# -- the engine's options -------------------------------------------------------------------------------


def test_missing_dask_names_what_to_install(monkeypatch):
    """Without distributed installed, `--engine dask` exits 2 with one line naming it and the extra."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    code, out, err = _cli(["context", "trace", str(SAMPLES), "--json", "--engine", "dask"])
    assert (code, out) == (2, "")
    assert err == "Error: --engine dask: needs distributed (not installed): pip install 'contexttrace[dask]'\n"
    assert engine.missing_modules() == ["distributed"]


def test_scheduler_needs_engine_dask():
    """`--scheduler` with the local engine is a usage error (exit 2), never silently ignored."""
    code, out, err = _cli(["context", "usage", str(SAMPLES), "--scheduler", "tcp://127.0.0.1:8786"])
    assert (code, out) == (2, "")
    assert "Error: --scheduler tcp://127.0.0.1:8786: a scheduler is used with --engine dask only" in err


def test_unreachable_scheduler_is_a_usage_error(monkeypatch):
    """A scheduler address nobody answers at: exit 2 and a line naming the address, after the timeout; the
    failed client leaves no thread running in this process."""
    monkeypatch.setattr("contexttrace.run.dask_engine.CONNECT_TIMEOUT_S", 1)
    threads = {t.name for t in threading.enumerate()}
    code, out, err = _cli(["context", "trace", str(SAMPLES), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"])
    assert (code, out) == (2, "")
    assert err.startswith("Error: --scheduler tcp://127.0.0.1:9: cannot reach the Dask scheduler (")
    assert {t.name for t in threading.enumerate()} <= threads


def test_local_engine_is_the_runner_own():
    """`--engine local` hands the runner no engine: its own process pool reads, as before this option."""
    with open_engine("local") as e:
        assert e is None
    with pytest.raises(EngineError, match="--engine dask only"), open_engine("local", "tcp://x:1"):
        pass


def test_cli_starts_its_own_local_cluster():
    """Without --scheduler, `--engine dask` starts a LocalCluster here and shuts it down; the output is the
    local engine's."""
    args = ["context", "usage", str(SAMPLES / "b-spotter-compaction"), "--json", "--no-cache"]
    assert _cli([*args, "--engine", "dask"]) == _cli(args)


# -- what a reviewer broke: each test failed before its fix --------------------------


def _one_line_error(result: tuple[int, str, str], start: str) -> None:
    """A usage error: exit 2, nothing on stdout, one line on stderr starting with `start`."""
    code, out, err = result
    assert (code, out) == (2, ""), err
    assert err.startswith(start), err
    assert err.count("\n") == 1, err


def _session_with_subagents(tmp_path: Path) -> Path:
    """A copy of the spotter sample (a session with a subagents folder): its session file's path."""
    import shutil

    shutil.copytree(SAMPLES / "b-spotter-compaction", tmp_path / "spot")
    return next(p for p in (tmp_path / "spot").glob("*.jsonl") if not p.name.startswith("agent-"))


def test_worker_that_does_not_see_a_subagent_file_stops_the_run(dask_cli, tmp_path, monkeypatch):
    """Workers that do not see a file this process saw (another mount, a folder hidden from them) would
    read the session without its subagents (152 calls became 139, the compaction gone) and exit 0. Each
    task carries what this process saw; the worker compares first: the run stops, exit 2, one line naming
    the worker, the file and what differed. (Simulated: the file is removed once this process stamped it.)"""
    from contexttrace.run import dask_engine

    session = _session_with_subagents(tmp_path)
    sub = sorted(session.parent.glob(f"{session.stem}/subagents/agent-*.jsonl"))[0]
    real = dask_engine._seen

    def seen_then_hidden(source):
        stamp = real(source)
        sub.unlink(missing_ok=True)  # gone for the worker, after this process saw it
        return stamp

    monkeypatch.setattr(dask_engine, "_seen", seen_then_hidden)
    result = _cli(["context", "usage", str(session), "--json", "--no-cache", "--engine", "dask"])
    _one_line_error(result, "Error: --engine dask: worker tcp://127.0.0.1:")
    assert f": {sub}: missing on the worker; workers must see the files at the same paths" in result[2]
    assert "docs/dask.md" in result[2]


def test_worker_that_sees_another_size_stops_the_run(client, tmp_path, monkeypatch):
    """A file of another size on the worker than here (another copy at the same path) is never read."""
    from contexttrace.run import dask_engine

    session = _session_with_subagents(tmp_path)
    real = dask_engine._seen
    monkeypatch.setattr(dask_engine, "_seen", lambda s: tuple((p, n + 1, m) for p, n, m in real(s)))
    size = session.stat().st_size
    with pytest.raises(EngineError, match=rf"{session}: size differs \({size + 1:,} bytes here, {size:,} on the"):
        analyze([str(session)], engine=DaskEngine(client=client))


def test_worker_of_another_version_joining_later_is_refused(client, monkeypatch):
    """A worker that joins after the version check is checked by each task it runs: the task carries
    this process's version and a worker of another one reads nothing."""
    from contexttrace import version as package_version

    monkeypatch.setattr(package_version, "__version__", "9.9.9")
    with pytest.raises(EngineError, match=r"worker tcp://\S+: runs contexttrace \S+, this machine 9\.9\.9/"):
        analyze([str(SAMPLES / "b-spotter-compaction")], engine=DaskEngine(client=client))


def test_memory_urls_read_in_this_process(client):
    """memory:// is per process: a worker's is not this one's, so its sources are read here (before: every
    trace "no such file" on the workers)."""
    files = {"/solo" + k[len("/corpus") :]: v for k, v in _memory_files().items() if "b-spotter" in k}
    fs = fsspec.filesystem("memory")
    _fill_memory(files)
    try:
        paths = ["memory://solo/b-spotter-compaction"]
        assert _outputs(paths, engine=DaskEngine(client=client)) == _outputs(paths)
    finally:
        fs.rm("/solo", recursive=True)


def test_relative_file_url_refused_with_a_scheduler(scheduler, monkeypatch):
    """`file://samples` is a relative path behind a URL: refused like `samples` (before: the workers read
    their own folder's `samples`, "no such file", exit 1)."""
    monkeypatch.chdir(ROOT)
    result = _cli(["context", "trace", "file://samples", "--json", "--engine", "dask", "--scheduler", scheduler])
    _one_line_error(result, f"Error: --scheduler {scheduler}: a relative path (file://samples) means nothing")


def test_options_checked_before_the_store(scheduler, monkeypatch):
    """The verdict on --scheduler and on relative paths does not depend on the result store: once a run
    has stored every source, the same commands still exit 2 (before: 0)."""
    monkeypatch.chdir(ROOT)
    assert _cli(["context", "trace", "samples", "--json"])[0] == 0  # every source stored
    relative = _cli(["context", "trace", "samples", "--json", "--engine", "dask", "--scheduler", scheduler])
    _one_line_error(relative, f"Error: --scheduler {scheduler}: a relative path (samples)")
    nonsense = _cli(["context", "trace", str(SAMPLES.resolve()), "--engine", "dask", "--scheduler", "nonsense"])
    _one_line_error(nonsense, "Error: --scheduler nonsense: cannot reach the Dask scheduler (")


def test_scheduler_workers_checked_and_logs_silenced(scheduler):
    """On a scheduler address the engine connects, checks the worker, and silences distributed's loggers
    in this process until it is closed (stderr stays the local engine's)."""
    before = logging.getLogger("distributed.client").level
    with open_engine("dask", scheduler, paths=[str(SAMPLES.resolve())]) as e:
        assert logging.getLogger("distributed.client").getEffectiveLevel() > logging.CRITICAL
        assert logging.getLogger("distributed").getEffectiveLevel() > logging.CRITICAL
        assert e is not None and e._client is not None  # connected up front
    assert logging.getLogger("distributed.client").level == before


@contextlib.contextmanager
def _peer(reply: bytes | None, accepted: threading.Event | None = None) -> Iterator[str]:
    """A TCP server on localhost that is not a Dask scheduler: it answers `reply` to whatever it is sent
    (an HTTP server's error page), or never answers (None: a black hole); yields its tcp:// address and
    sets `accepted` when a connection comes. Its thread is gone when the block ends."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if accepted is not None:
                accepted.set()
            if reply is not None:
                with contextlib.suppress(OSError):
                    conn.recv(65536)
                    conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)  # (close alone does not wake a thread blocked in accept)
        server.close()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        assert not thread.is_alive()


@pytest.mark.parametrize("reply", [None, b"HTTP/1.0 400 Bad request\r\nContent-Type: text/html\r\n\r\n<html>"])
def test_peer_that_is_not_a_scheduler_is_a_usage_error(reply, monkeypatch):
    """Something that is not a scheduler at the address (an HTTP server, a dashboard port, a black hole):
    exit 2 with one line within the tool's own deadline (before: waited forever)."""
    monkeypatch.setattr("contexttrace.run.dask_engine.CONNECT_TIMEOUT_S", 1)
    with _peer(reply) as address:
        result = _cli(["context", "trace", str(SAMPLES), "--engine", "dask", "--scheduler", address])
    _one_line_error(result, f"Error: --scheduler {address}: ")
    assert "Dask scheduler" in result[2]


@pytest.mark.parametrize("address", ["nonsense", "", "foo://bar"])
def test_malformed_scheduler_is_a_usage_error(address):
    """A malformed address: exit 2, one line (before: a traceback, exit 1)."""
    result = _cli(["context", "usage", str(SAMPLES), "--engine", "dask", "--scheduler", address])
    _one_line_error(result, f"Error: --scheduler {address}: cannot reach the Dask scheduler (")


def test_any_error_while_connecting_is_a_usage_error(monkeypatch):
    """Whatever distributed raises while connecting (MemoryError: a peer announcing 3 EiB) is one line."""

    async def absurd(address):
        raise MemoryError("Unable to allocate 3.07 EiB")

    monkeypatch.setattr("contexttrace.run.dask_engine._probe", absurd)
    result = _cli(["context", "usage", str(SAMPLES), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"])
    _one_line_error(result, "Error: --scheduler tcp://127.0.0.1:9: cannot reach the Dask scheduler (MemoryError: ")


def test_ctrl_c_while_connecting_exits_130_quietly():
    """Ctrl-C while waiting on a peer that never answers: exit 130, no traceback, nothing else on stderr
    (before: `RuntimeError: IOLoop is closed`). A subprocess, sent SIGINT as a terminal would."""
    import subprocess
    import time

    accepted = threading.Event()
    with _peer(None, accepted) as address:
        cmd = [sys.executable, "-m", "contexttrace", "context", "usage", str(SAMPLES), "--engine", "dask"]
        proc = subprocess.Popen([*cmd, "--scheduler", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert accepted.wait(timeout=30)  # the command is waiting on the peer
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (130, b"")
    assert b"Traceback" not in err and b"Exception ignored" not in err, err


def test_scheduler_without_workers_is_a_usage_error(monkeypatch):
    """A scheduler with no worker: exit 2 with one line after `WORKER_WAIT_S` (before: waited forever)."""
    monkeypatch.setattr("contexttrace.run.dask_engine.WORKER_WAIT_S", 1)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty:
        address = empty.scheduler_address
        result = _cli(["context", "usage", str(SAMPLES.resolve()), "--engine", "dask", "--scheduler", address])
    _one_line_error(result, f"Error: --scheduler {address}: no worker joined the scheduler within 1 s")


def test_local_cluster_workers_ignore_ctrl_c():
    """Ctrl-C in a terminal sends SIGINT to the whole process group: a LocalCluster's workers ignore it
    (this process gets it and shuts them down), so none prints a KeyboardInterrupt traceback."""
    before = set(threading.enumerate())
    e = DaskEngine(workers=1)
    try:
        assert set(e.client().run(lambda: signal.getsignal(signal.SIGINT) == signal.SIG_IGN).values()) == {True}
        assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN  # this process's own is given back
    finally:
        e.close()
        for t in set(threading.enumerate()) - before:
            t.join(timeout=10)  # (the worker process's queue threads end just after the cluster closes)
    assert set(threading.enumerate()) <= before


def test_worker_without_contexttrace_reads_plainly():
    """A worker that cannot import contexttrace: the message says what is missing and what to install."""
    from contexttrace.run.dask_engine import _check_workers

    class NoPackage:
        def wait_for_workers(self, n, timeout):
            return None

        def run(self, fn):
            raise ModuleNotFoundError("No module named 'contexttrace'", name="contexttrace")

        def close(self):
            return None

    with pytest.raises(EngineError) as caught:
        _check_workers(NoPackage(), "tcp://h:1")
    assert str(caught.value) == (
        "--scheduler tcp://h:1: a worker cannot import contexttrace: pip install contexttrace on every worker"
    )


def test_quoted_tilde_folder_expanded(tmp_path, monkeypatch):
    """A quoted '~/dir' (no glob) is expanded as a quoted glob's ~ is, and is absolute for --scheduler."""
    import shutil

    from contexttrace.run.dask_engine import refuse_relative

    shutil.copytree(SAMPLES / "b-spotter-compaction", tmp_path / "spot")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert [s.path for s in find_traces(["~/spot"])] == [s.path for s in find_traces([str(tmp_path / "spot")])]
    refuse_relative(["~/spot", "-", "file:///srv/t", "s3://b/t/"], "tcp://h:1")  # none relative
