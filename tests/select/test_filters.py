"""Daily use: --since/--until/--timezone, --project, --session, the project and start columns and
the short label, --sort, totals and `context usage --group-by`, as a library and through the CLI."""

from __future__ import annotations

import csv
import io
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.analysis.facts import trace_facts
from contexttrace.cli.app import app
from contexttrace.reading import Trace
from contexttrace.select.filters import (
    Selection,
    group_key,
    is_scan,
    parse_timezone,
    parse_when,
    select,
    sort_order,
    sum_totals,
    trace_totals,
    unique_labels,
)

from ..conftest import GOOD, SAMPLES, assistant, jsonl

runner = CliRunner()
UTC_ZONE = parse_timezone("UTC")
PARIS = parse_timezone("Europe/Paris")


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


# -- a projects folder: three sessions in two projects, at known times -------------------------------

SESSIONS = [
    # (project folder, cwd, session id, first timestamp (UTC), calls)
    ("-home-me-src-app", "/home/me/src/app", "aaaa1111-0000-4000-8000-000000000001", "2026-02-10T10:00:00Z", 2),
    ("-home-me-src-app", "/home/me/src/app", "bbbb2222-0000-4000-8000-000000000002", "2026-02-12T23:30:00Z", 3),
    ("-home-me-src-web", "/home/me/src/web", "cccc3333-0000-4000-8000-000000000003", "2026-02-16T09:00:00Z", 1),
]


def _session_lines(cwd: str, sid: str, start: str, calls: int) -> bytes:
    t0 = ms(start)
    lines = []
    for i in range(calls):
        stamp = datetime.fromtimestamp((t0 + i * 60_000) / 1000, UTC).isoformat().replace("+00:00", "Z")
        # message ids unique per session: the same id and usage in two files is a copied call (CASES B06)
        lines.append(assistant(f"{sid[:4]}-m{i}", 10, 100, 1000 * (i + 1), sessionId=sid, cwd=cwd, timestamp=stamp))
    return jsonl(*lines)


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    """`<tmp>/projects/<folder>/<session>.jsonl` for `SESSIONS`."""
    root = tmp_path / "projects"
    for folder, cwd, sid, start, calls in SESSIONS:
        path = root / folder / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_session_lines(cwd, sid, start, calls))
    return root


