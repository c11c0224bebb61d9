"""The result store (`contexttrace.storage.store`): the output is the same with and without it, cold and warm; what
an entry is keyed by; what is never kept; damaged, foreign and stale files; two writers at once; workers;
the `cache` command and `--no-cache`."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.render.diagnostics import render_diagnostics
from contexttrace.render.trace import render_json
from contexttrace.reports.usage import build_usage
from contexttrace.run import runner, work
from contexttrace.run.runner import analyze
from contexttrace.storage import stamps, store

from ..conftest import CASES, ROOT, SAMPLES, assistant, generated_corpus, jsonl, result

FUZZ = ROOT / "tests" / "data" / "fuzz"
BAD = ROOT / "tests" / "data" / "bad"


def _entries() -> int:
    return store.ResultStore(store.store_path()).info().entries


def _outputs(paths: list[str], cache: bool, workers: int | None = None) -> tuple[str, str, list[str], list[str]]:
    """`context trace --json --calls` and `context usage --json` of a run, its diagnostics and failures."""
    trace = analyze(paths, cache=cache, workers=workers)
    usage = analyze(paths, cache=cache, workers=workers, build=build_usage)
    failed = sorted(f.path for f in trace.failures)
    return render_json(trace, with_calls=True), render_json(usage), render_diagnostics(trace), failed


CORPORA = {
    "samples": lambda tmp: [str(SAMPLES)],
    "cases": lambda tmp: [str(CASES), str(BAD)],
    "fuzz": lambda tmp: [str(FUZZ)],
    "generated": generated_corpus,
}


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_store_output_identical_cold_and_warm(corpus, tmp_path, settled, reads):
    """`render_json` (trace with --calls, usage) and the diagnostics are the same without the store, with it
    cold and with it warm; the warm run reads only the sources that failed (failures are never kept)."""
    paths = CORPORA[corpus](tmp_path)
    sources = [s for s in runner.find_traces(paths) if not s.orphan]
    failing = sorted(s.path for s in sources if isinstance(work.read_source(s), runner.TraceFailure))
    plain = _outputs(paths, cache=False)
    cold = _outputs(paths, cache=True)
    reads.clear()
    warm = _outputs(paths, cache=True)
    assert cold == plain
    assert warm == plain
    assert sorted(set(reads)) == failing  # (those left out as empty included)
    assert _entries() == len(sources) - len(failing) > 0


@pytest.mark.parametrize("fork", [True, False], ids=["forked-workers", "workers-started-afresh"])
def test_store_output_identical_with_workers(fork, tmp_path, settled, monkeypatch):
    """Sources read by worker processes are kept by them (each with its own connection), forked or started
    afresh (macOS, Windows, a parent with threads), and a warm run with workers prints the same."""
    if not fork:
        monkeypatch.setattr(runner, "_fork_safe", lambda: False)  # (the lookups, and `RACY_NS`, are here)
    paths = generated_corpus(tmp_path)
    plain = _outputs(paths, cache=False, workers=2)
    assert _outputs(paths, cache=True, workers=2) == plain
    sources = [s for s in runner.find_traces(paths) if not s.orphan]
    assert _entries() == len(sources)
    assert _outputs(paths, cache=True, workers=2) == plain


# -- what an entry is keyed by ------------------------------------------------------------------------


def _session(root: Path) -> Path:
    """A 2.1.x session: a main file, one subagent file with its .meta.json."""
    main = root / "proj" / "s1.jsonl"
    sub = root / "proj" / "s1" / "subagents" / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True)
    main.write_bytes(jsonl(assistant("m1", 5, 10, 100, tools=[("t1", "Read", {"file_path": "/x"})]), result("t1")))
    sub.write_bytes(jsonl(assistant("m2", 1, 2, 3, sidechain=True, agentId="a1")))
    sub.with_name("agent-a1.meta.json").write_text('{"agentType": "Explore"}')
    return main


def _append(main: Path) -> None:
    with main.open("ab") as fh:
        fh.write(jsonl(assistant("m3", 5, 10, 300)))


def _retime(main: Path) -> None:
    st = main.stat()
    os.utime(main, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))


def _same_size_and_time_new_inode(main: Path) -> None:
    st = main.stat()
    other = main.with_suffix(".tmp")
    other.write_bytes(main.read_bytes().replace(b'"m1"', b'"m9"'))
    other.replace(main)
    os.utime(main, ns=(st.st_atime_ns, st.st_mtime_ns))


def _same_size_and_time_in_place(main: Path) -> None:
    """One digit edited in place (same size, same inode), the modification time put back (`touch -d`): only
    the change time tells."""
    st = main.stat()
    main.write_bytes(main.read_bytes().replace(b'"m1"', b'"m9"'))
    os.utime(main, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (main.stat().st_size, main.stat().st_ino) == (st.st_size, st.st_ino)


def _touch_subagent(main: Path) -> None:
    sub = main.parent / "s1" / "subagents" / "agent-a1.jsonl"
    st = sub.stat()
    os.utime(sub, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


def _change_meta(main: Path) -> None:
    (main.parent / "s1" / "subagents" / "agent-a1.meta.json").write_text('{"agentType": "Plan"}')


def _remove_meta(main: Path) -> None:
    (main.parent / "s1" / "subagents" / "agent-a1.meta.json").unlink()


def _add_subagent(main: Path) -> None:
    (main.parent / "s1" / "subagents" / "agent-a2.jsonl").write_bytes(jsonl(assistant("m4", 1, 1, 1, sidechain=True)))


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(_append, id="appended"),
        pytest.param(_retime, id="mtime"),
        pytest.param(_same_size_and_time_new_inode, id="inode"),
        pytest.param(_same_size_and_time_in_place, id="ctime"),
        pytest.param(_touch_subagent, id="subagent-mtime"),
        pytest.param(_change_meta, id="meta-json"),
        pytest.param(_remove_meta, id="meta-json-removed"),
        pytest.param(_add_subagent, id="subagent-added"),
    ],
)
def test_store_key_changes_are_read_again(change, tmp_path, settled, reads):
    """A source whose main file, subagent files or .meta.json files changed in any way the stamp records
    is read again, and prints what a run without the store prints."""
    main = _session(tmp_path)
    paths = [str(tmp_path / "proj")]
    analyze(paths, cache=True, workers=1)
    reads.clear()
    analyze(paths, cache=True, workers=1)
    assert reads == []  # unchanged: not read
    change(main)
    warm = analyze(paths, cache=True, workers=1)
    assert reads == [str(main)]
    assert render_json(warm, with_calls=True) == render_json(analyze(paths, workers=1), with_calls=True)


def test_store_spelling_is_part_of_the_key(tmp_path, settled, reads, monkeypatch):
    """Trace names carry the path as given: another spelling of the same file is another entry, and each
    run prints its own spelling."""
    main = _session(tmp_path)
    monkeypatch.chdir(tmp_path)
    absolute = analyze([str(main)], cache=True, workers=1)
    relative = analyze(["proj/s1.jsonl"], cache=True, workers=1)
    assert reads == [str(main), "proj/s1.jsonl"]
    assert [r.trace for r in relative.reports] == ["proj/s1.jsonl"]
    assert [r.trace for r in absolute.reports] == [str(main)]


def test_store_other_reader_version_is_never_served(tmp_path, settled, reads, monkeypatch):
    """Entries kept by another reader version are not served, and are deleted when this version opens the
    file; the layout fingerprint changes with the tables' columns."""
    main = _session(tmp_path)
    analyze([str(main)], cache=True, workers=1)
    before = store.reader_version()
    monkeypatch.setattr(stamps, "READER_VERSION", stamps.READER_VERSION + 1)
    store.reader_version.cache_clear()
    try:
        assert store.reader_version() != before
        assert store.ResultStore(store.store_path()).info().other_versions == 1
        reads.clear()
        analyze([str(main)], cache=True, workers=1)
        assert reads == [str(main)]
        info = store.ResultStore(store.store_path()).info()
        assert (info.entries, info.other_versions) == (1, 0)
        monkeypatch.setitem(store.TABLES, "calls", {**store.TABLES["calls"], "new_column": "Int64"})
        store.reader_version.cache_clear()
        assert store.reader_version().split("-")[1] != before.split("-")[1]
    finally:
        store.reader_version.cache_clear()


