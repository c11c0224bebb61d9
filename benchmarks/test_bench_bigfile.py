"""One large transcript of real content read by both cores (`bigfile.py`): known answers, time, memory.

CI runs it on one copy of the session samples (6 MiB), with the split threshold lowered so that the file
is still read in two parts (head here, tail in a worker). `CT_BIGFILE_MB=300` runs it on a 300 MiB file
(kept in the cache folder, or under `CT_REAL_DIR`), read in two parts as any user's would be. The
whole-process figures (CPU ÷ wall, each process's peak RSS, ÷ the bare loop) are `bigbench.py`'s.
"""

from __future__ import annotations

import os
import sys

import bigbench
import bigfile
import orjson
import pytest
from conftest import FIGURES, run_cli

from contexttrace.reading.claude import api as claude_api
from contexttrace.reading.claude import split
from contexttrace.run import runner

#: Issue 24's target: a 300 MB transcript read in at most this much resident memory, in each process.
MAX_RSS_BYTES = 300 * 1024**2


@pytest.fixture(scope="session")
def big(tmp_path_factory: pytest.TempPathFactory) -> bigfile.BigFile:
    mb = os.environ.get("CT_BIGFILE_MB", "").strip()
    if mb:
        return bigfile.ensure(bigfile.copies_for(float(mb)))
    return bigfile.ensure(1, tmp_path_factory.mktemp("bigfile") / "big.jsonl")


@pytest.fixture
def split_always(big: bigfile.BigFile, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """A file below the split threshold (the CI size) is split anyway; returns, for each head read, whether
    its tail was merged (False: the whole file was read again)."""
    if big.bytes < split.SPLIT_MIN_BYTES:
        monkeypatch.setattr(split, "SPLIT_MIN_BYTES", 1)
        monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 1)
    merged: list[bool] = []
    read_head = claude_api.read_head

    def spy(main, tail, *profile):
        got = read_head(main, tail, *profile)
        merged.append(got is not None)
        return got

    monkeypatch.setattr(claude_api, "read_head", spy)
    return merged


def test_bigfile_trace_in_two_parts(timed, big, split_always):
    """`context trace --json` on the file, read in two parts: the copies' summed figures and the samples'
    peak (`bigfile.expected`), equal to a one-process read."""
    args = ["context", "trace", str(big.path), "--json", "--no-cache"]
    out = timed("bigfile-trace", run_cli, args)
    assert split_always and all(split_always), "the file was not read in two parts"
    got = orjson.loads(out)
    want = bigfile.expected(big.copies)
    assert len(got) == 1 and {k: got[0][k] for k in want} == want
    merged = len(split_always)
    parallel, serial = (runner.analyze([str(big.path)], workers=n) for n in (2, 1))
    assert len(split_always) == merged + 1 and split_always[-1]  # the two-part read, then the whole one
    assert [r.__dict__ for r in parallel.reports] == [r.__dict__ for r in serial.reports]


def test_bigfile_peak_rss(big):
    """The CLI's main process and its worker each stay within `MAX_RSS_BYTES` (their peaks, from /proc)."""
    cmd = [sys.executable, "-m", "contexttrace", "context", "trace", str(big.path), "--json", "--no-cache"]
    root = str(bigbench.HERE.parent)
    got = bigbench.run(cmd, {**os.environ, "PYTHONPATH": root}, cwd=root)
    FIGURES["bigfile-rss-main-MB"] = round(got["rss_main"] / 1024**2, 1)
    FIGURES["bigfile-rss-worker-MB"] = round(got["rss_worker"] / 1024**2, 1)
    assert 0 < got["rss_main"] <= MAX_RSS_BYTES and got["rss_worker"] <= MAX_RSS_BYTES