def _trace_json(*args: str) -> list[dict]:
    out = runner.invoke(app, ["context", "trace", *args, "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.stderr
    return orjson.loads(out.stdout)


def test_cli_scan_shows_project_start_and_short_labels(projects):
    """A folder scan's table has project and start columns (start in --timezone) and labels
    project/session-id-8; the JSON keeps the full path."""
    out = runner.invoke(app, ["context", "trace", str(projects), "--timezone", "UTC"], catch_exceptions=False)
    header, _, *rows, total = out.stdout.splitlines()
    assert [c.strip() for c in header.strip("|").split("|")][:4] == ["trace", "project", "start", "calls"]
    cells = [[c.strip() for c in row.strip("|").split("|")][:3] for row in rows]
    assert cells == [
        ["app/aaaa1111", "app", "2026-02-10 10:00"],
        ["app/bbbb2222", "app", "2026-02-12 23:30"],
        ["web/cccc3333", "web", "2026-02-16 09:00"],
    ]
    assert total.startswith("| total ")
    [first, *_] = _trace_json(str(projects))
    assert first["path"].endswith("aaaa1111-0000-4000-8000-000000000001.jsonl") and first["trace"] == first["path"]
    assert (first["label"], first["project"], first["cwd"]) == ("app/aaaa1111", "app", "/home/me/src/app")
    assert (first["start"], first["start_source"]) == ("2026-02-10T10:00:00.000Z", "timestamp")


def test_cli_named_file_has_no_project_or_start_column():
    """Traces named one by one print without the project and start columns (the JSON has both)."""
    good = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")
    out = runner.invoke(app, ["context", "trace", good], catch_exceptions=False)
    assert "project" not in out.stdout.splitlines()[0] and "start" not in out.stdout.splitlines()[0]


def test_cli_start_column_in_another_timezone(projects):
    """--timezone moves the start column: 23:30 UTC is 00:30 the next day in Paris."""
    out = runner.invoke(app, ["context", "trace", str(projects), "--timezone", "Europe/Paris"], catch_exceptions=False)
    assert "| 2026-02-13 00:30 |" in out.stdout


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        pytest.param(["--since", "2026-02-12"], ["app/bbbb2222", "web/cccc3333"], id="since-date"),
        pytest.param(["--until", "2026-02-12"], ["app/aaaa1111", "app/bbbb2222"], id="until-date-whole-day"),
        pytest.param(["--since", "2026-02-12", "--until", "2026-02-12"], ["app/bbbb2222"], id="one-day"),
        pytest.param(["--since", "20260216"], ["web/cccc3333"], id="compact-date"),
        pytest.param(["--since", "2026-02-12T23:30:00Z"], ["app/bbbb2222", "web/cccc3333"], id="since-inclusive"),
        pytest.param(["--since", "2026-02-12T23:30:00.001Z"], ["web/cccc3333"], id="since-exclusive-by-1ms"),
        pytest.param(["--until", "2026-02-12T23:30:00Z"], ["app/aaaa1111", "app/bbbb2222"], id="until-time-inclusive"),
        pytest.param(["--until", "2026-02-12T23:29:59Z"], ["app/aaaa1111"], id="until-time-exclusive"),
        pytest.param(
            ["--since", "2026-02-13", "--timezone", "Europe/Paris"],
            ["app/bbbb2222", "web/cccc3333"],
            id="since-paris-midnight",
        ),
        pytest.param(["--since", "2026-02-13", "--timezone", "UTC"], ["web/cccc3333"], id="since-utc-midnight"),
        pytest.param(["--since", "2026-02-13T00:00+01:00"], ["app/bbbb2222", "web/cccc3333"], id="offset-wins"),
        pytest.param(["--project", "app"], ["app/aaaa1111", "app/bbbb2222"], id="project"),
        pytest.param(["--project", "/home/me/src/web"], ["web/cccc3333"], id="project-cwd"),
        pytest.param(["--project", "-home-me-src-web"], ["web/cccc3333"], id="project-folder"),
        pytest.param(["--project", "w*"], ["web/cccc3333"], id="project-glob"),
        pytest.param(
            ["--project", "app", "--project", "web"],
            ["app/aaaa1111", "app/bbbb2222", "web/cccc3333"],
            id="project-repeated",
        ),
        pytest.param(["--project", "nope"], [], id="project-none"),
        pytest.param(["--session", "bbbb"], ["app/bbbb2222"], id="session-prefix"),
        pytest.param(
            ["--session", "bbbb", "--session", "cccc3333-0000"], ["app/bbbb2222", "web/cccc3333"], id="session-repeated"
        ),
        pytest.param(["--project", "app", "--since", "2026-02-11"], ["app/bbbb2222"], id="combined"),
    ],
)
def test_cli_selection(projects, args, kept):
    """--since/--until (dates whole days, times inclusive; local zone unless --timezone or an offset),
    --project (name, cwd, folder, glob), --session (prefix); all combine."""
    env_args = (
        [*args] if "--timezone" in args or any("+" in a or "Z" in a for a in args) else [*args, "--timezone", "UTC"]
    )
    assert [o["label"] for o in _trace_json(str(projects), *env_args)] == kept


def test_cli_selection_says_what_it_kept(projects):
    """stderr says how many traces the selection kept."""
    out = runner.invoke(app, ["context", "trace", str(projects), "--project", "app", "--timezone", "UTC"],
                        catch_exceptions=False)  # fmt: skip
    assert "2 of 3 traces selected (project app)" in out.stderr


