"""Benchmark fixtures: corpora generated once per session, known answers, and the ratio report.

Sizes: `--bench-scale` (or `CT_BENCH_SCALE`) is the fraction of the full corpora (300 MB / 200-transcript
directory, 50 MB stream-json file, 500 MB single transcript). The default, 0.01, is the CI smoke size.
`--bench-dir` (or `CT_BENCH_DIR`) keeps the corpora in that folder and reuses them when they were made
with the same scale, seed and generator version; otherwise they go to pytest's temporary folder.
`--bench-rounds` (`CT_BENCH_ROUNDS`, default 5) is the number of timed rounds of each benchmark.
`--bench-enforce` turns the issue's ratio targets into assertions (off by default: timings are noisy).

At the end of a timed run the terminal summary prints each median, the ratios the targets use and
writes them to `<corpus dir>/results.json`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import GENERATOR_VERSION, Corpus, Expected, generate_all, load_corpora

SEED = 20_260_501
#: Median wall times (seconds) of the timed benchmarks, by name; filled as benchmarks run.
MEDIANS: dict[str, float] = {}
#: Other measured figures (peak RSS, ccusage) by name.
FIGURES: dict[str, Any] = {}
#: Median of per-round ratios (ours / baseline, timed back to back) by corpus: what the targets use.
PAIRED: dict[str, float] = {}
_STATE: dict[str, Any] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("contexttrace benchmarks")
    group.addoption("--bench-scale", type=float, default=None, help="fraction of the full corpora (default 0.01)")
    group.addoption("--bench-dir", default=None, help="keep and reuse the generated corpora in this folder")
    group.addoption("--bench-rounds", type=int, default=None, help="timed rounds per benchmark (default 5)")
    group.addoption("--bench-enforce", action="store_true", help="assert the issue's ratio targets")


def _opt(config: pytest.Config, name: str, env: str, default: Any) -> Any:
    value = config.getoption(name)
    if value is None:
        value = os.environ.get(env)
    return default if value in (None, "") else value


@pytest.fixture(scope="session", autouse=True)
def _result_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The CLI's result store in a folder of this session, never the user's cache folder. Timed runs pass
    `--no-cache` (a second round would otherwise be a warm run); `test_bench_real.py` times it apart."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTEXTTRACE_CACHE_DIR", str(tmp_path_factory.mktemp("result-store")))
        yield


@pytest.fixture(scope="session")
def bench_scale(pytestconfig: pytest.Config) -> float:
    return float(_opt(pytestconfig, "--bench-scale", "CT_BENCH_SCALE", 0.01))


@pytest.fixture(scope="session")
def rounds(pytestconfig: pytest.Config) -> int:
    return int(_opt(pytestconfig, "--bench-rounds", "CT_BENCH_ROUNDS", 5))


@pytest.fixture(scope="session")
def corpus_dir(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory, bench_scale: float) -> Path:
    chosen = _opt(pytestconfig, "--bench-dir", "CT_BENCH_DIR", None)
    root = Path(chosen) if chosen else tmp_path_factory.mktemp("corpora")
    root.mkdir(parents=True, exist_ok=True)
    _STATE["dir"] = root
    return root


@pytest.fixture(scope="session")
def corpora(corpus_dir: Path, bench_scale: float) -> dict[str, Corpus]:
    """The corpora, generated once per session (or reused from `--bench-dir` when they match)."""
    stamp = {"scale": bench_scale, "seed": SEED, "generator": GENERATOR_VERSION}
    stamp_file = corpus_dir / "stamp.json"
    fresh = stamp_file.is_file() and (corpus_dir / "expected.json").is_file()
    if fresh and json.loads(stamp_file.read_text()) == stamp:
        return load_corpora(corpus_dir)
    stamp_file.unlink(missing_ok=True)
    corpora = generate_all(corpus_dir, bench_scale, SEED)
    stamp_file.write_text(json.dumps(stamp))  # written last: a half-made corpus is never reused
    return corpora


# -- known answers -----------------------------------------------------------------------------------


def check_reports(reports: list[Any], expected: list[Expected]) -> None:
    """Assert that reports (TraceReport objects or their JSON dicts) carry exactly the known figures."""
    want = {e.trace: e for e in expected}
    got = {(r["trace"] if isinstance(r, dict) else r.trace): r for r in reports}
    assert sorted(got) == sorted(want), "the traces reported differ from the traces generated"
    wrong = []
    for name, exp in want.items():
        rep = got[name]
        for key, value in exp.figures().items():
            actual = rep[key] if isinstance(rep, dict) else getattr(rep, key)
            if actual != value:
                wrong.append(f"{name}: {key} = {actual!r}, expected {value!r}")
    assert not wrong, "\n".join(wrong[:20])


def run_cli(args: list[str]) -> str:
    """Run the `contexttrace` CLI in this process; return what it printed on stdout."""
    from contexttrace.cli.app import app

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            app(args, prog_name="contexttrace", standalone_mode=False)
        except SystemExit as exc:  # pragma: no cover - standalone_mode=False should not exit
            assert not exc.code, err.getvalue()
    return out.getvalue()


def cli_reports(args: list[str]) -> list[dict[str, Any]]:
    return orjson.loads(run_cli(args))


def orjson_baseline(files: list[str]) -> int:
    """The baseline of the targets: `orjson.loads` on every line of `files`, one process. Returns lines."""
    loads = orjson.loads
    n = 0
    for path in files:
        with open(path, "rb") as fh:
            for line in fh:
                try:  # noqa: SIM105 - the baseline's loop, kept as plain as a reader would write it
                    loads(line)
                except orjson.JSONDecodeError:
                    pass
                n += 1
    return n


@pytest.fixture(scope="session")
def benchmark_enabled(pytestconfig: pytest.Config) -> bool:
    """False under `--benchmark-disable` (the CI smoke run: each body once, untimed)."""
    return not pytestconfig.getoption("benchmark_disable", False)


@pytest.fixture
def timed(benchmark: Any, rounds: int, request: pytest.FixtureRequest):
    """Time `fn` with pytest-benchmark (`rounds` rounds of one call) and keep its median under `name`."""

    def _timed(name: str, fn: Any, *args: Any) -> Any:
        result = benchmark.pedantic(fn, args=args, rounds=rounds, iterations=1, warmup_rounds=0)
        stats = getattr(getattr(benchmark, "stats", None), "stats", None)
        if stats is not None:
            MEDIANS[name] = stats.median
        return result

    return _timed


# -- the ratio report ------------------------------------------------------------------------------


def _ratios() -> list[tuple[str, float, str]]:
    m = MEDIANS
    out = []

    def ratio(label: str, num: str, den: str, target: str) -> None:
        if num in m and den in m and m[den] > 0:
            out.append((label, m[num] / m[den], target))

    if "directory" in PAIRED:
        out.append(("directory, paired rounds: context trace / orjson baseline", PAIRED["directory"], "<= 0.8"))
    if "single" in PAIRED:
        out.append(("single file, paired rounds: context trace / orjson baseline", PAIRED["single"], "<= 1.2"))
    ratio("directory: context trace / orjson baseline (medians)", "e2e-directory", "baseline-directory", "")
    ratio("single file: context trace / orjson baseline (medians)", "e2e-single", "baseline-single", "")
    ratio("stream file: context trace / orjson baseline", "e2e-stream", "baseline-stream", "(no target)")
    ratio("half directory: context trace / orjson baseline", "e2e-half", "baseline-half", "(no target)")
    if "e2e-directory" in m and "e2e-half" in m and "bytes-half" in FIGURES:
        t = m["e2e-directory"] / m["e2e-half"]
        b = FIGURES["bytes-directory"] / FIGURES["bytes-half"]
        out.append((f"scaling: time(directory) / time(half), bytes ratio {b:.2f}", t, "<= bytes ratio"))
    ratio("context usage / context trace (directory)", "e2e-usage-directory", "e2e-directory", "<= 1.15")
    if "health-weather-added" in PAIRED:
        out.append(
            ("health + weather: share of context trace (directory, paired)", PAIRED["health-weather-added"], "<= 0.15")
        )
    ratio("health + weather, one core / context trace (directory)", "health-weather-directory", "e2e-directory", "")
    return out


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not MEDIANS and not FIGURES:
        return
    tr = terminalreporter
    tr.section("contexttrace: medians and ratios")
    for name, value in sorted(MEDIANS.items()):
        tr.write_line(f"{name:40s} {value:9.3f} s")
    for name, value in sorted(FIGURES.items()):
        tr.write_line(f"{name:40s} {value}")
    ratios = _ratios()
    for label, value, target in ratios:
        tr.write_line(f"{label:62s} {value:6.3f}  {'target ' + target if target else ''}")
    root = _STATE.get("dir")
    if root is not None:
        path = Path(root) / "results.json"
        path.write_text(
            json.dumps(
                {"medians_s": MEDIANS, "figures": FIGURES, "paired": PAIRED, "ratios": {k: v for k, v, _ in ratios}},
                indent=2,
            )
        )
        tr.write_line(f"written to {path}")
