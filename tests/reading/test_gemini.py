"""Gemini CLI saved sessions (`reading/gemini`): real sessions read to their exact figures, each also computed
here from the raw JSON by the documented rule (docs/formats.md), and the JSON-lines form's folding."""

from __future__ import annotations

import json

import orjson
import pytest

from contexttrace import analyze
from contexttrace.reading import read_trace
from contexttrace.reading.gemini.session import GEMINI_WINDOW_TOKENS, is_session

from ..conftest import SAMPLES

GLOB = SAMPLES / "d-gemini-sessions/chats/session-2025-12-12T21-46-7c761c30.json"
SHELL = SAMPLES / "d-gemini-sessions/chats/session-2025-12-26T04-02-b68abb2e.json"
CANCELLED = SAMPLES / "d-gemini-sessions/chats/session-2025-12-30T01-16-3f9ce747.json"


def _gemini(mid, prompt, **extra):
    tokens = {"input": prompt, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": prompt + 10}
    msg = {"id": mid, "timestamp": "2026-05-01T10:00:00Z", "type": "gemini", "content": "", "tokens": tokens}
    return msg | extra


def test_jsonl_form_folds_upserts_sets_and_rewinds(tmp_path):
    """The JSON-lines form (CLI 0.39+, built here from the documented record kinds: no licensed real file
    of this form was found): a message written again under its id replaces the first; a call ``$rewindTo``
    cut was made (counted, and said); a ``$set.messages`` checkpoint that brings new ids (a compression's
    summary) is a compaction, its sizes the calls around it, and the calls before it stay."""
    lines = [
        {"sessionId": "s1", "projectHash": "p", "startTime": "2026-05-01T10:00:00Z", "lastUpdated": "x"},
        {"id": "u1", "timestamp": "2026-05-01T10:00:00Z", "type": "user", "content": "hi"},
        _gemini("g1", 100),
        _gemini("g1", 150),  # the same message again (its tokens arrived): replaces the first
        {"$set": {"lastUpdated": "2026-05-01T10:00:01Z"}},
        _gemini("g2", 200),
        _gemini("g3", 300),
        {"$rewindTo": "g3"},  # g3 and after cut from the session; g3's call was made
        _gemini("g4", 400),
    ]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    [trace] = read_trace(path)
    assert trace.view("calls").get_column("prompt_tokens").to_list() == [150, 200, 300, 400]
    assert trace.warnings == [
        "1 rewind(s) ($rewindTo) cut messages from the session: their calls were made and are counted"
    ]
    summary = {"id": "c0", "timestamp": "2026-05-01T10:01:00Z", "type": "user", "content": "<state_snapshot>…"}
    checkpoint = [*lines, {"$set": {"messages": [summary, _gemini("g4", 400)]}}, _gemini("g5", 80)]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in checkpoint))
    report = analyze([path]).reports[0]
    assert report.prompt_tokens == [150, 200, 300, 400, 80]
    [event] = report.compaction_events
    assert (report.compact, event["call"], event["context_before"], event["context_after"]) == (1, 5, 400, 80)
    masked = [*lines, {"$set": {"messages": [_gemini("g4", 400)]}}]  # masking rewrites: no new id, no compaction
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in masked))
    assert analyze([path]).reports[0].compact == 0


