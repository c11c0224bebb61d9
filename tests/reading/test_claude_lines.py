"""Bytes to lines (`reading/claude/lines.py`): line ends, byte-order marks, NUL padding, oversized lines,
cut last lines, and lines the type prefilter skips."""

from __future__ import annotations

from pathlib import Path

import pytest

from contexttrace import analyze, read_trace

from ..conftest import BAD, CASES, FUZZ, GOOD, ROOT, SAMPLES, assistant, report_of, result, trace_and_report

# -- line ends and byte-order marks --------------------------------------------------------------------------


def test_b18_u2028_inside_a_string_does_not_split_the_line(write):
    """B18: a tool result with a raw U+2028 between 'alpha' and 'beta' parses; its size is 10 chars."""
    text = "alpha\u2028beta"
    path = write("t.jsonl", assistant("m1", 1, 1, 1, tools=[("t1", "Read", {})]), result("t1", text))
    with open(path, "rb") as fh:
        raw = fh.read()
    assert "\u2028".encode() in raw
    _, rep = trace_and_report(path)
    assert rep.skipped_lines == 0
    assert rep.result_chars == 10


def test_reader_bom_and_crlf():
    """A UTF-8 BOM on the first line and CRLF line ends are accepted without a skipped line."""
    [bom] = read_trace(str(BAD / "bom.jsonl"))
    [crlf] = read_trace(str(BAD / "crlf.jsonl"))
    assert (bom.calls.height, bom.skipped_lines) == (1, 0)
    assert (crlf.calls.height, crlf.skipped_lines) == (2, 0)


def _sample_lines() -> list[bytes]:
    return Path(GOOD).read_bytes().splitlines(keepends=True)


def test_cr_only_line_ends_read_every_record(tmp_path):
    """A session written with CR alone between records reads like the same session with LF."""
    path = tmp_path / "cr.jsonl"
    path.write_bytes(b"\r".join(line.rstrip(b"\n") for line in _sample_lines()))
    assert report_of(path).prompt_tokens == report_of(GOOD).prompt_tokens


def test_a_bom_before_any_line_is_dropped(tmp_path):
    """A UTF-8 byte-order mark before a line in the middle (runs appended with `cat` from Windows captures)
    is dropped as at the file's start: the line is read, and no run merges into another."""
    lines = _sample_lines()
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"".join(b"\xef\xbb\xbf" + line for line in lines))
    rep = report_of(path)
    assert (rep.calls, rep.skipped_lines) == (36, 0)


# -- NUL bytes -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nul-early.jsonl", "nul-late.jsonl"])
def test_b30_nul_padding_is_skipped_not_binary(name):
    """B30: calls 3, series [11,003, 11,503, 11,903], growth 900; the 2 NUL-only lines skipped as NUL padding
    (not "file still being written"); the record followed by NULs on its line is read."""
    rep = report_of(CASES / "B30" / name)
    assert (rep.calls, rep.prompt_tokens, rep.growth) == (3, [11003, 11503, 11903], 900)
    assert rep.skipped_lines == 2
    assert [n.reason for n in rep.line_notes] == ["NUL padding (left by a crash while writing)"] * 2
    assert rep.truncated_last_line is False


def test_nul_bytes_only_file_is_binary(tmp_path):
    """A file is binary only when nothing in it decodes as JSON lines, whatever NULs it holds."""
    path = tmp_path / "blob.jsonl"
    path.write_bytes(b"\x89PNG\x00\x00\x01\n\x00\x00garbage\n")
    run = analyze([str(path), GOOD])
    assert [f.reason for f in run.failures] == ["binary file (NUL bytes), not a JSONL trace"]
    assert [r.trace for r in run.reports] == [GOOD]


def test_fuzz_10_nul_in_first_4kib_is_not_binary():
    """10: a NUL byte in the first 4 KiB: the line with it is skipped, the trace read."""
    rep = report_of(FUZZ / "10-nul-byte-in-first-4KiB.jsonl")
    assert (rep.calls, rep.skipped_lines) == (1, 1)


