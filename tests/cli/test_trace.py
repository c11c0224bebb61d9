"""`context trace` on the command line: output streams, exit codes, the --json shape, --calls, and what it
says when nothing is found."""

from __future__ import annotations

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app

from ..conftest import BAD, CASES, GOOD, SAMPLES

runner = CliRunner()


def test_cli_good_and_bad_trace():
    """The good trace prints on stdout, the bad one is named on stderr, exit 1."""
    out = runner.invoke(app, ["context", "trace", GOOD, str(BAD / "binary.jsonl")])
    assert out.exit_code == 1
    assert "b-ccl-thinking-sonnet45.jsonl" in out.stdout
    assert "binary.jsonl" not in out.stdout
    # the reason is the reader's to word (reading/test_api.py); here: named once, as an error
    assert out.stderr.count(f"Error: {BAD / 'binary.jsonl'}: ") == 1


def test_cli_table_columns_and_lines():
    """The table has the spec's columns in order; fill only with --window; the largest results on stderr."""
    out = runner.invoke(app, ["context", "trace", GOOD], catch_exceptions=False)
    header = out.stdout.splitlines()[0]
    cols = [c.strip() for c in header.strip("|").split("|")]
    assert cols[:12] == [
        "trace",
        "calls",
        "first",
        "peak",
        "fill",
        "window",
        "growth",
        "compact",
        "tools",
        "failed",
        "repeated calls",
        "result chars",
    ]
    assert "largest tool results (chars): Read 55,483" in out.stderr
    with_window = runner.invoke(
        app, ["context", "trace", GOOD, "--window", "200000", "--calls"], catch_exceptions=False
    )
    cols = [c.strip() for c in with_window.stdout.splitlines()[0].strip("|").split("|")]
    assert cols[:7] == ["trace", "calls", "first", "peak", "fill", "window", "growth"]
    row = [c.strip() for c in with_window.stdout.splitlines()[2].strip("|").split("|")]
    assert row[1:7] == ["36", "16,386", "72,484", "36%", "200k given", "56,098"]
    assert "prompt tokens per call: 1:16,386 2:18,119 " in with_window.stdout


def test_cli_json_single_trace_is_a_list():
    """--json with one trace prints a list of one object; --calls adds prompt_tokens."""
    out = runner.invoke(app, ["context", "trace", GOOD, "--json"], catch_exceptions=False)
    data = orjson.loads(out.stdout)
    assert isinstance(data, list) and len(data) == 1
    assert "prompt_tokens" not in data[0]
    out = runner.invoke(app, ["context", "trace", GOOD, "--json", "--calls"], catch_exceptions=False)
    [obj] = orjson.loads(out.stdout)
    assert len(obj["prompt_tokens"]) == obj["calls"] == 36
    for key in (
        "subagent_calls",
        "compaction_calls",
        "compaction_events",
        "surface",
        "skipped_lines",
        "format",
        "session_id",
        "models",
    ):
        assert key in obj


def test_cli_json_bad_trace_left_out_exit_1():
    """With --json, an unreadable trace is left out of the list and reported on stderr."""
    out = runner.invoke(app, ["context", "trace", GOOD, "nope.jsonl", "--json"])
    assert out.exit_code == 1
    assert [o["trace"] for o in orjson.loads(out.stdout)] == [GOOD]
    assert "Error: nope.jsonl: no such file" in out.stderr


def test_cli_skipped_lines_named_on_stderr():
    """Skipped lines are named as path:line: reason on stderr, never on stdout."""
    path = str(BAD / "not_json_lines.jsonl")
    out = runner.invoke(app, ["context", "trace", path, "--json"], catch_exceptions=False)
    assert out.exit_code == 0
    assert f"{path}:1: not JSON" in out.stderr
    assert "1 more line(s) skipped (4 in all)" in out.stderr
    assert orjson.loads(out.stdout)[0]["skipped_lines"] == 4


