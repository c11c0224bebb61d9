"""Codex CLI rollouts (`reading/codex`): real rollouts of several CLI versions read to their exact figures,
each also computed here straight from the raw lines by the documented rule (docs/formats.md); the call rule,
the failure rule, and a rollout without token counts."""

from __future__ import annotations

import io
import re
import shutil

import orjson
import pytest

from contexttrace import analyze, read_trace
from contexttrace.reading.codex import CODEX_CLI
from contexttrace.reading.codex.rollout import failed, is_rollout, read_rollout

from ..conftest import DATA, GOOD, SAMPLES

SMALL = SAMPLES / "c-codex-0.41-small.jsonl"
EXEC = SAMPLES / "c-codex-0.111-exec-command.jsonl"
COMPACTION = SAMPLES / "c-codex-0.65-compaction.jsonl"
LEGACY = SAMPLES / "c-codex-legacy-2025-08.jsonl"
TOOL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")


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


def _lines(path):
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _calls_by_rule(path):
    """The call rule applied to the raw lines: a token_count whose total changed and that counts input or output."""
    return _calls_in(_lines(path))


def _calls_in(lines):
    calls, prev = [], None
    for line in lines:
        payload = line.get("payload") or {}
        if line.get("type") != "event_msg" or payload.get("type") != "token_count" or not payload.get("info"):
            continue
        info = payload["info"]
        total, last = info["total_token_usage"]["total_tokens"], info["last_token_usage"]
        if total == prev:
            continue
        prev = total
        if last["input_tokens"] or last["output_tokens"]:
            calls.append(last)
    return calls


def _items(path, kinds):
    return [
        line["payload"]
        for line in _lines(path)
        if line.get("type") == "response_item" and line["payload"].get("type") in kinds
    ]


@pytest.mark.parametrize(
    ("path", "calls", "first", "peak", "tools", "failed_", "window", "version", "models"),
    [
        pytest.param(SMALL, 2, 2_659, 2_692, 0, 0, 272_000, "0.41.0", ["gpt-5-codex"], id="0.41-small"),
        pytest.param(EXEC, 85, 10_406, 88_208, 128, 9, 258_400, "0.111.0", ["gpt-5.3-codex"], id="0.111-exec"),
        pytest.param(
            COMPACTION,
            143,
            4_267,
            244_674,
            142,
            23,
            258_400,
            "0.65.0-alpha.11",
            ["gpt-5.1-codex-mini"],
            id="0.65-compaction",
        ),
    ],
)
def test_rollout_figures(path, calls, first, peak, tools, failed_, window, version, models):
    """Calls, first and peak prompt, tools and failures, the stated window: as written, and as the rule gives."""
    [trace] = read_trace(path)
    by_rule = _calls_by_rule(path)
    prompts = trace.view("calls").get_column("prompt_tokens").to_list()
    assert prompts == [c["input_tokens"] for c in by_rule]
    assert (len(prompts), prompts[0], max(prompts)) == (calls, first, peak)
    uses = trace.view("tool_uses").get_column("name").to_list()
    assert len(uses) == len(_items(path, TOOL_ITEMS)) == tools
    outputs = _items(path, ("function_call_output", "custom_tool_call_output"))
    nonzero = re.compile(r"(?:Exit code: |.*?Process exited with code )-?[1-9]", re.S)
    raw_failed = sum(1 for o in outputs if nonzero.match(o["output"]))
    assert sum(trace.view("tool_results").get_column("is_error").to_list()) == raw_failed == failed_
    assert (trace.format, trace.cli_version, trace.window_tokens, trace.window_source) == (
        "codex",
        version,
        window,
        "model_context_window",
    )
    [report] = analyze([str(path)]).reports
    assert (report.calls, report.first, report.peak, report.tools, report.failed, report.models) == (
        calls,
        first,
        peak,
        tools,
        failed_,
        models,
    )


def test_cached_and_reasoning_are_parts_not_extra_buckets():
    """`cached_input_tokens` is part of `input_tokens` and `reasoning_output_tokens` part of `output_tokens`:
    the prompt is the input as written (never input + cached), the output never adds reasoning."""
    [trace] = read_trace(EXEC)
    calls = trace.view("calls")
    by_rule = _calls_by_rule(EXEC)
    uncached = calls.get_column("input_tokens").to_list()
    cached = calls.get_column("cache_read_tokens").to_list()
    assert [u + c for u, c in zip(uncached, cached, strict=True)] == [c["input_tokens"] for c in by_rule]
    assert cached == [c["cached_input_tokens"] for c in by_rule]
    assert calls.get_column("output_tokens").to_list() == [c["output_tokens"] for c in by_rule]
    assert sum(c["reasoning_output_tokens"] for c in by_rule) > 0  # the sample has reasoning to double-count


