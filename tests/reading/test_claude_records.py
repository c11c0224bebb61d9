"""One line to one record (`reading/claude/records.py`): the typed fast path and the lenient path give the
same records, and a trace read with every line forced through the lenient path is the trace read the fast
way; unknown line types, lone surrogates, lines nested too deep and bytes that are not UTF-8."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contexttrace import read_trace
from contexttrace.discover.local import find_traces
from contexttrace.reading import result_size
from contexttrace.reading.claude import feed, records
from contexttrace.reading.claude.content import measure
from contexttrace.reading.claude.records import (
    NOT_JSON,
    TOO_DEEP,
    Line,
    MessageLine,
    decode,
    loads_lenient,
    same_record,
    to_struct,
)
from contexttrace.reports.trace import build_report

from ..conftest import CASES, FUZZ, SAMPLES, assistant, jsonl, report_of, result, trace_and_report

FILES = sorted(
    p for p in [*SAMPLES.rglob("*.jsonl"), *CASES.rglob("*.jsonl"), *(CASES.parent / "fuzz").rglob("*.jsonl")]
)


def _lenient(raw: bytes) -> Any:
    value = loads_lenient(raw)
    if type(value) is not dict:
        return value
    return to_struct(value, MessageLine if value.get("type") in ("assistant", "user") else Line)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_both_paths_give_the_same_record_for_every_line(path: Path):
    """Every line of every sample, case and fuzz find: where the typed decoder takes it, the lenient path
    (orjson, then `to_struct`) makes the same record; where it does not, `decode` gives the lenient one."""
    data = path.read_bytes().replace(b"\x00", b"")
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        got = decode(raw)
        lenient = _lenient(raw)
        if lenient is NOT_JSON or lenient is TOO_DEEP:
            assert got is lenient
            continue
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(10_000)  # (values nested 990 deep, fuzz 06b, are compared with ==)
        try:
            same = same_record(got, lenient)
        finally:
            sys.setrecursionlimit(limit)
        assert same, raw[:200]


def _lenient_only(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every typed decoder refuses every line (the reader's loop and `records.decode`); returns the count of
    lines refused."""
    refused = [0]

    def refusing(raw: bytes) -> Any:
        refused[0] += 1
        raise records.msgspec.DecodeError("forced")

    for module in (records, feed):
        monkeypatch.setattr(module, "TYPED_DECODE", refusing)
        monkeypatch.setattr(module, "FULL_DECODE", refusing)
    return refused


def _facts(trace: Any) -> dict[str, Any]:
    out = dict(trace.__dict__)
    out["tables"] = {k: v for k, v in trace.tables.items()}
    return out


@pytest.mark.parametrize(
    "name", sorted(p.name for p in SAMPLES.iterdir() if p.name != "README.md" and p.name != "PROVENANCE.md")
)
def test_a_trace_read_leniently_is_the_trace_read_typed(monkeypatch, name):
    """Every sample read with every line forced through the lenient path: the same traces, column by
    column (one builder reads both paths' records)."""
    sources = find_traces([str(SAMPLES / name)])
    typed = [[_facts(t) for t in read_trace(s.path, s.subagents)] for s in sources if not s.orphan]
    refused = _lenient_only(monkeypatch)
    lenient = [[_facts(t) for t in read_trace(s.path, s.subagents)] for s in sources if not s.orphan]
    if any(t["format"] in ("stream-json", "transcript") for ts in typed for t in ts):
        assert refused[0] > 0  # Claude Code's reader took the lenient path
    assert lenient == typed


