"""The headline ratios of issue 11 on the real-content corpus (`realcorpus.py`), as whole-process runs.

Each round runs every command once as its own process, in alternating order (forward, then backward),
so that every command sees the same machine; each ratio is the median of the per-round ratios, printed
with its range. Commands (outputs to /dev/null, the cyclic store of contexttrace in a folder of its own):

* base: the bare one-core loop, `orjson.loads` on every line of every .jsonl file (`baseline.py`);
* trace / usage: `contexttrace context trace|usage PROJECTS --json --no-cache`;
* trace-half: `context trace --json --no-cache` over projects 0-3 (the scaling figure);
* trace-stubbed: `context trace` with health and weather replaced by stubs (what they add);
* trace-warm, usage-warm, tools-warm, sources-warm, files-warm: each command's `--json` with the result
  store filled by an earlier run (its reports kept: `storage/reports.py`);
* trace-cold-store: `context trace --json` with the store emptied before the run (what filling costs);
* small, pass: `context trace --json --no-cache` over one small sample and `python -c pass` (start-up);
* ccusage: `ccusage claude session --json --offline` (20.0.24, from npx's cache: the binary npx runs,
  without npx's own resolution, which is measured apart) with `CLAUDE_CONFIG_DIR` at the corpus.

Before timing, the outputs are checked: `context trace --json` with and without the store are identical,
and every trace's figures are its sample's known answers (`tests/test_samples.py`).

    python benchmarks/realbench.py [--mb 300] [--rounds 7] [--no-ccusage] [--json results.json]
        [--only trace-warm,usage-warm,ccusage] [--before DIR]

The package's bytecode is compiled first (`python -m compileall`: an installed package has it) and child
processes run without `PYTHONDONTWRITEBYTECODE` (this VM sets it), after one untimed run of each command.
`--before DIR` also times every contexttrace command with `PYTHONPATH=DIR` (another checkout, e.g. `git
archive <commit>` unpacked) in the same rounds, as `before:<name>`, with its ratios beside ours.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import realcorpus

CCUSAGE = "ccusage@20.0.24"
HERE = Path(__file__).resolve().parent

#: `context trace` with health and weather stubbed, as `test_bench_commands.test_health_weather_added`.
_STUBBED = """
import sys
from contexttrace.reports import trace as report
report.session_rows_of = lambda trace, rows: None
report.health_of = lambda session, choice: {"grade": "-"}
report.weather_of = lambda session, window: {"level": "-"}
from contexttrace.cli.app import app
app(sys.argv[1:], prog_name="contexttrace")
"""


def ccusage_command() -> tuple[list[str], list[str]] | None:
    """(the ccusage binary npx runs, the npx command) for `CCUSAGE`, or None without npx or when it
    cannot be fetched. npx is run once to fill its cache; its binary is then found there."""
    npx = shutil.which("npx")
    if npx is None:
        return None
    via_npx = [npx, "-y", CCUSAGE]
    try:
        subprocess.run([*via_npx, "--version"], capture_output=True, timeout=600, check=True)
        cache = subprocess.run(["npm", "config", "get", "cache"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    version = CCUSAGE.rsplit("@", 1)[1]
    for package in sorted(Path(cache.stdout.strip()).glob("_npx/*/node_modules/ccusage/package.json")):
        if json.loads(package.read_text()).get("version") == version:
            binary = package.parent.parent / ".bin" / "ccusage"
            if binary.exists():
                return [str(binary)], via_npx
    return via_npx, via_npx


#: Where every timed command runs: not a checkout (`python -m` puts the current folder first on the path, so
#: run from one it would time that checkout's package whatever `PYTHONPATH` names).
NEUTRAL = tempfile.gettempdir()

#: A small sample for the start-up figure (one stream-json capture, 36 calls).
SMALL = HERE.parent / "samples" / "b-ccl-thinking-sonnet45.jsonl"


def compile_bytecode(*trees: Path) -> None:
    """Write the `.pyc` files of each tree's package (an installed package has them; this VM's
    `PYTHONDONTWRITEBYTECODE` would otherwise make every start compile it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "contexttrace")], env=env, check=True)