def test_store_forgets_entries_unused_for_keep_days(tmp_path, settled, reads, monkeypatch):
    """An entry served is dated that day; one no run used for `KEEP_DAYS` is deleted by the first run of a
    later day (a deleted session's entry does not stay for ever)."""
    main = _session(tmp_path)
    today = store.current_day()
    analyze([str(main)], cache=True, workers=1)
    monkeypatch.setattr(store, "current_day", lambda: today + 20)
    reads.clear()
    analyze([str(main)], cache=True, workers=1)  # served, and dated day +20
    assert reads == []
    monkeypatch.setattr(store, "current_day", lambda: today + 20 + store.KEEP_DAYS)
    analyze([str(main)], cache=True, workers=1)
    assert reads == []  # 30 days after its last use: kept
    monkeypatch.setattr(store, "current_day", lambda: today + 20 + 2 * store.KEEP_DAYS + 1)
    analyze([str(main)], cache=True, workers=1)
    assert reads == [str(main)]  # unused for 31 days: pruned, read again (and kept again)
    assert _entries() == 1


def test_store_folder_is_its_owners(tmp_path, settled):
    """The folder the store makes is readable by its owner only: entries hold what the traces hold."""
    analyze([str(_session(tmp_path))], cache=True, workers=1)
    assert store.cache_dir().stat().st_mode & 0o777 == 0o700