@pytest.mark.parametrize(
    ("line", "check"),
    [
        # a lone surrogate escape: the line is read, the surrogate replaced (CASES B19)
        (rb'{"type":"user","uuid":"a\udcb2","message":{"content":"x"}}', lambda r: r.uuid == "a\ufffd"),
        # a container of the wrong type is dropped: the field reads as absent
        (b'{"type":"assistant","message":"text"}', lambda r: r.message is None),
        (b'{"type":"assistant","message":{"usage":[1]}}', lambda r: r.message.usage is None),
        # a content element that is not an object is kept as what it is (an unknown block)
        (
            b'{"message":{"content":[{"type":"tool_result","content":[3,{"type":"text","text":"a"}]}]}}',
            lambda r: measure(r.message.content[0].content)[:4] == (1, 0, 0, 1),
        ),
        # presence: a sessionId that is not a string still counts as a transcript key
        (b'{"sessionId":7}', lambda r: r.sessionId == 7),
        (b'{"toolUseResult":null,"tool_use_result":{"agentId":"B"}}', lambda r: r.toolUseResult is None),
        # numbers JSON spells but no float holds, and nesting past msgspec's depth: the lenient path
        (b'{"type":"system","durationMs":1e999}', lambda r: r.durationMs == float("inf")),
        (b'{"type":"x","deep":' + b"[" * 1010 + b"]" * 1010 + b"}", lambda r: r.type == "x"),
        # a raw byte that is not UTF-8, in a field read: U+FFFD (one character for one byte)
        (b'{"type":"user","cwd":"/w\xff"}', lambda r: r.cwd == "/w\ufffd"),
    ],
    ids=["surrogate", "message-str", "usage-list", "unknown-block", "presence", "copy-null", "inf", "deep", "utf8"],
)
def test_lines_the_typed_decoder_refuses(line, check):
    rec = decode(line)
    assert type(rec) is (MessageLine if b'"type":"assistant"' in line or b'"type":"user"' in line else Line)
    assert check(rec)


def test_what_is_not_a_record():
    assert decode(b"not json\n") is NOT_JSON
    assert decode(b'{"type":"user"') is NOT_JSON  # a truncated line
    assert decode(b"[1, 2]") == [1, 2]  # JSON but not an object: the caller names its type
    assert decode(b"[" * 2000 + b"]" * 2000) is TOO_DEEP  # too deep for any decoder: named so, not "not JSON"


def test_the_result_totals_are_read_as_orjson_reads_them():
    """A count past 64 bits in a result line's totals is a float, as orjson (the reader before msgspec)
    reads it; msgspec alone would keep an int."""
    from contexttrace.reading.claude.dialects import run_totals

    rec = decode(b'{"type":"result","usage":{"input_tokens":123456789012345678901234567890},"num_turns":3}')
    assert run_totals(rec)["usage"] == {"input_tokens": 1.2345678901234568e29}
    assert run_totals(rec)["num_turns"] == 3


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["type", "text", "a"]), inner, max_size=3)
    ),
    max_leaves=10,
)
_block = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["text", "image", "tool_result", "other"]) | _json,
        "text": st.text(max_size=20) | _json,
        "source": st.fixed_dictionaries({}, optional={"data": st.sampled_from(["", "QUJD", "QQ==", "QUI="]) | _json})
        | _json,
    },
)


@given(st.none() | st.text(max_size=20) | st.lists(_block | _json, max_size=4) | _json)
def test_measure_is_result_size(content):
    """The reader's measure of a tool result's content (typed records) gives `result_size`'s four figures
    (the public helper, on the line decoded as plain JSON) for any content, however malformed."""
    line = json.dumps({"message": {"content": [{"type": "tool_result", "content": content}]}}).encode()
    expected = result_size(loads_lenient(line)["message"]["content"][0]["content"])
    assert measure(decode(line).message.content[0].content)[:4] == expected


def test_b19_lone_surrogates_count_and_render(write):
    """B19: escaped lone surrogates parse; the result counts as failed with a finite size (35 chars)."""
    line = (
        '{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result",'
        '"tool_use_id":"toolu_19","is_error":true,"content":"Error: bad byte \\udcb2 and half emoji \\ud83d"}]}}'
    )
    _, rep = trace_and_report(write("t.jsonl", line))
    assert rep.failed == 1
    assert rep.result_chars == len("Error: bad byte \udcb2 and half emoji \ud83d")
    assert rep.skipped_lines == 0


