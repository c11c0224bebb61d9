"""The Claude Code reader's fast paths give what their general paths give: every sample, case and fuzz file
read with each fast path turned off (the general path taken for every record) has the same traces."""

from __future__ import annotations

from typing import Any

import orjson

from contexttrace.discover.local import find_traces
from contexttrace.errors import ContextTraceError
from contexttrace.reading.api import read_trace
from contexttrace.reading.claude import builder, calls, dialects

from ..conftest import CASES, FUZZ, SAMPLES


def _every_trace() -> list[Any]:
    """What each sample (with its subagent files), case and fuzz file reads as, in both profiles: every
    table, fact and warning; or the error it raises."""
    sources = [(s.path, tuple(s.subagents)) for s in find_traces([str(SAMPLES)])]
    sources += [(str(p), ()) for p in sorted([*CASES.glob("*.jsonl"), *FUZZ.glob("*.jsonl")])]
    out: list[Any] = []
    for path, subagents in sources:
        for words, inputs in ((True, True), (False, False)):
            try:
                traces = read_trace(path, subagents, words=words, inputs=inputs)
            except ContextTraceError as exc:
                out.append((path, repr(exc)))
                continue
            out += [(path, {k: v for k, v in vars(t).items() if not k.startswith("_")}) for t in traces]
    return out


def test_the_general_paths_read_every_file_alike(monkeypatch):
    """Turned off: the common message line's evidence (`Evidence.count` → `count_any`), input-side usage
    read inline (`calls.input_side` for every line), a tool input decoded and encoded by orjson directly
    (`records.raw_value` and `content.canonical` for every input)."""
    fast = _every_trace()
    taken = {"count_any": 0, "input_side": 0, "raw_value": 0, "canonical": 0}

    def counted(name: str, real: Any) -> Any:
        def call(*args: Any) -> Any:
            taken[name] += 1
            return real(*args)

        return call

    def refuse_decode(*args: Any) -> Any:
        raise orjson.JSONDecodeError("fast path off", "", 0)

    def refuse_encode(*args: Any, **kwargs: Any) -> Any:
        raise orjson.JSONEncodeError("fast path off")

    monkeypatch.setattr(dialects.Evidence, "count", counted("count_any", dialects.Evidence.count_any))
    monkeypatch.setattr(builder, "MAX_TOKENS", 0)  # no count passes the inline test
    monkeypatch.setattr(builder, "input_side", counted("input_side", calls.input_side))
    monkeypatch.setattr(builder, "_loads", refuse_decode)
    monkeypatch.setattr(builder, "_dumps", refuse_encode)
    monkeypatch.setattr(builder, "raw_value", counted("raw_value", builder.raw_value))
    monkeypatch.setattr(builder, "canonical", counted("canonical", builder.canonical))
    general = _every_trace()
    assert all(n > 1000 for n in taken.values()), taken  # each general path was taken, for many records
    assert len(general) == len(fast) > 100
    for got, want in zip(general, fast, strict=True):
        assert got == want, got[0]