# -- what is never kept -------------------------------------------------------------------------------


def test_store_keeps_no_file_changed_a_moment_ago(tmp_path):
    """A file modified less than `RACY_NS` before the run is not kept (a same-size rewrite within the file
    system's timestamp granularity would go unseen); once older, it is."""
    main = _session(tmp_path)
    analyze([str(main)], cache=True, workers=1)
    assert _entries() == 0
    for path in (tmp_path / "proj").rglob("*.*"):
        os.utime(path, (time.time() - 60, time.time() - 60))
    analyze([str(main)], cache=True, workers=1)
    assert _entries() == 1


def test_store_keeps_no_file_changed_while_read(tmp_path, settled, monkeypatch):
    """A file that grew while it was read is not kept under the stamp taken before."""
    main = _session(tmp_path)
    real = work.read_trace

    def growing(path, *args, **kwargs):
        out = real(path, *args, **kwargs)
        _append(main)
        return out

    monkeypatch.setattr(work, "read_trace", growing)
    analyze([str(main)], cache=True, workers=1)
    assert _entries() == 0


def test_store_keeps_no_failure(tmp_path, settled, reads):
    """Sources that fail (binary, empty, missing) are read again on every run."""
    paths = [str(BAD / "binary.jsonl"), str(BAD / "empty.jsonl"), str(tmp_path / "missing.jsonl")]
    first = analyze(paths, cache=True, workers=1)
    assert len(first.failures) == 3 and _entries() == 0
    reads.clear()
    analyze(paths, cache=True, workers=1)
    assert reads == paths