def test_cli_since_relative_and_today(tmp_path):
    """`7d`, `12h` and `today` count back from now: a session written now is kept, one of ten days ago not."""
    now = time.time()
    for name, when in (("new", now), ("old", now - 10 * 86_400)):
        sid = f"{name}44444-0000-4000-8000-000000000004"
        stamp = datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z")
        path = tmp_path / "projects" / f"-w-{name}" / f"{sid}.jsonl"
        path.parent.mkdir(parents=True)
        path.write_bytes(_session_lines(f"/w/{name}", sid, stamp, 1))
    assert len(_trace_json(str(tmp_path / "projects"))) == 2
    for since in ("7d", "12h", "today"):
        assert [o["project"] for o in _trace_json(str(tmp_path / "projects"), "--since", since)] == ["new"]


def test_cli_stream_json_start_is_unknown_never_the_file_modification_time(tmp_path):
    """A stream-json run has no timestamps: its start is unknown (`–`, null), whatever its file's modification
    time; `--since` leaves it out and says how many it could not place; `--sort start` puts it last."""
    src = SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl"
    path = tmp_path / "runs" / "loop.jsonl"
    path.parent.mkdir()
    path.write_bytes(src.read_bytes())
    stamp = ms("2026-01-05T12:00:00Z") / 1000
    os.utime(path, (stamp, stamp))
    objs = _trace_json(str(path))
    assert [(o["label"], o["start"], o["start_source"]) for o in objs] == [
        ("loop.jsonl#1", None, None),
        ("loop.jsonl#2", None, None),
    ]
    runs, spotter = str(tmp_path / "runs"), str(SAMPLES / "b-spotter-compaction")
    out = runner.invoke(app, ["context", "trace", runs, spotter, "--since", "2026-01-05", "--timezone", "UTC"],
                        env={"COLUMNS": "200"}, catch_exceptions=False)  # fmt: skip
    assert "1 of 3 traces selected (since 2026-01-05 00:00)" in out.stderr
    assert (
        "--since/--until could not place 2 trace(s): no start recorded (stream-json runs without timestamps, "
        "standard input); left out" in out.stderr
    )
    out = runner.invoke(app, ["context", "trace", runs, spotter, "--sort", "start", "--timezone", "UTC"],
                        env={"COLUMNS": "200"}, catch_exceptions=False)  # fmt: skip
    starts = [line.split("|")[3].strip() for line in out.stdout.splitlines()[2:5]]
    assert starts == ["2026-02-12 16:02", "–", "–"]
    out = runner.invoke(app, ["context", "trace", str(path), "--since", "2026-01-06", "--timezone", "UTC", "--json"])
    assert orjson.loads(out.stdout) == []