def test_cli_no_path_reads_config_dir(monkeypatch, tmp_path):
    """With no path, the sessions under $CLAUDE_CONFIG_DIR/projects are read."""
    proj = tmp_path / "projects" / "-w"
    proj.mkdir(parents=True)
    (proj / "s.jsonl").write_bytes((SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes())
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    out = runner.invoke(app, ["context", "trace", "--json"], catch_exceptions=False)
    [obj] = orjson.loads(out.stdout)
    assert obj["calls"] == 36


def test_cli_good_trace_leaves_stderr_to_notes():
    """A clean trace prints its table on stdout and only the largest-results note on stderr, with or
    without --explain; with --json, stderr is empty."""
    for extra in ([], ["--explain"]):
        out = runner.invoke(app, ["context", "trace", GOOD, *extra], catch_exceptions=False)
        assert out.exit_code == 0
        assert out.stderr.splitlines() == [
            f"{GOOD}: largest tool results (chars): Read 55,483, Edit 16,877, Glob 2,437, TodoWrite 2,400, Bash 2,133"
        ]
    out = runner.invoke(app, ["context", "trace", GOOD, "--json"], catch_exceptions=False)
    assert (out.exit_code, out.stderr) == (0, "")


def test_cli_same_file_twice_prints_once():
    """A file named twice, or named and inside a named directory, is one trace; so is '-' twice."""
    session = SAMPLES / "b-spotter-compaction"
    main = str(next(session.glob("*.jsonl")))
    out = runner.invoke(app, ["context", "trace", str(session), main, "--json"], catch_exceptions=False)
    [obj] = orjson.loads(out.stdout)
    assert obj["calls"] == 139


def test_cli_skipped_line_notes_capped_per_file_across_runs():
    """27 separator lines spread over 27 runs of one file: three named, then one count for the file."""
    path = str(SAMPLES / "a-ralph-27runs-with-separators.jsonl")
    out = runner.invoke(app, ["context", "trace", path, "--json"], catch_exceptions=False)
    lines = out.stderr.splitlines()
    assert lines == [
        f"{path}:1: not JSON",
        f"{path}:105: not JSON",
        f"{path}:219: not JSON",
        f"{path}: 24 more line(s) skipped (27 in all)",
    ]


def test_cli_orphan_flat_agent_file_is_counted(tmp_path):
    """A flat agent-*.jsonl whose session is absent is left out and said so on stderr."""
    side = (SAMPLES / "b-ccl-flat-agent-files-v2037" / "agent-ea02459f.jsonl").read_bytes()
    (tmp_path / "agent-ea02459f.jsonl").write_bytes(side)
    out = runner.invoke(app, ["context", "trace", str(tmp_path), "--json"], catch_exceptions=False)
    assert orjson.loads(out.stdout) == []
    assert "1 subagent file(s) left out" in out.stderr


# -- what goes where -------------------------------------------------------------------------------


def test_cli_stdout_holds_only_the_table():
    """Without --calls, stdout is the pipe table alone (it pastes as markdown), its totals row last; notes go
    to stderr."""
    out = runner.invoke(app, ["context", "trace", GOOD, str(CASES / "B22.jsonl")], catch_exceptions=False)
    lines = out.stdout.splitlines()
    assert len(lines) == 5 and lines[-1].startswith("| total ")
    assert all(line.startswith("|") and line.endswith("|") for line in lines)
    assert "largest tool results" in out.stderr


def test_cli_calls_numbered_from_1_in_a_block():
    """--calls prints each call as number:tokens from 1, after a blank line, indented (a markdown code
    block), with the compaction marked before the first call after it."""
    session = SAMPLES / "b-spotter-compaction"
    out = runner.invoke(app, ["context", "trace", str(session), "--calls"], catch_exceptions=False)
    table, blank, series = out.stdout.rstrip("\n").partition("\n\n")
    assert blank and all(line.startswith("|") for line in table.splitlines())
    [line] = series.splitlines()
    assert line.startswith("    ") and line.split(": prompt tokens per call: ")[1].startswith("1:26,450 2:28,046 ")
    assert " 61:164,831 | compact (auto, pre 170,251) | 62:36,081 " in line
    assert line.endswith(" 139:" + line.rsplit(" 139:", 1)[1])  # 139 calls, the last numbered 139


def test_cli_failed_names_denials():
    """The failed cell names the refusals it counts (B22: 3 failed results, 2 of them denials)."""
    out = runner.invoke(app, ["context", "trace", str(CASES / "B22.jsonl")], catch_exceptions=False)
    header, _, row = out.stdout.splitlines()[:3]
    cells = dict(zip(header.strip("|").split("|"), row.strip("|").split("|"), strict=True))
    assert {k.strip(): v.strip() for k, v in cells.items()}["failed"] == "3 (2 denied)"


def test_cli_no_model_call_is_not_graded():
    """B38 (every request failed, no model call): health and weather show –, never A 100 / sunny.
    The grade is None when nothing was measured."""
    out = runner.invoke(app, ["context", "trace", str(CASES / "B38.jsonl")], catch_exceptions=False)
    header, _, row = out.stdout.splitlines()[:3]
    cells = {k.strip(): v.strip() for k, v in zip(header.strip("|").split("|"), row.strip("|").split("|"), strict=True)}
    assert (cells["calls"], cells["health"], cells["weather"]) == ("0", "–", "–")


# -- nothing found ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["trace", "usage"])
def test_cli_nothing_found_names_where_it_looked(tmp_path, command):
    """An empty folder: exit 1 (a CI job pointed at the wrong folder fails), stdout empty, stderr names the
    folder; --allow-empty makes it exit 0 with the same line."""
    out = runner.invoke(app, ["context", command, str(tmp_path)], catch_exceptions=False)
    assert (out.exit_code, out.stdout) == (1, "")
    assert out.stderr == f"no traces found in {tmp_path}\n"
    out = runner.invoke(app, ["context", command, str(tmp_path), "--allow-empty"], catch_exceptions=False)
    assert (out.exit_code, out.stdout, out.stderr) == (0, "", f"no traces found in {tmp_path}\n")


def test_cli_nothing_found_names_default_roots(monkeypatch, tmp_path):
    """With no path, the message names the default roots searched, or says that none exists."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    out = runner.invoke(app, ["context", "trace"], catch_exceptions=False)
    assert (out.exit_code, out.stdout) == (1, "")
    assert out.stderr == (
        "no traces found: none of ~/.config/claude/projects, ~/.claude/projects, ~/.codex/sessions "
        "and ~/.gemini/tmp exists\n"
    )
    (tmp_path / ".claude" / "projects").mkdir(parents=True)
    out = runner.invoke(app, ["context", "trace"], catch_exceptions=False)
    assert out.stderr == f"no traces found under {tmp_path / '.claude' / 'projects'}\n"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    out = runner.invoke(app, ["context", "trace", "--json"], catch_exceptions=False)
    assert (out.exit_code, out.stdout) == (1, "[]\n")
    assert out.stderr == f"no traces found under {tmp_path / '.claude' / 'projects'} (from CLAUDE_CONFIG_DIR)\n"


def test_cli_config_dir_naming_projects_gets_a_hint(monkeypatch, tmp_path):
    """CLAUDE_CONFIG_DIR pointing at a projects folder itself: the message says to point it at the config folder."""
    projects = tmp_path / ".claude" / "projects"
    (projects / "projects").mkdir(parents=True)  # so the root searched exists and holds nothing
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(projects))
    out = runner.invoke(app, ["context", "trace"], catch_exceptions=False)
    assert out.exit_code == 1
    assert f"hint: CLAUDE_CONFIG_DIR={projects} ends in 'projects'; point it at Claude Code's config folder" in (
        out.stderr
    )
    (projects / "projects").rmdir()  # the usual case: projects/projects does not exist, an error
    out = runner.invoke(app, ["context", "trace"], catch_exceptions=False)
    assert f"hint: CLAUDE_CONFIG_DIR={projects} ends in 'projects'" in out.stderr


def test_cli_explain_codex_health_and_weather():
    """`--explain` on a Codex rollout: the fill line above health names the window the rollout states;
    spec 000's fixed weights, File re-reads marked `(no data)` with the spec's value (no tool reads one file
    by its path), apply_patch counted as productive, and cache health not judged for OpenAI usage (spec 002);
    `--json` carries `has_data` per signal (its names unchanged: Re-reads)."""
    path = str(SAMPLES / "c-codex-0.65-compaction.jsonl")
    out = runner.invoke(app, ["context", "trace", path, "--explain"], env={"COLUMNS": "200"}, catch_exceptions=False)
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert lines[5:7] == [
        "  fill 95%: peak 244,674 of a 258,400-token window (stated: the rollout's model_context_window (Codex CLI "
        "from 0.48: 95 % of the model's window))",
        "  health A 89/100",
    ]
    assert "    File re-reads    ██████████ 100 A   15%  (no data) no Read call with a file_path: spec's 100" in lines
    assert (
        "    Tool Efficiency  ███████▌░░  75 B   10%  share of apply_patch 23% in the first half, 18% in the second"
    ) in lines
    assert (
        "    not judged: cache health — OpenAI usage: spec 002 scores cache health on Anthropic entries only "
        "(other APIs count cached tokens differently)"
    ) in lines
    out = runner.invoke(app, ["context", "trace", path, "--json"], catch_exceptions=False)
    [obj] = orjson.loads(out.stdout)
    signals = obj["health"]["signals"]
    assert [(s["name"], s["value"], s["has_data"]) for s in signals] == [
        ("Context Fill", 100, True),
        ("Compactions", 75, True),
        ("Re-reads", 100, False),
        ("Error Rate", 75, True),
        ("Tool Efficiency", 75, True),
    ]
