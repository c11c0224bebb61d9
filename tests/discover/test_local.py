"""Finding traces on disk (`discover/local.py`): folders that cannot be read, FIFOs, paths the system
refuses, symbolic links, the default roots, and which subagent files belong to which session."""

from __future__ import annotations

import shutil

import pytest

from contexttrace import analyze

from ..conftest import FUZZ, GOOD, SAMPLES, assistant, jsonl, report_of

# -- paths and folders a scan meets --------------------------------------------------------------------------


def test_unreadable_folder_is_an_error(tmp_path, monkeypatch):
    """A named folder that cannot be listed, and a locked folder inside a scanned tree, are each an error of
    the run (exit 1), never "no traces found" nor skipped silently. Tests run as root here, where permission
    bits do not bind, so the refusal is made by the os functions the scan calls."""
    import os

    tree = tmp_path / "projects"
    (tree / "locked").mkdir(parents=True)
    (tree / "open").mkdir()
    (tree / "open" / "s.jsonl").write_bytes(jsonl(assistant("m1", 1, 1, 1)))
    real_scandir, real_access = os.scandir, os.access

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    run = analyze([str(tree)])
    assert [r.trace for r in run.reports] == [str(tree / "open" / "s.jsonl")]
    assert [(f.path, f.reason) for f in run.failures] == [
        (str(tree / "locked"), "cannot read this folder (permission denied)")
    ]
    monkeypatch.setattr(
        os, "access", lambda path, mode: False if str(path).endswith("locked") else real_access(path, mode)
    )
    run = analyze([str(tree / "locked"), GOOD])
    assert [f.reason for f in run.failures] == ["cannot read this folder (permission denied)"]
    assert [r.trace for r in run.reports] == [GOOD]


def test_a_fifo_named_jsonl_is_an_error_not_a_hang(tmp_path):
    """A FIFO (or socket, device) is never opened: reading it would wait for ever for a writer. Named or
    found by a scan, it is that path's error; the good trace prints."""
    import os

    fifo = tmp_path / "zz.jsonl"
    os.mkfifo(fifo)
    shutil.copy(GOOD, tmp_path / "good.jsonl")
    for args in ([str(tmp_path)], [str(fifo), str(tmp_path / "good.jsonl")]):
        run = analyze(args)
        assert [r.trace for r in run.reports] == [str(tmp_path / "good.jsonl")]
        assert [(f.path, f.reason) for f in run.failures] == [(str(fifo), "not a regular file (a FIFO), not read")]


@pytest.mark.parametrize("bad", ["a" * 300, "a\x00b.jsonl"])
def test_a_path_the_system_refuses_is_an_error_not_a_crash(bad):
    """A name too long for the file system, or with a NUL byte, is that path's error (exit 1); the good
    trace named with it prints."""
    run = analyze([bad, GOOD])
    assert [r.trace for r in run.reports] == [GOOD]
    [failure] = run.failures
    assert failure.reason.startswith("cannot read this path")


def test_symlinked_project_folder_is_followed_once(tmp_path):
    """A project folder that is a symbolic link inside a scanned tree is scanned (os.walk does not follow
    links by default); a link loop is walked once."""
    elsewhere = tmp_path / "elsewhere" / "proj"
    elsewhere.mkdir(parents=True)
    shutil.copy(GOOD, elsewhere / "s1.jsonl")
    root = tmp_path / "projects"
    root.mkdir()
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    (elsewhere / "loop").symlink_to(elsewhere, target_is_directory=True)
    run = analyze([str(root)])
    assert [r.calls for r in run.reports] == [36]
    assert not run.failures


def test_a_folder_named_like_a_trace_with_nothing_inside_is_said(tmp_path):
    """A folder named x.jsonl and named on the command line: an error, not silence."""
    (tmp_path / "x.jsonl").mkdir()
    run = analyze([str(tmp_path / "x.jsonl")])
    assert [f.reason for f in run.failures] == ["is a directory where a file was expected (no trace inside)"]