def test_cli_standard_input_has_no_date_and_is_left_out_by_since():
    """Standard input has no file to date: `start` is null, and --since leaves it out, counted on stderr."""
    data = (SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes()
    out = runner.invoke(app, ["context", "trace", "-", "--json"], input=data, catch_exceptions=False)
    [obj] = orjson.loads(out.stdout)
    assert (obj["label"], obj["start"], obj["start_source"]) == ("-", "2025-11-17T23:50:06.058Z", "timestamp")
    out = runner.invoke(app, ["context", "trace", "-", "--since", "2025-01-01", "--json"],
                        input=(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl").read_bytes())  # fmt: skip
    assert orjson.loads(out.stdout) == []
    assert "--since/--until could not place 2 trace(s): no start recorded" in out.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(["--since", "last tuesday"], "is not a date or time", id="since"),
        pytest.param(["--until", "2026-13-01"], "is not a date or time", id="until"),
        pytest.param(["--timezone", "Mars/Olympus"], "is not a time zone", id="timezone"),
        pytest.param(["--sort", "weight"], "valid keys", id="sort"),
    ],
)
def test_cli_bad_filter_values_are_usage_errors(value, message):
    """Bad dates, zones and sort keys exit 2 with examples or the valid values."""
    out = runner.invoke(app, ["context", "trace", str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl"), *value])
    assert out.exit_code == 2 and message in " ".join(out.stderr.split())


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--since", "800000d"], id="age-before-year-1"),
        pytest.param(["--until", "1000000000d"], id="age-past-timedelta"),
        pytest.param(["--since", "9999999999999999999999d"], id="age-past-c-int"),
        pytest.param(["--since", "3000000w"], id="weeks"),
        pytest.param(["--until", "9999-12-31"], id="until-last-day-ends-in-10000"),
        pytest.param(["--since", "0001-01-01T00:00+05:00"], id="offset-before-year-1"),
        pytest.param(["--until", "9999-12-31T23:59:59-05:00"], id="offset-past-9999"),
        pytest.param(["--since", "0001-01-01", "--timezone", "Asia/Tokyo"], id="zone-before-year-1"),
        pytest.param(["--until", "9999-12-31T23:59", "--timezone", "America/New_York"], id="zone-past-9999"),
    ],
)
@pytest.mark.parametrize("command", ["trace", "usage"])
def test_cli_since_until_out_of_range_is_a_usage_error(command, args):
    """A --since/--until whose bound falls outside the years 1 to 9999 (a huge age, the end of 9999-12-31,
    an offset or zone across a limit) is one line naming the option and the value, exit 2: no traceback."""
    out = runner.invoke(app, ["context", command, GOOD, *args])
    assert out.exit_code == 2, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)
    error = " ".join(out.stderr.split()).split("Error: ")[-1]
    assert (
        error == f"Invalid value for --since/--until: {args[1]!r} is out of range: a bound must fall within "
        "the years 1 to 9999 in its time zone"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--since", "0000-01-01"], "is not a date or time", id="year-0"),
        pytest.param(["--since", "99999-01-01"], "is not a date or time", id="year-99999"),
    ],
)
def test_cli_dates_outside_the_calendar_are_not_dates(args, message):
    """Years 0 and 99999 are no dates at all: the usual message, exit 2."""
    out = runner.invoke(app, ["context", "trace", GOOD, *args])
    assert out.exit_code == 2 and f"{args[1]!r} {message}" in " ".join(out.stderr.split())


def test_cli_bounds_near_the_limits_select(tmp_path):
    """Bounds just inside the limits work and their note shows them."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(jsonl(assistant("m1", 10, 100, 1000, sessionId="s1", timestamp="2026-02-12T10:00:00Z")))
    out = runner.invoke(app, ["context", "trace", str(path), "--since", "0001-01-02", "--until", "9999-12-30",
                              "--timezone", "UTC"], catch_exceptions=False)  # fmt: skip
    assert out.exit_code == 0 and "1 of 1 traces selected" in out.stderr


def test_cli_start_in_the_last_day_of_9999_is_unknown_with_a_warning(tmp_path):
    """A trace stamped in the last hour of 9999 (UTC), already the year 10000 in Asia/Tokyo: the reader keeps
    only moments every time zone can show, so its start is unknown with a warning naming the line, and the
    trace is read (calls, peak) and grouped under no day; no traceback."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "far.jsonl").write_bytes(
        jsonl(assistant("m1", 10, 100, 1000, sessionId="s1", timestamp="9999-12-31T23:00:00Z"))
    )
    for command in ("trace", "usage"):
        out = runner.invoke(app, ["context", command, str(folder), "--timezone", "Asia/Tokyo"], catch_exceptions=False)
        assert out.exit_code == 0 and "| far.jsonl " in out.stdout and "9999" not in out.stdout
        assert f"read as unknown; the first at {folder / 'far.jsonl'}:1" in out.stderr
    grouped = _groups_of(folder, "day", "--timezone", "Asia/Tokyo")
    assert [g["traces"] for g in grouped] == [1] and grouped[0]["group"] != "9999-12-31"