def test_tool_uses_belong_to_the_call_that_wrote_them():
    """A call's tool uses are the model-written items beside its token_count (after it up to CLI 0.65, before
    it later): each tool use names a call, and the call counts its inputs' characters."""
    [trace] = read_trace(EXEC)
    calls = trace.view("calls")
    uses = trace.view("tool_uses")
    ids = set(calls.get_column("message_id").to_list())
    assert all(m in ids for m in uses.get_column("message_id").to_list())
    per_call: dict[str, int] = {}
    use_chars = zip(uses.get_column("message_id").to_list(), uses.get_column("input_chars").to_list(), strict=True)
    for m, chars in use_chars:
        per_call[m] = per_call.get(m, 0) + chars
    ids_in_order = calls.get_column("message_id").to_list()
    written = dict(zip(ids_in_order, calls.get_column("tool_input_chars").to_list(), strict=True))
    assert {m: written[m] for m in per_call} == per_call
    # a call's first line comes before its tool uses', its tool uses before their results
    seq_of = dict(zip(ids_in_order, calls.get_column("seq").to_list(), strict=True))
    use_seqs = zip(uses.get_column("message_id").to_list(), uses.get_column("seq").to_list(), strict=True)
    assert all(seq_of[m] <= s for m, s in use_seqs)


def test_legacy_rollout_is_read_with_no_measured_call():
    """A rollout of a CLI before 0.32 (a bare session line, no token counts) is a Codex trace with no
    measured call, and says why."""
    [trace] = read_trace(LEGACY)
    first = _lines(LEGACY)[0]
    assert (trace.format, trace.session_id, trace.view("calls").height) == ("codex", first["id"], 0)
    assert any("before 0.32" in w for w in trace.warnings)