def test_store_never_keeps_standard_input(tmp_path):
    """`context trace -` reads standard input every time and keeps nothing."""
    data = (SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes()
    for _ in range(2):
        out = CliRunner().invoke(app, ["context", "trace", "-", "--json"], input=data, catch_exceptions=False)
        assert out.exit_code == 0
    assert not store.store_path().exists() or _entries() == 0


def test_store_never_keeps_a_source_with_an_unlistable_subagent_folder(tmp_path, settled):
    """A session whose subagent folder could not be listed is read every time: its warning is added after
    reading, and the folder may become readable (and its files appear) without any stamp changing."""
    main = _session(tmp_path)
    [source] = runner.find_traces([str(main)])
    damaged = runner.TraceSource(source.path, source.subagents, unreadable=(f"{main.parent}/s1: cannot read",))
    assert store.stamp_of(damaged) is None
    assert store.ResultStore(store.store_path()).lookup([damaged]) == [damaged]


def test_store_skips_what_msgpack_cannot_hold(tmp_path, settled):
    """A file name that is not UTF-8 (kept by Python as surrogates) is read and reported, never kept."""
    name = os.fsdecode(b"caf\xe9.jsonl")
    try:
        (tmp_path / name).write_bytes(jsonl(assistant("m1", 1, 2, 3)))
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses non-UTF-8 names")
    run = analyze([str(tmp_path)], cache=True, workers=1)
    assert run.ok and len(run.reports) == 1 and not run.warnings
    assert _entries() == 0


def test_no_cache_neither_uses_nor_fills_the_store(tmp_path, settled, reads):
    """`--no-cache` on `context trace` and `context usage` reads every file and leaves no store behind;
    the output is the one with the store."""
    sample = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")
    cli = CliRunner()
    plain = {}
    for command in ("trace", "usage"):
        plain[command] = cli.invoke(app, ["context", command, sample, "--json", "--no-cache"], catch_exceptions=False)
        assert plain[command].exit_code == 0
    assert not store.store_path().exists()
    for command in ("trace", "usage"):
        cached = cli.invoke(app, ["context", command, sample, "--json"], catch_exceptions=False)
        assert cached.stdout == plain[command].stdout
    assert _entries() == 1
    reads.clear()
    again = cli.invoke(app, ["context", "trace", sample, "--json", "--no-cache"], catch_exceptions=False)
    assert again.exit_code == 0 and reads == [sample]


# -- damaged, foreign and stale files -----------------------------------------------------------------


def _kept(main: Path, reports: bool = False) -> sqlite3.Connection:
    """Keep `main`'s traces, then open the store's file directly; without `reports`, the reports kept
    beside the entry are deleted (else a warm run is served from them and never reads the entry)."""
    analyze([str(main)], cache=True, workers=1)
    assert _entries() == 1
    conn = sqlite3.connect(store.store_path(), isolation_level=None)
    if not reports:
        conn.execute("DELETE FROM reports")
    return conn


def _text_file(main: Path) -> None:
    store.store_path().parent.mkdir(parents=True)
    store.store_path().write_text("this is not a database\n" * 100)


def _foreign_sqlite(main: Path) -> None:
    store.store_path().parent.mkdir(parents=True)
    with sqlite3.connect(store.store_path()) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")


def _old_layout(main: Path) -> None:
    _kept(main).execute("UPDATE meta SET value = '0' WHERE key = 'layout'")


def _truncated(main: Path) -> None:
    _kept(main).close()
    store.store_path().write_bytes(store.store_path().read_bytes()[:5000])


def _flipped_byte(main: Path) -> None:
    conn = _kept(main)
    [(data,)] = conn.execute("SELECT data FROM entries").fetchall()
    conn.execute("UPDATE entries SET data = ?", (data[:100] + bytes([data[100] ^ 1]) + data[101:],))


def _rewrite_entry(conn: sqlite3.Connection, data: bytes) -> None:
    """Put `data` in the one entry under a valid checksum of its key (as this code would have kept it)."""
    [key] = conn.execute("SELECT path, spelling, version, stamp FROM entries").fetchall()
    conn.execute("UPDATE entries SET data = ?, checksum = ?", (data, stamps.row_checksum(tuple(key), data)))


def _wrong_types(main: Path) -> None:
    _rewrite_entry(_kept(main), msgspec.msgpack.encode([{"name": 1, "path": [], "format": None}]))


def _missing_column(main: Path) -> None:
    conn = _kept(main)
    [(data,)] = conn.execute("SELECT data FROM entries").fetchall()
    traces = msgspec.msgpack.decode(data)
    del traces[0]["tables"]["calls"]["model"]
    _rewrite_entry(conn, msgspec.msgpack.encode(traces))


def _checksum_of_the_bytes_only(main: Path) -> None:
    """The entry's checksum over its bytes alone (not its key): a row that cannot prove which file it is."""
    conn = _kept(main)
    [(data,)] = conn.execute("SELECT data FROM entries").fetchall()
    conn.execute("UPDATE entries SET checksum = ?", (zlib.crc32(data),))


@pytest.mark.parametrize(
    ("damage", "warned"),
    [
        pytest.param(_text_file, True, id="not-sqlite"),
        pytest.param(_foreign_sqlite, True, id="foreign-sqlite"),
        pytest.param(_old_layout, True, id="other-layout"),
        pytest.param(_truncated, True, id="truncated"),
        pytest.param(_flipped_byte, False, id="entry-checksum"),
        pytest.param(_wrong_types, False, id="entry-wrong-types"),
        pytest.param(_missing_column, False, id="entry-missing-column"),
        pytest.param(_checksum_of_the_bytes_only, False, id="entry-checksum-without-key"),
    ],
)
def test_store_damage_is_discarded_and_rebuilt(damage, warned, tmp_path, settled, reads):
    """A store file that is not SQLite, not this store, of another layout or damaged is discarded with a
    warning and rebuilt; an entry that fails its checksum, its typed decoding or the tables' check is
    read again and replaced. The run never fails and prints what it prints without the store."""
    main = _session(tmp_path)
    damage(main)
    reads.clear()
    run = analyze([str(main)], cache=True, workers=1)
    assert run.ok and reads == [str(main)]
    assert any("result store" in w and "discarded and rebuilt" in w for w in run.warnings) == warned
    assert render_json(run, with_calls=True) == render_json(analyze([str(main)], workers=1), with_calls=True)
    reads.clear()
    analyze([str(main)], cache=True, workers=1)
    assert reads == []  # rebuilt and kept again
    with sqlite3.connect(store.store_path()) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert "users" not in {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}


def _swap(conn: sqlite3.Connection, table: str, rowids: list[int]) -> None:
    """Swap two rows' documents with their checksums (a row now holds the other file's figures, intact)."""
    (a, *first), (b, *second) = (conn.execute(f"SELECT rowid, checksum, data FROM {table} WHERE rowid = ?",
                                              (r,)).fetchone() for r in rowids)  # fmt: skip
    conn.execute(f"UPDATE {table} SET checksum = ?, data = ? WHERE rowid = ?", (*second, a))
    conn.execute(f"UPDATE {table} SET checksum = ?, data = ? WHERE rowid = ?", (*first, b))


def _copy(conn: sqlite3.Connection, table: str, rowids: list[int]) -> None:
    """Copy the first row's document and checksum over the second's."""
    first = conn.execute(f"SELECT checksum, data FROM {table} WHERE rowid = ?", (rowids[0],)).fetchone()
    conn.execute(f"UPDATE {table} SET checksum = ?, data = ? WHERE rowid = ?", (*first, rowids[1]))


@pytest.mark.parametrize("move", [_swap, _copy], ids=["swapped", "copied"])
@pytest.mark.parametrize(
    "tables", [("entries",), ("reports",), ("entries", "reports")], ids=["entries", "reports", "both"]
)
def test_store_row_moved_to_another_file_is_never_served(move, tables, tmp_path, settled, reads):
    """Two files' stored rows with their documents swapped (or one copied over the other), data and checksum
    moved together, in the entries, the kept reports or both: each row's checksum covers the file, stamp
    and version it was kept under, so the moved rows miss, are read again, and `context trace` and
    `context usage` print what a --no-cache run prints."""
    paths = []
    for name, cache_read in (("a", 1_000), ("b", 90_000)):
        path = tmp_path / "proj" / f"{name}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(jsonl(assistant(f"{name}1", 5, 10, cache_read, sessionId=name),
                               assistant(f"{name}2", 5, 10, cache_read * 2, sessionId=name)))  # fmt: skip
        paths.append(str(path))
    cli = CliRunner()
    plain = {c: cli.invoke(app, ["context", c, *paths, "--json", "--no-cache"]).stdout for c in ("trace", "usage")}
    for command in ("trace", "usage"):  # (kept: the entries, and each command's reports)
        assert cli.invoke(app, ["context", command, *paths, "--json"]).stdout == plain[command]
    with sqlite3.connect(store.store_path(), isolation_level=None) as conn:
        if "reports" not in tables:  # (else the sound reports are served and the entries never looked up)
            conn.execute("DELETE FROM reports")
        for table in tables:
            for build in ("trace", "usage") if table == "reports" else ("",):
                where = "WHERE build = ?" if build else "WHERE ? = ''"
                rowids = [r for (r,) in conn.execute(f"SELECT rowid FROM {table} {where} ORDER BY path", (build,))]
                assert len(rowids) == 2
                move(conn, table, rowids)
    reads.clear()
    for command in ("trace", "usage"):
        out = cli.invoke(app, ["context", command, *paths, "--json"], catch_exceptions=False)
        assert out.stdout == plain[command] and "result store" not in out.stderr
    moved = 2 if move is _swap else 1
    assert len(reads) == (moved if "entries" in tables else 0)
    reads.clear()
    for command in ("trace", "usage"):  # the rows read again were kept again, sound
        assert cli.invoke(app, ["context", command, *paths, "--json"]).stdout == plain[command]
    assert reads == []


