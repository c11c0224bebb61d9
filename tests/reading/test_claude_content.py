"""What a content block measures (`reading/claude/content.py`): what each call wrote, each tool use's
input size and the file a shell command reads, each result's size, images and error text, refusals,
persisted outputs, results cut at a cap, task notifications, pasted images and attachments."""

from __future__ import annotations

import base64

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contexttrace import analyze, read_trace
from contexttrace.reading import result_size
from contexttrace.reading.claude.content import PART_READ, attachment_chars, image_size, read_caps
from contexttrace.reading.claude.records import Decoded
from contexttrace.reading.text import shell_read_path
from contexttrace.reports.trace import build_report
from contexttrace.reports.usage import build_usage

from ..conftest import CASES, FUZZ, SAMPLES, assistant, report_of, result, trace_and_report


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("cat src/app.py", "src/app.py"),
        ("cat -n 'a b.py'", "a b.py"),
        ("sed -n '1,80p' src/app.py", "src/app.py"),
        ("sed -n -e '1,80p' src/app.py", "src/app.py"),
        ("head -n 20 x.txt", "x.txt"),
        ("head -20 x.txt", "x.txt"),
        ("tail -f log.txt", "log.txt"),
        ("tail --lines=5 -- -odd", "-odd"),
        ("cat a.py b.py", None),  # two paths: not one file's read
        ("sed 's/a/b/' f.py", None),  # sed without -n prints every line edited: not a plain read
        ("sed -i -n '1p' f.py", None),  # edits in place
        ("cat f.py | head", None),  # a pipeline
        ("cd x && cat f.py", None),  # a list
        ("cat < f.py", None),  # a redirection
        ("cat $(ls)", None),  # a substitution
        ("cat", None),  # standard input
        ("cat -", None),
        ("ls f.py", None),
        ("cat 'unclosed", None),
        (None, None),
        # a glob or brace names any number of files; sed's long -n; 2>/dev/null removed
        ("cat src/*.py", None),
        ("head src/*.ts", None),
        ("tail -n 5 log?.txt", None),
        ("cat src/[ab].py", None),
        ("cat src/{a,b}.py", None),
        ("cat 'app/[id]/page.tsx'", "app/[id]/page.tsx"),  # quoted: one literal path
        ("cat app/\\[id\\].tsx", "app/[id].tsx"),  # escaped: the same
        ("sed --quiet 1p a", "a"),
        ("sed --silent -e '2,4p' a", "a"),
        ("sed --expression=1p a", None),  # no -n: prints every line
        ("cat a 2>/dev/null", "a"),
        ("head -n 3 a 2> /dev/null", "a"),
        ("cat a 2>/dev/null | head", None),  # still a pipeline
        ("cat a 2>err.txt", None),  # errors kept in a file: a redirection like any other
        ("cat a >/dev/null", None),
    ],
)
def test_shell_read_path(command, path):
    """One file's read, or None (docs/sources.md "files")."""
    assert shell_read_path(command) == path


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("<command-name>/clear</command-name>\n<command-message>clear</command-message>", "/clear"),
        ("<command-message>model</command-message>\n<command-name>/model</command-name>", "/model"),
        ("<local-command-stdout>Cleared</local-command-stdout>", None),
        ("<command-name></command-name>", None),
    ],
)
def test_command_name_of_a_user_line(write, text, name):
    """The reader keeps a slash-command line's name (`events.command_name`, READER_VERSION 5), null on
    other lines (a /clear is a boundary)."""
    [trace] = read_trace(write("s.jsonl", {"type": "user", "sessionId": "s", "message": {"role": "user",
                                           "content": text}}, {"type": "user", "sessionId": "s",
                                           "message": {"role": "user", "content": "plain"}}))  # fmt: skip
    assert trace.events.select("kind", "command_name").rows() == [("command", name), ("prompt", None)]


def _b64(data: bytes) -> Decoded:
    return Decoded(base64.b64encode(data).decode())


