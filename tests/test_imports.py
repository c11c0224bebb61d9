"""What each entry point imports: the library core, `context trace --json`, the workers and `context
report` load only what they use."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import orjson
import pytest

from .conftest import ROOT


def test_reading_and_reports_never_import_polars():
    """Workers read and build reports without Polars (its import is a third of a worker's start-up)."""
    code = (
        "import sys; from contexttrace.run.work import read_built; "
        "from contexttrace.reports.trace import build_report; "
        "from contexttrace.reports.usage import build_usage; from contexttrace.discover.local import find_traces; "
        "[s] = find_traces(['samples/b-spotter-compaction']); "
        "[(t, r)] = read_built(s, build_report, 200000); u = build_usage(t); "
        "assert r.calls == 139 and u.total['calls'] == 152, (r.calls, u.total['calls']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'polars'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_metrics_import_does_not_pull_cli_or_tables():
    """The library core imports neither typer nor tabulate (only cli.py and render.py do)."""
    code = (
        "import sys, contexttrace.analysis.metrics, contexttrace.reading; "
        "print('typer' in sys.modules, 'tabulate' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False False"


def test_trace_json_loads_only_what_it_uses():
    """`context trace --json` imports neither tabulate (it prints no table) nor the modules of the other
    commands (each command's function in `contexttrace/cli/` imports its reports and renderer when run):
    their import is start-up every `context trace` would pay (40 ms of CPU, benchmarks/README.md)."""
    code = (
        "import sys; from contexttrace.cli.app import main; "
        "sys.argv = ['contexttrace', 'context', 'trace', 'samples/b-ccl-thinking-sonnet45.jsonl', '--json', "
        "'--no-cache']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "names = ('tabulate', 'polars', 'contexttrace.reports.tools', 'contexttrace.reports.files', "
        "'contexttrace.reports.sources', 'contexttrace.render.tools', 'contexttrace.render.files', "
        "'contexttrace.render.sources', 'contexttrace.render.html.data', 'contexttrace.storage.history', "
        "'contexttrace.analysis.placement')\n"
        "print([m for m in names if m in sys.modules], file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert orjson.loads(proc.stdout)[0]["peak"] == 72484


def test_cli_import_stays_light():
    """`context trace` never imports the report's libraries (they load only when a page is rendered)."""
    import subprocess
    import sys

    code = (
        "import sys, contexttrace.cli.app, contexttrace.render.html.data, contexttrace.render.html.section, "
        "contexttrace.render.html.compare_view; "
        "print(sorted(m for m in ('jinja2', 'altair', 'vl_convert') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: What `context trace --json` never loads: pydantic (typer 0.29's run-time option coercion, excluded by
#: pyproject.toml's pin), Polars, tabulate, rich (a progress bar only on a terminal), the other commands'
#: reports and renderers, the HTML page's libraries, the history database, fsspec (URLs only).
NOT_FOR_TRACE_JSON = (
    "polars", "tabulate", "rich", "jinja2", "altair", "fsspec", "numpy", "pandas", "dask",
    "contexttrace.reports.tools", "contexttrace.reports.files", "contexttrace.reports.sources",
    "contexttrace.render.tools", "contexttrace.render.files", "contexttrace.render.sources",
    "contexttrace.render.html.data", "contexttrace.render.history", "contexttrace.storage.history",
    "contexttrace.analysis.placement", "contexttrace.run.pool", "contexttrace.run.dask_engine",
)  # fmt: skip


def _loaded_by(argv: list[str]) -> tuple[set[str], str]:
    code = (
        "import sys; from contexttrace.cli.app import main\n"
        f"sys.argv = ['contexttrace', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(proc.stderr.strip().splitlines()[-1].split()), proc.stdout


def _heavy(loaded: set[str]) -> list[str]:
    return sorted(m for m in NOT_FOR_TRACE_JSON if m in loaded or any(n.startswith(m + ".") for n in loaded))


#: The modules a warm `context trace --json` (its reports kept in the result store) may import from
#: `reports` and `analysis`: the report types and build names, the schema versions, and the analysis the
#: renderers format with. Everything else there builds reports; the readers read.
WARM_REPORTS_AND_ANALYSIS = {
    "contexttrace.reports", "contexttrace.reports.builds", "contexttrace.reports.results",
    "contexttrace.reports.schemas", "contexttrace.analysis", "contexttrace.analysis.counts",
    "contexttrace.analysis.frame_rows", "contexttrace.analysis.metrics", "contexttrace.analysis.window",
}  # fmt: skip
#: The readers: a warm run reads no file, so it imports none of them.
READERS = ("contexttrace.reading.api", "contexttrace.reading.claude", "contexttrace.reading.codex",
           "contexttrace.reading.gemini")  # fmt: skip


def test_trace_json_import_set_cold_and_warm(tmp_path, monkeypatch):
    """`context trace --json` cold and warm (its reports kept in the result store) loads none of
    `NOT_FOR_TRACE_JSON`, and with typer below 0.29 (pyproject.toml's pin) no pydantic either. Warm, it
    imports no reader and no report builder or analysis beyond `WARM_REPORTS_AND_ANALYSIS` (its reports are
    decoded from the store); cold with `--no-cache`, nothing of the store (nor sqlite3)."""
    monkeypatch.setenv("CONTEXTTRACE_CACHE_DIR", str(tmp_path / "store"))
    argv = ["context", "trace", "samples/b-ccl-thinking-sonnet45.jsonl", "--json"]
    cold, out = _loaded_by(argv)
    warm, again = _loaded_by(argv)
    uncached, once_more = _loaded_by([*argv, "--no-cache"])
    assert orjson.loads(out)[0]["peak"] == 72484 and again == out == once_more
    assert (_heavy(cold), _heavy(warm), _heavy(uncached)) == ([], [], [])
    assert "contexttrace.reading.claude.builder" in cold and "contexttrace.analysis.weather" in cold
    assert "contexttrace.reports.results" in warm and "contexttrace.storage.reports" in warm
    assert sorted(m for m in warm if m.startswith(READERS)) == []
    layers = ("contexttrace.reports", "contexttrace.analysis")
    assert sorted(m for m in warm if m.startswith(layers) and m not in WARM_REPORTS_AND_ANALYSIS) == []
    # the console hook (`storage.replay`) reads the arguments, sees --no-cache and hands over: no store
    stored = sorted(m for m in uncached if m.startswith("contexttrace.storage.") or m == "sqlite3")
    assert stored in ([], ["contexttrace.storage.replay"])
    if tuple(int(p) for p in version("typer").split(".")[:2]) >= (0, 29):
        pytest.skip(f"typer {version('typer')} is installed; pyproject.toml pins typer<0.29 (pip install -e .)")
    assert sorted(m for m in cold | warm if m.split(".")[0] in ("pydantic", "pydantic_core")) == []


#: What a replayed run (`storage.replay`: a reading command whose inputs did not change) never loads.
NOT_FOR_A_REPLAY = (
    "typer", "click", "rich", "msgspec", "orjson", "tabulate", "polars", "sqlite3", "contexttrace.reading",
    "contexttrace.reports", "contexttrace.analysis", "contexttrace.render", "contexttrace.run",
    "contexttrace.select", "contexttrace.discover", "contexttrace.storage.store", "contexttrace.storage.reports",
)  # fmt: skip


def test_a_replayed_run_imports_no_reader_report_or_typer(tmp_path, monkeypatch):
    """The console script's `main` over unchanged inputs writes the kept output before importing Typer, the
    readers or the report code (the run that kept it loaded them all)."""
    import os
    import shutil
    import time

    monkeypatch.setenv("CONTEXTTRACE_CACHE_DIR", str(tmp_path / "store"))
    trace = tmp_path / "traces" / "t.jsonl"
    trace.parent.mkdir()
    shutil.copyfile(ROOT / "samples" / "b-ccl-thinking-sonnet45.jsonl", trace)
    then = time.time() - 60  # (a run keeps no output whose inputs changed a moment before it)
    for path in (trace, trace.parent):
        os.utime(path, (then, then))
    argv = ["context", "trace", str(trace), "--json"]
    code = (
        "import sys; from contexttrace.cli import main\n"
        f"sys.argv = ['contexttrace', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    runs = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True) for _ in "12"]
    (kept, first), (replayed, again) = ((set(r.stderr.split()), r.stdout) for r in runs)
    assert orjson.loads(first)[0]["peak"] == 72484 and again == first
    heavy = [m for m in NOT_FOR_A_REPLAY if m in replayed or any(n.startswith(m + ".") for n in replayed)]
    assert heavy == [] and "contexttrace.storage.replay" in replayed
    assert {"typer", "contexttrace.reading.claude.builder", "contexttrace.reports.trace"} <= kept


def test_a_command_run_builds_only_its_own_options():
    """`main` registers only the command its arguments name (Typer turns every registered command's
    signature into options on each run), and that command's help reads as in the whole app."""
    from typer.testing import CliRunner

    from contexttrace.cli.app import COMMANDS, app, command_named, make_app

    assert command_named(["context", "usage", "--json"]) == ("context", "usage")
    assert command_named(["context"]) is None and command_named(["context", "nope"]) is None
    assert command_named(["-h"]) is None and command_named([]) is None
    only = make_app(("context", "trace"))
    [context] = [g.typer_instance for g in only.registered_groups if g.name == "context"]
    assert [c.name for c in context.registered_commands] == ["trace"] and len(COMMANDS) == 11
    runner = CliRunner()
    argv = ["context", "trace", "--help"]
    assert (
        runner.invoke(only, argv, env={"COLUMNS": "100"}).output
        == runner.invoke(app, argv, env={"COLUMNS": "100"}).output
    )