def test_cli_sort_by_start_and_project(projects):
    """--sort start --desc lists the latest session first; --sort project keeps the read order within a
    project (a stable sort)."""
    assert [o["label"] for o in _trace_json(str(projects), "--sort", "start", "--desc")] == [
        "web/cccc3333", "app/bbbb2222", "app/aaaa1111"]  # fmt: skip
    assert [o["label"] for o in _trace_json(str(projects), "--sort", "project", "--desc")] == [
        "web/cccc3333", "app/aaaa1111", "app/bbbb2222"]  # fmt: skip


# -- context usage --group-by -----------------------------------------------------------------------


def _groups_of(projects: Path, by: str, *extra: str) -> list[dict]:
    out = runner.invoke(app, ["context", "usage", str(projects), "--group-by", by, "--json", *extra],
                        catch_exceptions=False)  # fmt: skip
    assert out.exit_code == 0, out.stderr
    return orjson.loads(out.stdout)


@pytest.mark.parametrize(
    ("by", "tz", "groups"),
    [
        pytest.param("day", "UTC", {"2026-02-10": 2, "2026-02-12": 3, "2026-02-16": 1}, id="day-utc"),
        pytest.param("day", "Europe/Paris", {"2026-02-10": 2, "2026-02-13": 3, "2026-02-16": 1}, id="day-paris"),
        pytest.param("week", "UTC", {"2026-W07": 5, "2026-W08": 1}, id="week-monday-first"),
        pytest.param("month", "UTC", {"2026-02": 6}, id="month"),
        pytest.param("project", "UTC", {"app": 5, "web": 1}, id="project"),
        pytest.param("model", "UTC", {"claude-sonnet-4-5": 6}, id="model"),
    ],
)
def test_cli_usage_group_by(projects, by, tz, groups):
    """One row per day/week/month (of each trace's start, in --timezone), project or model, with its calls."""
    rows = _groups_of(projects, by, "--timezone", tz)
    assert {r["group"]: r["total"]["calls"] for r in rows} == groups
    assert all(r["group_by"] == by and r["schema_version"] == 2 for r in rows)
    assert sum(r["traces"] for r in rows) == 3


def test_cli_usage_group_by_table_totals_and_sort(projects):
    """The grouped table ends with a totals row; --sort cost --desc orders the groups; CSV holds the rows."""
    out = runner.invoke(app, ["context", "usage", str(projects), "--group-by", "project", "--sort", "calls",
                              "--desc"], catch_exceptions=False)  # fmt: skip
    lines = out.stdout.splitlines()
    assert lines[0].startswith("| project ") and lines[2].startswith("| app ") and lines[-1].startswith("| total ")
    csv_out = runner.invoke(app, ["context", "usage", str(projects), "--group-by", "month", "--format", "csv"])
    [row] = list(csv.DictReader(io.StringIO(csv_out.stdout)))
    assert (row["group"], row["traces"], row["total.calls"]) == ("2026-02", "3", "6")
    bad = runner.invoke(app, ["context", "usage", str(projects), "--group-by", "year"])
    assert bad.exit_code == 2 and "day, week, month, project, model" in bad.stderr


def test_cli_usage_selection_and_columns(projects):
    """`context usage` takes the same filters and shows project and start on a scan."""
    out = runner.invoke(app, ["context", "usage", str(projects), "--project", "web", "--timezone", "UTC"],
                        catch_exceptions=False)  # fmt: skip
    header, _, row = out.stdout.splitlines()
    assert [c.strip() for c in header.split("|")[1:4]] == ["trace", "project", "start"]
    assert [c.strip() for c in row.split("|")[1:4]] == ["web/cccc3333", "web", "2026-02-16 09:00"]