# -- oversized, cut and glued lines --------------------------------------------------------------------------


def test_b20_oversized_line_without_usage_is_skipped_and_counted(write, tmp_path):
    """B20: a 50 MB file-history-snapshot line, then two assistant calls: both calls count."""
    big = b'{"type":"file-history-snapshot","messageId":"m0","snapshot":{"blob":"' + b"x" * (50 * 1024 * 1024) + b'"}}'
    path = write("t.jsonl", big, assistant("m1", 1, 1, 10), assistant("m2", 1, 1, 20))
    _, rep = trace_and_report(path)
    assert rep.calls == 2
    assert rep.prompt_tokens == [12, 22]
    assert rep.skipped_lines == 0


def test_reader_truncated_last_line_is_skipped_quietly():
    """A live file's incomplete last line is skipped and flagged, the complete lines still count."""
    [t] = read_trace(str(BAD / "truncated_last_line.jsonl"))
    assert t.calls.height == 2
    assert t.truncated_last_line is True
    assert t.skipped_lines == 1
    assert t.line_notes == []


def test_an_incomplete_last_line_of_a_skipped_type_is_noted(tmp_path):
    """A last line cut short that starts like a queue-operation is an incomplete last line, noted."""
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(_sample_lines()) + b'{"type":"queue-operation","operation":"enq')
    [trace] = read_trace(path)
    assert trace.truncated_last_line is True and trace.skipped_lines == 1


def test_a_record_glued_onto_a_skipped_line_type_is_counted_and_named(tmp_path):
    """A newline lost in a crash glues a record onto a queue-operation line: the glued line is decoded, fails,
    and is counted and named like any bad line, never swallowed by the skip-by-type prefilter."""
    lines = _sample_lines()
    queue = b'{"type":"queue-operation","operation":"enqueue","sessionId":"s"}'
    glued = queue + lines[1]  # the second record of the sample, glued on
    path = tmp_path / "glued.jsonl"
    path.write_bytes(lines[0] + glued + b"".join(lines[2:]))
    [trace] = read_trace(path)
    assert trace.skipped_lines == 1
    assert trace.line_notes[0].line == 2 and trace.line_notes[0].reason == "not JSON"


def test_fuzz_17_broken_line_of_a_skipped_type_is_counted_as_not_json():
    """fuzz 17: `{"type":"progress"xxx...` shows a skipped type but is no whole record: it is decoded, is
    not JSON, and is counted in `skipped_lines` and named, as docs/definitions.md says ("Bad input")."""
    path = FUZZ / "17-broken-progress-line-skip-count.jsonl"
    [trace] = read_trace(str(path))
    assert trace.skipped_lines == 1
    assert [(n.line, n.reason) for n in trace.line_notes] == [(11, "not JSON")]
    assert report_of(path).calls == 3


# -- damage looked for only in lines that do not decode ------------------------------------------------------


def _plain_lines(fh, path, diag, skipped):
    """The reading every line's bytes were tested for damage by (a byte-order mark, NULs, CR-only ends)
    before the type test: the reference `Lines` with `retry` must equal."""
    from contexttrace.reading.claude import lines as m

    number = 0
    for raw in fh:
        number += 1
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if b"\x00" in raw:
            raw = raw.replace(b"\x00", b"")
            diag.nul_seen = True
            if not raw.strip():
                diag.nul_lines += 1
                diag.skip(path, number, "NUL padding (left by a crash while writing)")
                continue
        at = raw.find(b'"type":"')
        if at > 0:
            if raw.count(b"{", 0, at) == 1:
                start = at + len(b'"type":"')
                top = raw[start : raw.find(b'"', start)]
                if (
                    top in m.SKIP_TYPES
                    and raw.endswith((b"}\n", b"}\r\n", b"}"))
                    and b'}{"' not in raw
                    and b"}\r{" not in raw
                ):
                    skipped.append(top)
                    continue
        elif at < 0 and raw.isspace():
            continue
        if len(raw) > m.OVERSIZED_LINE_BYTES and not any(k in raw for k in m._OVERSIZED_NEEDED):
            diag.oversized += 1
            continue
        if b"}\r{" in raw:
            yield from ((number, part) for part in raw.split(b"\r") if part.strip())
            continue
        yield number, raw


