"""The run history: `--db FILE --label L` appends each trace's JSON record to SQLite, and `context
history` shows each metric per label over time with its change; concurrent writers never corrupt it."""

from __future__ import annotations

import csv
import io
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.storage.history import LAYOUT_VERSION, HistoryError, git_commit, history_rows, load_runs, record_run

from ..conftest import ROOT, SAMPLES

runner = CliRunner()
GOOD = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")  # peak 72,484, 36 calls, health A
SPOTTER = str(next((SAMPLES / "b-spotter-compaction").glob("*.jsonl")))  # peak 164,831, 139 calls, health C


def invoke(*args: str, exit_code: int = 0):
    out = runner.invoke(app, list(args), catch_exceptions=False)
    assert out.exit_code == exit_code, (out.stdout, out.stderr)
    return out


def _history_json(db: Path, *args: str) -> list[dict]:
    return orjson.loads(invoke("context", "history", "--db", str(db), "--json", *args).stdout)


def test_record_and_show_the_change_against_the_previous_run(tmp_path):
    """Two runs of a label: the second shows each metric with its change against the first."""
    db = tmp_path / "history.sqlite"
    invoke("context", "trace", GOOD, "--db", str(db), "--label", "ci")
    invoke("context", "trace", SPOTTER, "--db", str(db), "--label", "ci")
    first, second = _history_json(db)
    assert (first["label"], first["traces"], first["command"]) == ("ci", 1, "trace")
    assert first["run"] < second["run"]
    peak = second["metrics"]["peak"]
    assert (peak["value"], peak["previous"], peak["change"]) == (164_831, 72_484, 164_831 - 72_484)
    assert peak["change_frac"] == pytest.approx((164_831 - 72_484) / 72_484)
    assert first["metrics"]["peak"]["change"] is None  # the label's first run has nothing to compare with
    assert (second["metrics"]["health"]["value"], second["metrics"]["health"]["previous"]) == ("C", "A")
    fill = second["metrics"]["fill"]  # no --window: each run's fill is against the window it chose (200,000)
    assert (fill["value"], fill["previous"]) == (164_831 / 200_000, 72_484 / 200_000)
    table = invoke("context", "history", "--db", str(db)).stdout
    assert "164,831 (+92,347, +127.4%)" in table and "C (was A)" in table and "0.8242 (+0.4617, +127.4%)" in table
    header = [c.strip() for c in table.splitlines()[0].strip("|").split("|")]
    assert header == ["label", "run", "recorded", "commit", "traces", "peak", "fill", "calls", "compact", "repeat",
                      "health", "weather"]  # fmt: skip


def test_each_label_compares_with_its_own_previous_run(tmp_path):
    """Runs of another label in between do not count as the previous run; --label picks labels."""
    db = tmp_path / "h.sqlite"
    invoke("context", "trace", GOOD, "--db", str(db), "--label", "main")
    invoke("context", "trace", SPOTTER, "--db", str(db), "--label", "feature")
    invoke("context", "trace", GOOD, "--db", str(db), "--label", "main")
    rows = _history_json(db, "--metric", "peak,calls")
    assert [(r["label"], r["metrics"]["peak"]["change"]) for r in rows] == [("main", None), ("main", 0),
                                                                            ("feature", None)]  # fmt: skip
    assert set(rows[0]["metrics"]) == {"peak", "calls"}
    assert [r["label"] for r in _history_json(db, "--label", "feature")] == ["feature"]


def test_a_run_of_several_traces_combines_them_per_metric(tmp_path):
    """A run's traces combine: the largest peak, the summed calls, the worst grade."""
    db = tmp_path / "h.sqlite"
    out = invoke("context", "trace", GOOD, SPOTTER, "--db", str(db), "--fail-on", "peak>100000", exit_code=3)
    assert "breach:" in out.stderr
    [row] = _history_json(db, "--metric", "peak", "--metric", "calls", "--metric", "health")
    assert (row["label"], row["traces"]) == ("default", 2)
    assert {k: v["value"] for k, v in row["metrics"].items()} == {"peak": 164_831, "calls": 175, "health": "C"}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT breaches FROM runs").fetchall() == [(1,)]


def test_what_is_recorded_is_the_json_record_as_printed(tmp_path):
    """Each record is the object `--json` prints (schema_version included), in display order, after the
    filters; the run keeps its label, time, commit and the working directory."""
    db = tmp_path / "h.sqlite"
    printed = orjson.loads(invoke("context", "trace", GOOD, SPOTTER, "--sort", "peak", "--desc", "--json").stdout)
    invoke("context", "trace", GOOD, SPOTTER, "--sort", "peak", "--desc", "--db", str(db), "--label", "x")
    [run] = load_runs(db)
    assert run.records == printed
    assert run.recorded_at.endswith("Z") and run.label == "x"
    invoke("context", "trace", GOOD, SPOTTER, "--session", "4d56", "--db", str(db), "--label", "y")
    assert [r["trace"] for r in load_runs(db, labels=["y"])[0].records] == [SPOTTER]


