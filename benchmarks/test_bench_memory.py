"""Peak memory: `context trace --json` on the single big transcript, in a process of its own."""

from __future__ import annotations

import subprocess
import sys

import orjson
from conftest import FIGURES, check_reports

#: Target of issue 5: the 500 MB transcript is read in at most this much resident memory.
MAX_RSS_BYTES = 300 * 1024**2


#: Starts the command as its own child and prints that child's peak RSS (KiB) and exit code on stderr.
#: The command must not be forked from this process: Linux keeps a process's peak RSS across fork and
#: exec, so a child of the test process would report the test process's own size (about 300 MB here).
_LAUNCHER = (
    "import os, subprocess, sys\n"
    "proc = subprocess.Popen(sys.argv[1:], stderr=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(proc.pid, 0)\n"
    "print(usage.ru_maxrss, os.waitstatus_to_exitcode(status), file=sys.stderr)\n"
)


def _peak_rss(cmd: list[str]) -> tuple[int, bytes]:
    """Peak resident memory (bytes) of `cmd` and of the workers it forks (the largest of them), and its
    standard output."""
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, *cmd], capture_output=True, check=True)
    maxrss_kib, code = (int(v) for v in done.stderr.split())
    assert code == 0
    return maxrss_kib * 1024, done.stdout  # Linux reports KiB


def test_peak_rss_single(corpora, tmp_path, monkeypatch):
    """As a first run: the result store empty, so the trace is read and kept (its entry encoded)."""
    monkeypatch.setenv("CONTEXTTRACE_CACHE_DIR", str(tmp_path / "store"))
    corpus = corpora["single"]
    rss, out = _peak_rss([sys.executable, "-m", "contexttrace", "context", "trace", *corpus.paths, "--json"])
    check_reports(orjson.loads(out), corpus.expected)
    FIGURES["peak-rss-single-MB"] = round(rss / 1024**2, 1)
    assert rss <= MAX_RSS_BYTES, f"peak RSS {rss / 1024**2:.0f} MB > 300 MB"
