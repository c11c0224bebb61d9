"""Every command's reports kept in the result store (`storage.reports.KEPT_BUILDS`): `context usage`, `tools`,
`sources` and `files` print the same with the store cold, warm and without it; a warm run reads no file and
builds no report; a report is served only for its command's options, its files' stamp and this code."""

from __future__ import annotations

import shutil
import sqlite3
from functools import partial
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.reports.files import build_files, parse_at
from contexttrace.reports.sources import build_sources
from contexttrace.reports.trace import build_report
from contexttrace.reports.usage import build_usage
from contexttrace.select.views import build_report_with_cost
from contexttrace.storage import reports as built
from contexttrace.storage import store

from ..conftest import SAMPLES
from . import test_reports
from .test_store import _append

runner = CliRunner()
builds = test_reports.builds  # the fixture: the traces whose report is built in this process

#: What a person runs, per command: the JSON and a table, with the options that change each report.
COMMANDS = [
    ["usage", "--json"],
    ["usage", "--breakdown", "--wide"],
    ["tools", "--json"],
    ["tools", "--by-tool"],
    ["sources", "--json", "--at", "peak"],
    ["sources", "--steps", "--thread", "main"],
    ["files", "--json"],
    ["files", "--at", "3"],
    ["trace", "--sort", "cost", "--json"],
]


def _copy(tmp_path: Path) -> list[str]:
    """Two real samples copied (a session with subagent files and a compaction; a stream-json capture)."""
    session = tmp_path / "spotter"
    shutil.copytree(SAMPLES / "b-spotter-compaction", session)
    stream = tmp_path / "thinking.jsonl"
    shutil.copyfile(SAMPLES / "b-ccl-thinking-sonnet45.jsonl", stream)
    return [str(session), str(stream)]


def _out(args: list[str], paths: list[str], cache: bool) -> tuple[int, str]:
    got = runner.invoke(app, ["context", *args, *paths, *([] if cache else ["--no-cache"])], env={"COLUMNS": "160"})
    return got.exit_code, got.stdout


def _kept() -> list[str]:
    with sqlite3.connect(store.store_path()) as conn:
        return [b for (b,) in conn.execute("SELECT build FROM reports ORDER BY build")]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_each_command_prints_the_same_warm_and_builds_nothing(args, tmp_path, settled, reads, builds):
    """Without the store, cold and warm: the same exit code and stdout; the warm run reads no file and
    builds no report."""
    paths = _copy(tmp_path)
    plain = _out(args, paths, cache=False)
    assert plain[0] == 0 and plain[1].strip()
    assert _out(args, paths, cache=True) == plain
    reads.clear()
    builds.clear()
    assert _out(args, paths, cache=True) == plain
    assert (reads, builds) == ([], [])


def test_options_that_change_a_report_are_part_of_its_key(tmp_path, settled, builds):
    """`--at` and `--thread` name the kept report: `sources --at peak` is not served to `--at last`, and
    each spelling gets its own row; `context usage` keeps its own."""
    paths = _copy(tmp_path)
    peak = _out(["sources", "--json", "--at", "peak"], paths, cache=True)
    builds.clear()
    last = _out(["sources", "--json", "--at", "last"], paths, cache=True)
    assert len(builds) == 2  # built again (from the stored traces), not the peak report
    assert last == _out(["sources", "--json", "--at", "last"], paths, cache=False) != peak
    assert [(r["at"], r["call"]) for r in orjson.loads(last[1])] == [("last", 139), ("last", 36)]
    assert [(r["at"], r["call"]) for r in orjson.loads(peak[1])] == [("peak", 61), ("peak", 36)]
    _out(["usage", "--json"], paths, cache=True)
    assert _kept() == [
        'sources{"at":"last","thread":"main"}',
        'sources{"at":"last","thread":"main"}',
        'sources{"at":"peak","thread":"main"}',
        'sources{"at":"peak","thread":"main"}',
        "usage",
        "usage",
    ]


@pytest.mark.parametrize("args", [["usage", "--json"], ["files", "--json"], ["tools", "--json"]], ids=" ".join)
def test_a_changed_file_or_other_code_is_never_served(args, tmp_path, settled, reads, builds, monkeypatch):
    """An appended session has another stamp: read and built again. Another `code_version` (any module or
    data file changed): built again from the entry, no file read. Both print what --no-cache prints."""
    paths = _copy(tmp_path)
    _out(args, paths, cache=True)
    main = next(Path(paths[0]).glob("*.jsonl"))
    _append(main)
    reads.clear()
    builds.clear()
    assert _out(args, paths, cache=True) == _out(args, paths, cache=False)
    assert reads.count(str(main)) == 2 and builds.count(str(main)) == 2  # (the store's run and --no-cache's)
    monkeypatch.setattr(built, "_code_hash", lambda: "0" * 16)
    reads.clear()
    builds.clear()
    assert _out(args, paths, cache=True) == _out(args, paths, cache=False)
    assert len(reads) == 2  # the --no-cache run's only
    assert len(builds) == 4  # both traces, by each run
    assert {v for (v,) in sqlite3.connect(store.store_path()).execute("SELECT version FROM reports")} == {
        built.code_version()
    }


def test_build_spec_names_each_command_and_its_options():
    """Each command's build is kept under its name, a partial's keyword arguments in it; a replaced function,
    positional arguments or any other build are not kept."""
    assert built.build_spec(build_report)[0] == "trace"
    assert built.build_spec(build_report_with_cost)[0] == "trace+cost"
    assert built.build_spec(build_usage)[0] == "usage"
    assert built.build_spec(partial(build_sources, at="peak", thread="main"))[0] == (
        'sources{"at":"peak","thread":"main"}'
    )
    assert built.build_spec(partial(build_files, at=parse_at("2")))[0] == 'files{"at":{"kind":"call","value":2}}'
    assert built.build_spec(partial(build_sources, "peak")) is None
    assert built.build_spec(lambda trace, window: None) is None
    assert built.build_spec(None) is None
