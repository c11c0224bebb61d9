"""Reading a large transcript in two parts (`reading/claude/split.py`: `read_tail` + `read_trace(tail=...)`):
it must give exactly what one plain read gives; and a tool-result line's `toolUseResult` copy, skipped
unbuilt, loses nothing."""

from __future__ import annotations

import hashlib
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from contexttrace import reading as reader
from contexttrace.discover.local import find_traces
from contexttrace.errors import TraceFormatError
from contexttrace.reading import read_tail, read_trace, split_point
from contexttrace.reading.claude import api as claude_api
from contexttrace.reading.claude import split
from contexttrace.run.runner import _sizes, _splits, analyze

from ..conftest import SAMPLES, assistant, jsonl, result


def _facts(trace: reader.Trace) -> dict[str, Any]:
    """Everything a trace holds, tables as plain columns."""
    out = dict(trace.__dict__)
    out["tables"] = {k: (v if isinstance(v, dict) else v.to_dict(as_series=False)) for k, v in trace.tables.items()}
    return out


def _line_starts(path: str) -> list[int]:
    data = Path(path).read_bytes()
    return [i + 1 for i, byte in enumerate(data) if byte == 10 and i + 1 < len(data)]


SESSIONS = [
    "b-spotter-compaction",  # 2.1.39: subagent and compaction files, a compaction, split assistant lines
    "b-ccl-flat-agent-files-v2037",  # flat agent files, failed tools
    "b-ccv-inline-sidechains-v1098.jsonl",  # CLI 1.0.x inline sidechains: threads found from uuid chains
    "b-ccl-agent-teams-opus47",  # 2.1.114: keys after the toolUseResult copy
]