# -- the library ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "end", "expected"),
    [
        pytest.param("2026-02-12", False, "2026-02-12T00:00:00+00:00", id="date-since"),
        pytest.param("2026-02-12", True, "2026-02-13T00:00:00+00:00", id="date-until-exclusive-next-day"),
        pytest.param("20260212", False, "2026-02-12T00:00:00+00:00", id="compact"),
        pytest.param("2026-02-12T16:00", False, "2026-02-12T16:00:00+00:00", id="naive-time"),
        pytest.param("2026-02-12 16:00", False, "2026-02-12T16:00:00+00:00", id="space"),
        pytest.param("2026-02-12T17:00+01:00", False, "2026-02-12T16:00:00+00:00", id="offset"),
        pytest.param("2026-02-12T16:00Z", True, "2026-02-12T16:00:00.001000+00:00", id="time-until-inclusive"),
    ],
)
def test_parse_when(text, end, expected):
    """Dates start at midnight (until: the next midnight, exclusive); a time's until bound includes it."""
    assert parse_when(text, UTC_ZONE, end=end) == int(datetime.fromisoformat(expected).timestamp() * 1000)


def test_parse_when_relative_and_dst():
    """`today`/`yesterday`/`Nd`/`Nh`/`Nw` count from now; a local date resolves with its own DST offset."""
    now = ms("2026-03-29T12:00:00Z")  # the day Paris moves to summer time
    assert parse_when("today", PARIS, now_ms=now) == ms("2026-03-29T00:00:00+01:00")
    assert parse_when("today", PARIS, end=True, now_ms=now) == ms("2026-03-30T00:00:00+02:00")
    assert parse_when("yesterday", UTC_ZONE, now_ms=now) == ms("2026-03-28T00:00:00Z")
    assert parse_when("7d", UTC_ZONE, now_ms=now) == now - 7 * 86_400_000
    assert parse_when("12h", UTC_ZONE, now_ms=now) == now - 12 * 3_600_000
    assert parse_when("2w", UTC_ZONE, now_ms=now) == now - 14 * 86_400_000
    with pytest.raises(ValueError, match="examples"):
        parse_when("soon", UTC_ZONE)


def test_parse_timezone():
    """IANA names and `local` (None); anything else is a ValueError naming it."""
    assert parse_timezone(None) is None and parse_timezone("Local") is None
    assert str(parse_timezone("America/New_York")) == "America/New_York"
    with pytest.raises(ValueError, match="'Nowhere/City' is not a time zone"):
        parse_timezone("Nowhere/City")


def _trace(**kw) -> Trace:
    base = {"name": "x.jsonl", "path": "x.jsonl", "format": "transcript", "session_id": None}
    return Trace(**{**base, **kw})


@pytest.mark.parametrize(
    ("fields", "label", "project"),
    [
        pytest.param(
            {
                "name": "p/-home-me-app/4d5611e5-aa.jsonl",
                "path": "p/-home-me-app/4d5611e5-aa.jsonl",
                "session_id": "4d5611e5-aa",
                "cwd": "/home/me/app",
            },
            "app/4d5611e5",
            "app",
            id="session-file",
        ),
        pytest.param(
            {
                "name": "p/-home-me-app/4d5611e5-aa.jsonl",
                "path": "p/-home-me-app/4d5611e5-aa.jsonl",
                "session_id": "4d5611e5-aa",
            },
            "-home-me-app/4d5611e5",
            "-home-me-app",
            id="no-cwd-folder-name",
        ),
        pytest.param(
            {"name": "d/renamed.jsonl", "path": "d/renamed.jsonl", "session_id": "4d5611e5-aa", "cwd": "C:\\src\\win"},
            "renamed.jsonl",
            "win",
            id="renamed-windows-cwd",
        ),
        pytest.param(
            {
                "name": "/tmp/run.jsonl#2",
                "path": "/tmp/run.jsonl",
                "format": "stream-json",
                "session_id": "s",
                "cwd": "/w/app",
            },
            "run.jsonl#2",
            "app",
            id="stream-json-run",
        ),
        pytest.param({"name": "-", "path": "-", "format": "stream-json"}, "-", None, id="stdin"),
    ],
)
def test_trace_facts_label_and_project(fields, label, project):
    """The short label is project/session-id-8 for a session file, else the file name (with #N); the project
    is the last folder of cwd, else a transcript's folder name."""
    facts = trace_facts(_trace(**fields))
    assert (facts["label"], facts["project"]) == (label, project)


