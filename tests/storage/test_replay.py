"""Whole-command replay (`storage.replay`): a reading command run again over unchanged inputs prints the same
bytes (stdout, stderr, exit code) without importing Typer, the readers or the reports; any changed input, a
changed environment, another folder or version, a clock-relative bound, standard input or `--no-cache` runs
the command in full."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.select.filters import parse_timezone, parse_when
from contexttrace.storage import replay

from ..conftest import ROOT, SAMPLES

#: Runs `contexttrace.cli.main` as the console script does, then appends to the file named by CT_MODULES
#: whether Typer was imported (a replay never imports it). CT_VERSION replaces the package's version.
_MAIN = (
    "import os, sys\n"
    "if os.environ.get('CT_VERSION'):\n"
    "    import contexttrace.version as v; v.__version__ = os.environ['CT_VERSION']\n"
    "sys.argv = ['contexttrace', *sys.argv[1:]]\n"
    "from contexttrace.cli import main\n"
    "try:\n    main()\n"
    "finally:\n"
    "    with open(os.environ['CT_MODULES'], 'a') as fh:\n"
    "        fh.write(' '.join(sorted(sys.modules)) + '\\n')\n"
)

#: What a person runs, per command: the JSON and a table.
COMMANDS = [
    ["trace", "--json"],
    ["trace", "--sort", "peak", "--wide"],
    ["usage", "--json"],
    ["usage", "--group-by", "day", "--since", "2025-01-01"],
    ["tools", "--by-tool"],
    ["sources", "--json", "--at", "peak"],
    ["files", "--json"],
]


def _age(root: Path, seconds: float = 60) -> None:
    """Date the files and folders under `root` (and `root`) modified in the last 30 s `seconds` ago: a run
    keeps no output whose inputs changed within `replay.RACY_NS` of it. (Only those: dating a file changes
    its ctime, which a replay compares too.)"""
    now = time.time()
    for folder, _, names in os.walk(root):
        for path in [*(os.path.join(folder, n) for n in names), folder]:
            if os.stat(path).st_mtime > now - 30:
                os.utime(path, (now - seconds, now - seconds))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A projects folder: a session with its subagents/ folder, a flat-agent session, a stream-json capture."""
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    shutil.copytree(SAMPLES / "b-spotter-compaction", project, dirs_exist_ok=True)
    shutil.copyfile(SAMPLES / "b-ccl-thinking-sonnet45.jsonl", project / "thinking.jsonl")
    _age(tmp_path / "projects")
    return tmp_path / "projects"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONTEXTTRACE_", "CLAUDE_", "CODEX_"))}
    env.update(CONTEXTTRACE_CACHE_DIR=str(tmp_path / "store"), HOME=str(tmp_path / "home"), NO_COLOR="1",
               COLUMNS="160", TZ="UTC", PYTHONPATH=str(ROOT), CT_MODULES=str(tmp_path / "modules.txt"))  # fmt: skip
    env.update(extra)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path | str = ROOT, stdin: bytes = b"") -> tuple[tuple, bool]:
    """((stdout, stderr, exit code), whether it was replayed) of one whole process."""
    modules = Path(env["CT_MODULES"])
    modules.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", _MAIN, *argv], env=env, cwd=cwd, capture_output=True, input=stdin)
    loaded = set(modules.read_text().split())
    return (done.stdout, done.stderr, done.returncode), "typer" not in loaded


def _entries(tmp_path: Path) -> int:
    return replay.info(str(tmp_path / "store" / replay.DIR_NAME))[0]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a))
def test_replayed_output_is_byte_identical(tmp_path, corpus, args):
    """Each command's replay equals its run in full (stdout, stderr, exit code) and its run without the store."""
    env = _env(tmp_path)
    argv = ["context", *args, str(corpus)]
    plain, replayed = _run([*argv, "--no-cache"], env)
    assert not replayed and plain[2] == 0 and plain[0]
    first, replayed = _run(argv, env)
    assert not replayed and first == plain and _entries(tmp_path) == 1
    again, replayed = _run(argv, env)
    assert replayed and again == plain


def test_stderr_notes_and_exit_code_are_replayed(tmp_path, corpus):
    """A breached `--fail-on` (exit 3) with its notes on stderr, replayed in the order written."""
    env = _env(tmp_path)
    argv = ["context", "trace", str(corpus), "--fail-on", "peak>1000"]
    first, replayed = _run(argv, env)
    assert not replayed and first[2] == 3 and b"peak" in first[1]
    again, replayed = _run(argv, env)
    assert replayed and again == first


