"""Shared fixtures: paths of the bundled samples and helpers to write small traces."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
CASES = Path(__file__).resolve().parent / "data" / "cases"
BAD = Path(__file__).resolve().parent / "data" / "bad"

settings.register_profile("ci", derandomize=True, max_examples=200, deadline=None)
settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _result_store(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own empty result store (the CLI uses one unless --no-cache), never the user's
    cache folder; subprocesses inherit it through the environment. (Hypothesis allows autouse fixtures.)"""
    store = tmp_path_factory.getbasetemp() / "result-stores" / str(next(_STORE_IDS))
    monkeypatch.setenv("CONTEXTTRACE_CACHE_DIR", str(store))  # made by the first run that keeps a trace


_STORE_IDS = itertools.count()


@pytest.fixture(scope="session")
def sample_reports():
    """`context trace` reports of every bundled sample, keyed by their path under samples/ (read once)."""
    from contexttrace.run.runner import analyze

    run = analyze([str(SAMPLES)], workers=1)
    return {r.trace.split("samples/", 1)[1]: r for r in run.reports}


def jsonl(*records: dict | str | bytes) -> bytes:
    """Join records into JSONL bytes: dicts are dumped, str/bytes lines are written as they are."""
    out = []
    for rec in records:
        if isinstance(rec, dict):
            out.append(orjson.dumps(rec))
        elif isinstance(rec, str):
            out.append(rec.encode())
        else:
            out.append(rec)
    return b"\n".join(out) + b"\n"


@pytest.fixture
def write(tmp_path: Path):
    """Write JSONL records to a file under tmp_path and return its path as str."""

    def _write(name: str, *records: dict | str | bytes, raw: bytes | None = None) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw if raw is not None else jsonl(*records))
        return str(path)

    return _write


def assistant(mid, inp, cw, cr, out=10, *, tools=(), sidechain=None, parent=None, model="claude-sonnet-4-5", **extra):
    """An assistant line (transcript style unless `parent` is given, then stream-json style)."""
    content = [{"type": "tool_use", "id": tid, "name": name, "input": inp_} for tid, name, inp_ in tools]
    rec = {
        "type": "assistant",
        "message": {
            "id": mid,
            "model": model,
            "content": content,
            "usage": {
                "input_tokens": inp,
                "cache_creation_input_tokens": cw,
                "cache_read_input_tokens": cr,
                "output_tokens": out,
            },
        },
    }
    if parent is not None:
        rec["parent_tool_use_id"] = parent or None
        rec["session_id"] = "s"
    else:
        rec["sessionId"] = "s"
        if sidechain is not None:
            rec["isSidechain"] = sidechain
    rec.update(extra)
    return rec


def result(tid, content="ok", *, is_error=None, stream=False, **extra):
    """A user line carrying one tool_result."""
    block = {"type": "tool_result", "tool_use_id": tid, "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    rec = {"type": "user", "message": {"role": "user", "content": [block]}}
    if stream:
        rec["parent_tool_use_id"] = None
        rec["session_id"] = "s"
    else:
        rec["sessionId"] = "s"
    rec.update(extra)
    return rec


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The main files the reader reads in this process (runs here use one process unless they say)."""
    from contexttrace.run import work

    seen: list[str] = []
    real = work.read_trace

    def counting(path, *args, **kwargs):
        seen.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(work, "read_trace", counting)
    return seen


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files a test has just written are kept at once (the result store waits `RACY_NS` after a change)."""
    from contexttrace.storage import store

    monkeypatch.setattr(store, "RACY_NS", 0)


def json_keys(value: object) -> set[str]:
    """Every key of every object in a decoded JSON value, at any depth."""
    if isinstance(value, dict):
        return set(value).union(*(json_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(json_keys(v) for v in value))
    return set()


def assert_keys_documented(keys: set[str], docs: str, at_least: int) -> None:
    """More than `at_least` keys, each snake_case and written as `key` in `docs`."""
    assert len(keys) > at_least
    assert sorted(k for k in keys if not re.match(r"^[a-z][a-z0-9_]*$", k)) == []
    assert sorted(k for k in keys if f"`{k}`" not in docs) == []
