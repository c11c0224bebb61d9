"""The Claude Code reader's fast paths give what their general paths give: every sample, case and fuzz file
read with each fast path turned off (the general path taken for every record) has the same traces."""

from __future__ import annotations

from typing import Any

from contexttrace.discover.local import find_traces
from contexttrace.errors import ContextTraceError
from contexttrace.reading.api import read_trace
from contexttrace.reading.claude import builder, calls, dialects, feed, records

from ..conftest import CASES, FUZZ, SAMPLES


def _every_trace() -> list[Any]:
    """What each sample (with its subagent files), case and fuzz file reads as, in both profiles: every
    table, fact and warning; or the error it raises."""
    sources = [(s.path, tuple(s.subagents)) for s in find_traces([str(SAMPLES)])]
    sources += [(str(p), ()) for p in sorted([*CASES.glob("*.jsonl"), *FUZZ.glob("*.jsonl")])]
    out: list[Any] = []
    for path, subagents in sources:
        for words, inputs in ((True, True), (False, False)):
            try:
                traces = read_trace(path, subagents, words=words, inputs=inputs)
            except ContextTraceError as exc:
                out.append((path, repr(exc)))
                continue
            out += [(path, {k: v for k, v in vars(t).items() if not k.startswith("_")}) for t in traces]
    return out


def test_the_general_paths_read_every_file_alike(monkeypatch):
    """Turned off: the common message line's evidence counted inline (`Evidence.count` for every line), its
    thread told inline (`Threads.thread_of` for every message line), input-side usage read inline
    (`calls.input_side` for every line), message lines decoded into their own Struct (`records.MessageLine`:
    every line decoded as a whole `Line`)."""
    fast = _every_trace()
    taken = {"count": 0, "thread_of": 0, "input_side": 0, "full_decode": 0}

    def counted(name: str, real: Any) -> Any:
        def call(*args: Any) -> Any:
            taken[name] += 1
            return real(*args)

        return call

    monkeypatch.setattr(dialects.Evidence, "count", counted("count", dialects.Evidence.count))
    monkeypatch.setattr(builder, "UNSET", object())  # no line passes the inline evidence test
    monkeypatch.setattr(dialects.Threads, "thread_of", counted("thread_of", dialects.Threads.thread_of))
    monkeypatch.setattr(builder, "_NO_THREAD", ())  # nor the inline thread test
    monkeypatch.setattr(builder, "MAX_TOKENS", 0)  # no count passes the inline test
    monkeypatch.setattr(builder, "input_side", counted("input_side", calls.input_side))
    monkeypatch.setattr(feed, "TYPED_DECODE", counted("full_decode", records.FULL_DECODE))
    general = _every_trace()
    assert all(n > 1000 for n in taken.values()), taken  # each general path was taken, for many records
    assert len(general) == len(fast) > 100
    for got, want in zip(general, fast, strict=True):
        assert got == want, got[0]


def test_a_denial_is_found_in_ascii_text_as_the_case_insensitive_search_finds_it():
    """`content.is_denial` searches ASCII text lowercased, case-sensitively: the same answer as the
    case-insensitive search (`_DENIAL_RE`) on texts that hold each refusal in mixed case, near misses, the
    `.{0,80}` window at its edges, and non-ASCII text (searched the general way)."""
    import random

    from contexttrace.reading.claude.content import _DENIAL_RE, DENIAL_PREFIXES, is_denial

    def reference(text: str) -> bool:
        head = text[:300]
        return head.startswith(DENIAL_PREFIXES) or _DENIAL_RE.search(head) is not None

    rng = random.Random(24)
    parts = [
        "denied this tool", "Permission", " denied", "requires approval", "was blocked. For security",
        "was blockedX For security", "permission", "Error: ", "x" * 79, "x" * 80, "\n", "é", "İ", "ſ", "K", " ",
    ]  # fmt: skip
    texts = ["".join(rng.choice(parts) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    texts = ["".join(c.upper() if rng.random() < 0.3 else c for c in t) if rng.random() < 0.5 else t for t in texts]
    texts += ["Permission " + "y" * n + " denied" for n in range(78, 83)]
    texts += ["z" * n + "requires approval" for n in range(280, 290)]
    # non-ASCII letters that fold to ASCII ones (long s, Kelvin sign) or lengthen when lowered (dotted I)
    texts += ["waſ blocked. For security", "requireſ approval", "was bloc\u212aed. for security"]
    texts += ["Permission " + "\u0130" * 45 + " denied", "Permiſſion  denied"]
    found = [reference(t) for t in texts]
    assert [is_denial(t) for t in texts] == found
    assert 300 < sum(found) < len(texts) - 300  # both answers, many times
