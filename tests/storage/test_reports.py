"""The reports kept beside the result store's entries (`contexttrace.storage.reports`): a warm run builds no report
and reads no file; a report is served only for its source's stamp, its build, its window and this code;
damage is never trusted; the output never changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import orjson
import pytest

from contexttrace.render.trace import render_json
from contexttrace.reports.usage import build_usage
from contexttrace.run import runner, work
from contexttrace.run.runner import analyze
from contexttrace.storage import reports as built
from contexttrace.storage import stamps, store

from ..conftest import SAMPLES, assistant, jsonl
from .test_store import _append, _session


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The traces whose report is built in this process (`work.build_guarded`, called by the runner and by
    `work.read_built`)."""
    seen: list[str] = []
    real = work.build_guarded

    def counting(build, trace, window):
        seen.append(trace.name)
        return real(build, trace, window)

    monkeypatch.setattr(runner, "build_guarded", counting)
    monkeypatch.setattr(work, "build_guarded", counting)
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
    (`context usage` builds its own from the entry, then keeps it); each window gets its own row."""
    main = _session(tmp_path)
    _json([str(main)], cache=True)
    builds.clear()
    with_window = _json([str(main)], cache=True, window=200_000)
    assert builds == [str(main)] and reads == [str(main)]  # built from the entry (read once: by the cold run)
    assert with_window == _json([str(main)], cache=False, window=200_000)
    assert orjson.loads(with_window)[0]["fill"] == 115 / 200_000  # the same fill as the no-window report's,
    assert orjson.loads(with_window)[0]["window_source"] == "option"  # of a window given, not inferred
    assert [(b, w) for b, w, _ in _reports()] == [("trace", -1), ("trace", 200_000)]
    builds.clear()
    usage = _json([str(main)], cache=True, build=build_usage)
    assert builds == [str(main)]  # `context usage` has its own reports: built once from the stored traces
    assert usage == _json([str(main)], cache=False, build=build_usage)
    builds.clear()
    assert _json([str(main)], cache=True, build=build_usage) == usage
    assert builds == []  # and served from then on


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


def test_code_version_hashes_the_whole_package():
    """`code_version` hashes every module of the package and its data files (the price table), not only the
    modules beside `storage/reports.py`."""
    files = {p.relative_to(built._PACKAGE).as_posix() for p in built._PACKAGE.rglob("*")}
    assert {"__init__.py", "reports/trace.py", "analysis/pricing.py", "data/prices.json"} <= files


def _flip(conn: sqlite3.Connection) -> None:
    [(data,)] = conn.execute("SELECT data FROM reports").fetchall()
    conn.execute("UPDATE reports SET data = ?", (data[:50] + bytes([data[50] ^ 1]) + data[51:],))


def _rewritten(conn: sqlite3.Connection, change) -> None:
    """Rewrite the one kept report's document with `change` applied, under a valid checksum of its key."""
    [(*key, data)] = conn.execute("SELECT path, spelling, build, window, version, stamp, data FROM reports").fetchall()
    pairs = msgspec.msgpack.decode(data)
    change(pairs)
    data = msgspec.msgpack.encode(pairs)
    conn.execute("UPDATE reports SET data = ?, checksum = ?", (data, stamps.row_checksum(tuple(key), data)))


def _not_slim(conn: sqlite3.Connection) -> None:
    _rewritten(conn, lambda pairs: pairs[0][0].update(slim=False))


def _wrong_report(conn: sqlite3.Connection) -> None:
    _rewritten(conn, lambda pairs: pairs[0][1].update(calls="many"))


def _renamed_columns(conn: sqlite3.Connection) -> None:
    """The call-key columns renamed (upper case): `inherited_calls` would find none of its keys."""

    def rename(pairs):
        calls = pairs[0][0]["tables"]["calls"]
        pairs[0][0]["tables"]["calls"] = {k.upper(): v for k, v in calls.items()}

    _rewritten(conn, rename)


def _other_window(conn: sqlite3.Connection) -> None:
    """The row's `window` rewritten (as a damaged index would point another window's lookup at it)."""
    conn.execute("UPDATE reports SET window = 134464")


@pytest.mark.parametrize(
    "damage",
    [_flip, _not_slim, _wrong_report, _renamed_columns],
    ids=["checksum", "not-slim", "wrong-types", "renamed-columns"],
)
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
    today = store.current_day()
    _json([str(main)], cache=True)
    monkeypatch.setattr(store, "current_day", lambda: today + store.KEEP_DAYS)
    _json([str(main)], cache=True)  # served from its report: the entry dated today + KEEP_DAYS
    monkeypatch.setattr(store, "current_day", lambda: today + 2 * store.KEEP_DAYS)
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


def test_report_found_under_another_key_is_never_served(tmp_path, settled, builds):
    """A report whose row answers a lookup for another key (here its window rewritten, as a flipped bit in
    the index does) fails the checksum, which covers the key: the report for that window is built."""
    main = _session(tmp_path)
    _json([str(main)], cache=True, window=200_000)
    with sqlite3.connect(store.store_path(), isolation_level=None) as conn:
        _other_window(conn)
    builds.clear()
    got = _json([str(main)], cache=True, window=134_464)
    assert builds == [str(main)]
    assert got == _json([str(main)], cache=False, window=134_464)
    assert orjson.loads(got)[0]["window"] == 134_464


def test_a_window_below_one_is_never_kept(tmp_path, settled, builds):
    """`analyze(window=-1)` (the library takes any int; -1 is how "no window" is kept) is neither served the
    no-window report nor kept: its output is a --no-cache run's."""
    main = _session(tmp_path)
    _json([str(main)], cache=True)
    builds.clear()
    assert _json([str(main)], cache=True, window=-1) == _json([str(main)], cache=False, window=-1)
    assert len(builds) == 2 and [w for _, w, _ in _reports()] == [-1]


def _sessions_sharing_calls(root: Path, n: int) -> list[str]:
    """`n` sessions whose first call is the same call (CASES B06: resumed copies), the first the earliest."""
    paths = []
    for k in range(n):
        path = root / "proj" / f"s{k}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        own = assistant(f"own{k}", 1, 2, 300 + k, timestamp=f"2026-03-01T1{k}:00:05Z")
        path.write_bytes(jsonl(assistant("shared", 5, 10, 100, timestamp="2026-03-01T09:00:00Z"), own))
        paths.append(str(path))
    return paths


def test_warm_inherited_sessions_take_their_whole_traces_in_one_lookup(tmp_path, settled, reads, monkeypatch):
    """Sessions that inherited a call (B06) are served slim from their reports; the whole traces they need
    are taken from the store's entries in one lookup for all of them (a store locked by another process then
    costs one wait), and no file is read."""
    paths = _sessions_sharing_calls(tmp_path, 4)
    plain = _json(paths, cache=False)
    assert [r["calls"] for r in orjson.loads(plain)] == [2, 1, 1, 1]
    _json(paths, cache=True)
    lookups: list[int] = []
    real = store.lookup
    monkeypatch.setattr(
        store, "lookup", lambda sources, warnings: lookups.append(len(sources)) or real(sources, warnings)
    )
    reads.clear()
    assert _json(paths, cache=True) == plain
    assert reads == [] and lookups == [0, 3]  # (the first: no source missed its report)