def test_store_that_cannot_be_opened_is_a_warning(tmp_path, monkeypatch):
    """A cache folder that cannot be made (here a file stands in its way) costs a warning: every trace is
    read and printed as without the store."""
    blocker = tmp_path / "cache"
    blocker.write_text("a file")
    monkeypatch.setenv("CONTEXTTRACE_CACHE_DIR", str(blocker / "inside"))
    paths = [str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")]
    run = analyze(paths, cache=True)
    assert run.ok
    assert [w for w in run.warnings if "result store" in w and "every trace was read" in w]
    assert render_json(run) == render_json(analyze(paths))
    blocker.unlink()  # fixed: the next run in the same process uses the store again
    monkeypatch.setattr(store, "RACY_NS", 0)
    assert not analyze(paths, cache=True).warnings
    assert _entries() == 1


def _two_files(root: Path) -> list[str]:
    paths = []
    for name in ("a", "b"):
        path = root / f"{name}.jsonl"
        path.write_bytes(jsonl(assistant(f"{name}1", 5, 10, 1000, sessionId=name)))
        paths.append(str(path))
    return paths


def _store_warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: result store")]


def test_read_only_store_file_is_a_warning(tmp_path, settled, monkeypatch):
    """A store file that cannot be written, in a folder that can, is said once on stderr in the words of
    a folder that cannot be written ("cannot be used (...); every trace was read"); the output is a
    --no-cache run's and the file is left as it was."""
    first, second = _two_files(tmp_path)
    cli = CliRunner()
    assert cli.invoke(app, ["context", "trace", first, "--json"]).exit_code == 0
    path = store.store_path()
    path.chmod(0o444)
    if os.access(path, os.W_OK):  # root ignores the mode: the file reads as not writable all the same
        real = os.access
        monkeypatch.setattr(store.os, "access", lambda f, mode: real(f, mode) and f != str(path))
    before = path.read_bytes()
    plain = cli.invoke(app, ["context", "trace", first, second, "--json", "--no-cache"]).stdout
    out = cli.invoke(app, ["context", "trace", first, second, "--json"], catch_exceptions=False)
    assert out.exit_code == 0 and out.stdout == plain
    assert _store_warnings(out.stderr) == [
        f"warning: result store {path} cannot be used (contexttrace-store.sqlite3 is read-only); every trace was read"
    ]
    assert path.read_bytes() == before
    usage = cli.invoke(app, ["context", "usage", first, second, "--json"], catch_exceptions=False)
    assert len(_store_warnings(usage.stderr)) == 1


def test_store_that_refuses_writes_once_open_is_a_warning(tmp_path, settled, monkeypatch):
    """A store SQLite can open only for reading (here every connection opened read-only, as a file made
    read-only during a run is): a single warning, and the output is a --no-cache run's."""
    first, second = _two_files(tmp_path)
    cli = CliRunner()
    assert cli.invoke(app, ["context", "trace", first, "--json"]).exit_code == 0
    real = sqlite3.connect

    def read_only(path, **kwargs):
        return real(Path(path).as_uri() + "?mode=ro", uri=True, **kwargs)

    plain = cli.invoke(app, ["context", "trace", first, second, "--json", "--no-cache"]).stdout
    with monkeypatch.context() as patch:
        patch.setattr(store.sqlite3, "connect", read_only)
        out = cli.invoke(app, ["context", "trace", first, second, "--json"], catch_exceptions=False)
    assert out.exit_code == 0 and out.stdout == plain
    [warning] = _store_warnings(out.stderr)
    assert "attempt to write a readonly database" in warning, warning
    assert _entries() == 1


def test_store_that_raises_is_a_warning(tmp_path, settled, monkeypatch):
    """Anything unexpected in the store (here the layout fingerprint raising, as a reader change msgspec
    cannot describe would) costs a warning; the run reads everything and prints the same."""
    paths = [str(_session(tmp_path))]

    def broken() -> str:
        raise TypeError("Type 'X' is not supported")

    monkeypatch.setattr(store, "reader_version", broken)
    run = analyze(paths, cache=True, workers=1)
    assert run.ok and [w for w in run.warnings if "not used (TypeError: Type 'X' is not supported)" in w]
    assert render_json(run, with_calls=True) == render_json(analyze(paths, workers=1), with_calls=True)


# -- concurrency --------------------------------------------------------------------------------------

_WRITER = textwrap.dedent(
    """
    import dataclasses, sys, time
    from pathlib import Path
    from contexttrace.storage import stamps, store
    from contexttrace.reading import read_trace
    from contexttrace.discover.local import TraceSource, find_traces

    go, files = Path(sys.argv[1]), sys.argv[2:]
    s = store.ResultStore.for_path()
    pending = []
    for src in find_traces(files):
        fields = {f.name: getattr(src, f.name) for f in dataclasses.fields(TraceSource)}
        kept = store.StoredSource(**fields, store=str(s.path), stamp=store.stamp_of(src)[0])
        pending.append((kept, read_trace(src.path)))
    while not go.exists():
        time.sleep(0.001)
    kept = 0
    for _ in range(15):  # the same entries again and again, as fast as it can
        for source, traces in pending:
            kept += s.keep(source, traces)
    print(kept, len(s.warnings))
    print(s.warnings, file=sys.stderr)
    """
)


def test_store_two_writers_at_once(tmp_path):
    """Two processes keeping the same and different entries at once, as fast as they can: every write is
    kept (WAL and the busy timeout serialise them), the file passes SQLite's integrity check, and a third
    run finds every entry sound."""
    files = []
    for i in range(24):
        path = tmp_path / f"s{i}.jsonl"
        path.write_bytes(jsonl(*[assistant(f"m{i}-{k}", 1, 2, 3 + k) for k in range(50)]))
        os.utime(path, (time.time() - 60, time.time() - 60))
        files.append(str(path))
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    mine = [files[:16], files[8:]]  # 8 shared
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(go), *part], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for part in mine
    ]
    time.sleep(1.0)  # both have read their files by now: now write together
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err.decode()[-2000:] for _, err in outs]
    assert [out.split() for out, _ in outs] == [[str(15 * len(part)).encode(), b"0"] for part in mine], outs
    with sqlite3.connect(store.store_path()) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM entries").fetchone() == (24,)
    found = store.ResultStore(store.store_path()).lookup(runner.find_traces(files))
    assert all(isinstance(f, list) for f in found)