def _changed_then_refreshed(tmp_path: Path, corpus: Path, change, env: dict[str, str] | None = None) -> None:
    """After `change`, the run is not replayed and prints what a run without the store prints; the run after
    that is replayed again (the entry was refreshed)."""
    env = env or _env(tmp_path)
    argv = ["context", "trace", str(corpus), "--json"]
    _run(argv, _env(tmp_path))
    assert _run(argv, _env(tmp_path))[1]
    change()
    _age(corpus)
    after, replayed = _run(argv, env)
    assert not replayed
    assert after == _run([*argv, "--no-cache"], env)[0]
    assert _run(argv, env) == (after, True)


def test_a_changed_file_is_read_again(tmp_path, corpus):
    session = next(corpus.glob("-p/4d5611e5*.jsonl"))
    lines = session.read_bytes().splitlines(keepends=True)
    _changed_then_refreshed(tmp_path, corpus, lambda: session.write_bytes(b"".join(lines[:-40])))


def test_a_changed_subagent_file_is_read_again(tmp_path, corpus):
    agent = next(corpus.glob("-p/4d5611e5*/subagents/agent-a2898e3.jsonl"))
    lines = agent.read_bytes().splitlines(keepends=True)
    _changed_then_refreshed(tmp_path, corpus, lambda: agent.write_bytes(b"".join(lines[: len(lines) // 2])))


def test_a_new_file_in_a_scanned_folder_is_found(tmp_path, corpus):
    _changed_then_refreshed(
        tmp_path, corpus, lambda: shutil.copyfile(SAMPLES / "b-ccl-image-and-errors.jsonl", corpus / "-p" / "n.jsonl")
    )


def test_a_new_subagent_file_is_found(tmp_path, corpus):
    subagents = next(corpus.glob("-p/4d5611e5*/subagents"))
    source = next(subagents.glob("agent-a2898e3.jsonl"))
    _changed_then_refreshed(tmp_path, corpus, lambda: shutil.copyfile(source, subagents / "agent-b1111e1.jsonl"))


def test_a_new_subagents_folder_is_found(tmp_path, corpus):
    """A session that had no folder of its own gets `<session>/subagents/` with an agent file."""
    nested = corpus / "-p" / "thinking" / "subagents"

    def add() -> None:
        nested.mkdir(parents=True)
        shutil.copyfile(next(corpus.glob("-p/4d5611e5*/subagents/agent-a2898e3.jsonl")), nested / "agent-c2.jsonl")

    _changed_then_refreshed(tmp_path, corpus, add)


def test_a_changed_environment_variable_is_another_entry(tmp_path, corpus):
    _changed_then_refreshed(tmp_path, corpus, lambda: None, env=_env(tmp_path, TZ="Europe/Paris"))
    _changed_then_refreshed(tmp_path, corpus, lambda: None, env=_env(tmp_path, CLAUDE_CONFIG_DIR=str(tmp_path)))


def test_another_folder_and_another_version_are_other_entries(tmp_path, corpus):
    env = _env(tmp_path)
    argv = ["context", "usage", str(corpus), "--json"]
    first, _ = _run(argv, env)
    assert _run(argv, env) == (first, True)
    assert _run(argv, env, cwd=tmp_path) == (first, False)
    assert _run(argv, _env(tmp_path, CT_VERSION="0.0.0-other")) == (first, False)
    assert _run(argv, env) == (first, True)


def test_a_relative_bound_stdin_and_no_cache_are_never_replayed(tmp_path, corpus):
    env = _env(tmp_path)
    sample = (SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes()
    for argv, stdin in [
        (["context", "trace", str(corpus), "--json", "--since", "3000d"], b""),
        (["context", "trace", str(corpus), "--json", "--until=today"], b""),
        (["context", "trace", "-", "--json"], sample),
        (["context", "trace", str(corpus), "--json", "--no-cache"], b""),
    ]:
        first, replayed = _run(argv, env, stdin=stdin)
        assert first[2] == 0 and first[0] and not replayed
        assert _run(argv, env, stdin=stdin) == (first, False)
    assert _entries(tmp_path) == 0


def test_default_roots_appearing_are_found(tmp_path):
    """Without a path: a session root that did not exist (`~/.claude/projects`) appearing is found."""
    home = tmp_path / "home"
    home.mkdir()
    _age(home)
    env = _env(tmp_path)
    argv = ["context", "usage", "--json", "--allow-empty"]
    first, replayed = _run(argv, env)
    assert not replayed and first[2] == 0
    assert _run(argv, env) == (first, True)
    project = home / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    shutil.copyfile(SAMPLES / "b-ccl-thinking-sonnet45.jsonl", project / "t.jsonl")
    _age(home)
    after, replayed = _run(argv, env)
    assert not replayed and after != first and b"claude-sonnet-4-5" in after[0]


def test_replayable_command_lines():
    ok = ["context", "trace", "runs", "--json", "-q", "--since", "2026-01-01", "--window=200k"]
    assert replay.replayable(ok)
    for bad in (
        ["context", "trace", "runs", "-o", "out.txt"],
        ["context", "trace", "runs", "--output=out.txt"],
        ["context", "trace", "runs", "--db", "h.sqlite"],
        ["context", "trace", "runs", "--engine", "dask"],
        ["context", "trace", "runs", "--help"],
        ["context", "trace", "s3://bucket/runs"],
        ["context", "trace", "runs/*.jsonl"],
        ["context", "trace", "runs", "--since=12h"],
        ["context", "compare", "runs"],
        ["cache", "info"],
    ):
        assert not replay.replayable(bad), bad


@pytest.mark.parametrize(
    "value", ["7d", "12h", "2w", "today", "yesterday", "2026-02-12", "20260212", "2026-02-12T16:00"]
)
def test_clock_relative_is_what_parse_when_reads_from_the_clock(value):
    """`clock_relative` holds exactly for the values whose bound moves with the clock."""
    utc = parse_timezone("UTC")
    moved = parse_when(value, utc, now_ms=1_770_000_000_000) != parse_when(value, utc, now_ms=1_780_000_000_000)
    assert replay.clock_relative(value) is moved


def test_cache_info_and_clear_cover_the_replayed_outputs(tmp_path, corpus):
    env = _env(tmp_path)
    _run(["context", "trace", str(corpus), "--json"], env)
    assert _entries(tmp_path) == 1
    runner = CliRunner()
    info = runner.invoke(app, ["cache", "info"], env={"CONTEXTTRACE_CACHE_DIR": env["CONTEXTTRACE_CACHE_DIR"]})
    assert "replayed outputs: 1 (" in info.stdout
    cleared = runner.invoke(app, ["cache", "clear"], env={"CONTEXTTRACE_CACHE_DIR": env["CONTEXTTRACE_CACHE_DIR"]})
    assert cleared.exit_code == 0
    assert _entries(tmp_path) == 0 and not (tmp_path / "store" / replay.DIR_NAME).exists()


def test_entries_are_bounded(tmp_path, corpus, monkeypatch):
    """Past `MAX_ENTRIES`, the least recently used entry goes."""
    env = _env(tmp_path)
    argvs = [["context", c, str(corpus), "--json"] for c in ("trace", "usage", "tools")]
    for argv in argvs:
        _run(argv, env)
    folder = tmp_path / "store" / replay.DIR_NAME
    assert _entries(tmp_path) == 3
    monkeypatch.setattr(replay, "MAX_ENTRIES", 2)
    oldest = min(folder.iterdir(), key=lambda p: p.stat().st_mtime_ns)
    replay._prune(str(folder))
    assert _entries(tmp_path) == 2 and not oldest.exists()


def test_a_damaged_or_cut_entry_is_a_miss(tmp_path, corpus):
    """A head that fails its CRC, or an entry shorter or longer than its output's spans, is a miss (and
    the run in full keeps it again)."""
    env = _env(tmp_path)
    argv = ["context", "tools", str(corpus), "--json"]
    first, _ = _run(argv, env)
    [entry] = (tmp_path / "store" / replay.DIR_NAME).iterdir()
    whole = entry.read_bytes()
    flipped = bytearray(whole)
    flipped[replay._HEAD + 20] ^= 0xFF
    for damaged in (bytes(flipped), whole[:-1], whole + b"x"):
        entry.write_bytes(damaged)
        assert _run(argv, env) == (first, False)
        assert entry.read_bytes() == whole and _run(argv, env) == (first, True)


#: The options of the replayed commands whose runs are never replayed (they write files, read elsewhere, or
#: bypass the store).
REFUSED = {"--no-cache", "--output", "--db", "--label", "--engine", "--scheduler", "--help"}


@pytest.mark.parametrize("command", sorted(replay.COMMANDS))
def test_every_option_is_allowed_or_refused(command):
    """Each option a replayed command has is either replayed (`ALLOWED_OPTIONS`) or named as refused here: an
    option added later fails this test until someone decides whether its runs may be replayed."""
    import re

    shown = CliRunner().invoke(app, ["context", command, "--help"], env={"COLUMNS": "200"}).stdout
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", shown))
    assert options and options - replay.ALLOWED_OPTIONS - REFUSED == set()
    assert not REFUSED & replay.ALLOWED_OPTIONS


def test_a_path_through_a_symlinked_folder_and_up_is_stamped_as_opened(tmp_path):
    """`link/../x.jsonl` opens the x.jsonl beside the folder `link` points to, not `./x.jsonl`: a change to
    that file is seen (the stamp follows the path as the system resolves it)."""
    real, work = tmp_path / "real", tmp_path / "work"
    (real / "dir").mkdir(parents=True)
    work.mkdir()
    shutil.copyfile(SAMPLES / "c-codex-0.65-compaction.jsonl", real / "x.jsonl")
    (work / "link").symlink_to(real / "dir")
    _age(tmp_path)
    env = _env(tmp_path)
    argv = ["context", "trace", "link/../x.jsonl", "--json"]
    _run(argv, env, cwd=work)
    assert _run(argv, env, cwd=work)[1]
    lines = (SAMPLES / "c-codex-0.65-compaction.jsonl").read_bytes().splitlines(keepends=True)
    (real / "x.jsonl").write_bytes(b"".join(lines[:40]))
    _age(tmp_path)
    after, replayed = _run(argv, env, cwd=work)
    assert not replayed and after == _run([*argv, "--no-cache"], env, cwd=work)[0]
    assert b'"calls":5' in after[0].replace(b" ", b"")


def test_a_file_rewritten_while_the_run_reads_it_is_not_kept(tmp_path, corpus):
    """A file rewritten during the run and its modification time set back (`cp -p`, `tar x`) has a ctime
    after the run began: that run's output is not kept. The same run without the rewrite is kept."""
    target = corpus / "-p" / "thinking.jsonl"
    code = (
        "import os, sys\nfrom contexttrace.storage import replay\n"
        "target, rewrite = sys.argv[1], sys.argv[2] == '1'\n"
        "def run():\n"
        f"    replay.note_paths([{str(corpus)!r}]); os.scandir(os.path.dirname(target)).close()\n"
        "    sys.stdout.write(str(len(open(target, 'rb').read())) + '\\n')  # the file as it was\n"
        "    if rewrite:\n"
        "        st = os.stat(target)\n"
        "        open(target, 'ab').write(b'{}'); os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))\n"
        f"replay.replay_or_run(run, ['context', 'trace', {str(corpus)!r}, '--json'])\n"
    )
    for rewrite, kept in (("1", 0), ("0", 1)):
        done = subprocess.run([sys.executable, "-c", code, str(target), rewrite], env=_env(tmp_path), cwd=ROOT,
                              capture_output=True)  # fmt: skip
        assert done.returncode == 0 and _entries(tmp_path) == kept, done.stderr


def test_a_working_folder_deleted_under_the_shell_runs_in_full(tmp_path):
    """`os.getcwd()` fails in a folder deleted under the shell: the command runs as without the store's
    replay (exit 0, its output), nothing kept."""
    gone = tmp_path / "gone"
    gone.mkdir()
    env = _env(tmp_path)
    code = (
        f"import os; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\n"
        "import sys; sys.argv = ['contexttrace', 'context', 'trace', "
        f"{str(SAMPLES / 'c-codex-0.41-small.jsonl')!r}, '--json']\n"
        "from contexttrace.cli import main\nmain()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, cwd=tmp_path)
    plain = subprocess.run(
        [sys.executable, "-m", "contexttrace", "context", "trace", str(SAMPLES / "c-codex-0.41-small.jsonl"),
         "--json", "--no-cache"], env=env, capture_output=True, cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, plain.stdout) and b"Traceback" not in done.stderr


def test_a_reader_that_closes_the_pipe_early_leaves_the_exit_code_and_keeps_nothing(tmp_path, corpus):
    """`contexttrace ... | head`: the reader closes stdout after a few bytes; the run ends with its own exit
    code (0, as without the store) and its cut output is not kept."""
    env = _env(tmp_path)
    argv = [sys.executable, "-c", _MAIN, "context", "usage", str(corpus), str(SAMPLES), "--json", "--breakdown"]
    proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    proc.stderr.read()
    assert proc.wait() == 0 and _entries(tmp_path) == 0


def test_nothing_is_kept_where_an_entry_could_not_be_replayed(tmp_path, corpus):
    """Without `os.pread` (Windows) a kept entry could never be read back: no entry is written. The same run
    with it keeps one."""
    code = (
        "import os, sys\nif sys.argv[1] == '0':\n    del os.pread\n"
        "sys.argv = ['contexttrace', 'context', 'trace', sys.argv[2], '--json']\n"
        "from contexttrace.cli import main\nmain()\n"
    )
    for has_pread, kept in (("0", 0), ("1", 1)):
        done = subprocess.run([sys.executable, "-c", code, has_pread, str(corpus)], env=_env(tmp_path), cwd=ROOT,
                              capture_output=True)  # fmt: skip
        assert done.returncode == 0 and _entries(tmp_path) == kept, done.stderr[-500:]
