"""What a piece of text names, whatever agent wrote it: the file a shell command reads, the path-like words
of prose. Pure functions over strings, used by every reader (a tool input's command, an answer's text) and
by `context files` (the words it matches against the files a session touched).
"""

from __future__ import annotations

import re
import shlex
from typing import Any

# -- the file a shell command reads ----------------------------------------------------------------------

#: Commands that print a file: with exactly one path operand, the call reads that file.
_READERS = frozenset({"cat", "head", "tail", "sed"})
#: Characters that make a command line more than one simple command (pipes, lists, redirections,
#: substitutions): such a line is never a read of one file.
_COMPOUND = re.compile(r"[|;&<>`\n]|\$\(")
#: Options of head / tail that take a value as the next argument.
_VALUE_OPTIONS = frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"})
#: sed's long forms of `-n` (print only what the script prints).
_SED_QUIET = frozenset({"--quiet", "--silent"})
#: `2>/dev/null` as its own word: it discards the command's errors and leaves what it prints unchanged, so it
#: is removed before the line is read (the one redirection allowed: docs/sources.md).
_STDERR_TO_NULL = re.compile(r"(?:^|(?<=\s))2>\s*/dev/null(?=\s|$)")
#: Characters the shell expands in an unquoted word: a glob (`*`, `?`, `[`) or a brace list names any
#: number of files, so the line is no read of one file.
_EXPANDED = frozenset("*?[{")


def _unquoted_expansion(command: str) -> bool:
    """Whether the line holds a glob or brace character outside quotes (and not escaped by a backslash)."""
    quote = ""
    escaped = False
    for ch in command:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in _EXPANDED:
            return True
    return False


def shell_read_path(command: Any) -> str | None:
    """The one file a Bash command line prints, when it is a single `cat`, `sed -n`, `head` or `tail` of
    exactly one path (spec 001: such a call is a file read); else None.

    The line must be one simple command (no pipe, list, redirection or substitution; a `2>/dev/null` word
    is removed first, since it leaves what the command prints unchanged) that `shlex` splits, with no
    unquoted glob or brace (`cat src/*.py` reads any number of files); options are skipped (`head -n 20`,
    `tail -100`, `cat -n`); `sed` needs `-n` (or `--quiet` / `--silent`) and its script; a `-` (stdin) or a
    second path makes it no single read. The path is returned as written (relative paths are the caller's
    to resolve against the session's `cwd`).

    >>> shell_read_path("sed -n '1,80p' src/app.py"), shell_read_path("cat a.py b.py"), shell_read_path("head -n 5 x")
    ('src/app.py', None, 'x')
    >>> shell_read_path("cat src/*.py"), shell_read_path("cat 'a[1].py' 2>/dev/null"), shell_read_path("sed --quiet 1p")
    (None, 'a[1].py', None)
    """
    if type(command) is not str or command.lstrip()[:4].rstrip() not in _READERS:
        return None  # (the first word first: `shlex` is slow, and most commands are not reads)
    if "2>" in command:
        command = _STDERR_TO_NULL.sub("", command)
    if _COMPOUND.search(command) or _unquoted_expansion(command):
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if not argv or argv[0] not in _READERS:
        return None
    name, args = argv[0], argv[1:]
    operands: list[str] = []
    quiet = script = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            operands.extend(args[i + 1 :])
            break
        if arg.startswith("-") and arg != "-":
            if name == "sed" and arg in ("-e", "--expression"):
                script = True
                i += 1
            elif name == "sed" and (arg.startswith("--in-place") or (not arg.startswith("--") and "i" in arg)):
                return None  # edits the file in place: not a read
            elif name == "sed" and (arg in _SED_QUIET or (not arg.startswith("--") and "n" in arg)):
                quiet = True
            elif name in ("head", "tail") and arg in _VALUE_OPTIONS:
                i += 1
            i += 1
            continue
        if name == "sed" and not script:
            script = True
        else:
            operands.append(arg)
        i += 1
    if name == "sed" and not (quiet and script):
        return None
    if len(operands) != 1 or operands[0] == "-":
        return None
    return operands[0]