def _env(store: Path, config: Path | None = None, tree: Path | None = None) -> dict[str, str]:
    """The environment of a timed command: its checkout on `PYTHONPATH` (`tree`, else this one; the commands
    run from a neutral folder, `_run`, so that `python -m` does not put the caller's folder first)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree if tree is not None else HERE.parent)
    env["CONTEXTTRACE_CACHE_DIR"] = str(store)
    env["NO_COLOR"] = "1"
    if config is not None:
        env["CLAUDE_CONFIG_DIR"] = str(config)
    return env


def _run(cmd: list[str], env: dict[str, str], before: Any = None) -> tuple[float, float]:
    """Wall seconds of one whole-process run, and the CPU seconds (user + system) of it and its children."""
    if before is not None:
        before()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=NEUTRAL)
    wall = time.perf_counter() - start
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)


def check_outputs(corpus: realcorpus.RealCorpus, store: Path) -> dict[str, Any]:
    """`context trace --json --calls` without the store, then cold and warm with it: identical, and every
    trace's figures (and the sum of its prompt series) its sample's known answers. Returns counts."""
    from tests.test_samples import CLAUDE_EXPECTED as EXPECTED
    from tests.test_samples import FIELDS

    py = [sys.executable, "-m", "contexttrace", "context", "trace", str(corpus.projects), "--json", "--calls"]
    env = _env(store)
    shutil.rmtree(store, ignore_errors=True)
    plain, cold, warm = (
        subprocess.run(cmd, env=env, capture_output=True, check=True).stdout for cmd in ([*py, "--no-cache"], py, py)
    )
    assert plain == cold == warm, "context trace --json differs with the result store"
    known = {name: (values, total) for name, values, total in EXPECTED}
    reports = json.loads(plain)
    wrong = []
    for r in reports:
        sample = corpus.sample_of(r["trace"])
        values, total = known[sample]
        got = (tuple(r[f] for f in FIELDS), sum(r["prompt_tokens"]))
        if got != (values, total):
            wrong.append(f"{r['trace']}: {got} != {(values, total)} ({sample})")
    assert not wrong, "\n".join(wrong[:10])
    assert len(reports) == len(EXPECTED) * corpus.copies, (len(reports), len(EXPECTED), corpus.copies)
    return {"traces": len(reports)}


def measure(
    corpus: realcorpus.RealCorpus,
    rounds: int,
    with_ccusage: bool,
    only: list[str] | None = None,
    before: Path | None = None,
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="ct-realbench-"))
    try:
        return _measure(corpus, rounds, with_ccusage, work, only, before)
    finally:
        shutil.rmtree(work, ignore_errors=True)


Command = tuple[list[str], dict[str, str], Any]


def _ours(corpus: realcorpus.RealCorpus, work: Path, tree: Path | None) -> dict[str, Command]:
    """The contexttrace commands, run from `tree` (None: this checkout), each store in `work`."""
    projects = str(corpus.projects)
    py = [sys.executable, "-m", "contexttrace", "context"]
    warm_store, cold_store, none_store = work / "warm", work / "cold", work / "unused"

    def empty_cold() -> None:
        shutil.rmtree(cold_store, ignore_errors=True)

    plain, warm = _env(none_store, tree=tree), _env(warm_store, tree=tree)
    commands: dict[str, Command] = {
        "trace": ([*py, "trace", projects, "--json", "--no-cache"], plain, None),
        "usage": ([*py, "usage", projects, "--json", "--no-cache"], plain, None),
        "trace-half": ([*py, "trace", *corpus.half(), "--json", "--no-cache"], plain, None),
        "trace-stubbed": (
            [sys.executable, "-c", _STUBBED, "context", "trace", projects, "--json", "--no-cache"],
            plain,
            None,
        ),
        "trace-cold-store": ([*py, "trace", projects, "--json"], _env(cold_store, tree=tree), empty_cold),
        "small": ([*py, "trace", str(SMALL), "--json", "--no-cache"], plain, None),
    }
    for name in ("trace", "usage", "tools", "sources", "files"):
        commands[f"{name}-warm"] = ([*py, name, projects, "--json"], warm, None)
    return commands


def _measure(
    corpus: realcorpus.RealCorpus,
    rounds: int,
    with_ccusage: bool,
    work: Path,
    only: list[str] | None = None,
    before: Path | None = None,
) -> dict[str, Any]:
    projects = str(corpus.projects)
    none_store = work / "unused"
    compile_bytecode(HERE.parent, *([before] if before is not None else []))
    checked = check_outputs(corpus, work / "check")
    commands: dict[str, Command] = {
        "base": ([sys.executable, str(HERE / "baseline.py"), projects], _env(none_store), None),
        "pass": ([sys.executable, "-c", "pass"], _env(none_store), None),
        **_ours(corpus, work, None),
    }
    if before is not None:
        commands |= {f"before:{n}": c for n, c in _ours(corpus, work / "before", before).items()}
    if only is not None:
        commands = {n: c for n, c in commands.items() if n in only or n.split(":")[-1] in only}
    npx_times: list[float] = []
    if with_ccusage and (only is None or "ccusage" in only):
        found = ccusage_command()
        if found is not None:
            binary, via_npx = found
            config = _env(none_store, corpus.root)
            commands["ccusage"] = ([*binary, "claude", "session", "--json", "--offline"], config, None)
            for _ in range(3):
                npx_times.append(_run([*via_npx, "claude", "session", "--json", "--offline"], config)[0])
    for cmd, env, before in commands.values():  # untimed: bytecode written, the warm store filled, caches hot
        _run(cmd, env, before)
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for k in range(rounds):
        for name in names if k % 2 == 0 else names[::-1]:
            cmd, env, before = commands[name]
            wall, used = _run(cmd, env, before)
            times[name].append(wall)
            cpu[name].append(used)
    half_bytes = sum(os.path.getsize(f) for d in corpus.half() for f in Path(d).rglob("*.jsonl"))
    loads = os.getloadavg()
    return {
        "times": times,
        "cpu": cpu,
        "npx_ccusage": npx_times,
        "bytes": corpus.bytes,
        "half_bytes": half_bytes,
        "files": len(corpus.files()),
        "copies": corpus.copies,
        "load_after": loads,
        **checked,
    }


RATIOS = [
    # label, numerator, denominator, target
    ("`context trace --json` ÷ bare orjson loop", "trace", "base", "≤ 1.3"),
    ("`context trace --json` ÷ ccusage", "trace", "ccusage", "≤ 1.0"),
    ("`context usage --json` ÷ bare orjson loop", "usage", "base", ""),
    ("`context usage --json` ÷ ccusage", "usage", "ccusage", "≤ 0.9"),
    ("bare orjson loop ÷ ccusage", "base", "ccusage", ""),
    ("store warm ÷ cold (`context trace --json`)", "trace-warm", "trace", ""),
    ("store cold, filling it ÷ without the store", "trace-cold-store", "trace", ""),
    ("warm `context trace --json` ÷ ccusage", "trace-warm", "ccusage", "≤ 0.15"),
    ("warm `context usage --json` ÷ ccusage", "usage-warm", "ccusage", "≤ 0.25"),
    ("warm `context tools --json` ÷ ccusage", "tools-warm", "ccusage", "≤ 0.25"),
    ("warm `context sources --json` ÷ ccusage", "sources-warm", "ccusage", "≤ 0.25"),
    ("warm `context files --json` ÷ ccusage", "files-warm", "ccusage", "≤ 0.25"),
    ("small `context trace --json` ÷ `python -c pass`", "small", "pass", "≤ 4"),
]


#: The same as CPU seconds (all processes of a command): steadier than wall time on a loaded machine, and
#: what two cores can divide at best.
CPU_RATIOS = [
    ("CPU: `context trace --json` ÷ bare orjson loop", "trace", "base"),
    ("CPU: `context trace --json` ÷ ccusage", "trace", "ccusage"),
    ("CPU: store warm ÷ cold", "trace-warm", "trace"),
    ("CPU: warm `context trace --json` ÷ ccusage", "trace-warm", "ccusage"),
    ("CPU: warm `context usage --json` ÷ ccusage", "usage-warm", "ccusage"),
    ("CPU: small `context trace --json` ÷ `python -c pass`", "small", "pass"),
]


def _ratio_rows(times: dict[str, list[float]], prefix: str = "") -> list[tuple[str, list[float], str]]:
    """(label, per-round ratios, target) of each of `RATIOS` both of whose commands ran."""
    rows = []
    for label, num, den, target in RATIOS:
        n = prefix + num if prefix + num in times else num
        d = prefix + den if prefix + den in times else den
        if n in times and d in times and (not prefix or n.startswith(prefix) or d.startswith(prefix)):
            rows.append(((prefix and f"{prefix} ") + label, _per_round(times, n, d), target))
    return rows


def _per_round(times: dict[str, list[float]], num: str, den: str) -> list[float]:
    return [a / b for a, b in zip(times[num], times[den], strict=True)]


def table(result: dict[str, Any]) -> str:
    times = result["times"]
    cpu = result.get("cpu", {})
    rows = ["| figure | median | range over rounds | target |", "|---|---|---|---|"]
    for label, r, target in [*_ratio_rows(times), *_ratio_rows(times, "before:")]:
        rows.append(f"| {label} | **{statistics.median(r):.2f}** | {min(r):.2f}–{max(r):.2f} | {target} |")
    if "trace-half" in times and "trace" in times:
        r = _per_round(times, "trace", "trace-half")
        ratio = result["bytes"] / result["half_bytes"]
        rows.append(
            f"| scaling: trace(full) ÷ trace(half), bytes ratio {ratio:.2f} | **{statistics.median(r):.2f}** "
            f"| {min(r):.2f}–{max(r):.2f} | ≤ {ratio * 1.1:.2f} (bytes ratio + 10 %) |"
        )
    for label, num, den in CPU_RATIOS:
        if num in cpu and den in cpu:
            r = _per_round(cpu, num, den)
            rows.append(f"| {label} | {statistics.median(r):.2f} | {min(r):.2f}–{max(r):.2f} | (CPU, not a target) |")
    if "trace-stubbed" in times and "trace" in times:
        r = [(a - b) / a for a, b in zip(times["trace"], times["trace-stubbed"], strict=True)]
        rows.append(
            f"| health + weather: share of `context trace` | **{statistics.median(r):.2f}** "
            f"| {min(r):.2f}–{max(r):.2f} | ≤ 0.10 |"
        )
    rows += ["", "| command (whole process) | median wall | range | median CPU (user + sys) |", "|---|---|---|---|"]
    for name, values in times.items():
        used = f"{statistics.median(cpu[name]):.3f} s" if name in cpu else ""
        rows.append(f"| {name} | {statistics.median(values):.3f} s | {min(values):.3f}–{max(values):.3f} s | {used} |")
    if result.get("npx_ccusage"):
        v = result["npx_ccusage"]
        spread = f"{min(v):.3f}–{max(v):.3f} s"
        rows.append(f"| ccusage through `npx -y` (3 runs, not paired) | {statistics.median(v):.3f} s | {spread} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=300.0, help="corpus size, MiB (default 300)")
    parser.add_argument("--copies", type=int, help="copies of samples/ instead of --mb")
    parser.add_argument("--rounds", type=int, default=7, help="paired rounds (default 7)")
    parser.add_argument("--no-ccusage", action="store_true", help="leave ccusage out")
    parser.add_argument("--root", type=Path, help="corpus folder (default: the cache folder, reused)")
    parser.add_argument("--json", type=Path, help="also write the times and ratios here")
    parser.add_argument("--only", help="comma-separated command names to time (default: all)")
    parser.add_argument("--before", type=Path, help="another checkout whose contexttrace is timed too")
    args = parser.parse_args(argv)
    copies = args.copies or realcorpus.copies_for(args.mb)
    corpus = realcorpus.ensure(copies, args.root)
    newest = max(os.path.getmtime(f) for f in corpus.files())
    time.sleep(max(0.0, newest + 3 - time.time()))  # the store keeps no file modified in the last 2 s
    only = args.only.split(",") if args.only else None
    result = measure(corpus, args.rounds, not args.no_ccusage, only, args.before)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    head = (
        f"real-content corpus: {corpus.projects}, {copies} copies of samples/, {result['files']} files, "
        f"{corpus.bytes / 2**20:.1f} MiB, {result['traces']} traces; {args.rounds} paired rounds; "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, {when}; load average after: "
        f"{', '.join(f'{x:.1f}' for x in result['load_after'])}"
    )
    print(head + "\n\n" + table(result))
    if args.json:
        timed = result["times"]
        ratios = {label: r for label, r, _ in [*_ratio_rows(timed), *_ratio_rows(timed, "before:")]}
        args.json.write_text(json.dumps({**result, "ratios": ratios, "head": head}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
