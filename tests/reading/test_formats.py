"""The format seam (`reading/formats.py`, `reading/api.py`): a file picks its reader by its first bytes, a
new format is a reader beside Claude Code's, with nothing above `reading/` asking which format it is, and
another agent's trace that no reader takes is named as not supported."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import IO

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace import analyze, read_trace
from contexttrace.cli.app import app
from contexttrace.errors import TraceFormatError
from contexttrace.reading import api
from contexttrace.reading.claude import CLAUDE_CODE
from contexttrace.reading.contract import CALL_SCHEMA, CAPABILITIES_BY_FORMAT, Capabilities
from contexttrace.reading.model import TABLES, SourceFile, Trace

from ..conftest import GOOD, SAMPLES


class Tally:
    """A made-up agent whose file is one JSON line per model call: ``{"tally": <prompt tokens>}``."""

    agent = "Tally"
    formats: tuple[str, ...] = ("tally",)
    split_min_bytes = None

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b'{"tally":')

    def read(self, path: str, fh: IO[bytes], companions: Sequence[SourceFile]) -> list[Trace]:
        prompts = [orjson.loads(line)["tally"] for line in fh if line.strip()]
        tables = {name: {col: [] for col in schema} for name, schema in TABLES.items()}
        calls = tables["calls"]
        for i, prompt in enumerate(prompts):
            row = dict.fromkeys(CALL_SCHEMA)
            row |= {"seq": i, "line": i + 1, "file": path, "thread": "main", "thread_kind": "main"}
            row |= {"prompt_tokens": prompt, "input_tokens": prompt, "cache_write_tokens": 0}
            row |= {"cache_read_tokens": 0, "output_tokens": 1, "message_id": f"m{i}"}
            for col, value in row.items():
                calls[col].append(value)
        return [Trace(name=path, path=path, format="tally", session_id=None, tables=tables, files=[path])]

    def split_point(self, path: str, after_bytes: int) -> int | None:
        return None


@pytest.fixture
def tally(monkeypatch):
    """The made-up format registered before Claude Code's, as a new agent's reader would be."""
    fmt = Tally()
    monkeypatch.setattr(api, "FORMATS", (fmt, CLAUDE_CODE))
    monkeypatch.setitem(
        CAPABILITIES_BY_FORMAT,
        "tally",
        Capabilities(timestamps=False, run_totals=False, prompt_outside_trace=True, project_folder=False),
    )
    return fmt


def test_format_of_claude_code_is_the_catch_all():
    """Every file no other reader recognises goes to Claude Code's reader (which names what it is)."""
    assert api.format_of(b"") is CLAUDE_CODE
    assert api.format_of(b"not json at all") is CLAUDE_CODE
    assert api.format_of((SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes()[:65536]) is CLAUDE_CODE


def test_new_format_picked_by_content_not_name(tally):
    """A file is offered to the readers in order: the new reader takes its own, Claude's the rest."""
    [trace] = api.read_trace("run.jsonl", fh=io.BytesIO(b'{"tally":100}\n{"tally":250}\n'))
    assert trace.format == "tally"
    assert trace.view("calls").get_column("prompt_tokens").to_list() == [100, 250]
    [claude] = api.read_trace(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")
    assert claude.format in CLAUDE_CODE.formats


def test_new_format_reported_by_context_trace(tally, tmp_path):
    """`context trace` reports a new format's trace with no change above `reading/`: calls, first, peak."""
    path = tmp_path / "run.tally"
    path.write_bytes(b'{"tally":1000}\n{"tally":1500}\n{"tally":1200}\n')
    result = CliRunner().invoke(app, ["context", "trace", str(path), "--json", "--no-cache"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [record] = orjson.loads(result.stdout)
    assert (record["format"], record["calls"], record["first"], record["peak"]) == ("tally", 3, 1000, 1500)


def test_split_point_asks_the_files_reader(tally, tmp_path, monkeypatch):
    """A large file of a reader that never splits is read whole, whatever its size."""
    monkeypatch.setattr(CLAUDE_CODE.__class__, "split_min_bytes", property(lambda self: 10))
    path = tmp_path / "big.tally"
    path.write_bytes(b'{"tally":1}\n' * 100)
    assert api.split_point(str(path)) is None


@pytest.mark.parametrize(
    ("lines", "agent"),
    [
        (
            [
                {"type": "init", "timestamp": "2026-01-01T00:00:00Z", "session_id": "g1", "model": "gemini-2.5-pro"},
                {"type": "message", "role": "user", "content": "hi"},
                {"type": "result", "status": "success", "stats": {}},
            ],
            "Gemini CLI stream-json",
        ),
    ],
)
def test_another_agents_trace_is_named_as_not_supported(write, lines, agent):
    """A Gemini CLI stream-json capture (session totals only, no per-call usage) is an error naming the
    agent, not an empty Claude trace graded A 100; the other traces print."""
    path = write("other.jsonl", *lines)
    run = analyze([path, GOOD])
    assert [r.trace for r in run.reports] == [GOOD]
    [failure] = run.failures
    assert agent in failure.reason and "not read" in failure.reason
    with pytest.raises(TraceFormatError):
        read_trace(path)
