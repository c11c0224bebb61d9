"""A session's title, as a person recognises it in a list: the name it was given, else what it asked first.

Newer Claude Code CLIs append ``{"type":"custom-title","customTitle":...}`` lines (``/rename``) and
``{"type":"ai-title","aiTitle":...}`` lines (a title the CLI generated) to a session transcript; the
latest custom title wins, then the latest AI title (as the CLI's own resume picker ranks them). Without
either, the title is the first prompt a person typed (Claude Code's first user message that is not a
meta line, a tool result or a command's output; a slash command as ``/name args``; Codex CLI's first
``user_message`` event; Gemini CLI's first ``user`` message), on one line and shortened to `TITLE_CHARS`.

The trace readers keep no text of the conversation, so this reads the file again: the title lines are
found with a byte search (they are rare), the first prompt within the first `HEAD_LINES` lines. Local files
only; standard input, URLs and unreadable files have no title (None).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

#: Characters a title keeps (a longer one is cut at a word and ends in ``…``).
TITLE_CHARS = 60

#: Lines read at most looking for the first prompt (it comes within the first few in every agent's files).
HEAD_LINES = 400

_COMMAND = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_ARGS = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.S)
_TAGS = re.compile(r"<[^>]{1,80}>")
#: Context the IDE or the harness adds to a message, not typed by the person: left out with its text.
_ADDED = re.compile(r"<(ide_[a-z_]+|system-reminder)>.*?</\1>", re.S)


def shorten(text: str, limit: int = TITLE_CHARS) -> str:
    """One line of at most `limit` characters: whitespace collapsed, cut at a word with ``…``.

    >>> shorten("Please  analyze this\\ncodebase and create a CLAUDE.md file", 30)
    'Please analyze this codebase…'
    >>> shorten("short")
    'short'
    """
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:.-") + "…"


def session_title(path: str) -> str | None:
    """The title of the session in the file at `path` (module docstring), shortened; None without one.

    Parameters
    ----------
    path
        A trace file (a Claude Code transcript or stream-json capture, a Codex CLI rollout, a Gemini CLI
        session). A ``#N`` run suffix is ignored: the runs of one file share its title.

    Returns
    -------
    str or None
        At most `TITLE_CHARS` characters; None for standard input, a URL, a file that cannot be read, or
        one with neither a title line nor a prompt.
    """
    file = Path(path.split("#", 1)[0])
    if path == "-" or "://" in path or not file.is_file():
        return None
    try:
        data = file.read_bytes()
    except OSError:
        return None
    named = _title_line(data, b'"custom-title"', "customTitle") or _title_line(data, b'"ai-title"', "aiTitle")
    if named:
        return shorten(named)
    prompt = _gemini_json_prompt(data) if data.lstrip()[:1] == b"{" and b"\n{" not in data[:4096] else None
    for line in data.split(b"\n", HEAD_LINES)[:HEAD_LINES]:
        if prompt:
            break
        prompt = _prompt_of(line)
    return shorten(prompt) if prompt else None


def _title_line(data: bytes, marker: bytes, key: str) -> str | None:
    """The `key` of the last line holding `marker` (a ``custom-title`` or ``ai-title`` line), else None."""
    at = data.rfind(marker)
    while at >= 0:
        start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
        record = _json(data[start : end if end >= 0 else len(data)])
        value = record.get(key) if isinstance(record, dict) else None
        if isinstance(value, str) and value.strip():
            return value
        at = data.rfind(marker, 0, start)
    return None


def _json(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _prompt_of(line: bytes) -> str | None:
    """The prompt a person typed, when this line is one (Claude Code, Codex CLI or a Gemini CLI JSONL)."""
    if b'"user' not in line:
        return None
    record = _json(line)
    if not isinstance(record, dict):
        return None
    payload = record.get("payload")
    if isinstance(payload, dict) and payload.get("type") == "user_message":  # Codex CLI
        return _clean(payload.get("message"))
    if record.get("type") == "user" and not record.get("isMeta"):
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else record.get("content")
        return _clean(content)
    return None


def _gemini_json_prompt(data: bytes) -> str | None:
    """The first user message of a Gemini CLI session saved as one JSON object (``messages[]``)."""
    record = _json(data)
    messages = record.get("messages") if isinstance(record, dict) else None
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("type") == "user":
            text = _clean(message.get("content"))
            if text:
                return text
    return None


def _clean(content: Any) -> str | None:
    """The text of a message's content (a string, or text parts; tool results and images are not
    prompts), a slash command as ``/name args``, tags removed; None when nothing a person typed is left.

    >>> _clean("<command-message>init is analyzing…</command-message>\\n<command-name>/init</command-name>")
    '/init'
    >>> _clean([{"type": "tool_result", "content": "x"}]), _clean("<local-command-stdout>ok</local-command-stdout>")
    (None, None)
    """
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict)]
        if any(p.get("type") == "tool_result" for p in parts):
            return None
        content = " ".join(p["text"] for p in parts if isinstance(p.get("text"), str))
    if not isinstance(content, str):
        return None
    command = _COMMAND.search(content)
    if command:
        args = _ARGS.search(content)
        return " ".join(x for x in (command.group(1), args.group(1) if args else "") if x) or None
    if content.lstrip().startswith(("<local-command", "Caveat:", "[Request interrupted")):
        return None
    text = _TAGS.sub(" ", _ADDED.sub(" ", content)).strip()
    return text or None
