"""The real-content corpus (issue 11): copies of the real samples with fresh ids (`realcorpus.py`).

CI runs these on one copy of samples/ (13 MiB, generated into the session's temporary folder): every
copied trace must print its sample's known figures (`tests/test_samples.py`, computed independently),
`context usage` the sample's tokens and cost, and the output must be the same without the result store,
with it cold and with it warm. The headline ratios are measured by `realbench.py` on 300 MiB as whole
processes in paired rounds; `CT_REAL_COPIES=23 CT_REAL_DIR=...` runs these checks on that corpus too.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
import realbench
import realcorpus
from baseline import main as baseline_main
from conftest import run_cli

from contexttrace.run.runner import find_traces
from contexttrace.storage import store


@pytest.fixture(scope="session")
def real(tmp_path_factory: pytest.TempPathFactory) -> realcorpus.RealCorpus:
    copies = int(os.environ.get("CT_REAL_COPIES", "1"))
    root = realcorpus.default_root(copies) if os.environ.get("CT_REAL_DIR") else tmp_path_factory.mktemp("real")
    return realcorpus.ensure(copies, root)


def _known() -> dict[str, tuple[tuple[int, ...], int]]:
    from tests.test_samples import CLAUDE_EXPECTED as EXPECTED

    return {name: (values, total) for name, values, total in EXPECTED}


def test_real_known_answers(real):
    """Every copied trace has its sample's figures and prompt series (ids never change a figure), and
    every copy's subagent files are attached (its subagent calls count)."""
    from tests.test_samples import FIELDS

    reports = orjson.loads(run_cli(["context", "trace", str(real.projects), "--json", "--calls", "--no-cache"]))
    known = _known()
    got = {r["trace"]: (tuple(r[f] for f in FIELDS), sum(r["prompt_tokens"])) for r in reports}
    assert len(got) == len(known) * real.copies
    wrong = [f"{t}: {v} != {known[real.sample_of(t)]}" for t, v in got.items() if v != known[real.sample_of(t)]]
    assert not wrong, "\n".join(wrong[:10])


def test_real_usage_matches_the_samples(real):
    """`context usage` of a copy prints its sample's tokens, turns and cost."""
    args = ["context", "usage", "--json", "--no-cache"]
    everything = orjson.loads(run_cli([*args, str(realcorpus.SAMPLES)]))
    samples = {r["trace"]: r for r in everything if r["format"] in ("stream-json", "transcript")}  # what it copies
    copies = orjson.loads(run_cli([*args, str(real.projects)]))
    assert len(copies) == len(samples) * real.copies
    keys = ("total", "turns", "cost_usd", "cost_source", "cost_is_lower_bound", "models", "skipped_lines")
    for r in copies:
        sample = samples[f"{realcorpus.SAMPLES}/{real.sample_of(r['trace'])}"]
        assert {k: r[k] for k in keys} == {k: sample[k] for k in keys}, r["trace"]


def test_real_store_cold_and_warm(real, tmp_path, monkeypatch):
    """The output is the same without the store, with it cold and warm; the warm run keeps one entry per
    source and reads none."""
    monkeypatch.setenv("CONTEXTTRACE_CACHE_DIR", str(tmp_path / "store"))
    monkeypatch.setattr(store, "RACY_NS", 0)  # the corpus was written a moment ago
    args = ["context", "trace", str(real.projects), "--json"]
    plain = run_cli([*args, "--no-cache"])
    assert run_cli(args) == plain
    assert run_cli(args) == plain
    sources = [s for s in find_traces([str(real.projects)]) if not s.orphan]
    assert store.ResultStore(store.store_path()).info().entries == len(sources)


def test_real_baseline_reads_every_line(real, capsys):
    """The baseline process reads every line of every file (its count, as a sanity check)."""
    baseline_main([str(real.projects)])
    lines = int(capsys.readouterr().out)
    assert lines == sum(Path(f).read_bytes().count(b"\n") for f in real.files())


def test_real_table_prints():
    """`realbench.py`'s table from a made-up result (its timing needs whole processes: run the script)."""
    times = {n: [1.0, 2.0, 1.5] for n in ("base", "trace", "usage", "trace-half", "trace-stubbed", "trace-warm")}
    times |= {"trace-cold-store": [1.1, 2.1, 1.6], "ccusage": [0.5, 0.6, 0.7]}
    result = {"times": times, "cpu": times, "bytes": 200, "half_bytes": 100, "npx_ccusage": [2.0]}
    out = realbench.table(result)
    assert "| `context trace --json` ÷ bare orjson loop | **1.00** | 1.00–1.00 | ≤ 1.3 |" in out
    assert "scaling: trace(full) ÷ trace(half), bytes ratio 2.00" in out
    assert "ccusage through `npx -y`" in out
    assert "| CPU: store warm ÷ cold | 1.00 | 1.00–1.00 |" in out
