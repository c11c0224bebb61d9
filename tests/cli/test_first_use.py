"""What a new user meets first: `-o` files in the format their extension names, a scan that finds nothing
fails, help and `schema` that say what there is, days split at midnight, and a README whose two commands
are true."""

from __future__ import annotations

import csv
import io
import shlex

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app

from ..conftest import ROOT, SAMPLES

runner = CliRunner()
COMPACTION = str(SAMPLES / "b-spotter-compaction")


# -- -o takes the format from the extension -------------------------------------------------------------


def test_output_extension_chooses_the_format(tmp_path):
    """`-o out.json` writes JSON, `.csv` CSV, `.md` a markdown table, anything else the table; `--format`
    wins over the extension; `.html` is refused with where the page comes from."""
    run = ["context", "trace", COMPACTION, "-o"]
    assert runner.invoke(app, [*run, str(tmp_path / "out.json")]).exit_code == 0
    assert orjson.loads((tmp_path / "out.json").read_bytes())[0]["label"] == "spotter-dov/4d5611e5"
    assert runner.invoke(app, ["context", "usage", COMPACTION, "-o", str(tmp_path / "u.csv")]).exit_code == 0
    rows = list(csv.reader(io.StringIO((tmp_path / "u.csv").read_text())))
    assert rows[0][:2] == ["trace", "label"] and rows[1][1] == "spotter-dov/4d5611e5"
    runner.invoke(app, [*run, str(tmp_path / "out.md")])
    assert (tmp_path / "out.md").read_text().splitlines()[1].startswith("|:---")
    runner.invoke(app, [*run, str(tmp_path / "out.txt")])
    assert (tmp_path / "out.txt").read_text().startswith("| trace ")
    runner.invoke(app, [*run, str(tmp_path / "table.json"), "--format", "table"])
    assert (tmp_path / "table.json").read_text().startswith("| trace ")
    out = runner.invoke(app, [*run, str(tmp_path / "page.html")])
    assert out.exit_code == 2 and "context report" in out.stderr and not (tmp_path / "page.html").exists()


# -- a scan that finds nothing fails ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["tools", "sources", "files"])
def test_nothing_found_exits_1_unless_allowed(tmp_path, command):
    """Every command that reads traces: an empty folder exits 1 with the "no traces found" line;
    --allow-empty exits 0 with the same line."""
    out = runner.invoke(app, ["context", command, str(tmp_path)])
    assert (out.exit_code, out.stderr) == (1, f"no traces found in {tmp_path}\n")
    out = runner.invoke(app, ["context", command, str(tmp_path), "--allow-empty"])
    assert (out.exit_code, out.stderr) == (0, f"no traces found in {tmp_path}\n")


def test_a_selection_that_keeps_nothing_is_not_nothing_found():
    """Traces were found, --since kept none of them: exit 0 (the filter worked), said on stderr."""
    out = runner.invoke(app, ["context", "trace", COMPACTION, "--since", "2030-01-01"])
    assert out.exit_code == 0 and "0 of 1 traces selected" in out.stderr


# -- help and schema -----------------------------------------------------------------------------------------


def test_schema_without_a_name_lists_the_names():
    """`contexttrace schema` lists every output it has a schema for, with the command that prints it."""
    out = runner.invoke(app, ["schema"])
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert lines[0].startswith("JSON outputs")
    names = [line.split()[0] for line in lines[1:]]
    assert names == ["trace", "usage", "usage-group", "history", "compare", "tools", "sources", "files"]
    assert "usage-group  context usage --group-by ... --json: one object per group" in out.stdout


def test_history_help_describes_only_its_own_options():
    """`context history -h` says nothing of traces' --since, breaches, CI summaries or day groups."""
    text = " ".join(runner.invoke(app, ["context", "history", "-h"], env={"COLUMNS": "200"}).stdout.split())
    for foreign in ("--since", "breaches", "one object per trace", "one row per trace", "day/week/month"):
        assert foreign not in text, foreign
    assert "one object per recorded run" in text and "Time zone of the recorded column" in text


def test_trace_help_says_where_group_by_is():
    text = " ".join(runner.invoke(app, ["context", "trace", "--help"], env={"COLUMNS": "200"}).stdout.split())
    assert "context usage --group-by" in text


# -- usage --group-by day splits by message time ------------------------------------------------------------


def test_a_session_over_midnight_counts_in_both_days():
    """The compaction session runs 16:02-21:xx UTC: one day in UTC; in Bangkok (UTC+7) its calls before
    midnight (30) count on the 12th and the rest (122) on the 13th, the cost split the same way; the
    totals row still counts one trace and all 152 calls."""
    utc = runner.invoke(app, ["context", "usage", COMPACTION, "--group-by", "day", "--timezone", "UTC", "--json"])
    assert [(g["group"], g["traces"], g["total"]["calls"]) for g in orjson.loads(utc.stdout)] == [
        ("2026-02-12", 1, 152)
    ]
    args = ["context", "usage", COMPACTION, "--group-by", "day", "--timezone", "Asia/Bangkok"]
    groups = orjson.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert [(g["group"], g["traces"], g["total"]["calls"]) for g in groups] == [
        ("2026-02-12", 1, 30),
        ("2026-02-13", 1, 122),
    ]
    whole = orjson.loads(runner.invoke(app, ["context", "usage", COMPACTION, "--json"]).stdout)[0]["total"]
    assert sum(g["total"]["cost_usd"] for g in groups) == pytest.approx(whole["cost_usd"], abs=1e-9)
    assert sum(g["total"]["output_tokens"] for g in groups) == whole["output_tokens"]
    table = runner.invoke(app, args).stdout.splitlines()
    assert [line.split("|")[1:5] for line in table[2:]] == [
        [" 2026-02-12 ", "        1 ", "      30 ", "       2 "],
        [" 2026-02-13 ", "        1 ", "     122 ", "       0 "],
        [" total      ", "        1 ", "     152 ", "       2 "],
    ]


# -- README --------------------------------------------------------------------------------------------------


def test_readme_first_commands_are_two_and_true():
    """The README opens with exactly two commands: the first installs the tool alone (no extra) and runs
    the main job on a bundled sample, which works; the second installs the dev extra and runs the tests,
    and .ci/run runs that very line."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```", 2)[1].strip().splitlines()
    assert len(block) == 2
    install, job = block[0].split(" && ")
    assert install == "pip install ."
    argv = shlex.split(job)
    assert argv[:3] == ["contexttrace", "context", "trace"] and (ROOT / argv[3]).is_dir()
    out = runner.invoke(app, [*argv[1:3], str(ROOT / argv[3]), *argv[4:]])
    assert out.exit_code == 0 and "spotter-dov/4d5611e5" in out.stdout
    assert block[1] == "pip install -e '.[dev]' && python -m pytest -q"
    assert block[1] in (ROOT / ".ci" / "run").read_text().splitlines()
