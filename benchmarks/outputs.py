"""Every command's output over the samples, the cases and the real-content corpus, saved for comparison.

A change that must move no figure (a refactor, a speed-up) is checked by saving the outputs before and
after and comparing them byte for byte: stdout, stderr and the exit code of each command.

    python benchmarks/outputs.py /tmp/eq/before                 # samples, tests/data, the corpus
    python benchmarks/outputs.py /tmp/eq/after
    python benchmarks/outputs.py --diff /tmp/eq/before /tmp/eq/after

`--shared DIR` adds the cases and fuzz finds of a folder laid out as `cases/` (the team's shared folder);
`--no-corpus` leaves the real-content corpus out (`realcorpus.py` makes it, ≈25 s once). Each command is a
whole process with a fixed environment (no colour, 200 columns, UTC, an empty home, a fresh result
store), run two at a time.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
DATA = ROOT / "tests" / "data"

#: Per trace input: (name, argv after `contexttrace`).
PER_INPUT: list[tuple[str, list[str]]] = [
    ("trace-table", ["context", "trace", "--no-cache", "--explain", "--calls", "--wide"]),
    ("trace-json", ["context", "trace", "--no-cache", "--json", "--calls"]),
    ("trace-md", ["context", "trace", "--no-cache", "--format", "markdown", "--window", "200k"]),
    ("trace-csv", ["context", "trace", "--no-cache", "--format", "csv"]),
    ("usage-table", ["context", "usage", "--no-cache", "--breakdown", "--wide"]),
    ("usage-json", ["context", "usage", "--no-cache", "--json"]),
    ("tools-table", ["context", "tools", "--no-cache", "--by-tool"]),
    ("tools-json", ["context", "tools", "--no-cache", "--json"]),
    ("files-table", ["context", "files", "--no-cache"]),
    ("files-json", ["context", "files", "--no-cache", "--json"]),
    ("sources-table", ["context", "sources", "--no-cache", "--steps"]),
    ("sources-json", ["context", "sources", "--no-cache", "--json", "--at", "peak"]),
]
#: Once over all samples: options that filter, sort, group and threshold.
OVER_SAMPLES: list[tuple[str, list[str]]] = [
    ("trace-sort", ["context", "trace", "--no-cache", "--sort", "peak", "--desc", "--totals"]),
    ("trace-narrow", ["context", "trace", "--no-cache"]),
    ("trace-since", ["context", "trace", "--no-cache", "--since", "2026-01-01", "--json"]),
    ("trace-failon", ["context", "trace", "--no-cache", "--fail-on", "peak>100000", "--fail-on", "health<B"]),
    ("trace-window1m", ["context", "trace", "--no-cache", "--window", "1M", "--json"]),
    ("usage-day", ["context", "usage", "--no-cache", "--group-by", "day"]),
    ("usage-model", ["context", "usage", "--no-cache", "--group-by", "model", "--json"]),
    ("usage-project", ["context", "usage", "--no-cache", "--group-by", "project", "--format", "csv"]),
    ("tools-tokens", ["context", "tools", "--no-cache", "--sort", "tokens"]),
]
#: Once over the corpus (`projects/`): the JSON outputs.
OVER_CORPUS: list[tuple[str, list[str]]] = [
    ("trace-json", ["context", "trace", "--no-cache", "--json", "--calls"]),
    ("usage-json", ["context", "usage", "--no-cache", "--json"]),
    ("tools-json", ["context", "tools", "--no-cache", "--json"]),
    ("files-json", ["context", "files", "--no-cache", "--json"]),
    ("sources-json", ["context", "sources", "--no-cache", "--json"]),
    ("trace-cache-cold", ["context", "trace", "--json"]),
    ("trace-cache-warm", ["context", "trace", "--json"]),
    # each command's own reports kept, then served (run in this order, after the runs without the store)
    ("usage-cache-cold", ["context", "usage", "--json"]),
    ("usage-cache-warm", ["context", "usage", "--json"]),
    ("tools-cache-cold", ["context", "tools", "--json"]),
    ("tools-cache-warm", ["context", "tools", "--json"]),
    ("files-cache-cold", ["context", "files", "--json"]),
    ("files-cache-warm", ["context", "files", "--json"]),
    ("sources-cache-cold", ["context", "sources", "--json"]),
    ("sources-cache-warm", ["context", "sources", "--json"]),
]


def _inputs(shared: Path | None) -> dict[str, tuple[list[str], bool]]:
    """Name → (paths, every command?): each sample alone, each case folder as one run and each case alone."""
    out: dict[str, tuple[list[str], bool]] = {}
    for p in sorted(SAMPLES.iterdir()):
        if p.suffix == ".jsonl" or p.is_dir():
            out[f"sample-{p.name}"] = ([str(p)], True)
    groups = {"cases": DATA / "cases", "fuzz": DATA / "fuzz", "bad": DATA / "bad"}
    if shared is not None:
        groups |= {"shared-cases": shared / "cases", "shared-fuzz": shared / "cases" / "fuzz"}
    for name, folder in groups.items():
        paths = sorted(str(p) for p in folder.iterdir() if p.name != "fuzz" and not p.name.endswith(".md"))
        out[name] = (paths, True)
        for p in paths:  # each alone too: the JSON of a trace with no neighbour
            out[f"{name}-{Path(p).name}"] = ([p], False)
    return out


def _run(argv: list[str], env: dict[str, str], out: Path, cwd: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "contexttrace", *argv], env=env, cwd=cwd, capture_output=True, timeout=900
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".stdout").write_bytes(proc.stdout)
    out.with_suffix(".stderr").write_bytes(proc.stderr)
    out.with_suffix(".rc").write_text(f"{proc.returncode}\n")


def save(dest: Path, shared: Path | None, corpus: Path | None, jobs: int) -> int:
    """Run every command and write `<dest>/<input>/<command>.{stdout,stderr,rc}`; return the count."""
    dest.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="ct-outputs-home-"))
    store = Path(tempfile.mkdtemp(prefix="ct-outputs-store-"))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "NO_COLOR": "1",
        "COLUMNS": "200",
        "TZ": "UTC",
        "LC_ALL": "C.UTF-8",
        "CONTEXTTRACE_CACHE_DIR": str(store),
        "PYTHONPATH": str(ROOT),
    }
    tasks: list[tuple[list[str], Path]] = []
    for name, (paths, whole) in _inputs(shared).items():
        rel = [os.path.relpath(p, ROOT) for p in paths]
        commands = PER_INPUT if whole else [c for c in PER_INPUT if c[0] in {"trace-json", "usage-json", "trace-table"}]
        tasks += [([*argv, *rel], dest / name / cmd) for cmd, argv in commands]
    tasks += [([*argv, "samples"], dest / "all-samples" / cmd) for cmd, argv in OVER_SAMPLES]
    tasks += [
        (
            [
                "context",
                "compare",
                "-c",
                "ralph=samples/a-ralph-27runs-with-separators.jsonl",
                "-c",
                "print=samples/b-ccl-print-mode-sessions",
                "--no-cache",
            ],
            dest / "compare" / "table",
        ),
        (
            [
                "context",
                "compare",
                "-c",
                "ralph=samples/a-ralph-27runs-with-separators.jsonl",
                "-c",
                "print=samples/b-ccl-print-mode-sessions",
                "--no-cache",
                "--json",
            ],
            dest / "compare" / "json",
        ),
    ]
    tasks += [
        (["schema", n], dest / "schema" / n)
        for n in ("trace", "usage", "usage-group", "tools", "files", "sources", "compare", "history")
    ]
    sequential: list[tuple[list[str], Path]] = []
    if corpus is not None:
        projects = str(corpus / "projects")
        for cmd, argv in OVER_CORPUS:
            (sequential if "-cache-" in cmd else tasks).append(([*argv, projects], dest / "corpus" / cmd))
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda t: _run(t[0], env, t[1], ROOT), tasks))
    for argv, out in sequential:  # cold then warm, in order
        _run(argv, env, out, ROOT)
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(store, ignore_errors=True)
    return len(tasks) + len(sequential)


def diff(a: Path, b: Path, context: int = 3) -> int:
    """Print how two saved output trees differ; return the number of files that differ."""
    names = sorted(
        {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
        | {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    )
    differ = 0
    for rel in names:
        pa, pb = a / rel, b / rel
        ta = pa.read_bytes() if pa.exists() else b"<missing>\n"
        tb = pb.read_bytes() if pb.exists() else b"<missing>\n"
        if ta == tb:
            continue
        differ += 1
        print(f"=== {rel}")
        lines = difflib.unified_diff(
            ta.decode(errors="replace").splitlines(), tb.decode(errors="replace").splitlines(), lineterm="", n=context
        )
        for i, line in enumerate(lines):
            if i >= 40:
                print("...")
                break
            print(line[:300])
    print(f"{differ} of {len(names)} files differ")
    return differ


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", nargs="?", type=Path)
    ap.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--corpus", type=Path, default=Path.home() / ".cache/contexttrace-bench/real-x23")
    ap.add_argument("--no-corpus", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if args.diff:
        sys.exit(1 if diff(*args.diff) else 0)
    if args.dest is None:
        ap.error("give DEST, or --diff BEFORE AFTER")
    shared = args.shared if (args.shared / "cases").is_dir() else None
    corpus = None if args.no_corpus or not (args.corpus / "projects").is_dir() else args.corpus
    n = save(args.dest, shared, corpus, args.jobs)
    print(f"{n} commands saved under {args.dest}")


if __name__ == "__main__":
    main()
