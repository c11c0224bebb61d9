"""Each hand-optimised rule of the reader against its plain reading, on varied inputs (hypothesis) and on
the texts of the samples: the fast form must give exactly what the straightforward one gives."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contexttrace.reading.claude.calls import C_KEPT, Calls
from contexttrace.reading.claude.content import PART_READ, read_caps
from contexttrace.reading.claude.state import epoch_ms
from contexttrace.reading.text import _DOT_RUN, _NONE, PATH_WORD, kept_dot, path_words

from .conftest import SAMPLES


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


def plain_epoch_ms(value: str) -> int | None:
    """`epoch_ms` of one timestamp as first written: a timedelta floor-divided by one millisecond."""
    try:
        if len(value) <= 10:
            raise ValueError
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


_OFFSETS = st.integers(-23 * 60, 23 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))
_ZONES = st.one_of(st.none(), st.just(UTC), _OFFSETS)


@given(st.datetimes(timezones=_ZONES), st.sampled_from(["auto", "milliseconds", "microseconds", "seconds"]))
def test_epoch_ms_equals_plain_floor_division(moment: datetime, spec: str) -> None:
    """Timestamps before and after 1970, with and without an offset, at every precision: the same floor."""
    value = moment.isoformat(timespec=spec)
    assert epoch_ms([value]) == {None: None, value: plain_epoch_ms(value)}
    zulu = value.replace("+00:00", "Z")
    assert epoch_ms([zulu])[zulu] == plain_epoch_ms(zulu)


def plain_read_caps(capped: list[object], ids: list[object], uses: dict[str, list[object]]) -> list[bool]:
    """`read_caps` as first written: every tool use's input read."""
    limited = {}
    for tid, name, text in zip(uses["tool_use_id"], uses["name"], uses["input_json"], strict=True):
        if tid is not None:
            try:
                inp = orjson.loads(text)  # type: ignore[arg-type]
            except orjson.JSONDecodeError:
                inp = None
            limited[tid] = not (name == "Read" and type(inp) is dict and inp.get("limit") is None)
    return [c is True or (c is PART_READ and not limited.get(tid, True)) for c, tid in zip(capped, ids, strict=True)]


_TIDS = st.sampled_from([None, "t1", "t2", "t3", "t4"])
_USE = st.tuples(
    _TIDS, st.sampled_from(["Read", "Bash"]), st.sampled_from(['{"limit":5}', "{}", '{"limit":null}', "[1]", "x"])
)


@given(st.lists(st.tuples(st.sampled_from([True, False, PART_READ]), _TIDS)), st.lists(_USE))
def test_read_caps_equals_plain_reading(results: list[tuple[object, object]], uses: list[tuple[object, ...]]) -> None:
    """Results capped, not capped or part-read, against Read and other uses with and without a limit (ids
    repeated, missing, or naming no use)."""
    capped, ids = [c for c, _ in results], [t for _, t in results]
    table = {"tool_use_id": [u[0] for u in uses], "name": [u[1] for u in uses], "input_json": [u[2] for u in uses]}
    assert read_caps(capped, ids, table) == plain_read_caps(capped, ids, table)


def test_calls_keep_sets_the_kept_line_columns_only() -> None:
    """`Calls.keep`'s one unpacking writes each value at its `C_KEPT` column and leaves every other."""
    calls = Calls()
    row = [object() for _ in range(C_KEPT[-1] + 5)]
    before = list(row)
    calls.add("key", row, 0)
    values = tuple(f"v{i}" for i in range(len(C_KEPT)))
    calls.keep(0, values, 0)
    assert [row[c] for c in C_KEPT] == list(values)
    assert [v for i, v in enumerate(row) if i not in C_KEPT] == [v for i, v in enumerate(before) if i not in C_KEPT]
