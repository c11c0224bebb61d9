"""One large session transcript of real content: the main files of the real Claude Code session samples,
copied again and again with fresh ids (`realcorpus.Renamer`), one after the other in one file.

What it measures: one file of hundreds of MB read by both cores (`reading.claude.split`). Every byte but
the ids is a sample's, so the text mix (astral characters, tool-result sizes) is real, not generated.
The known answers: copy k holds the same records as copy 0 under other ids, and no record refers to
another copy's, so the file's calls, tool uses and tool results are `copies` times those of one copy
(`unit_figures`, read from the samples themselves, each file alone), and its peak is the samples' peak.

    python benchmarks/bigfile.py [PATH] [--mb 300]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import realcorpus

#: Bump when the bytes written change.
GENERATOR_VERSION = 1
#: The session transcripts copied, in this order (main files only: their subagent files are not attached).
UNITS = (
    "b-ccl-thinking-sonnet45.jsonl",
    "b-ccl-image-and-errors.jsonl",
    "b-ccv-inline-sidechains-v1098.jsonl",
    "b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
    "b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
)


@dataclass(frozen=True)
class BigFile:
    """A generated file: where it is, its bytes and how many copies of `UNITS` it holds."""

    path: Path
    bytes: int
    copies: int


def unit_bytes(samples: Path = realcorpus.SAMPLES) -> int:
    """Bytes of one copy of `UNITS`."""
    return sum((samples / u).stat().st_size for u in UNITS)


def copies_for(mb: float, samples: Path = realcorpus.SAMPLES) -> int:
    """The fewest whole copies holding at least `mb` MiB."""
    return max(1, math.ceil(mb * 2**20 / unit_bytes(samples)))


def generate(path: Path, copies: int, samples: Path = realcorpus.SAMPLES) -> BigFile:
    """Write `copies` copies of `UNITS` into `path`, each with its own ids (replacing the file)."""
    agent_ids = sorted({p.name[len("agent-") : -len(".jsonl")].encode() for p in samples.rglob("agent-*.jsonl")})
    units = [(samples / u).read_bytes() for u in UNITS]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for k in range(copies):
            rename = realcorpus.Renamer(k, agent_ids)
            for data in units:
                fh.write(rename(data))
    return BigFile(path, path.stat().st_size, copies)


def default_path(copies: int) -> Path:
    """Where a file of `copies` copies is kept between runs: under `$CT_REAL_DIR`, else the cache folder."""
    return realcorpus.default_root(copies).parent / f"bigfile-x{copies}" / "big.jsonl"


def ensure(copies: int, path: Path | None = None, samples: Path = realcorpus.SAMPLES) -> BigFile:
    """The file of `copies` copies at `path` (default `default_path`), written unless one made by this
    generator version from these samples is there already."""
    path = path or default_path(copies)
    stamp = {"generator": GENERATOR_VERSION, "copies": copies, "units": [unit_bytes(samples), *UNITS]}
    stamp_file = path.with_suffix(".stamp.json")
    if path.is_file() and stamp_file.is_file() and json.loads(stamp_file.read_text()) == stamp:
        return BigFile(path, path.stat().st_size, copies)
    made = generate(path, copies, samples)
    stamp_file.write_text(json.dumps(stamp))  # written last: a half-made file is never reused
    return made


#: The `context trace --json` keys that add up over the copies (each copy's records are its sample's).
SUMMED = ("calls", "tools", "failed", "denied", "result_chars", "compact", "subagent_calls")


def unit_figures(samples: Path = realcorpus.SAMPLES) -> dict[str, int]:
    """The known answers of one copy: the `SUMMED` figures of each sample file of `UNITS` read alone (no
    subagent files), summed, and `peak`: their largest (the file's peak, whatever the copies)."""
    from contexttrace import read_trace
    from contexttrace.reports.trace import build_report

    reports = [build_report(read_trace(str(samples / u))[0], None).to_dict() for u in UNITS]
    figures = {k: sum(r[k] for r in reports) for k in SUMMED}
    figures["peak"] = max(r["peak"] for r in reports)
    return figures


def expected(copies: int, samples: Path = realcorpus.SAMPLES) -> dict[str, int]:
    """The figures `context trace --json` must print for a file of `copies` copies."""
    unit = unit_figures(samples)
    return {k: v if k == "peak" else v * copies for k, v in unit.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, help="file to write (default: the cache folder)")
    parser.add_argument("--mb", type=float, default=300.0, help="at least this many MiB (default 300)")
    args = parser.parse_args(argv)
    copies = copies_for(args.mb)
    made = ensure(copies, args.path)
    print(json.dumps({**asdict(made), "path": str(made.path)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
