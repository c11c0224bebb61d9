"""Opening a trace file (`reading/files.py`): standard input, a folder named as a file, and UTF-16 captures."""

from __future__ import annotations

import io

import pytest

from contexttrace import analyze, read_trace
from contexttrace.errors import TraceReadError
from contexttrace.reports.usage import build_usage

from ..conftest import BAD, CASES, assistant, jsonl, report_of


@pytest.mark.parametrize("name", ["bom-utf8.jsonl", "utf16le.jsonl"])
def test_b36_windows_captures(name):
    """B36: one stream-json trace, calls 1, first 10,005, the surface from the init line, the reported cost
    matched."""
    rep = report_of(CASES / "B36" / name)
    assert (rep.format, rep.calls, rep.first) == ("stream-json", 1, 10005)
    assert rep.surface is not None and rep.surface["model"] is not None
    [usage] = analyze([str(CASES / "B36" / name)], build=build_usage).reports
    assert usage.reported is not None and usage.reported["cost_difference_usd"] == 0.0


def test_utf16_on_standard_input_and_big_endian(tmp_path, monkeypatch):
    """UTF-16 is recognised by its BOM (either byte order) wherever the bytes come from."""
    text = (CASES / "B36" / "utf16le.jsonl").read_bytes().decode("utf-16")
    path = tmp_path / "be.jsonl"
    path.write_bytes(b"\xfe\xff" + text.encode("utf-16-be"))
    assert report_of(path).first == 10005


def test_reader_directory_given_as_file_raises():
    """A directory passed to read_trace is a read error, not a crash."""
    with pytest.raises(TraceReadError, match="directory"):
        read_trace(str(BAD))


def test_reader_stdin(monkeypatch):
    """'-' reads standard input (bytes), the format detected from content."""
    data = jsonl({"type": "system", "subtype": "init", "session_id": "s"}, assistant("m1", 1, 1, 7, parent=""))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    run = analyze(["-"])
    assert [(r.trace, r.format, r.calls, r.first) for r in run.reports] == [("-", "stream-json", 1, 9)]


def test_a_named_pipe_is_read_as_the_file_it_carries(tmp_path):
    """A file that cannot be read at an offset (a named pipe: `os.pread` fails) has its first bytes peeked
    instead: a UTF-16 capture fed through one reads as the file itself (the first bytes of a file on disk
    are read in place, `files._utf8`)."""
    import os
    import threading

    source = CASES / "B36" / "utf16le.jsonl"
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(source.read_bytes()))
    writer.start()
    try:
        [piped] = read_trace(str(fifo))
    finally:
        writer.join()
    [direct] = read_trace(str(source))
    assert piped.format == direct.format == "stream-json"
    assert piped.tables["calls"]["prompt_tokens"] == [10005]
    for name, table in direct.tables.items():  # every column but the file each row was read from
        assert {k: v for k, v in piped.tables[name].items() if k != "file"} == {
            k: v for k, v in table.items() if k != "file"
        }


def test_without_pread_a_file_is_peeked(monkeypatch):
    """Where `os.pread` does not exist (Windows) a file's first bytes are peeked: a UTF-16 capture reads the same."""
    import os

    source = str(CASES / "B36" / "utf16le.jsonl")
    [direct] = read_trace(source)
    monkeypatch.delattr(os, "pread")
    [peeked] = read_trace(source)
    assert peeked.tables == direct.tables and peeked.tables["calls"]["prompt_tokens"] == [10005]


def test_a_files_head_read_in_place_is_the_head_peeked():
    """`formats.head_of` reads a file just opened where its bytes are (`os.pread`, no copy of the 1 MiB
    buffer): the same bytes a peek gives, at most `HEAD_BYTES`, for every sample (the formats' files,
    the ones longer than the head among them), and the file is still read from its first byte."""
    from contexttrace.reading.files import open_trace
    from contexttrace.reading.formats import HEAD_BYTES, head_of

    from ..conftest import SAMPLES

    files = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json"))
    assert len(files) > 20 and any(p.stat().st_size > HEAD_BYTES for p in files)
    for path in files:
        with open_trace(str(path)) as fh:
            head = head_of(fh, from_start=True)
            assert head == fh.peek(HEAD_BYTES)[:HEAD_BYTES] == path.read_bytes()[:HEAD_BYTES], path
            assert fh.read(len(head)) == head
