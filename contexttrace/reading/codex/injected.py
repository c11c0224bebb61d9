"""The start-up context a Codex CLI rollout writes as user messages, told apart from a person's prompt.

Codex writes what it adds to the conversation itself as messages of the user (or developer) role: the
project's guidance files (``# AGENTS.md instructions for <cwd>`` with the text inside
``<INSTRUCTIONS>...</INSTRUCTIONS>``; ``<user_instructions>`` in older CLIs), the session's environment
(``<environment_context>``: cwd, shell, date, sandbox policy), the permissions and collaboration-mode
texts, an aborted turn's notice. One message may carry several of them as separate content items (CLI
0.111 writes the guidance files and the environment in one message).

`content_parts` splits a message's text items into what the `events` table records of each:

* a guidance-file item is an ``attachment`` of type ``instructions`` (the row Claude Code's memory
  files fill); the skills listing Codex appends inside it (``## Skills`` and the fixed sentence that
  opens it, up to ``</INSTRUCTIONS>``) is one of type ``skill_listing`` (the skills row);
* an ``<environment_context>`` item is an ``attachment`` of type ``environment_context``: harness framing,
  as Claude Code's harness-written attachment lines are;
* a developer message's text, and a user-role item opening with one of `FRAMING_STARTS` (the permissions
  and collaboration-mode texts), is an ``attachment`` of type ``developer_instructions``: harness framing
  too, not a prompt;
* the remaining items, joined, are one ``meta`` event when the message is injected (another role, or
  their text starts with one of `INJECTED_STARTS`), else the person's ``prompt``.
"""

from __future__ import annotations

from typing import Any

#: User-role messages Codex writes itself (start-up context), told from a person's prompt by their start.
INJECTED_STARTS = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<skills_instructions>",
    "<turn_aborted>",
)
#: How a content item holding the project's guidance files starts (CLI 0.50+; before it, the tag).
GUIDANCE_STARTS = ("# AGENTS.md instructions", "<user_instructions>")
#: How the user-role items holding the permissions and collaboration-mode texts start (harness framing).
FRAMING_STARTS = ("<permissions instructions>", "<collaboration_mode>")
#: How the content item holding the session's environment starts.
ENVIRONMENT_START = "<environment_context>"
#: How the skills listing Codex appends to the guidance files starts (its fixed heading and first words).
SKILLS_START = "## Skills\nA skill is a set of local instructions"
#: Where the guidance files' text ends (the listing runs up to it).
GUIDANCE_END = "</INSTRUCTIONS>"
#: Content item types that carry a message's text.
TEXT_ITEMS = ("input_text", "text")


def guidance_split(text: str) -> tuple[int, int]:
    """(characters of the guidance files, characters of the skills listing) of a guidance-file item: the
    listing runs from `SKILLS_START` up to the last `GUIDANCE_END` after it (to the end without one); the
    rest, header and tags included, is the files'.

    >>> guidance_split("# AGENTS.md instructions for /x\\n\\n<INSTRUCTIONS>\\nUse tabs.\\n</INSTRUCTIONS>")
    (73, 0)
    >>> t = "<INSTRUCTIONS>\\nUse tabs.\\n\\n" + SKILLS_START + ".\\n- a: b\\n</INSTRUCTIONS>"
    >>> guidance_split(t), len(t)
    ((41, 57), 98)
    """
    start = text.find(SKILLS_START)
    if start < 0:
        return len(text), 0
    end = text.rfind(GUIDANCE_END)
    skills = (end if end > start else len(text)) - start
    return len(text) - skills, skills


def content_parts(role: Any, content: Any) -> tuple[list[tuple[str, int]], str | None, int]:
    """A user or developer message's content as the `events` it records.

    Parameters
    ----------
    role
        The message's `role` as written (anything but ``"user"`` makes the rest ``meta``).
    content
        Its `content`: a string, or a list of content items (``input_text``/``text`` carry text,
        ``input_image`` an image).

    Returns
    -------
    tuple
        (attachments: (`attachment_type`, characters) in content order, each item's own text;
        the rest's kind: ``"prompt"``, ``"meta"``, or None when no text or image is left;
        the rest's characters). Images are counted on the rest by the caller.

    >>> content_parts("user", [{"type": "input_text", "text": "<environment_context>x</environment_context>"},
    ...                        {"type": "input_text", "text": "fix it"}])
    ([('environment_context', 44)], 'prompt', 6)
    >>> content_parts("developer", "<permissions instructions>...")
    ([('developer_instructions', 29)], None, 0)
    """
    items = [{"type": "input_text", "text": content}] if isinstance(content, str) else content
    items = items if isinstance(items, list) else []
    attached: list[tuple[str, int]] = []
    rest: list[str] = []
    has_image = False
    for item in items:
        if not isinstance(item, dict):
            continue
        has_image = has_image or item.get("type") == "input_image"
        text = item.get("text")
        if item.get("type") not in TEXT_ITEMS or not isinstance(text, str):
            continue
        head = text.lstrip()
        if head.startswith(GUIDANCE_STARTS):
            files, skills = guidance_split(text)
            attached.append(("instructions", files))
            if skills:
                attached.append(("skill_listing", skills))
        elif head.startswith(ENVIRONMENT_START):
            attached.append(("environment_context", len(text)))
        elif role == "developer" or head.startswith(FRAMING_STARTS):
            attached.append(("developer_instructions", len(text)))
        else:
            rest.append(text)
    joined = "".join(rest)
    if not rest and not has_image and attached:
        return attached, None, 0
    injected = role != "user" or joined.lstrip().startswith(INJECTED_STARTS)
    return attached, "meta" if injected else "prompt", len(joined)