def test_unique_labels_fall_back_to_the_full_name():
    """Two traces with the same label show their full names."""
    recs = [{"label": "run.jsonl", "trace": "a/run.jsonl"}, {"label": "run.jsonl", "trace": "b/run.jsonl"}]
    assert unique_labels(recs) == ["a/run.jsonl", "b/run.jsonl"]


def test_select_and_sort_order():
    """select keeps in record order; sort_order is stable, None last in either direction."""
    recs = [
        {"label": "b", "project": "p", "session_id": "s1", "start": "2026-01-02T00:00:00.000Z", "peak": 5},
        {"label": "a", "project": "q", "session_id": "s2", "start": None, "peak": None},
        {"label": "c", "project": "p", "session_id": "t3", "start": "2026-01-01T00:00:00.000Z", "peak": 5},
    ]
    assert select(recs, Selection(projects=("p",))).kept == [0, 2]
    assert select(recs, Selection(sessions=("s",))).kept == [0, 1]
    picked = select(recs, Selection(until_ms=ms("2026-01-02T00:00:00Z")))
    assert (picked.kept, picked.undated) == ([2], 1)
    assert sort_order(recs, "trace", "peak") == [0, 2, 1]
    assert sort_order(recs, "trace", "peak", descending=True) == [0, 2, 1]
    assert sort_order(recs, "trace", "trace") == [1, 0, 2]
    assert sort_order(recs, "trace", "start", descending=True) == [0, 2, 1]
    with pytest.raises(ValueError, match="valid keys"):
        sort_order(recs, "trace", "weight")


def test_group_key_weeks_start_on_monday():
    """Sunday 2026-02-15 is in ISO week 7, Monday 2026-02-16 in week 8; no start is no group."""
    assert group_key({"start": "2026-02-15T23:59:59.000Z"}, "week", UTC_ZONE) == "2026-W07"
    assert group_key({"start": "2026-02-16T00:00:00.000Z"}, "week", UTC_ZONE) == "2026-W08"
    assert group_key({"start": None}, "day", UTC_ZONE) is None


def test_totals_add_only_sums():
    """trace_totals adds counts and costs (lower bound if any is); sum_totals recomputes the hit ratio."""
    row = {"calls": 2, "compact": 1, "tools": 3, "failed": 1, "denied": 1, "repeat": 0, "result_chars": 10}
    t = trace_totals([{**row, "cost_usd": 1.0, "cost_is_lower_bound": False},
                      {**row, "cost_usd": 0.5, "cost_is_lower_bound": True}])  # fmt: skip
    assert (t["calls"], t["failed"], t["cost_usd"], t["cost_is_lower_bound"]) == (4, 2, 1.5, True)
    assert "cost_usd" not in trace_totals([row])
    s = sum_totals([
        {"calls": 1, "input_tokens": 10, "cache_write_tokens": 0, "cache_read_tokens": 90, "output_tokens": 5,
         "cost_usd": 0.1, "cost_is_lower_bound": False, "lower_bound_reasons": []},
        {"calls": 1, "input_tokens": 0, "cache_write_tokens": 100, "cache_read_tokens": 0, "output_tokens": 5,
         "cost_usd": None, "cost_is_lower_bound": False, "lower_bound_reasons": ["unpriced_model"]},
    ])  # fmt: skip
    assert (s["calls"], s["cache_hit_ratio"], s["cost_usd"]) == (2, 90 / 200, 0.1)
    assert s["cost_is_lower_bound"] and s["lower_bound_reasons"] == ["unpriced_model"]


def test_is_scan(tmp_path):
    """No path or a directory is a scan; files and standard input are not."""
    f = tmp_path / "a.jsonl"
    f.write_text("{}")
    assert is_scan([]) and is_scan([str(tmp_path)]) and is_scan([str(f), str(tmp_path)])
    assert not is_scan([str(f)]) and not is_scan(["-"])