def test_image_sizes_from_headers():
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + (640).to_bytes(4, "big") + (480).to_bytes(4, "big") + b"\x00" * 20
    gif = b"GIF89a" + (10).to_bytes(2, "little") + (20).to_bytes(2, "little") + b"\x00" * 30
    webp = b"RIFF\x00\x00\x00\x00WEBPVP8X" + b"\x00" * 8 + (99).to_bytes(3, "little") + (49).to_bytes(3, "little")
    app0 = b"\xff\xe0" + (16).to_bytes(2, "big") + b"\x00" * 14
    jpeg = b"\xff\xd8" + app0 + b"\xff\xc0" + (17).to_bytes(2, "big") + b"\x08" + (300).to_bytes(2, "big")
    jpeg += (400).to_bytes(2, "big") + b"\x00" * 40
    assert image_size(_b64(png)) == (640, 480)
    assert image_size(_b64(gif)) == (10, 20)
    assert image_size(_b64(webp)) == (100, 50)
    assert image_size(_b64(jpeg)) == (400, 300)
    assert image_size(_b64(b"not an image at all, no")) is None
    assert image_size(Decoded("@@@not base64@@@")) is None
    assert image_size(Decoded(3)) is None


def test_attachment_chars():
    assert attachment_chars("héllo") == 5
    assert attachment_chars(["ab", "cde"]) == 5
    assert attachment_chars([{"id": "1"}]) == len('[{"id":"1"}]')
    assert attachment_chars(None) is None


def test_what_each_call_wrote(write):
    """Thinking, prose and tool inputs per call, summed over its lines; a sidechain replay of a main call
    (CASES B05) does not count its blocks twice."""
    think = assistant("m1", 1, 2, 3, 5)
    think["message"]["content"] = [{"type": "thinking", "thinking": "abcd", "signature": "s"}]
    text = assistant("m1", 1, 2, 3, 9)
    text["message"]["content"] = [{"type": "text", "text": "héllo"}]
    use = assistant("m1", 1, 2, 3, 9, tools=[("t1", "Read", {"file_path": "/a"})])
    replay = {**text, "isSidechain": True, "agentId": "side"}
    redacted = assistant("m2", 1, 2, 4, 1)
    redacted["message"]["content"] = [{"type": "redacted_thinking", "data": "xx"}]
    [trace] = read_trace(write("s.jsonl", think, text, use, replay, redacted))
    calls = trace.calls
    assert calls["has_thinking"].to_list() == [True, True]
    assert calls["thinking_chars"].to_list() == [4, 0]
    assert calls["text_chars"].to_list() == [5, 0]
    assert calls["tool_input_chars"].to_list() == [len('{"file_path":"/a"}'), 0]
    assert trace.tool_uses["input_chars"].to_list() == [len('{"file_path":"/a"}')]


def test_a_bash_read_and_failed_result(write):
    lines = [
        assistant(
            "m1", 1, 2, 3, tools=[("t1", "Bash", {"command": "sed -n '1,9p' a.py"}), ("t2", "Bash", {"command": "ls"})]
        ),
        result("t1", "x" * 400, is_error=True),
        result("t2", "ok"),
    ]
    [trace] = read_trace(write("s.jsonl", *lines))
    assert trace.tool_uses["read_path"].to_list() == ["a.py", None]
    assert trace.tool_results["error_head"].to_list() == ["x" * 300, None]


def test_images_in_results_and_prompts(write):
    png = base64.b64encode(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + (30).to_bytes(4, "big") + (20).to_bytes(4, "big")
    ).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    shot = result("t1", [image, {"type": "image", "source": {"data": "QUJD"}}])
    prompt = {
        "type": "user",
        "sessionId": "s",
        "message": {"role": "user", "content": [{"type": "text", "text": "see"}, image]},
    }
    [trace] = read_trace(
        write("s.jsonl", prompt, assistant("m1", 1, 2, 3, tools=[("t1", "Read", {"file_path": "/a.png"})]), shot)
    )
    results = trace.tool_results
    assert (results["result_images"].to_list(), results["result_images_sized"].to_list()) == ([2], [1])
    assert results["result_image_pixels"].to_list() == [600]
    [prompt_row] = trace.events.filter(trace.events["kind"] == "prompt").iter_rows(named=True)
    assert (prompt_row["text_chars"], prompt_row["images"]) == (3, 1)


def test_attachments_are_events():
    """The 2.1.114 session's attachments: one event each, with their type and characters."""
    [trace] = read_trace(next(SAMPLES.glob("b-ccl-agent-teams-opus47/*.jsonl")))
    att = trace.events.filter(trace.events["kind"] == "attachment")
    assert att.height > 0
    assert "skill_listing" in att["attachment_type"].to_list()
    assert all(t is not None for t in att["ts_ms"].to_list())


