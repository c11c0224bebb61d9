"""contexttrace.analysis.placement: result classification, the file a tool use touches, and the window's boundaries
(shared by `context sources`, `context files` and `context tools`), on hand-built traces and the samples."""

from __future__ import annotations

import pytest

from contexttrace.analysis.placement import (
    RESULT_SOURCES,
    Boundary,
    boundaries,
    file_of_tool_use,
    left_context,
    normalize_path,
    removed_by,
    result_source,
)
from contexttrace.discover.local import find_traces
from contexttrace.reading import read_trace

from ..conftest import SAMPLES, assistant, result


@pytest.mark.parametrize(
    ("tool", "read_path", "source"),
    [
        pytest.param("Read", None, "files", id="read"),
        pytest.param("Bash", "/p/a.py", "files", id="bash-cat-one-path"),
        pytest.param("Bash", None, "bash", id="bash-other"),
        pytest.param("Bash", "", "bash", id="bash-empty-read-path"),
        pytest.param("mcp__github__get_issue", None, "mcp", id="mcp"),
        pytest.param("Task", None, "agent", id="task"),
        pytest.param("Agent", None, "agent", id="agent"),
        pytest.param("WebFetch", None, "web", id="webfetch"),
        pytest.param("WebSearch", None, "web", id="websearch"),
        pytest.param("Grep", None, "other_results", id="grep"),
        pytest.param("Edit", None, "other_results", id="edit"),
        pytest.param(None, None, "other_results", id="no-call"),
    ],
)
def test_result_source_of_each_tool(tool, read_path, source):
    """Each tool lands in spec 001's row; every answer is one of RESULT_SOURCES."""
    assert result_source(tool, read_path) == source
    assert source in RESULT_SOURCES


@pytest.mark.parametrize(
    ("tool", "input_path", "read_path", "cwd", "expected"),
    [
        pytest.param("Read", "/abs/a.py", None, "/p", "/abs/a.py", id="absolute"),
        pytest.param("Read", "src/a.py", None, "/p/q", "/p/q/src/a.py", id="relative"),
        pytest.param("Edit", "../b.py", None, "/p/q", "/p/b.py", id="dotdot"),
        pytest.param("Write", "C:\\Users\\u\\x.py", None, None, "C:/Users/u/x.py", id="windows"),
        pytest.param("MultiEdit", "c:/w/./x.py", None, None, "C:/w/x.py", id="lower-drive"),
        pytest.param("NotebookEdit", "n.ipynb", None, "D:\\w", "D:/w/n.ipynb", id="windows-cwd"),
        pytest.param("Bash", None, "notes.txt", "/p", "/p/notes.txt", id="bash-reader"),
        pytest.param("Bash", "/ignored", None, "/p", None, id="bash-no-reader"),
        pytest.param("Grep", "/p/x", None, "/p", None, id="not-a-file-tool"),
        pytest.param("Read", None, None, "/p", None, id="no-path"),
        pytest.param("Read", "a.py", None, None, "a.py", id="relative-no-cwd"),
    ],
)
def test_file_of_tool_use(tool, input_path, read_path, cwd, expected):
    """The one path a tool use touches, resolved and normalised."""
    assert file_of_tool_use(tool, input_path, read_path, cwd) == expected


def test_normalize_path_is_idempotent():
    for p in ("/a/b/../c", "C:\\x\\y", "rel/./p", "d:", "/"):
        once = normalize_path(p, "/cwd")
        assert normalize_path(once, "/cwd") == once


def _system(subtype, **extra):
    return {"type": "system", "subtype": subtype, "sessionId": "s", **extra}


def _command(text="<command-name>/clear</command-name>"):
    return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": text}}


def _trace(write, *records):
    (trace,) = read_trace(write("t.jsonl", *records))
    return trace


def test_boundaries_of_each_kind(write):
    """Calls (prompt = input + cache read): 1000, 1200, [microcompaction clearing t1] 900, 950,
    [compaction] 400, 600, [a /clear command] 300 (−50 %: clear), 310, 200 (−35 %, no marker: drop),
    150 (−25 %: no boundary). Seqs: one per line, from 1."""
    t = _trace(
        write,
        assistant("m1", 0, 0, 1000, tools=[("t1", "Read", {"file_path": "/a"})]),  # seq 1, call 1
        result("t1", "x" * 40),  # 2
        assistant("m2", 0, 0, 1200, tools=[("t2", "Bash", {"command": "ls"})]),  # 3, call 2
        result("t2", "y"),  # 4
        _system("microcompact_boundary", microcompactMetadata={"compactedToolIds": ["t1"], "tokensSaved": 300}),  # 5
        assistant("m3", 0, 0, 900),  # 6, call 3
        assistant("m4", 0, 0, 950),  # 7, call 4
        _system("compact_boundary", compactMetadata={"trigger": "manual", "preTokens": 960}),  # 8
        assistant("m5", 0, 0, 400),  # 9, call 5
        assistant("m6", 0, 0, 600),  # 10, call 6
        _command(),  # 11
        assistant("m7", 0, 0, 300),  # 12, call 7
        assistant("m8", 0, 0, 310),  # 13, call 8
        assistant("m9", 0, 0, 200),  # 14, call 9
        assistant("m10", 0, 0, 150),  # 15, call 10
    )
    got = boundaries(t)
    assert got == [
        Boundary("microcompaction", 5, 3, None, 900 - 1200, frozenset({"t1"})),
        Boundary("compaction", 8, 5, None, 400 - 950, None),
        Boundary("clear", 11, 7, None, 300 - 600, None),  # at the /clear line itself
        Boundary("drop", 14, 9, None, 200 - 310, None),
    ]
    # t1 left at the microcompaction, t2 at the compaction; a result after the drop stays
    assert removed_by("t1", 2, got).kind == "microcompaction"
    assert removed_by("t2", 4, got).kind == "compaction"
    assert removed_by(None, 4, got).kind == "compaction"
    assert removed_by("t9", 13, got).kind == "drop"
    assert removed_by("t9", 14, got) is None


