"""What a piece of text names (`reading/text.py`): the path-like words of prose, against their plain
reading on varied inputs (hypothesis) and on the texts of the samples."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contexttrace.reading.text import _DOT_RUN, _NONE, PATH_WORD, kept_dot, path_words

from ..conftest import SAMPLES


def plain_path_words(text: str) -> list[str]:
    """`path_words` as first written: every `PATH_WORD` run, trailing `.,:` dropped, kept when it still
    holds a `/`, a `\\` or a `.`."""
    out = []
    for word in PATH_WORD.findall(text):
        word = word.rstrip(".,:")
        if "/" in word or "." in word or "\\" in word:
            out.append(word)
    return out


#: Characters that make and end path words: every word character class `PATH_WORD` names, those it does
#: not (space, quotes, brackets, `*|;`), line ends, and letters and spaces outside ASCII.
_CHARS = "aZ09_.~/\\:@+%-[]()$#,'= \t\n\r\"`<>{}*|;!?éß中\u00a0\u2028\u3000"


@given(st.text(alphabet=_CHARS, max_size=120))
def test_path_words_equals_plain_reading_on_dense_texts(text: str) -> None:
    """Texts dense in separators, strippable ends and word breaks give the same words in the same order."""
    assert path_words(text) == plain_path_words(text)


@given(st.lists(st.sampled_from(["src/a.py", "a.", "x.,y", "e.g.", "1.5", "..", ":", "a\\b", "end.", " ", "\n"])))
def test_path_words_equals_plain_reading_on_word_sequences(parts: list[str]) -> None:
    """Sequences of words that do and do not name files, run together or spaced."""
    text = "".join(parts)
    assert path_words(text) == plain_path_words(text)


@given(st.text(max_size=200))
def test_path_words_equals_plain_reading_on_any_text(text: str) -> None:
    """Any text at all (surrogates, other scripts, control characters)."""
    assert path_words(text) == plain_path_words(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("I read src/app.py:12, then README.md. Done.", ["src/app.py:12", "README.md"]),
        ("trailing dot only. and a.,:", []),
        ("a.,b c/ d\\", ["a.,b", "c/", "d\\"]),
        ("no/space/at/all/x.y", ["no/space/at/all/x.y"]),
        ("", []),
    ],
)
def test_path_words_examples(text: str, words: list[str]) -> None:
    """Hand-picked edges: a dot kept only when a kept character follows it in its word."""
    assert path_words(text) == plain_path_words(text) == words


#: The kept dot as first written: a `.` followed, past word characters the end-strip drops, by one it leaves.
_PLAIN_KEPT_DOT = re.compile(r"\.[\w.~/\\:@+%\-\[\]()$#,'=]*?[\w~/\\@+%\-\[\]()$#'=]")


@given(st.text(alphabet=_CHARS, max_size=80), st.integers(min_value=0, max_value=90))
def test_kept_dot_equals_the_plain_search(text: str, pos: int) -> None:
    """`kept_dot` finds the dot the plain search finds, from any position."""
    found = _PLAIN_KEPT_DOT.search(text, pos)
    assert kept_dot(text, pos) == (_NONE if found is None else found.start())


@pytest.mark.parametrize("text", ["." * 20_000, ".," * 10_000, "see a" + ".:" * 10_000, ("x" + "." * 500 + " ") * 40])
def test_path_words_reads_a_row_of_dots_once(text: str) -> None:
    """A long run of `.,:` that no kept character follows (an ellipsis, a row of dots in a Write's content)
    is read once: one search per run of dots, not one per dot (each of which would read the rest of the
    run again: quadratic, 11.6 s of `context trace` on one 30,000-dot text; found by a review). Counted, not
    timed: the searches `kept_dot` makes, and the words are the plain reading's."""
    searches = 0

    def counted(t: str, pos: int) -> re.Match[str] | None:
        nonlocal searches
        searches += 1
        return _DOT_RUN.search(t, pos)

    kept_dot(text, 0, run=counted)
    assert searches <= text.count(" ") + 2
    assert path_words(text) == plain_path_words(text) == []


def test_path_words_equals_plain_reading_on_sample_texts() -> None:
    """Every text the samples' assistant lines hold."""
    texts = []
    for path in sorted(SAMPLES.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            content = rec.get("message", {}).get("content") if isinstance(rec, dict) else None
            if isinstance(content, list):
                texts += [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    assert len(texts) > 50
    for text in texts:
        assert path_words(text) == plain_path_words(text)