def test_b21_result_content_shapes():
    """B21: text size = 11 ('line1\\nline2') + 16 ('Screenshot taken') + the persisted preview's length
    + 0 (unknown block); 1 image apart; the persisted preview is flagged with ≈ 46.4 KB."""
    trace, rep = trace_and_report(str(CASES / "B21.jsonl"))
    preview = orjson.loads((CASES / "B21.jsonl").read_bytes().splitlines()[2])["message"]["content"][0]["content"]
    assert rep.result_chars == 11 + 16 + len(preview)
    assert rep.result_images == 1
    assert rep.persisted_results == 1
    assert rep.persisted_bytes == int(46.4 * 1024)
    assert trace.tool_results["unknown_blocks"].sum() == 1
    assert rep.orphan_results == 4


def test_b22_denials_are_failed_and_counted_apart():
    """B22: 4 results: missing is_error = success; 3 have is_error true, of which 2 are denials (a
    toolDenialKind, and the user-rejection text). Table `failed` keeps denials; `denied` = 2."""
    _, rep = trace_and_report(str(CASES / "B22.jsonl"))
    assert rep.failed == 3
    assert rep.denied == 2
    assert rep.failed - rep.denied == 1


def test_b31_task_notification_is_not_a_turn():
    """B31: turns 1, calls 3, series [22,003, 22,102, 22,302], tools 1, result chars 44, cost $0.048585,
    velocity null (one turn)."""
    rep = report_of(CASES / "B31.jsonl")
    assert (rep.calls, rep.prompt_tokens, rep.tools, rep.result_chars) == (3, [22003, 22102, 22302], 1, 44)
    [usage] = analyze([str(CASES / "B31.jsonl")], build=build_usage).reports
    assert usage.turn_figures["turns"] == 1
    assert round(usage.to_dict()["cost_usd"], 6) == 0.048585
    assert usage.turn_figures["context_velocity_tokens"] is None
    [trace] = read_trace(str(CASES / "B31.jsonl"))
    assert trace.events.filter(kind="task_notification").height == 1


def test_task_notification_text_fallback(write):
    """Without `origin`, a user text starting with <task-notification> is still not a prompt."""
    lines = [
        {"type": "user", "sessionId": "s", "uuid": "u1", "message": {"role": "user", "content": "go"}},
        assistant("m1", 1, 10, 0),
        {
            "type": "user",
            "sessionId": "s",
            "uuid": "u2",
            "message": {"role": "user", "content": "<task-notification>x"},
        },
        assistant("m2", 1, 10, 10),
    ]
    [trace] = read_trace(write("t.jsonl", *lines))
    assert trace.events["kind"].to_list() == ["prompt", "task_notification"]


@pytest.mark.parametrize("name", ["02-persisted-size-not-a-number.jsonl", "02b-persisted-size-overflow.jsonl"])
def test_fuzz_02_persisted_size_unknown_result_still_counts(name):
    """02/02b: a persisted-output size that is not a number (or overflows) is unknown; the result counts."""
    [trace] = read_trace(str(FUZZ / name))
    assert trace.tool_results["persisted"].to_list() == [True]
    assert trace.tool_results["persisted_bytes"].to_list() == [None]
    assert report_of(FUZZ / name).tools == 1


def test_fuzz_12_image_bytes_never_negative():
    """12: base64 data of padding only decodes to 0 bytes, never -1."""
    assert report_of(FUZZ / "12-image-data-padding-only-negative-bytes.jsonl").result_image_bytes == 0


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param("abc", (3, 0, 0, 0), id="string"),
        pytest.param(None, (0, 0, 0, 0), id="missing"),
        pytest.param([{"type": "text", "text": "ab"}, {"type": "text", "text": "cd"}], (4, 0, 0, 0), id="text-blocks"),
        pytest.param([{"type": "image", "source": {"data": "QUJDRA=="}}], (0, 1, 4, 0), id="image-padded"),
        pytest.param([{"type": "tool_reference"}, "x"], (0, 0, 0, 2), id="unknown"),
        pytest.param({"weird": 1}, (0, 0, 0, 1), id="dict"),
    ],
)
def test_result_size_shapes(content, expected):
    """result_size measures every content shape without crashing."""
    assert result_size(content) == expected


@pytest.mark.parametrize(
    "text",
    [
        "This command requires approval",
        "This Bash command contains multiple operations. The following part requires approval: rm -rf x",
        "ls in '~/.claude' was blocked. For security, Claude Code may only list files in the allowed directories",
        "Claude requested permissions to use WebSearch, but you haven't granted it yet.",
        "The user doesn't want to take this action right now. STOP what you are doing",
    ],
)
def test_reader_permission_refusal_texts_are_denials(write, text):
    """Refusal texts the real samples show (print mode, rejections) are denied, not tool failures."""
    path = write("t.jsonl", assistant("m1", 1, 1, 1, tools=[("t1", "Bash", {})]), result("t1", text, is_error=True))
    rep = build_report(read_trace(path)[0])
    assert (rep.failed, rep.denied) == (1, 1)


