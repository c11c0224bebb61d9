"""Gemini CLI saved sessions (`reading/gemini`): the JSON-lines form's folding (docs/formats.md)."""

from __future__ import annotations

import orjson

from contexttrace.reading import read_trace

from ..conftest import SAMPLES

GLOB = SAMPLES / "d-gemini-0.20-glob-api-error.json"
SHELL = SAMPLES / "d-gemini-0.21-shell-tools.json"
CANCELLED = SAMPLES / "d-gemini-0.22-cancelled-summary.json"


def test_jsonl_form_folds_upserts_sets_and_rewinds(tmp_path):
    """The JSON-lines form (CLI 0.39+, built here from the documented record kinds: no licensed real file
    of this form was found): a message written again under its id replaces the first, ``$rewindTo``
    removes that message and the rest, ``$set.messages`` replaces the whole list."""

    def gemini(mid, prompt):
        tokens = {"input": prompt, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": prompt + 10}
        return {"id": mid, "timestamp": "2026-05-01T10:00:00Z", "type": "gemini", "content": "", "tokens": tokens}

    lines = [
        {"sessionId": "s1", "projectHash": "p", "startTime": "2026-05-01T10:00:00Z", "lastUpdated": "x"},
        {"id": "u1", "timestamp": "2026-05-01T10:00:00Z", "type": "user", "content": "hi"},
        gemini("g1", 100),
        gemini("g1", 150),  # the same message again (its tokens arrived): replaces the first
        {"$set": {"lastUpdated": "2026-05-01T10:00:01Z"}},
        gemini("g2", 200),
        gemini("g3", 300),
        {"$rewindTo": "g3"},  # g3 and after removed
        gemini("g4", 400),
    ]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    [trace] = read_trace(path)
    assert trace.view("calls").get_column("prompt_tokens").to_list() == [150, 200, 400]
    checkpoint = [*lines, {"$set": {"messages": [gemini("c1", 50)]}}, gemini("g5", 80)]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in checkpoint))
    [trace] = read_trace(path)
    assert trace.view("calls").get_column("prompt_tokens").to_list() == [50, 80]