@pytest.mark.parametrize("name", SESSIONS)
def test_two_parts_read_like_one(name):
    """At 25 cut points spread over each real session, with its subagent files read by the tail's reader
    or by the head's, and the tail sent through pickle as to a worker: the same trace as one read."""
    [source] = find_traces([str(SAMPLES / name)])
    whole = [_facts(t) for t in read_trace(source.path, source.subagents)]
    starts = _line_starts(source.path)
    cuts = starts[:: max(1, len(starts) // 25)]
    assert len(cuts) >= 20
    for k, start in enumerate(cuts):
        with_subagents = k % 2 == 0
        tail = read_tail(source.path, start, source.subagents if with_subagents else ())
        assert tail is not None
        tail = pickle.loads(pickle.dumps(tail))
        got = [_facts(t) for t in read_trace(source.path, source.subagents, tail=tail)]
        assert got == whole, (name, start)


@pytest.mark.parametrize(("words", "inputs"), [(False, True), (False, False)], ids=["trace", "usage"])
def test_two_parts_read_like_one_in_a_reading_profile(words, inputs):
    """A tail read with `context trace`'s or `usage`'s profile (no path words; no inputs either) merges into
    a head read with the same: the trace one read with that profile gives. A tail read with every column is
    not merged into a head read without (the whole file is read here, with the head's profile)."""
    [source] = find_traces([str(SAMPLES / SESSIONS[0])])
    whole = [_facts(t) for t in read_trace(source.path, source.subagents, words=words, inputs=inputs)]
    assert whole != [_facts(t) for t in read_trace(source.path, source.subagents)]  # the profile leaves columns null
    starts = _line_starts(source.path)
    merged = []
    real_head = split.read_head

    def spy(main, tail, *profile):
        got = real_head(main, tail, *profile)
        merged.append(got is not None)
        return got

    for start in starts[:: max(1, len(starts) // 8)]:
        for tail_profile in ((words, inputs), (True, True)):
            tail = read_tail(source.path, start, source.subagents, False, *tail_profile)
            tail = pickle.loads(pickle.dumps(tail))
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(claude_api, "read_head", spy)
                got = [
                    _facts(t) for t in read_trace(source.path, source.subagents, tail=tail, words=words, inputs=inputs)
                ]
            assert got == whole, (start, tail_profile)
            assert merged.pop() is (tail_profile == (words, inputs))


def test_stream_json_is_never_read_in_two_parts():
    """A stream-json file's tail says so (None) and its head too: the file is read whole, runs intact."""
    path = str(SAMPLES / "a-ralph-27runs-with-separators.jsonl")
    starts = _line_starts(path)
    assert read_tail(path, starts[len(starts) // 2]) is None
    transcript_tail = read_tail(str(next(SAMPLES.glob("b-spotter-compaction/*.jsonl"))), 0)
    assert transcript_tail is not None
    whole = [_facts(t) for t in read_trace(path)]
    # a transcript's tail handed to a stream-json head is ignored: the head reads the whole file
    got = [_facts(t) for t in read_trace(path, tail=reader.TailPart(starts[3], transcript_tail.builder, 1))]
    assert got == whole
    assert len(got) == 27


def test_a_call_straddling_the_cut_is_one_call(write):
    """A call written over three lines, cut between them: one call, its lines counted, the kept line the
    last of highest output, and a bad cache split counted only where a whole read would take it (B27)."""
    split_bad = {"ephemeral_5m_input_tokens": -5, "ephemeral_1h_input_tokens": 0}
    lines = [
        assistant("m1", 10, 20, 30, 7, tools=[("t1", "Read", {"file_path": "/a"})], timestamp="2026-01-01T00:00:01Z"),
        # lower output: a whole read keeps line 1 and never reads this line's (bad) split
        assistant("m1", 10, 20, 30, 3, timestamp="2026-01-01T00:00:02Z", cache_creation=1),
        assistant("m1", 10, 20, 30, 7, tools=[("t1", "Read", {"file_path": "/a"})], timestamp="2026-01-01T00:00:03Z"),
        result("t1", "text", timestamp="2026-01-01T00:00:04Z"),
        assistant("m2", 1, 2, 3, 4, timestamp="2026-01-01T00:00:05Z"),
    ]
    lines[1]["message"]["usage"]["cache_creation"] = split_bad
    lines[2]["message"]["stop_reason"] = "tool_use"  # a tie on output_tokens: the later line is kept
    lines[2]["requestId"] = "req-last"
    path = write("s.jsonl", *lines)
    [whole] = read_trace(path)
    assert whole.warnings == []  # the bad split is on a line that is never kept
    assert whole.calls["n_lines"].to_list() == [3, 1]
    assert whole.calls["stop_reason"].to_list()[0] == "tool_use"
    assert whole.calls["request_id"].to_list()[0] == "req-last"
    for start in _line_starts(path):
        tail = pickle.loads(pickle.dumps(read_tail(path, start)))
        [got] = read_trace(path, tail=tail)
        assert _facts(got) == _facts(whole), start


@pytest.mark.parametrize("inputs", [True, False], ids=["inputs", "no-inputs"])
def test_a_part_read_in_a_pickled_tail_is_decided_as_in_one_read(write, inputs):
    """A Read that returned part of a file is capped unless its input set a `limit` (`content.read_caps`),
    unknown when read without the inputs: the same when its result is in a tail sent through pickle as to a
    worker (the pickle copies the part-read marker: `build` and `read_caps` compare it by equality)."""
    part = {"type": "text", "file": {"filePath": "/a", "content": "x", "numLines": 2, "startLine": 1, "totalLines": 9}}
    lines = []
    for k, limit in enumerate((None, 2)):
        read = {"file_path": "/a"} if limit is None else {"file_path": "/a", "limit": limit}
        stamp = f"2026-01-01T00:00:0{2 * k}Z"
        lines.append(assistant(f"m{k}", 1, 2, 3, tools=[(f"t{k}", "Read", read)], timestamp=stamp))
        lines.append(result(f"t{k}", "x", timestamp=f"2026-01-01T00:00:0{2 * k + 1}Z", toolUseResult=part))
    path = write("s.jsonl", *lines)
    [whole] = read_trace(path, inputs=inputs)
    assert whole.tool_results["capped"].to_list() == ([True, False] if inputs else [None, None])
    for start in _line_starts(path):
        tail = pickle.loads(pickle.dumps(read_tail(path, start, inputs=inputs)))
        [got] = read_trace(path, tail=tail, inputs=inputs)
        assert _facts(got) == _facts(whole), start


def test_bad_lines_on_both_sides_of_the_cut_are_named_as_in_one_read(write):
    """The first `MAX_LINE_NOTES` bad lines of the file are named with their line numbers, the rest
    counted, wherever the cut falls."""
    good = [assistant(f"m{i}", 1, 2, 3, timestamp=f"2026-01-01T00:00:{i:02d}Z") for i in range(8)]
    lines: list[Any] = []
    for i, rec in enumerate(good):
        lines.append(rec)
        if i % 2:
            lines.append("not json")
    path = write("s.jsonl", *lines)
    [whole] = read_trace(path)
    assert whole.skipped_lines == 4
    assert [n.line for n in whole.line_notes] == [3, 6, 9]
    for start in _line_starts(path):
        [got] = read_trace(path, tail=read_tail(path, start))
        assert _facts(got) == _facts(whole), start


def test_split_point_balances_head_and_tail(tmp_path, monkeypatch):
    """The cut falls on a line start where the head's bytes equal the tail's weighted bytes plus the
    subagent files' (and no cut for a small file)."""
    path = tmp_path / "s.jsonl"
    line = jsonl(assistant("m", 1, 2, 3)) * 1000
    path.write_bytes(line)
    assert split_point(str(path)) is None  # below SPLIT_MIN_BYTES
    monkeypatch.setattr(split, "SPLIT_MIN_BYTES", 1)
    at = split_point(str(path))
    size = len(line)
    width = len(jsonl(assistant("m", 1, 2, 3)))
    assert at is not None and at % width == 0
    assert abs(at - reader.TAIL_BYTE_COST * size / (1 + reader.TAIL_BYTE_COST)) <= width
    later = split_point(str(path), after_bytes=size // 2)
    assert later is not None and later > at
    assert split_point(str(path), after_bytes=size) is None


def test_analyze_reads_a_large_session_in_two_parts(monkeypatch):
    """With the size threshold lowered, `analyze` cuts the session and a worker reads its tail and
    subagent files: the reports equal those of a one-process read."""
    session = str(SAMPLES / "b-spotter-compaction")
    serial = analyze([session], window=200_000, workers=1)
    monkeypatch.setattr(split, "SPLIT_MIN_BYTES", 1)
    found = find_traces([session])
    assert list(_splits(found, [_sizes(s) for s in found])) == [0]
    merged = []
    real_head = split.read_head

    def spy(main, tail, *profile):
        got = real_head(main, tail, *profile)
        merged.append((got is not None, profile))
        return got

    monkeypatch.setattr(claude_api, "read_head", spy)
    parallel = analyze([session], window=200_000, workers=2)
    assert [r.__dict__ for r in parallel.reports] == [r.__dict__ for r in serial.reports]
    assert parallel.reports[0].calls == 139
    # the worker read the tail with the report's profile (no path words), so the head merged it
    assert merged == [(True, (False, True))]


# -- the toolUseResult copy ----------------------------------------------------------------------------------


def _result_line(**extra: Any) -> dict[str, Any]:
    """A 2.1.x tool-result line: the result, then its `toolUseResult` copy, then whatever `extra` adds."""
    rec = {"parentUuid": "p", "isSidechain": False, **result("t1", "x" * 50)}
    rec["uuid"] = "u1"
    rec["timestamp"] = "2026-01-01T00:00:00Z"
    rec["toolUseResult"] = {"stdout": "x" * 50, "interrupted": False}
    rec.update(extra)
    return rec


def test_the_result_copy_is_skipped_unbuilt():
    """A transcript writes each tool result twice (`message.content` and `toolUseResult`): the typed decoder
    keeps of the copy only a subagent's id and duration, its type and cap flags (Grep's applied limit and
    counts, a Read's line counts), never its text (a Read's `file.content` neither)."""
    from contexttrace.reading.claude.records import FileLines, ResultCopy, decode

    rec = decode(orjson.dumps(_result_line(toolUseResult={"stdout": "y" * 1000, "agentId": "a1"})) + b"\n")
    assert type(rec.toolUseResult) is ResultCopy
    fields = ("agentId", "totalDurationMs", "type", "truncated", "truncatedByTokenCap", "appliedLimit", "mode",
              "numLines", "numFiles", "file", "isAsync", "status")  # fmt: skip
    assert rec.toolUseResult.__struct_fields__ == fields
    assert rec.toolUseResult.agentId == "a1"
    read = {"type": "text", "file": {"filePath": "/a", "content": "z" * 1000, "numLines": 3, "startLine": 1}}
    rec = decode(orjson.dumps(_result_line(toolUseResult=read)) + b"\n")
    assert (
        FileLines.__struct_fields__ == ("numLines", "startLine", "totalLines") and rec.toolUseResult.file.numLines == 3
    )


@pytest.mark.parametrize(
    ("after", "check"),
    [
        ({"toolDenialKind": "user"}, lambda t: t.tool_results["denied"].to_list() == [True]),
        ({"version": "9.9.9", "cwd": "/late"}, lambda t: (t.cli_version, t.cwd) == ("9.9.9", "/late")),
        (
            {"toolUseResult": {"agentId": "a1", "totalDurationMs": 5}},
            lambda t: t.tool_results["agent_id"].to_list() == ["a1"],
        ),
    ],
    ids=["denial", "envelope", "agent"],
)
def test_keys_after_the_copy_are_read(write, after, check):
    """Keys written after the copy (2.1.114 writes the envelope there) are read like any other."""
    line = _result_line()
    del line["sessionId"]
    line.update(after)
    [trace] = read_trace(write("s.jsonl", assistant("m1", 1, 2, 3, tools=[("t1", "Bash", {"command": "ls"})]), line))
    assert check(trace)


def test_the_copy_key_is_never_taken_from_another_spelling_or_depth(write):
    """`toolUseResult` present (even a string "Error: ...") hides `tool_use_result`; a `toolUseResult` key
    nested in the message is not the copy; a copy written with JSON whitespace is read."""
    early = {"tool_use_result": {"agentId": "B", "totalDurationMs": 5}}
    hidden = _result_line(**early, toolUseResult="Error: x")
    nested = _result_line()
    nested["message"]["x"] = {"toolUseResult": {"agentId": "N"}}
    del nested["toolUseResult"]
    spaced = orjson.dumps({k: v for k, v in _result_line().items() if k != "toolUseResult"})[:-1]
    spaced += b',"toolUseResult":{"agentId" :\t"a1"}}'
    for line, agent in ((hidden, None), (nested, None), (spaced, "a1")):
        [trace] = read_trace(write("s.jsonl", assistant("m1", 1, 2, 3), line))
        assert trace.tool_results["agent_id"].to_list() == [agent]


def test_uuidless_sidechain_roots_are_read_whole(write):
    """Inline sidechain lines whose thread a merge could not rename (a root without a uuid) make the
    tail unmergeable: the file is read whole, with the same threads."""
    side = {"isSidechain": True, "timestamp": "2026-01-01T00:00:00Z"}
    lines = [
        {**assistant("m0", 1, 2, 3), "uuid": "A0", "parentUuid": None, **side, "isSidechain": False},
        {**assistant("m1", 1, 2, 3), "uuid": "A", "parentUuid": "A0", **side},
        {**assistant("m2", 1, 2, 4), "parentUuid": "A", **side},  # no uuid
        {**assistant("m3", 1, 2, 5), "uuid": "C", "parentUuid": "nowhere", **side},
        {**assistant("m4", 1, 2, 6), "parentUuid": None, **side},
    ]
    path = write("s.jsonl", *lines)
    [whole] = read_trace(path)
    assert whole.calls["thread"].to_list() == ["main", "sidechain-A", "sidechain-A", "sidechain-C", "sidechain"]
    for start in _line_starts(path):
        [got] = read_trace(path, tail=read_tail(path, start))
        assert _facts(got) == _facts(whole), start


def test_a_main_file_that_is_no_transcript_fails_as_in_one_read(tmp_path):
    """Subagent rows merged from the tail never make a main file of no known format readable."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(jsonl({"note": 1}, {"note": 2}, {"note": 3}))
    sub = tmp_path / "s" / "subagents" / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_bytes(jsonl(assistant("m1", 1, 2, 3, sidechain=True)))
    [source] = find_traces([str(tmp_path)])
    assert source.subagents
    with pytest.raises(TraceFormatError):
        read_trace(source.path, source.subagents)
    for start in _line_starts(source.path):
        tail = read_tail(source.path, start, source.subagents)
        with pytest.raises(TraceFormatError):
            read_trace(source.path, source.subagents, tail=tail)


@pytest.mark.parametrize(("first", "second"), [("same text", "same text"), ("", [])], ids=["text", "no-text"])
def test_identical_results_on_both_sides_of_the_cut_match_when_the_worker_is_started_afresh(
    monkeypatch, write, first, second
):
    """A worker started as a new interpreter (no fork: macOS, or a parent running threads) hashes with
    another seed than this process: results read on the two sides of the cut are still compared by text
    (`repeat_same_result`), as in a one-process read. A result whose content is "" and one whose content
    is [] both have no text: `content_hash` 0 whichever hash is used (a reviewer's case: 1 against 0)."""
    from contexttrace.run import runner

    lines = [
        assistant("m1", 10, 20, 30, 7, tools=[("t1", "Read", {"file_path": "/a"})], timestamp="2026-01-01T00:00:01Z"),
        result("t1", first, timestamp="2026-01-01T00:00:02Z"),
        assistant("m2", 10, 20, 40, 7, tools=[("t2", "Read", {"file_path": "/a"})], timestamp="2026-01-01T00:00:03Z"),
        result("t2", second, timestamp="2026-01-01T00:00:04Z"),
        assistant("m3", 10, 20, 50, 7, timestamp="2026-01-01T00:00:05Z"),
    ]
    path = write("s.jsonl", *lines)
    serial = analyze([path], workers=1)
    assert (serial.reports[0].repeat, serial.reports[0].repeat_same_result) == (1, 1)
    if not first:
        tail = read_tail(path, _line_starts(path)[0], stable_hash=True)  # from the "" result on
        assert tail is not None
        assert [row[13] for row in tail.builder.results.rows] == [0, 0]  # content_hash, read with the stable hash
    monkeypatch.setattr(split, "SPLIT_MIN_BYTES", 1)
    monkeypatch.setattr(runner, "_fork_safe", lambda: False)
    monkeypatch.setattr(reader, "split_point", lambda p, after=0: _line_starts(p)[2])  # cut before t2's result
    parallel = analyze([path], workers=2)
    assert [r.__dict__ for r in parallel.reports] == [r.__dict__ for r in serial.reports]


def test_stable_text_hash_is_the_same_in_another_interpreter():
    """`stable_text_hash` (a file read in two parts by unrelated processes) gives the same value in a new
    interpreter, for text with astral characters and a lone surrogate (CASES B19) too."""
    texts = ["", "same text", "emoji \U0001f600 and \u2192", "lone \ud800 surrogate"]
    here = [reader.stable_text_hash(t) for t in texts]
    code = (
        "import sys, orjson; from contexttrace.reading import stable_text_hash; "
        "print(orjson.dumps([stable_text_hash(t) for t in "
        f"{texts!r}]).decode())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert orjson.loads(out) == here
    assert len(set(here)) == len(texts)
    digest = hashlib.blake2b("emoji \U0001f600 and \u2192".encode(), digest_size=8).digest()
    assert here[2] == int.from_bytes(digest, "little", signed=True)
    assert all(-(2**63) <= h < 2**63 for h in here)  # fits the Int64 column
