"""The reports kept beside the result store's entries (`contexttrace.built`): a warm run builds no report
and reads no file; a report is served only for its source's stamp, its build, its window and this code;
damage is never trusted; the output never changes."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import msgspec
import orjson
import pytest

from contexttrace import built, runner, store
from contexttrace.render import render_json
from contexttrace.runner import analyze
from contexttrace.usage import build_usage

from .conftest import SAMPLES
from .test_store import _append, _session


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The main files the reader reads in this process (as in test_store)."""
    seen: list[str] = []
    real = runner.read_trace

    def counting(path, *args, **kwargs):
        seen.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(runner, "read_trace", counting)
    return seen


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files a test has just written are kept at once (the store waits `RACY_NS` after a change)."""
    monkeypatch.setattr(store, "RACY_NS", 0)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The traces whose report is built in this process (`runner.build_guarded`)."""
    seen: list[str] = []
    real = runner.build_guarded

    def counting(build, trace, window):
        seen.append(trace.name)
        return real(build, trace, window)

    monkeypatch.setattr(runner, "build_guarded", counting)
    return seen


def _reports() -> list[tuple[str, int, str]]:
    with sqlite3.connect(store.store_path()) as conn:
        return conn.execute("SELECT build, window, version FROM reports ORDER BY build, window").fetchall()


def _json(paths: list[str], cache: bool, window: int | None = None, build=None) -> str:
    extra = {"build": build} if build is not None else {}
    return render_json(analyze(paths, window=window, cache=cache, workers=1, **extra), with_calls=True)


def test_warm_run_builds_no_report_and_reads_no_file(tmp_path, settled, reads, builds):
    """Cold: one report built, kept beside the entry under this code's version. Warm: the same JSON, no
    file read, no report built; the samples give the same JSON warm as without the store."""
    main = _session(tmp_path)
    plain = _json([str(main)], cache=False)
    assert _json([str(main)], cache=True) == plain
    assert _reports() == [("trace", -1, built.code_version())]
    reads.clear()
    builds.clear()
    assert _json([str(main)], cache=True) == plain
    assert (reads, builds) == ([], [])
    samples = _json([str(SAMPLES)], cache=False)
    _json([str(SAMPLES)], cache=True)
    builds.clear()
    assert _json([str(SAMPLES)], cache=True) == samples
    assert builds == []


def test_report_is_keyed_by_window_and_build(tmp_path, settled, reads, builds):
    """A report kept for no window is not served for --window 200000 (fill differs), nor to another build
    (`context usage` builds its own from the entry); each window gets its own row."""
    main = _session(tmp_path)
    _json([str(main)], cache=True)
    builds.clear()
    with_window = _json([str(main)], cache=True, window=200_000)
    assert builds == [str(main)] and reads == [str(main)]  # built from the entry (read once: by the cold run)
    assert with_window == _json([str(main)], cache=False, window=200_000)
    assert orjson.loads(with_window)[0]["fill"] == 115 / 200_000  # (the no-window report's fill is null)
    assert [(b, w) for b, w, _ in _reports()] == [("trace", -1), ("trace", 200_000)]
    builds.clear()
    usage = _json([str(main)], cache=True, build=build_usage)
    assert builds == [str(main)]  # not in `built.BUILDS`: built from the stored traces, every run
    assert usage == _json([str(main)], cache=False, build=build_usage)


def test_report_of_a_changed_file_is_not_served(tmp_path, settled, reads, builds):
    """An appended session has a new stamp: read again, its report built again and kept in place."""
    main = _session(tmp_path)
    _json([str(main)], cache=True)
    _append(main)
    reads.clear()
    builds.clear()
    assert _json([str(main)], cache=True) == _json([str(main)], cache=False)
    assert reads[0] == str(main) and builds[0] == str(main)
    assert len(_reports()) == 1


