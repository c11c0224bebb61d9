"""Peak memory: `context trace --json` on the single big transcript, in a child process of its own."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
from conftest import FIGURES, check_reports

#: Target of issue 5: the 500 MB transcript is read in at most this much resident memory.
MAX_RSS_BYTES = 300 * 1024**2


def _peak_rss(cmd: list[str]) -> tuple[int, bytes]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0
    return usage.ru_maxrss * 1024, out  # Linux reports KiB


def test_peak_rss_single(corpora):
    corpus = corpora["single"]
    rss, out = _peak_rss([sys.executable, "-m", "contexttrace", "context", "trace", *corpus.paths, "--json"])
    check_reports(orjson.loads(out), corpus.expected)
    FIGURES["peak-rss-single-MB"] = round(rss / 1024**2, 1)
    assert rss <= MAX_RSS_BYTES, f"peak RSS {rss / 1024**2:.0f} MB > 300 MB"