def test_subagent_sessions_under_the_parent_folder_are_found(tmp_path):
    """A subagent's session (CLI 0.37+: ``chats/<parentSessionId>/<id>.jsonl``, linked by its tool call's
    ``agentId``) is found by the folder scan beside its parent and read as a session of its own."""
    chats = tmp_path / "proj" / "chats"
    (chats / "parent-uuid").mkdir(parents=True)
    parent = [
        {"sessionId": "parent-uuid", "projectHash": "p", "startTime": "2026-05-01T10:00:00Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-05-01T10:00:00Z", "type": "user", "content": "look around"},
        _gemini("g1", 1_000, toolCalls=[{"id": "t1", "name": "codebase_investigator", "args": {"objective": "x"},
                                         "status": "success", "agentId": "sub-uuid",
                                         "result": [{"functionResponse": {"id": "t1", "name": "codebase_investigator",
                                                                          "response": {"output": "found it"}}}]}]),
        _gemini("g2", 1_200),
    ]  # fmt: skip
    sub = [
        {"sessionId": "sub-uuid", "projectHash": "p", "startTime": "2026-05-01T10:00:01Z", "kind": "subagent"},
        {"id": "s-u", "timestamp": "2026-05-01T10:00:01Z", "type": "user", "content": "x"},
        _gemini("s-g1", 700),
        _gemini("s-g2", 900),
        _gemini("s-g3", 950),
    ]
    (chats / "session-2026-05-01T10-00-parentuu.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in parent))
    (chats / "parent-uuid" / "sub-uuid.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in sub))
    run = analyze([tmp_path])
    figures = sorted((r.session_id, r.calls, r.first, r.peak, r.tools) for r in run.reports)
    assert figures == [("parent-uuid", 2, 1_000, 1_200, 1), ("sub-uuid", 3, 700, 950, 0)]


def _model_messages(path):
    return [m for m in json.loads(path.read_bytes())["messages"] if m["type"] == "gemini" and m.get("tokens")]


@pytest.mark.parametrize(
    ("path", "calls", "first", "peak", "tools", "failed_", "denied"),
    [
        pytest.param(GLOB, 5, 10_834, 11_113, 3, 0, 0, id="0.20-glob-api-error"),
        pytest.param(SHELL, 12, 6_692, 8_746, 9, 1, 1, id="0.21-shell-tools"),
        pytest.param(CANCELLED, 8, 6_734, 7_764, 7, 1, 1, id="0.22-cancelled"),
    ],
)
def test_session_figures(path, calls, first, peak, tools, failed_, denied):
    """One call per `gemini` message with tokens, its prompt `tokens.input`; tools from `toolCalls`, a
    cancelled one a refusal: as written, and as the rule gives from the raw JSON."""
    messages = _model_messages(path)
    prompts = [m["tokens"]["input"] for m in messages]
    assert (len(prompts), prompts[0], max(prompts)) == (calls, first, peak)
    statuses = [t["status"] for m in json.loads(path.read_bytes())["messages"] for t in m.get("toolCalls") or ()]
    assert (len(statuses), sum(s != "success" for s in statuses), statuses.count("cancelled")) == (
        tools,
        failed_,
        denied,
    )
    [report] = analyze([str(path)]).reports
    assert (report.format, report.calls, report.first, report.peak) == ("gemini", calls, first, peak)
    assert (report.tools, report.failed, report.denied) == (tools, failed_, denied)
    [trace] = read_trace(path)
    assert trace.view("calls").get_column("prompt_tokens").to_list() == prompts


def test_output_counts_thoughts_and_cache_is_part_of_input():
    """`tokens.output` leaves out `thoughts` (billed as output): a call's output is their sum; `cached` is a
    part of `input`, so the uncached tail is their difference."""
    messages = _model_messages(SHELL)
    [trace] = read_trace(SHELL)
    calls = trace.view("calls")
    assert calls.get_column("output_tokens").to_list() == [
        m["tokens"]["output"] + m["tokens"]["thoughts"] for m in messages
    ]
    assert calls.get_column("cache_read_tokens").to_list() == [m["tokens"]["cached"] for m in messages]
    assert calls.get_column("input_tokens").to_list() == [
        m["tokens"]["input"] - m["tokens"]["cached"] for m in messages
    ]
    assert [m["tokens"]["total"] for m in messages] == [
        sum(m["tokens"][k] for k in ("input", "output", "thoughts", "tool")) for m in messages
    ]


def test_window_is_the_model_table_and_says_so():
    """A session records no window: the CLI's model table (1,048,576 for Gemini models), with that source."""
    [trace] = read_trace(GLOB)
    assert (trace.window_tokens, trace.window_source) == (GEMINI_WINDOW_TOKENS, "model table")
    assert GEMINI_WINDOW_TOKENS == 1_048_576


def test_format_is_decided_by_content_not_name(tmp_path):
    """A session under any name is read as Gemini's; a Claude transcript or Codex rollout is not taken for one."""
    renamed = tmp_path / "chat.jsonl"
    renamed.write_bytes(GLOB.read_bytes())
    [trace] = read_trace(renamed)
    assert trace.format == "gemini"
    assert is_session(GLOB.read_bytes()[:65536])
    assert not is_session((SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes()[:65536])
    assert not is_session((SAMPLES / "c-codex-0.41-small.jsonl").read_bytes()[:65536])


def test_window_follows_the_model_table(tmp_path):
    """Gemini CLI's table gives Gemma 4 a 256,000-token window: the session's last model decides."""
    lines = [
        {"sessionId": "s1", "projectHash": "p", "startTime": "2026-05-01T10:00:00Z"},
        _gemini("g1", 100, model="gemini-2.5-flash"),
        _gemini("g2", 120, model="gemma-4-31b-it"),
    ]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    [trace] = read_trace(path)
    assert (trace.window_tokens, trace.window_source) == (256_000, "model table")


def test_injected_session_context_is_no_prompt(tmp_path):
    """Newer CLIs write their start-up context as a user message (``<session_context>``): not a person's
    prompt, so not a turn."""
    context = {
        "id": "u0",
        "type": "user",
        "content": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}],
    }
    lines = [
        {"sessionId": "s1", "projectHash": "p", "startTime": "2026-05-01T10:00:00Z"},
        context | {"timestamp": "2026-05-01T10:00:00Z"},
        {"id": "u1", "timestamp": "2026-05-01T10:00:01Z", "type": "user", "content": [{"text": "fix it"}]},
        _gemini("g1", 100),
    ]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    [trace] = read_trace(path)
    assert trace.view("events").get_column("kind").to_list() == ["meta", "prompt"]