# -- the path-like words of prose (`context files` reads them as references) --------------------------------

#: A word a path could be: a run of letters, digits and the characters paths hold (`_ - . / \ ~ : @ + %`, and
#: `[ ] ( ) $ # , ' =`, which route files hold: `app/[id]/page.tsx`, `app/(auth)/x.tsx`, `routes/$id.tsx`).
#: Spaces, double quotes, backticks, `<>`, `{}`, `*`, `|` and `;` end a word. A word kept whole is tried
#: whole and then split where a narrower word would have ended (`analysis.paths.candidates`), so `a.py,b.py`
#: and `--file=a.py` still name their files.
_WORD_CHARS = r"\w.~/\\:@+%\-\[\]()$#,'="
PATH_WORD = re.compile(f"[{_WORD_CHARS}]+")
#: A `.` and the run of `.`, `,` and `:` after it (what the end-strip drops). It starts with a literal, so
#: `search` scans to each dot in C.
_DOT_RUN = re.compile(r"\.[.,:]*")
#: A word character that the end-strip leaves (all of `_WORD_CHARS` but `.`, `,` and `:`).
_KEPT_CHAR = re.compile(r"[\w~/\\@+%\-\[\]()$#'=]")
_NONE = 1 << 62  # (no further separator)


def kept_dot(text: str, pos: int, run: Any = _DOT_RUN.search, kept: Any = _KEPT_CHAR.match) -> int:
    """Where the first `.` at or after `pos` that `path_words` keeps is (`_NONE`: none): a dot followed, past
    a run of ``.``, ``,`` and ``:``, by a character the end-strip leaves. Each run is read once (a search
    retried from every dot of a run would read the rest of the run each time: quadratic in a row of dots)."""
    while True:
        found = run(text, pos)
        if found is None:
            return _NONE
        if kept(text, found.end()):
            return found.start()  # (every dot of the run is kept then: the first is the one)
        pos = found.end()


def path_words(text: str) -> list[str]:
    """The words of `text` that could name a file: `PATH_WORD` runs, trailing ``.``, ``,`` and ``:`` dropped
    (a sentence's end, a list's comma, a label's colon), that still hold a ``/``, a ``\\`` or a ``.``; in
    order, repeats kept.

    A word is kept exactly when it holds a ``/``, a ``\\`` or a kept dot (`kept_dot`); so only the space-delimited
    stretches around those are cut into words (a space ends every word), found by three C scans (`str.find`
    for ``/`` and ``\\``, the literal-led `kept_dot`) instead of a regex over every character of the text:
    most of an assistant's prose holds no path, and this is the reader's largest per-text cost.
    tests/reading/test_text.py checks it against the plain reading (every `PATH_WORD` run, filtered).

    >>> path_words("I read `src/app.py:12`, then README.md. Done: ok.")
    ['src/app.py:12', 'README.md']
    >>> path_words("See app/[id]/page.tsx, (src/a.py) and x=1.")
    ['app/[id]/page.tsx', '(src/a.py)']
    """
    out: list[str] = []
    find, findall = text.find, PATH_WORD.findall
    slash, back, dot_at = find("/"), find("\\"), kept_dot(text, 0)
    # The next separator of each kind at or after the stretch being read (`_NONE`: none left).
    slash = _NONE if slash < 0 else slash
    back = _NONE if back < 0 else back
    while True:
        at = min(slash, back, dot_at)
        if at == _NONE:
            return out
        start, end = text.rfind(" ", 0, at) + 1, find(" ", at)
        if end < 0:
            end = len(text)
        for word in findall(text, start, end):
            word = word.rstrip(".,:")
            if "/" in word or "." in word or "\\" in word:
                out.append(word)
        if slash < end:
            slash = find("/", end)
            slash = _NONE if slash < 0 else slash
        if back < end:
            back = find("\\", end)
            back = _NONE if back < 0 else back
        if dot_at < end:
            dot_at = kept_dot(text, end)