def test_directory_scan_sorts_the_whole_tree_by_path(tmp_path):
    """Sessions print sorted by full path, not directory by directory."""
    for rel in ("b.jsonl", "a/x.jsonl", "c/y.jsonl"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(jsonl(assistant(rel, 1, 1, 1)))
    run = analyze([str(tmp_path)])
    assert [r.trace.removeprefix(str(tmp_path) + "/") for r in run.reports] == ["a/x.jsonl", "b.jsonl", "c/y.jsonl"]


def test_b28_config_dir_replaces_default_roots(monkeypatch, tmp_path):
    """B28: CLAUDE_CONFIG_DIR (comma-separated) replaces the default roots instead of adding to them."""
    from contexttrace.discover.local import default_roots

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{tmp_path}/a, {tmp_path}/b")
    assert default_roots() == [tmp_path / "a" / "projects", tmp_path / "b" / "projects"]


# -- subagent files and the session each belongs to ----------------------------------------------------------


def test_b09_subagent_file_attached_not_a_session(write):
    """B09: s9.jsonl plus s9/subagents/agent-ag9.jsonl (2 calls, one a warmup): one session, 2 subagent
    calls, none in the main series; the same calls inline as well are counted once."""
    main = write("p/s9.jsonl", assistant("m_main", 1, 100, 1000))
    side = [assistant("m_a", 1, 50, 500, 1, sidechain=True), assistant("m_b", 1, 60, 600, 30, sidechain=True)]
    for rec in side:
        rec["agentId"] = "ag9"
        rec["sessionId"] = "s9"
    write("p/s9/subagents/agent-ag9.jsonl", *side)
    run = analyze([main.rsplit("/", 1)[0]])
    assert len(run.reports) == 1
    [rep] = run.reports
    assert (rep.calls, rep.subagent_calls, rep.prompt_tokens) == (1, 2, [1101])
    # the same subagent calls also written inline in the main file: still 2
    write("p/s9.jsonl", assistant("m_main", 1, 100, 1000), *side)
    [rep] = analyze([main]).reports
    assert rep.subagent_calls == 2


def test_fuzz_13_flat_agent_file_linked_by_a_late_session_id(tmp_path):
    """13: a flat agent file whose sessionId first appears after line 20 is attached to its session."""
    folder = tmp_path / "proj"
    shutil.copytree(FUZZ / "13-flat-agent-file-sessionId-after-line-20", folder)
    run = analyze([str(folder)])
    assert run.orphan_agent_files == 0
    [rep] = run.reports
    assert (rep.calls, rep.subagent_calls) == (1, 1)


def test_nested_subagent_files_without_their_session_are_counted(tmp_path):
    """`<session>/subagents/agent-*.jsonl` with no `<session>.jsonl` beside it: left out and counted."""
    side = tmp_path / "s8" / "subagents"
    side.mkdir(parents=True)
    (side / "agent-x1.jsonl").write_bytes(jsonl(assistant("m1", 1, 1, 1, sidechain=True)))
    run = analyze([str(tmp_path)])
    assert (run.reports, run.orphan_agent_files) == ([], 1)


def test_unlistable_subagent_folder_is_a_warning_not_a_crash(tmp_path, monkeypatch):
    """A session whose <session>/subagents folder cannot be listed: the session prints with a warning naming
    the folder (its subagents were found but not read), never a PermissionError that drops the run."""
    import os

    src = SAMPLES / "b-ccl-print-mode-sessions"
    sid = "29ccd257-68b1-427f-ae5f-6524b7cb6f20"
    shutil.copytree(src / sid, tmp_path / sid)
    shutil.copy(src / f"{sid}.jsonl", tmp_path / f"{sid}.jsonl")
    real = os.scandir

    def scandir(path="."):
        if str(path).endswith("subagents"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    run = analyze([str(tmp_path / f"{sid}.jsonl"), GOOD])
    assert not run.failures
    session, good = run.reports
    assert any("subagents: cannot read this folder (permission denied)" in w for w in session.warnings)
    assert good.trace == GOOD


def test_a_subagent_file_named_alone_says_so():
    """A subagent file named on its own has no main thread: not graded (–), and a warning says why and
    what to name instead."""
    from contexttrace.discover.local import SUBAGENT_ALONE

    path = (
        SAMPLES / "b-spotter-compaction" / "4d5611e5-241a-462a-8d15-5122611a9569" / "subagents" / "agent-a2898e3.jsonl"
    )
    rep = report_of(path)
    assert rep.calls == 0 and rep.subagent_calls > 0
    assert rep.extra["health"]["grade"] is None
    assert SUBAGENT_ALONE in rep.warnings


# -- the other agents' homes ------------------------------------------------------------------------------


def _agent_homes(home):
    """A home with Claude Code, Codex CLI and Gemini CLI sessions laid out as each CLI writes them."""
    claude = home / ".claude" / "projects" / "-work-app"
    claude.mkdir(parents=True)
    shutil.copy(SAMPLES / "b-ccl-thinking-sonnet45.jsonl", claude / "s1.jsonl")
    codex = home / ".codex"
    (codex / "sessions" / "2026" / "03" / "06").mkdir(parents=True)
    shutil.copy(
        SAMPLES / "c-codex-0.111-exec-command.jsonl", codex / "sessions" / "2026" / "03" / "06" / "rollout-a.jsonl"
    )
    (codex / "history.jsonl").write_text('{"session_id":"x","ts":1,"text":"a prompt"}\n')  # prompts typed: no session
    gemini = home / ".gemini" / "tmp" / "c2d2cd48" / "chats"
    gemini.mkdir(parents=True)
    name = "session-2025-12-12T21-46-7c761c30.json"
    shutil.copy(SAMPLES / "d-gemini-sessions" / "chats" / name, gemini / name)
    (home / ".gemini" / "tmp" / "c2d2cd48" / "logs.json").write_text("[]")  # the CLI's prompt log: no session
    return codex


def test_default_scan_finds_every_agents_sessions(tmp_path, monkeypatch):
    """With no path, Claude Code's projects, Codex CLI's sessions and Gemini CLI's chats are all scanned; a
    Codex home's history and Gemini's prompt log are no sessions. One table, three formats."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    _agent_homes(tmp_path)
    run = analyze([])
    assert run.ok
    assert sorted((r.format, r.calls) for r in run.reports) == [("codex", 85), ("gemini", 5), ("transcript", 36)]


def test_codex_home_scanned_as_a_folder_and_from_codex_home(tmp_path, monkeypatch):
    """`CODEX_HOME` moves Codex's sessions; scanning the Codex home itself leaves its history file out."""
    codex = _agent_homes(tmp_path / "elsewhere")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert [(r.format, r.calls) for r in analyze([]).reports] == [("codex", 85)]
    run = analyze([str(codex)])
    assert run.ok and [(r.format, r.calls) for r in run.reports] == [("codex", 85)]


def test_a_file_reached_twice_is_listed_once_by_its_real_path(tmp_path, monkeypatch):
    """A file named through a linked folder, a linked file, `..` or a doubled slash is the same file (its real
    path), listed once where it first appears; a hard link is a path of its own, a dangling link and a
    missing file are listed as named. The same list as when every path is resolved by `os.path.realpath`
    alone (the folder of many files is resolved once)."""
    import os

    from contexttrace.discover.local import find_traces

    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(GOOD, real / "s.jsonl")
    os.link(real / "s.jsonl", real / "hard.jsonl")
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    (tmp_path / "l.jsonl").symlink_to(real / "s.jsonl")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    monkeypatch.chdir(tmp_path)
    named = [
        "real/s.jsonl",
        str(tmp_path / "alias" / "s.jsonl"),
        "l.jsonl",
        "alias/../real/s.jsonl",
        "real//s.jsonl",
        "./real/hard.jsonl",
        "real/hard.jsonl",
        "dangling.jsonl",
        "nowhere.jsonl",
        "missing/x.jsonl",
        str(real),
        "alias",
    ]
    listed = [s.path for s in find_traces(named)]
    expected, seen = [], set()
    for path in [*named[:10], str(real / "hard.jsonl"), str(real / "s.jsonl")]:
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            expected.append(path)
    assert listed == expected == ["real/s.jsonl", "./real/hard.jsonl", "dangling.jsonl", "missing/x.jsonl"]