def test_format_is_decided_by_content_not_name(tmp_path):
    """A rollout renamed to anything is still read as Codex; a Claude transcript is not taken for one."""
    renamed = tmp_path / "notes.txt"
    shutil.copy(SMALL, renamed)
    [trace] = read_trace(renamed)
    assert trace.format == "codex"
    assert is_rollout(SMALL.read_bytes()[:65536])
    assert not is_rollout((SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes()[:65536])


def test_compaction_is_counted_with_the_sizes_around_it():
    """A `compacted` line is a compaction: its size before is the last call's prompt (exact), and the next
    call's prompt is the size after (the zero-usage estimate Codex writes between them is no call)."""
    lines = _lines(COMPACTION)
    at = next(i for i, line in enumerate(lines) if line.get("type") == "compacted")
    before = [c["input_tokens"] for c in _calls_in(lines[:at])]
    after = [c["input_tokens"] for c in _calls_in(lines)][len(before)]
    [report] = analyze([str(COMPACTION)]).reports
    assert report.compact == 1
    [event] = report.compaction_events
    assert (event["pre_tokens"], before[-1], after) == (244_674, 244_674, 4_804)
    assert report.prompt_tokens[len(before) - 1 : len(before) + 1] == [244_674, 4_804]


def test_fork_replay_is_the_parents_and_left_out():
    """A forked rollout (``forked_from_id``; the parent's ``session_meta`` copied after its own) starts with
    the parent's lines copied in one burst: their calls are the parent's (left out, counted in
    `inherited_calls`, said in a warning); the fork's own calls start after the burst."""

    def line(ts, kind, payload):
        return orjson.dumps({"timestamp": f"2026-03-01T10:00:{ts}Z", "type": kind, "payload": payload})

    def count(ts, total, prompt):
        last = {"input_tokens": prompt, "cached_input_tokens": 0, "output_tokens": 10}
        info = {"total_token_usage": {"total_tokens": total}, "last_token_usage": last, "model_context_window": 258_400}
        return line(ts, "event_msg", {"type": "token_count", "info": info})

    def said(ts, text):
        return line(
            ts, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        )

    use = {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"}
    lines = [
        line("00.000", "session_meta", {"id": "child", "forked_from_id": "parent", "cli_version": "0.111.0"}),
        line("00.001", "session_meta", {"id": "parent", "cli_version": "0.110.0"}),
        line("00.002", "turn_context", {"model": "gpt-5.3-codex"}),
        said("00.003", "a"),
        count("00.004", 1_010, 1_000),
        line("00.005", "response_item", use),
        line("00.006", "response_item", {"type": "function_call_output", "call_id": "c1", "output": "Exit code: 1"}),
        count("00.007", 2_170, 1_150),
        said("30.000", "b"),
        count("35.000", 3_430, 1_250),
    ]  # fmt: skip
    [trace] = read_rollout("fork.jsonl", io.BytesIO(b"\n".join(lines) + b"\n"))
    assert trace.view("calls").get_column("prompt_tokens").to_list() == [1_250]
    assert (trace.inherited_calls, trace.view("tool_uses").height, trace.session_id) == (2, 0, "child")
    assert trace.warnings == [
        "a fork of session parent: the 2 call(s) it copied from it at its start are the parent's, left out here"
    ]


def _injected_events(trace):
    ev = trace.view("events")
    cols = [ev.get_column(c).to_list() for c in ("line", "kind", "text_chars", "attachment_type")]
    return [row for row in zip(*cols, strict=True) if row[1] in ("prompt", "meta", "attachment")]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(
            EXEC,
            [
                (2, "attachment", 3_996, "developer_instructions"),  # <permissions instructions>: harness framing
                (3, "attachment", 2_586, "instructions"),  # AGENTS.md: header, the file, </INSTRUCTIONS>
                (3, "attachment", 3_951, "skill_listing"),  # the "## Skills" listing Codex appends inside it
                (3, "attachment", 206, "environment_context"),  # the same message's second item
                (5, "attachment", 996, "developer_instructions"),  # <collaboration_mode>, a developer message
                (7, "prompt", 5_193, None),
                (152, "prompt", 73, None),
                (212, "prompt", 167, None),
                (319, "prompt", 99, None),
                (431, "prompt", 134, None),
            ],
            id="0.111",
        ),
        pytest.param(
            COMPACTION,
            [
                (2, "attachment", 2_924, "instructions"),
                (3, "attachment", 246, "environment_context"),
                (4, "prompt", 530, None),  # "# Context from my IDE setup": the person's request with its tabs
                # the compaction's replacement_history writes them back into the window; the prompt as meta
                (844, "attachment", 2_924, "instructions"),
                (844, "attachment", 246, "environment_context"),
                (844, "meta", 530, None),
            ],
            id="0.65",
        ),
        pytest.param(
            SMALL,
            [(2, "attachment", 293, "environment_context"), (3, "prompt", 8, None), (12, "prompt", 50, None)],
            id="0.41",
        ),
        pytest.param(LEGACY, [(3, "attachment", 267, "environment_context")], id="legacy"),
    ],
)
def test_start_up_context_is_attachments_not_prompts(path, expected):
    """The guidance files (AGENTS.md), the skills listing Codex appends to them and `<environment_context>`
    are attachments the rows place in memory files, skills and harness; the person's prompts stay `prompt`
    (the turns), and the other texts Codex injects `meta`. Every message's characters are kept whole."""
    [trace] = read_trace(str(path))
    got = _injected_events(trace)
    assert got == expected
    by_line: dict[int, int] = {}
    for line, _kind, chars, _type in got:
        by_line[line] = by_line.get(line, 0) + chars
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        line = orjson.loads(raw)
        payload = line.get("payload", line)
        if payload.get("type") == "message" and payload.get("role") != "assistant":
            texts = [c["text"] for c in payload["content"] if c.get("type") in ("input_text", "text")]
            assert by_line[number] == sum(map(len, texts))
    assert trace.view("events").get_column("kind").to_list().count("prompt") == sum(
        1 for e in expected if e[1] == "prompt"
    )


@pytest.mark.parametrize(
    ("path", "lines"),
    [
        pytest.param(EXEC, [7, 152, 212, 319, 431], id="0.111"),
        pytest.param(COMPACTION, [4], id="0.65"),
        pytest.param(SMALL, [3, 12], id="0.41"),
        pytest.param(LEGACY, [], id="legacy"),
    ],
)
def test_turns_are_the_person_s_prompts_only(path, lines):
    """A turn starts at a prompt the person wrote: the guidance files, the environment and the other texts
    Codex injects start none (the first turn of 0.111 is line 7, after the three start-up messages)."""
    from contexttrace.reports.turns import turn_table

    [trace] = read_trace(str(path))
    assert [t["line"] for t in turn_table(trace)] == lines