# -- the cache command --------------------------------------------------------------------------------


def test_cache_info_and_clear(tmp_path, settled):
    """`cache info` prints the path, entries, size and reader version (saying when there is no file yet);
    `cache clear` deletes the file."""
    cli = CliRunner()
    empty = cli.invoke(app, ["cache", "info"], catch_exceptions=False)
    assert empty.exit_code == 0
    assert f"path: {store.store_path()}" in empty.stdout and "not created yet" in empty.stdout
    assert cli.invoke(app, ["context", "trace", str(SAMPLES), "--json"]).exit_code == 0
    info = cli.invoke(app, ["cache", "info"], catch_exceptions=False)
    assert "entries: 17\n" in info.stdout  # 10 Claude Code sources, 4 Codex rollouts, 3 Gemini sessions
    assert f"reader version: {store.reader_version()}\n" in info.stdout
    assert "size: " in info.stdout and "not created" not in info.stdout
    cleared = cli.invoke(app, ["cache", "clear"], catch_exceptions=False)
    assert cleared.exit_code == 0 and cleared.stdout.startswith(f"cleared {store.store_path()}")
    assert not store.store_path().exists()
    shutil.rmtree(store.cache_dir())
    assert cli.invoke(app, ["cache", "clear"], catch_exceptions=False).exit_code == 0  # nothing to clear


def test_cache_info_names_a_damaged_file(tmp_path):
    """`cache info` reads without changing anything: a file that is not a store is named, not deleted."""
    store.store_path().parent.mkdir(parents=True)
    store.store_path().write_text("not a database")
    out = CliRunner().invoke(app, ["cache", "info"], catch_exceptions=False)
    assert out.exit_code == 0 and "the next run discards and rebuilds it" in out.stdout
    assert store.store_path().read_text() == "not a database"


def test_cache_dir_defaults_to_the_user_cache_folder(monkeypatch):
    """Without CONTEXTTRACE_CACHE_DIR the store is in platformdirs' user cache folder for contexttrace."""
    import platformdirs

    monkeypatch.delenv("CONTEXTTRACE_CACHE_DIR")
    assert store.cache_dir() == Path(platformdirs.user_cache_dir("contexttrace", appauthor=False))
    monkeypatch.setenv("CONTEXTTRACE_CACHE_DIR", "~/elsewhere")
    assert store.store_path() == Path("~/elsewhere").expanduser() / store.FILE_NAME