def test_report_of_other_code_is_not_served(tmp_path, settled, reads, builds, monkeypatch):
    """A change to any module or data file of the package changes `code_version`: the report is built again
    from the entry (no file read) and replaces the old one."""
    main = _session(tmp_path)
    _json([str(main)], cache=True)
    monkeypatch.setattr(built, "_code_hash", lambda: "0" * 16)
    reads.clear()
    builds.clear()
    assert _json([str(main)], cache=True) == _json([str(main)], cache=False)
    assert reads == [str(main)]  # (the --no-cache run's)
    assert builds[0] == str(main)
    assert [v for _, _, v in _reports()] == [built.code_version()]


def _flip(conn: sqlite3.Connection) -> None:
    [(data,)] = conn.execute("SELECT data FROM reports").fetchall()
    conn.execute("UPDATE reports SET data = ?", (data[:50] + bytes([data[50] ^ 1]) + data[51:],))


def _not_slim(conn: sqlite3.Connection) -> None:
    [(data,)] = conn.execute("SELECT data FROM reports").fetchall()
    pairs = msgspec.msgpack.decode(data)
    pairs[0][0]["slim"] = False
    data = msgspec.msgpack.encode(pairs)
    conn.execute("UPDATE reports SET data = ?, checksum = ?", (data, zlib.crc32(data)))


def _wrong_report(conn: sqlite3.Connection) -> None:
    [(data,)] = conn.execute("SELECT data FROM reports").fetchall()
    pairs = msgspec.msgpack.decode(data)
    pairs[0][1]["calls"] = "many"
    data = msgspec.msgpack.encode(pairs)
    conn.execute("UPDATE reports SET data = ?, checksum = ?", (data, zlib.crc32(data)))


@pytest.mark.parametrize("damage", [_flip, _not_slim, _wrong_report], ids=["checksum", "not-slim", "wrong-types"])
def test_damaged_report_is_never_served(damage, tmp_path: Path, settled, reads, builds):
    """A report that fails its checksum, its slim-trace check or its typed decoding is deleted and built
    again from the entry; the JSON is what a run without the store prints."""
    main = _session(tmp_path)
    _json([str(main)], cache=True)
    with sqlite3.connect(store.store_path(), isolation_level=None) as conn:
        damage(conn)
    builds.clear()
    reads.clear()
    assert _json([str(main)], cache=True) == _json([str(main)], cache=False)
    assert builds[0] == str(main) and reads == [str(main)]  # (the --no-cache run's read only)
    builds.clear()
    _json([str(main)], cache=True)
    assert builds == []  # kept again, sound


def test_served_reports_keep_their_entry_in_use(tmp_path, settled, reads, monkeypatch):
    """A run served from reports dates the entry used that day, so the daily prune keeps it (and its reports)."""
    main = _session(tmp_path)
    today = store._today()
    _json([str(main)], cache=True)
    monkeypatch.setattr(store, "_today", lambda: today + store.KEEP_DAYS)
    _json([str(main)], cache=True)  # served from its report: the entry dated today + KEEP_DAYS
    monkeypatch.setattr(store, "_today", lambda: today + 2 * store.KEEP_DAYS)
    reads.clear()
    _json([str(main)], cache=True)
    assert reads == [] and len(_reports()) == 1


def test_store_of_the_layout_before_reports_is_rebuilt_and_named(tmp_path, settled):
    """A store written before reports were kept (layout 2: `meta` and `entries` only) is discarded and rebuilt
    with a warning that names an older contexttrace, not "not a contexttrace result store"."""
    main = _session(tmp_path)
    store.store_path().parent.mkdir(parents=True)
    with sqlite3.connect(store.store_path()) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("CREATE TABLE entries (path BLOB)")
        conn.executemany("INSERT INTO meta VALUES (?, ?)", [("format", store._FORMAT), ("layout", "2")])
    assert "layout '2' of another contexttrace version" in store.ResultStore(store.store_path()).info().state
    run = analyze([str(main)], cache=True, workers=1)
    assert [w for w in run.warnings if "result store" in w] == [
        f"result store {store.store_path()}: layout '2' of another contexttrace version, not '3'; discarded and rebuilt"
    ]
    assert len(_reports()) == 1