def _is_rollout_by_decoding(head: bytes) -> bool:
    """The sniff rule decoded line by line, with no byte pre-filter: what `is_rollout` must always agree with."""
    for raw in head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n")[:8]:
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(line, dict):
            kind = line.get("type")
            if type(kind) is str and kind in {
                "session_meta",
                "response_item",
                "event_msg",
                "turn_context",
                "compacted",
            }:
                return isinstance(line.get("payload"), dict)
            return "type" not in line and (("id" in line and "instructions" in line) or "record_type" in line)
    return False


def _heads_of_every_file() -> list[bytes]:
    roots = [SAMPLES, DATA, SAMPLES.parent / "benchmarks"]
    paths = sorted(
        p for root in roots for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".txt", "")
    )
    return [p.read_bytes()[:65536] for p in paths]


def test_sniff_reads_lines_lazily_and_decides_as_splitting_the_head():
    """`is_rollout` walks the head's lines one by one (no split of the whole head); it gives the same answer
    as splitting it on every sample, case and fuzz file, and on heads that start like Claude Code's but are
    rollouts (a later duplicate key, an escaped key, a damaged first line before a rollout line, a bare legacy
    line), at the edges (empty, only newlines, no final newline, the ninth line)."""
    heads = _heads_of_every_file()
    assert len(heads) > 50 and sum(_is_rollout_by_decoding(h) for h in heads) >= 4
    payload = b'"payload":{"id":"x"}'
    crafted = [
        b'{"type":"user","sessionId":"s","type":"session_meta",' + payload + b"}\n",
        b'{"type":"user","sessionId":"s","type":"session_meta","p\\u0061yload":{"id":"x"}}\n',
        b'{"type":"user","sessionId":"s","type":"session_meta","PAYLOAD":{}}\n',
        b'{"parentUuid":null,"sessionId":"s","id":"x","i\\u006Estructions":null}\n',
        b'{"parentUuid":null,"sessionId":"s","record_type":"state"}\n',
        b'{"parentUuid":null,"sessionId":"s"\n{"timestamp":"t","type":"session_meta",' + payload + b"}\n",
        b'{"type":"user","text":"payload"}\n',
        b'{"type":"user","text":"\\u001b[0m"}\n',
        b'{"type":"user"}\n' * 8 + b'{"type":"session_meta",' + payload + b"}\n",
        b"\xef\xbb\xbf\n\n" + b'{"type":"session_meta",' + payload + b"}",
        b"", b"\n", b"[1]\n" * 9 + b'{"type":"session_meta",' + payload + b"}",
    ]  # fmt: skip
    answers = [_is_rollout_by_decoding(h) for h in crafted]
    assert answers[:6] == [True, True, False, True, True, True] and answers[9] is True
    for head in heads + crafted:
        assert is_rollout(head) == _is_rollout_by_decoding(head), head[:80]


def test_a_first_line_longer_than_the_sniffed_head_is_still_a_rollout(tmp_path):
    """A rollout whose `session_meta` line outgrows the 64 KiB head the seam sniffs (long base instructions)
    is read, with the figures of the same rollout with a short first line (it was refused: "none of the
    first lines is a rollout's"); a Claude Code file with a long first line is not taken for one."""
    from typer.testing import CliRunner

    from contexttrace.cli.app import app

    original = SAMPLES / "c-codex-0.111-exec-command.jsonl"
    first, rest = original.read_bytes().split(b"\n", 1)
    meta = orjson.loads(first)
    meta["payload"]["base_instructions"]["text"] += " padding" * 12_000  # ≈ 96 KB: past the head
    long_first = orjson.dumps(meta)
    assert len(long_first) > 64 * 1024 and long_first.startswith(first[:70])
    path = tmp_path / "rollout-long-first-line.jsonl"
    path.write_bytes(long_first + b"\n" + rest)
    runner = CliRunner()
    args = ["context", "trace", "--json", "--no-cache"]
    got = orjson.loads(runner.invoke(app, [*args, str(path)], catch_exceptions=False).stdout)
    want = orjson.loads(runner.invoke(app, [*args, str(original)], catch_exceptions=False).stdout)
    assert got[0]["format"] == "codex"
    assert [got[0][k] for k in ("calls", "first", "peak", "growth")] == [
        want[0][k] for k in ("calls", "first", "peak", "growth")
    ]
    assert got[0]["calls"] == 85
    claude = tmp_path / "claude.jsonl"
    claude.write_bytes(b'{"type":"user","message":{"role":"user","content":"' + b"x" * 70_000 + b'"}}\n')
    assert not CODEX_CLI.sniff(claude.read_bytes()[: 64 * 1024])
