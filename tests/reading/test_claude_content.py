"""The columns added for `context sources` and `context files` (issues 12, 13): what each call wrote, each
tool use's input size and the file a shell command reads, each result's image pixels and error text, pasted
images and attachments."""

from __future__ import annotations

import base64

import pytest

from contexttrace.reading import read_trace
from contexttrace.reading.claude.content import attachment_chars, image_size
from contexttrace.reading.claude.records import Decoded
from contexttrace.reading.text import shell_read_path

from .conftest import SAMPLES, assistant, result


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
        # issue 12 review: a glob or brace names any number of files; sed's long -n; 2>/dev/null removed
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
    """One file's read, or None (docs/sources.md "files", issue 12)."""
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
    other lines (issue 12: a /clear is a boundary)."""
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