@pytest.mark.parametrize(
    ("after", "found"),
    [
        pytest.param(131_068, True, id="exactly-30%"),  # 10 · 131,068 = 1,310,680 = 7 · 187,240
        pytest.param(131_069, False, id="one-token-short"),
        pytest.param(70, True, id="70-of-100"),
        pytest.param(71, False, id="71-of-100"),
    ],
)
def test_a_drop_of_exactly_30_percent_is_a_boundary(write, after, found):
    """Spec 001's 30 % in integers (a review's finding): 187,240 → 131,068 is a drop of exactly
    30 % (56,172 = 0.3 × 187,240), which `prompt <= 0.7 * prev` in floats missed; one token more is not."""
    before = 187_240 if after > 1000 else 100
    t = _trace(write, assistant("m1", 0, 0, before), assistant("m2", 0, 0, after))
    expected = [Boundary("drop", 2, 2, None, after - before, None)] if found else []
    assert boundaries(t) == expected


def test_a_clear_is_a_boundary_whatever_the_drop(write):
    """A `/clear` line is a boundary by its name (a review's finding): calls 25,030 → [/clear]
    20,005 (−20 %, below 30 %) → [/clear again, then the prompt grows] 20,500. The boundary sits at the
    /clear line (seq 3 and 5), its call is the next one, Δcontext that call's prompt less the previous
    one's (20,005 − 25,030 = −5,025; 20,500 − 20,005 = 495)."""
    t = _trace(
        write,
        assistant("m1", 0, 5020, 20010),  # seq 1, call 1
        _command("<command-message>clear</command-message>\n<command-name>/clear</command-name>"),  # 2
        _command(),  # 3: the command's own line, as Claude Code writes it after the message
        assistant("m2", 5, 0, 20000),  # 4, call 2
        _command(),  # 5
        assistant("m3", 0, 0, 20500),  # 6, call 3
    )
    assert boundaries(t) == [
        Boundary("clear", 2, 2, None, -5025, None),
        Boundary("clear", 3, 2, None, -5025, None),
        Boundary("clear", 5, 3, None, 495, None),
    ]


def test_other_slash_commands_never_make_a_clear(write):
    """A `/model` or `/cost` before an unmarked drop of 40 % leaves it a ``drop``; a /clear before the
    thread's first call clears nothing the trace shows: no boundary."""
    t = _trace(
        write,
        _command(),  # seq 1: before any call
        assistant("m1", 0, 0, 1000),  # 2, call 1
        _command("<command-name>/model</command-name>"),  # 3
        _command("<command-name>/cost</command-name>"),  # 4
        assistant("m2", 0, 0, 600),  # 5, call 2: −40 %
    )
    assert boundaries(t) == [Boundary("drop", 5, 2, None, -400, None)]


def test_boundaries_of_an_empty_or_unmeasured_thread(write):
    """No calls: no boundary; an unreadable usage (prompt 0) is skipped, never a 100 % drop; a subagent's own
    thread is asked by its id."""
    t = _trace(
        write,
        assistant("m1", 0, 0, 1000),
        assistant("m2", 0, 0, 0),
        assistant("m3", 0, 0, 990),
    )
    assert boundaries(t) == []
    assert boundaries(t, "no-such-thread") == []


def test_a_marker_after_the_last_call_has_no_call(write):
    t = _trace(write, assistant("m1", 0, 0, 1000), _system("compact_boundary", compactMetadata={"preTokens": 1}))
    assert boundaries(t) == [Boundary("compaction", 2, None, None, None, None)]


def test_left_context_for_tools():
    """`context tools`' rule: the first compaction after the result, or the microcompaction that cleared it."""
    assert left_context(3, None, [2, 8]) == 8
    assert left_context(3, 5, [2, 8]) == 5
    assert left_context(3, 9, [2, 8]) == 8
    assert left_context(9, None, [2, 8]) is None


def test_compaction_sample_boundary_at_call_62():
    """b-spotter-compaction: one compaction, first call after it is call 62 (164,831 → 36,081 tokens)."""
    (source,) = [s for s in find_traces([str(SAMPLES / "b-spotter-compaction")])]
    (trace,) = read_trace(source.path, source.subagents)
    (b,) = boundaries(trace)
    assert (b.kind, b.call, b.delta, b.cleared) == ("compaction", 62, 36081 - 164831, None)
    assert b.ts_ms is not None


@pytest.mark.parametrize(
    "name",
    ["b-ccl-image-and-errors.jsonl", "b-ccl-thinking-sonnet45.jsonl", "a-ralph-subagent-opus45-haiku45.jsonl"],
)
def test_samples_without_boundaries(name):
    """No sample but the compaction one drops by 30 % or more between calls."""
    for trace in read_trace(str(SAMPLES / name)):
        assert boundaries(trace) == []