def test_b27_unknown_line_types_are_ignored():
    """B27: six lines of new or unknown types around one assistant line: 1 call, nothing skipped."""
    _, rep = trace_and_report(str(CASES / "B27.jsonl"))
    assert rep.calls == 1
    assert rep.prompt_tokens == [5101]
    assert rep.skipped_lines == 0


def test_fuzz_01_type_not_a_string_is_an_unknown_line():
    """01: `"type": ["assistant"]` is an unknown line type, and the trace keeps its other call."""
    rep = report_of(FUZZ / "01-type-is-list.jsonl")
    assert rep.calls == 1


@pytest.mark.parametrize("name", ["06-task-input-lone-surrogate.jsonl", "08-frames-lone-surrogate-string.jsonl"])
def test_fuzz_06_08_lone_surrogates_replaced_before_frames(name):
    """06/08: lone surrogates become U+FFFD (one code point for one) before any frame or JSON is built."""
    [trace] = read_trace(str(FUZZ / name))
    texts = [
        value
        for frame in (trace.calls, trace.tool_uses, trace.tool_results, trace.events)
        for column in frame.columns
        for value in frame[column].to_list()
        if isinstance(value, str)
    ]
    for value in texts:
        value.encode("utf-8")  # raises on a lone surrogate
    assert texts and any("\ufffd" in value for value in texts)  # the surrogate was there, replaced


def test_lone_surrogate_in_a_key_at_depth(write):
    """The kind: a lone surrogate in a key, deep inside a tool input, never reaches a frame."""
    raw = (
        '{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"claude-sonnet-4-5","content":'
        '[{"type":"tool_use","id":"t1","name":"Read\\udc80","input":{"a":[{"k\\ud800":"v\\udfff"}]}}],'
        '"usage":{"input_tokens":1,"cache_creation_input_tokens":1,"cache_read_input_tokens":1,"output_tokens":1}}}'
    )
    [trace] = read_trace(write("t.jsonl", raw))
    assert trace.tool_uses["name"].to_list() == ["Read\ufffd"]
    assert trace.tool_uses["input_json"].to_list() == ['{"a":[{"k\ufffd":"v\ufffd"}]}']


def test_deeply_nested_lines_never_stop_the_run(write):
    """A line nested too deep to decode is a skipped line; a tool input deeper than orjson encodes still
    gets a canonical text; neither stops the trace nor the others."""
    deep_line = '{"type":"user","sessionId":"s","x":' + "[" * 1500 + "]" * 1500 + "}"
    deep_input = {"a": 1}
    for _ in range(300):
        deep_input = {"a": deep_input}
    deep_call = json.dumps(assistant("m1", 1, 1, 1, tools=[("t1", "Read", deep_input)]))  # orjson stops at 255
    path = write("t.jsonl", deep_line, deep_call)
    [t] = read_trace(path)
    assert (t.calls.height, t.skipped_lines) == (1, 1)
    assert t.tool_uses["input_json"].to_list()[0].startswith('{"a":{"a":')


def test_invalid_utf8_byte_keeps_the_line(write):
    """A raw byte that is not UTF-8 reads as one replacement character; the line still counts."""
    line = (
        b'{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result",'
        b'"tool_use_id":"t","is_error":true,"content":"caf\xe9"}]}}'
    )
    rep = build_report(read_trace(write("t.jsonl", line, assistant("m1", 1, 1, 1)))[0])
    assert (rep.failed, rep.result_chars, rep.skipped_lines) == (1, 4, 0)


def _decoders_read(data: bytes) -> bool:
    """Whether orjson or the standard library (the lenient path's two decoders) reads `data` as JSON."""
    import orjson

    try:
        orjson.loads(data)
        return True
    except orjson.JSONDecodeError:
        pass
    try:
        json.loads(data.decode("utf-8", errors="replace"))
    except ValueError:
        return False
    except RecursionError:
        return True
    return True