def test_usage_runs_are_kept_apart(tmp_path):
    """`context usage --db` records usage records; `context history --command usage` shows them."""
    db = tmp_path / "h.sqlite"
    invoke("context", "usage", GOOD, "--db", str(db), "--label", "cost")
    invoke("context", "usage", GOOD, SPOTTER, "--group-by", "day", "--db", str(db), "--label", "cost")
    assert _history_json(db) == []
    rows = _history_json(db, "--command", "usage")
    assert [r["traces"] for r in rows] == [1, 2]  # a grouped run records its traces, not its groups
    assert rows[1]["metrics"]["cost"]["change"] > 0
    assert set(rows[0]["metrics"]) == {"cost", "calls", "output", "hit"}


def test_history_formats(tmp_path):
    """`context history` prints markdown and CSV (value and change per metric) as well."""
    db = tmp_path / "h.sqlite"
    invoke("context", "trace", GOOD, "--db", str(db))
    invoke("context", "trace", SPOTTER, "--db", str(db))
    md = invoke("context", "history", "--db", str(db), "--metric", "peak", "--format", "markdown").stdout
    assert md.splitlines()[1].startswith("|:") and "164,831 (+92,347, +127.4%)" in md
    rows = list(csv.DictReader(io.StringIO(invoke("context", "history", "--db", str(db), "--format", "csv",
                                                  "--metric", "peak").stdout)))  # fmt: skip
    assert [(r["peak"], r["peak_change"]) for r in rows] == [("72484", ""), ("164831", "92347")]


def test_history_usage_errors(tmp_path):
    """A missing file is an error (exit 1); an unknown metric, --label without --db, a bad --command are
    usage errors (exit 2)."""
    missing = invoke("context", "history", "--db", str(tmp_path / "none.sqlite"), exit_code=1)
    assert "no history file here" in missing.stderr
    db = tmp_path / "h.sqlite"
    invoke("context", "trace", GOOD, "--db", str(db))
    bad = invoke("context", "history", "--db", str(db), "--metric", "weight", exit_code=2)
    assert "valid: calls, first, peak" in " ".join(bad.stderr.split())
    assert "give --db" in invoke("context", "trace", GOOD, "--label", "x", exit_code=2).stderr
    invoke("context", "history", "--db", str(db), "--command", "compare", exit_code=2)
    empty = invoke("context", "history", "--db", str(db), "--label", "nobody")
    assert empty.stdout == "" and "no trace runs recorded" in empty.stderr


def test_a_file_that_is_not_a_history_is_refused_never_rewritten(tmp_path):
    """Another program's SQLite file, a newer layout, or not SQLite at all: refused, left as it was."""
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(HistoryError, match="other tables"):
        record_run(other, "trace", [])
    newer = tmp_path / "newer.sqlite"
    record_run(newer, "trace", [])
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION + 1}")
    with pytest.raises(HistoryError, match="newer contexttrace"):
        record_run(newer, "trace", [])
    text = tmp_path / "text.sqlite"
    text.write_text("not a database at all, but long enough to have a header of sorts" * 20)
    out = invoke("context", "trace", GOOD, "--db", str(text), exit_code=1)
    assert "Error: " in out.stderr and "not a contexttrace history file" in out.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_commit_of_the_working_directory(tmp_path):
    """The commit checked out in a repository; None outside one."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], cwd=repo, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
    assert git_commit(repo) == head.stdout.strip()
    outside = tmp_path / "plain"
    outside.mkdir()
    assert git_commit(outside) is None


_WRITER = """
import sys, time
from pathlib import Path
from contexttrace.storage.history import record_run
db, go, label = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
records = [{"trace": f"{label}-{i}", "schema_version": 1, "peak": i, "calls": 1} for i in range(5)]
while not go.exists():
    time.sleep(0.001)
for n in range(100):
    record_run(db, "trace", records, label=label, commit="c" * 40)
print("done")
"""


def test_two_processes_writing_at_once_never_corrupt_the_file(tmp_path):
    """Two processes append 100 runs each, started at the same moment on a new file: all 200 runs and their
    1,000 records are there, whole, and the file passes SQLite's integrity check in WAL mode. (Without the
    busy timeout this collides: "database is locked".)"""
    db, go = tmp_path / "shared.sqlite", tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(db), str(go), label],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for label in ("job-a", "job-b")
    ]
    time.sleep(0.3)  # both are waiting on the flag: they start writing together
    go.touch()
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert (proc.returncode, stdout.strip()) == (0, "done"), stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        per_run = conn.execute("SELECT run_id, COUNT(*) FROM records GROUP BY run_id").fetchall()
    assert len(per_run) == 200 and {n for _, n in per_run} == {5}
    runs = load_runs(db)
    assert [sum(r.label == label for r in runs) for label in ("job-a", "job-b")] == [100, 100]
    rows, _ = history_rows(runs, ["peak"])
    assert all(r["metrics"]["peak"]["value"] == 4 for r in rows)