def _both_ways(data: bytes) -> None:
    import io

    from contexttrace.reading.claude.lines import Lines
    from contexttrace.reading.claude.records import Line, MessageLine, decode
    from contexttrace.reading.claude.state import Diagnostics

    want_diag, want_skipped = Diagnostics(), []
    want = list(_plain_lines(io.BytesIO(data), "f", want_diag, want_skipped))
    got_diag = Diagnostics()
    lines = Lines(io.BytesIO(data), "f", got_diag)
    got = []
    for raw in lines:
        if type(decode(raw)) not in (Line, MessageLine) and lines.retry(raw):
            continue
        got.append((lines.number, raw))
    assert got == want
    assert lines.take_skipped() == want_skipped
    fields = Diagnostics.__slots__
    assert [getattr(got_diag, f) for f in fields] == [getattr(want_diag, f) for f in fields]


def _damaged_versions(data: bytes) -> list[bytes]:
    lines = data.splitlines(keepends=True)
    bom, nul = b"\xef\xbb\xbf", b"\x00"
    return [
        data,
        b"".join(bom + line for line in lines),  # a byte-order mark before every line
        b"".join(bom + bom + line for line in lines[:5]),  # two: the second is not dropped
        b"".join(line.replace(b'"type"', nul + b'"type"', 1) for line in lines),  # a NUL in every record
        b"".join(line.rstrip(b"\n") + nul * 3 + b"\n" for line in lines),  # NULs after every record
        b"".join(line + nul * 8 + b"\n" + bom + b"\n" for line in lines),  # padding and blank lines
        b"\r".join(line.rstrip(b"\n") for line in lines),  # CR-only line ends
        b"".join(line.rstrip(b"\n") + b"\r\n" for line in lines),  # CRLF
        b"\r".join(nul + line.rstrip(b"\n") for line in lines),  # CR-only ends and NULs
        b"".join(line.rstrip(b"\n") + b'\r{"type":"progress"}\r\n' for line in lines),  # a skipped record glued on
    ]


def _every_file() -> list[Path]:
    roots = [SAMPLES, CASES, FUZZ, BAD, ROOT.parent / "shared" / "cases"]
    return sorted(p for r in roots if r.is_dir() for p in r.rglob("*.jsonl"))


def test_lines_with_retry_equal_the_plain_reading_on_every_file():
    """Every sample, case, fuzz and bad file, and damaged versions of each sample (byte-order marks, NULs,
    CR-only ends, padding): the lines handed on, the lines skipped by type and every count of the
    diagnostics are the plain reading's, where damage was looked for in every line."""
    files = _every_file()
    assert len(files) > 50
    for path in files:
        data = path.read_bytes()
        for version in _damaged_versions(data) if path.parent == SAMPLES else [data]:
            _both_ways(version)


def test_the_loops_inlined_type_test_is_skipped_type():
    """`Lines.__iter__` skips exactly the lines `skipped_type` names, with the same types, on every file."""
    import io

    from contexttrace.reading.claude.lines import Lines, skipped_type
    from contexttrace.reading.claude.state import Diagnostics

    for path in _every_file():
        data = path.read_bytes()
        glued = b"".join(line.rstrip(b"\n") + line for line in data.splitlines(keepends=True))  # each line twice
        for version in [*_damaged_versions(data)[-3:], glued]:  # CRLF, CR-only with NULs, glued records
            lines = Lines(io.BytesIO(version), "f", Diagnostics())
            yielded = list(lines)
            want = [t for raw in io.BytesIO(version) if b"\x00" not in raw and (t := skipped_type(raw)) is not None]
            assert lines.take_skipped() == want, path
            assert all(skipped_type(raw) is None for raw in yielded if b"\x00" not in raw)
