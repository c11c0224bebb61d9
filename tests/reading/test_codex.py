"""Codex CLI rollouts (`reading/codex`): the call rule and the failure rule (docs/formats.md), and a rollout
without token counts."""

from __future__ import annotations

import orjson
import pytest

from contexttrace import analyze, read_trace
from contexttrace.reading.codex.rollout import failed

from ..conftest import GOOD


def test_reemitted_token_counts_are_one_call(tmp_path):
    """A token_count written again with the same totals (a rate-limit refresh), or an estimate with no input
    and output (after a compaction), is no call: summing every event would count calls twice."""
    usage = {"input_tokens": 1000, "cached_input_tokens": 800, "output_tokens": 50, "reasoning_output_tokens": 20,
             "total_tokens": 1050}  # fmt: skip
    estimate = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0,
                "total_tokens": 300}  # fmt: skip

    def count(last, total):
        info = {"last_token_usage": last, "total_token_usage": {**last, "total_tokens": total},
                "model_context_window": 258_400}  # fmt: skip
        payload = {"type": "token_count", "info": info}
        return {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": payload}

    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": {"type": "token_count", "info": None}},
        count(usage, 1050),
        count(usage, 1050),
        count(estimate, 1350),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    [trace] = read_trace(path)
    assert trace.view("calls").get_column("prompt_tokens").to_list() == [1000]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('{"output":"ok","metadata":{"exit_code":0,"duration_seconds":0.1}}', (False, False), id="json-0"),
        pytest.param('{"output":"no","metadata":{"exit_code":2,"duration_seconds":0.1}}', (True, False), id="json-2"),
        pytest.param("Exit code: 1\nWall time: 0.2 seconds\nOutput:\n", (True, False), id="freeform-1"),
        pytest.param(
            "Chunk ID: 1a\nWall time: 0.1 s\nProcess exited with code 0\nOutput:\n", (False, False), id="exec-0"
        ),
        pytest.param("failed in sandbox LandlockRestrict with execution error", (True, True), id="sandbox"),
        pytest.param("Plan updated", (False, False), id="plain"),
    ],
)
def test_failure_read_from_the_output_text(text, expected):
    """Codex records no success flag: an exit code other than 0 is a failure, a sandbox refusal a denial."""
    assert failed(text) == expected


def test_codex_rollout_without_token_counts_is_read_as_codex(write):
    """A Codex CLI rollout is read by its own reader, not as an empty Claude trace: with no token count,
    it has no measured call and is not graded."""
    path = write(
        "rollout.jsonl",
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x", "cli_version": "0.50.0"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": {"type": "message"}},
    )
    [trace] = read_trace(path)
    assert (trace.format, trace.session_id, trace.cli_version) == ("codex", "x", "0.50.0")
    run = analyze([path, GOOD])
    assert not run.failures
    report = next(r for r in run.reports if r.trace == path)
    assert (report.calls, report.extra["health"]["grade"]) == (0, None)