def test_reader_tool_failure_text_is_not_a_denial(write):
    """An ordinary tool error is failed but not denied."""
    path = write(
        "t.jsonl", assistant("m1", 1, 1, 1, tools=[("t1", "Bash", {})]), result("t1", "Exit code 1", is_error=True)
    )
    rep = build_report(read_trace(path)[0])
    assert (rep.failed, rep.denied) == (1, 0)


def plain_read_caps(capped: list[object], ids: list[object], uses: dict[str, list[object]]) -> list[bool]:
    """`read_caps` as first written (every tool use's input read), with the part-read marker compared by
    equality, as `read_caps` compares it (a marker that went through pickle is an equal string, not the same
    object)."""
    limited = {}
    for tid, name, text in zip(uses["tool_use_id"], uses["name"], uses["input_json"], strict=True):
        if tid is not None:
            try:
                inp = orjson.loads(text)  # type: ignore[arg-type]
            except orjson.JSONDecodeError:
                inp = None
            limited[tid] = not (name == "Read" and type(inp) is dict and inp.get("limit") is None)
    return [c is True or (c == PART_READ and not limited.get(tid, True)) for c, tid in zip(capped, ids, strict=True)]


_TIDS = st.sampled_from([None, "t1", "t2", "t3", "t4"])


_USE = st.tuples(
    _TIDS, st.sampled_from(["Read", "Bash"]), st.sampled_from(['{"limit":5}', "{}", '{"limit":null}', "[1]", "x"])
)


@given(st.lists(st.tuples(st.sampled_from([True, False, PART_READ, "".join(["pa", "rt"])]), _TIDS)), st.lists(_USE))
def test_read_caps_equals_plain_reading(results: list[tuple[object, object]], uses: list[tuple[object, ...]]) -> None:
    """Results capped, not capped or part-read (the marker itself, or an equal string made apart), against Read
    and other uses with and without a limit (ids repeated, missing, or naming no use)."""
    capped, ids = [c for c, _ in results], [t for _, t in results]
    table = {"tool_use_id": [u[0] for u in uses], "name": [u[1] for u in uses], "input_json": [u[2] for u in uses]}
    assert read_caps(capped, ids, table) == plain_read_caps(capped, ids, table)


def test_b37_launch_receipt_and_the_notification_that_reports():
    """B37: the Agent call's result is a launch receipt (`toolUseResult.isAsync`), marked `agent_async`;
    the task notification names the call (`<tool-use-id>`) and holds the report (53 chars of `<result>`)."""
    [trace] = read_trace(str(CASES / "B37" / "s37.jsonl"))
    [receipt] = trace.tool_results.to_dicts()
    assert (receipt["tool_use_id"], receipt["agent_async"], receipt["result_chars"]) == ("toolu_37A", True, 129)
    [note] = trace.events.filter(kind="task_notification").to_dicts()
    assert (note["tool_use_id"], note["report_chars"], note["line"]) == ("toolu_37A", 53, 6)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("<task-notification><tool-use-id>t1</tool-use-id><result>a</result><result>b</result>", ("t1", 19)),
        ("<task-notification><tool-use-id> t1 </tool-use-id><result></result>", ("t1", 0)),
        ("<task-notification><result>no end", (None, None)),
        ("<task-notification></result><result>", (None, None)),
    ],
)
def test_notification_report_reads_what_the_tags_hold(text, said):
    """The report runs from the first `<result>` to the last `</result>`; a tag missing or out of order
    states nothing."""
    from contexttrace.reading.claude.content import notification_report

    assert notification_report(text) == said


def test_image_sizes_past_2_53_pixels_are_damage_not_a_size(write):
    """A PNG header stating 2**32-1 × 2**32-1 pixels (past 2**53 in all) leaves the image unsized: the
    pixel column stays a count an Int64 frame holds."""
    big = (2**32 - 1).to_bytes(4, "big")
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + big + big
    image = {"type": "image", "source": {"type": "base64", "data": base64.b64encode(png).decode()}}
    path = write("t.jsonl", assistant("m1", 1, 1, 1, tools=[("t1", "Read", {})]), result("t1", [image]))
    [trace] = read_trace(path)
    row = trace.tool_results.row(0, named=True)
    assert (row["result_images"], row["result_image_pixels"], row["result_images_sized"]) == (1, 0, 0)
