"""Shared fixtures: paths of the bundled samples and helpers to write small traces."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import settings

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SAMPLES = ROOT / "samples"
DATA = TESTS / "data"
CASES = DATA / "cases"
BAD = DATA / "bad"
FUZZ = DATA / "fuzz"
GOLDEN = TESTS / "golden"
#: A clean sample of one session (36 calls) that many tests name beside a damaged trace.
GOOD = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")

settings.register_profile("ci", derandomize=True, max_examples=200, deadline=None)
settings.load_profile("ci")


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--update-golden`: rewrite the golden files under tests/golden from the current output (review the
    diff before committing it); without it, a golden test compares and fails on a missing file."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/* from the current output instead of comparing with them",
    )


def check_golden(request: pytest.FixtureRequest, path: Path, text: str) -> None:
    """`text` must equal the golden file at `path`, read as UTF-8. With `--update-golden` the file is
    written from `text` first; a golden file that is missing fails the test, never writes itself."""
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    elif not path.exists():
        pytest.fail(f"golden file missing: {path}; run pytest --update-golden and review the diff")
    assert text == path.read_text(encoding="utf-8")


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


def trace_and_report(path: str, window: int | None = None):
    """The one trace of the file at `path` and its `context trace` report."""
    from contexttrace.reading import read_trace
    from contexttrace.reports.trace import build_report

    [trace] = read_trace(path)
    return trace, build_report(trace, window)


def report_of(path: Path | str):
    """The `context trace` report of the one trace at `path`, read by `analyze` (which must not fail)."""
    from contexttrace.run.runner import analyze

    run = analyze([str(path)])
    assert not run.failures, run.failures
    [rep] = run.reports
    return rep


#: A model whose prices the stream-json runs below are checked against.
MODEL = "claude-sonnet-4-5-20250929"
#: An integer literal orjson cannot read: the lenient fallback makes it a Python int.
HUGE = "1" + "0" * 400


def raw_line(record: dict, **raw: str) -> str:
    """`record` as a JSON line, each string value ``"<name>"`` replaced by `raw[name]` written as it is:
    the numbers orjson will not write (10**400) or writes otherwise (``10.0`` stays a float here anyway)."""
    text = orjson.dumps(record).decode()
    for name, value in raw.items():
        text = text.replace(f'"<{name}>"', value)
    return text


def final_call(mid: str, prompt: int, **kw) -> dict:
    """A main-thread call of `prompt` input tokens with a final usage (a stop_reason written)."""
    line = assistant(mid, prompt, kw.pop("cw", 0), 0, kw.pop("out", 10), **kw)
    line["message"]["stop_reason"] = "end_turn"
    return line


def stream_run(*, calls: tuple[int, ...] = (5_000,), result_fields: dict | None = None,
               model_usage: dict | None = None, **raw: str) -> bytes:  # fmt: skip
    """A stream-json run: init, one main call per prompt size in `calls`, and a result line with
    `result_fields` and `modelUsage[MODEL]` fields added (`"<name>"` values written as `raw[name]`)."""
    entry = {"inputTokens": sum(calls), "outputTokens": 5 * len(calls), "cacheReadInputTokens": 0,
             "cacheCreationInputTokens": 0, **(model_usage or {})}  # fmt: skip
    end = {"type": "result", "subtype": "success", "is_error": False, "session_id": "s1",
           "usage": {"input_tokens": 1}, **(result_fields or {}), "modelUsage": {MODEL: entry}}  # fmt: skip
    lines = [
        orjson.dumps({"type": "system", "subtype": "init", "session_id": "s1", "model": MODEL}).decode(),
        *(orjson.dumps(final_call(f"m{i}", n, out=5, parent="", model=MODEL)).decode() for i, n in enumerate(calls)),
        raw_line(end, **raw),
    ]
    return ("\n".join(lines) + "\n").encode()


def float_usage_call(mid: str, split: dict | None = None) -> str:
    """A call whose four usage counts are written as floats (``10.0``: a gateway or a re-encoder may
    write them so): the reader reads each as 0 and warns."""
    usage = {k: "<f>" for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                                "output_tokens")}  # fmt: skip
    if split is not None:
        usage["cache_creation"] = split
    message = {"id": mid, "model": "claude-sonnet-4-5", "stop_reason": "end_turn", "content": [], "usage": usage}
    return raw_line({"type": "assistant", "sessionId": "s", "message": message}, f="10.0")


def write_file(tmp_path: Path, data: bytes, name: str = "run.jsonl") -> str:
    """Write `data` to `tmp_path / name` and return the path as str."""
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def memory_trace(*records: dict | str | bytes):
    """The one trace of `records`, read from memory."""
    import io

    from contexttrace.reading import read_trace

    [trace] = read_trace("mem.jsonl", fh=io.BytesIO(jsonl(*records)))
    return trace


def generated_corpus(root: Path) -> list[str]:
    """A small corpus of the benchmark generator under `root`: 6 transcripts with subagents and compactions
    (one with a truncated last line) and a stream-json file of several runs with separator lines; the paths
    of its traces (for tests that run one corpus two ways and compare the outputs)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from generate import generate_directory, generate_stream
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    directory = generate_directory(root / "dir", 1_500_000, 6, seed=11)
    stream = generate_stream(root / "stream" / "runs.jsonl", 1_500_000, seed=12)
    return [*directory.paths, *stream.paths]
