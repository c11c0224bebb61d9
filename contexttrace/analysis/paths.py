"""Which file a path or a word names, for `context files`: resolving a tool's path, the key two spellings
of one file share, and the touched files a word of text or of a tool input names.

Pure functions over strings; no I/O, no trace. docs/files.md states each rule:

* a relative path resolves against the `cwd` of the line that carries the tool use, else the session's;
  a ``~`` path is kept as written (no home directory is known), never joined to a cwd;
* a Windows path (a drive letter, or backslashes) is one file whatever its letters' case: its key is its
  normalised spelling case-folded; it is shown as first written;
* a word names a touched file when, resolved, it is that file, or when it is the end of exactly one
  touched file's path at a ``/`` or at a space (``page.tsx`` names ``app/[id]/page.tsx``; ``Docs/notes.md``
  names ``My Docs/notes.md``). A word the reader kept whole (``app/[id]/page.tsx``, ``--file=a.py``) is
  tried whole first, then split where a narrower word would have ended (`candidates`), each part a
  reference of its own.
"""

from __future__ import annotations

import re
from typing import Any

from contexttrace.analysis.placement import normalize_path

#: A line reference after a path in prose ("src/app.py:12", ":12:5", ":12-20").
_LINE_SUFFIX = re.compile(r"(?::\d+)+(?:-\d+)?$")
#: A drive letter (a Windows path), before or after normalisation.
_DRIVE = re.compile(r"^[A-Za-z]:(?:[/\\]|$)")
#: Characters a path may hold that also end a word of prose: a word holding one is tried whole, then split
#: at them (`candidates`).
_SPLIT = re.compile(r"[\[\]()$#,'=]+")
#: Brackets that enclose a word ("(src/a.py)") rather than belong to it.
_PAIRS = {"(": ")", "[": "]"}


def resolve_path(path: str, cwd: str | None) -> str:
    """Resolve a tool's path to one spelling.

    Returns
    -------
    str
        `placement.normalize_path`: backslashes as ``/``, the drive letter upper-case, ``.`` and ``..``
        collapsed, a relative path joined to `cwd` (None: left relative); a ``~`` path stays as written
        (normalised, never joined). Exact string rules; no file system access.

    >>> resolve_path("a.py", "/p/sub"), resolve_path("~/notes.md", "/home/u"), resolve_path("c:\\\\x\\\\A.py", None)
    ('/p/sub/a.py', '~/notes.md', 'C:/x/A.py')
    """
    return normalize_path(path, cwd)  # (a ``~`` path is never joined: `normalize_path`)


def path_key(resolved: str) -> str:
    """Return the key two spellings of one file share.

    Returns
    -------
    str
        A Windows path (one with a drive letter) case-folded, any other path as it is (`resolved` is a
        `resolve_path` result).

    >>> path_key("C:/Users/u/A.py") == path_key("C:/users/u/a.py"), path_key("/p/A.py") == path_key("/p/a.py")
    (True, False)
    """
    return resolved.casefold() if _DRIVE.match(resolved) else resolved


def _trim(word: str) -> str:
    """A word without what encloses it in prose: quotes, a sentence's `.` `,` `:`, a bracket pair around
    it, an unpaired opening bracket before it or closing one after it."""
    while True:
        w = word.strip("'").rstrip(".,:")
        if not w:
            return w
        if w[:1] in _PAIRS and w.endswith(_PAIRS[w[0]]):
            w = w[1:-1]
        elif w[:1] in _PAIRS and w.count(w[0]) > w.count(_PAIRS[w[0]]):
            w = w[1:]
        elif w[-1:] in ")]" and w.count(w[-1]) > w.count("(" if w[-1] == ")" else "["):
            w = w[:-1]
        if w == word:
            return w
        word = w


def candidates(word: str) -> tuple[str, list[str]]:
    """Return the spellings a word kept whole by the reader may name files by.

    Returns
    -------
    (str, list of str)
        The word itself, trimmed of what encloses it in prose; and its parts when it holds a character
        that also ends a word of prose (``[ ] ( ) $ # , ' =``), split there and trimmed, else [].

    >>> candidates("(app/[id]/page.tsx),"), candidates("a.py,b.py"), candidates("a.py")
    (('app/[id]/page.tsx', ['app/', 'id', '/page.tsx']), ('a.py,b.py', ['a.py', 'b.py']), ('a.py', []))
    """
    whole = _trim(word)
    if not _SPLIT.search(whole):
        return whole, []
    return whole, [p for p in map(_trim, _SPLIT.split(whole)) if p]


class PathIndex:
    """Which touched file a word names. `keys`: the touched files' keys (`path_key` of `resolve_path`).

    A word names a file when (1) resolved like a tool's path (against the `cwd` given) its key is the
    file's, or (2) it is the end of exactly one file's path at a ``/`` or at a space inside its first
    segment; a Windows file's ends compare case-folded."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = set(keys)
        self.ends: dict[str, set[str]] = {}
        for key in keys:
            parts = key.split("/")
            for k in range(1, len(parts) + 1):
                end = "/".join(parts[-k:])
                self.ends.setdefault(end, set()).add(key)
                for i, ch in enumerate(parts[-k]):
                    if ch == " " and end[i + 1 :]:
                        self.ends.setdefault(end[i + 1 :], set()).add(key)
        self.folded = any(_DRIVE.match(k) for k in keys)
        #: (word, cwd) -> the keys it names: a session repeats its paths in many calls and results
        self._memo: dict[tuple[str, str | None], list[str]] = {}

    def _named(self, word: str, cwd: str | None) -> str | None:
        w = _LINE_SUFFIX.sub("", word).replace("\\", "/")
        if not w or ("/" not in w and "." not in w):
            return None
        if w.startswith(("/", "~")) or _DRIVE.match(w) or ".." in w.split("/"):
            key = path_key(resolve_path(w, cwd))
            return key if key in self.keys else None
        if cwd:
            key = path_key(resolve_path(w, cwd))
            if key in self.keys:
                return key
        end = normalize_path(w)
        hits = self.ends.get(end)
        if hits is None and self.folded:
            hits = self.ends.get(end.casefold())
        return next(iter(hits)) if hits is not None and len(hits) == 1 else None

    def named(self, word: str, cwd: str | None) -> list[str]:
        """Return the keys of the touched files `word` names.

        Parameters
        ----------
        word
            A word of text or of a tool input, as the reader kept it.
        cwd
            The directory a relative path resolves against, or None.

        Returns
        -------
        list of str
            The key of the file the whole word names, else one per part that names a file
            (`candidates`: ``a.py,b.py`` names two); [] for none.
        """
        if not self.keys:
            return []
        found = self._memo.get((word, cwd))
        if found is None:
            whole, parts = candidates(word)
            key = self._named(whole, cwd)
            found = [key] if key is not None else [k for k in (self._named(p, cwd) for p in parts) if k is not None]
            self._memo[word, cwd] = found
        return list(found)


def strings(value: Any, skip: str | None = None) -> list[str]:
    """List every string in a decoded JSON value, keys left out.

    Parameters
    ----------
    value
        A decoded JSON value (any nesting).
    skip
        A top-level key of an object whose value is left out (the path input a tool use's own path is
        counted from), or None.

    Returns
    -------
    list of str
        The strings, depth first in document order.

    >>> strings({"file_path": "a.py", "edits": [{"old": "x", "new": "y"}]}, skip="file_path")
    ['x', 'y']
    """
    out: list[str] = []
    if isinstance(value, dict) and skip is not None:
        value = {k: v for k, v in value.items() if k != skip}
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
    return out