def test_a_text_no_json_value_starts_is_refused_before_decoding():
    """`loads_lenient` refuses a text that no JSON value starts (a `=== Iteration 1 ===` separator line) without
    asking either decoder: for every first byte after every kind of leading space, the quick test refuses only
    what both decoders refuse, and the separator line is `NOT_JSON` either way."""
    tails = (b"", b"1", b"rue", b"alse", b"ull", b"aN", b"nfinity", b'"', b"}", b"]", b"x")
    refused = 0
    for first in range(256):
        for lead in (b"", b" ", b"\t\r\n ", b"\x0b", b"\x0c", b"\xc2\xa0", b"\xef\xbb\xbf"):
            for tail in tails:
                data = lead + bytes([first]) + tail
                if records.JSON_VALUE_START(data) is None:
                    refused += 1
                    assert not _decoders_read(data), data
                    assert records.loads_lenient(data) is records.NOT_JSON
    assert refused > 10_000
    assert records.loads_lenient(b"=== Iteration 1 (Thu Jan 22 11:32:29 CST 2026) ===\n") is records.NOT_JSON


@given(_json, st.sampled_from([b"", b"\xff", b"\\ud800", b"\\\\"]))
def test_a_raw_value_decodes_as_loads_lenient(value, extra):
    """`raw_value` of a tool input kept as bytes (orjson first, the standard library when orjson refuses: a
    byte that is not UTF-8, an escaped lone surrogate) is `loads_lenient` of those bytes, for any value; and
    orjson does refuse those two, so the second step is taken."""
    data = json.dumps(value).encode()
    if extra:
        data = json.dumps({"a": value, "s": "x"}).encode().replace(b'"x"', b'"x' + extra + b'"')
    if extra in (b"\xff", b"\\ud800"):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(data)
    raw = records.msgspec.Raw(data)  # (as msgspec keeps a tool input's bytes, without checking its strings)
    assert records.same_record(records.raw_value(raw), loads_lenient(data))


def _trace_facts(data: bytes) -> list[Any]:
    return [_facts(t) for t in read_trace("t.jsonl", fh=io.BytesIO(data))]


_STRING_FIELDS = [
    ("uuid",), ("timestamp",), ("requestId",), ("version",), ("cwd",), ("message", "id"), ("message", "model"),
    ("message", "stop_reason"), ("message", "usage", "speed"), ("message", "content", 0, "id"),
    ("message", "content", 0, "name"), ("message", "content", 1, "text"), ("message", "content", 2, "thinking"),
]  # fmt: skip


@pytest.mark.parametrize("where", _STRING_FIELDS, ids=lambda w: ".".join(map(str, w)))
@pytest.mark.parametrize("value", [5, 2.5, True, [], {}, ["x"]], ids=repr)
def test_a_string_field_holding_another_value_reads_as_absent(where, value):
    """The fields typed `str | None` (`records`: a value of another type fails the typed decode and is dropped
    by the lenient path): a line that writes another value there reads as the line without the field, as the
    builder read such values when it tested each one itself."""
    first = assistant("m1", 5, 0, 95, tools=[("t1", "Read", {"file_path": "/a"})], uuid="u1", requestId="r1")
    first.update(timestamp="2026-01-01T00:00:00.000Z", version="2.1.0", cwd="/w")
    first["message"].update(stop_reason="tool_use")
    first["message"]["content"] += [{"type": "text", "text": "prose"}, {"type": "thinking", "thinking": "hmm"}]
    first["message"]["usage"]["speed"] = "fast"
    later = result("t1", uuid="u2", timestamp="2026-01-01T00:00:01.000Z")

    def changed(drop: bool) -> dict[str, Any]:
        line = json.loads(json.dumps(first))
        parent = line
        for key in where[:-1]:
            parent = parent[key]
        if drop:
            del parent[where[-1]]
        else:
            parent[where[-1]] = value
        return line

    def read(line: dict[str, Any]) -> list[Any]:
        return _trace_facts(jsonl(line, line, later))  # (written twice: a uuid drops the copy)

    assert read(changed(drop=False)) == read(changed(drop=True))
    assert read(changed(drop=True)) != read(first)  # the field counts for something
