"""`--engine dask` on the real-content corpus (issue 17): known answers and the local engine's output.

CI runs this once, untimed, on one copy of samples/ (13 MiB) with a 2-worker LocalCluster; timed
(`pytest benchmarks --benchmark-only -k dask`), it reports the run on the cluster beside the local one.
The overhead ratio and the projection in benchmarks/README.md are measured by `daskbench.py` as whole
processes in paired rounds.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import realcorpus
from distributed import Client, LocalCluster

from contexttrace.render.trace import render_json
from contexttrace.run.dask_engine import DaskEngine
from contexttrace.run.runner import analyze


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> realcorpus.RealCorpus:
    copies = int(os.environ.get("CT_REAL_COPIES", "1"))
    root = realcorpus.default_root(copies) if os.environ.get("CT_REAL_DIR") else tmp_path_factory.mktemp("real")
    return realcorpus.ensure(copies, root)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    """A 2-worker LocalCluster (one thread each) for the module; no thread of distributed's left after it
    (a second thread alive changes how the runner pauses the collector in the benchmarks that follow)."""
    from concurrent.futures import ThreadPoolExecutor

    import distributed.utils

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": ":0"},
        silence_logs=logging.CRITICAL,
        memory_limit=0,
    )
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
        distributed.utils._offload_executor.shutdown(wait=True)
        distributed.utils._offload_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="Dask-Offload")


def test_dask_real_known_answers_and_local_output(real, client, timed: Any):
    """On the cluster, every copied trace has its sample's figures and prompt series, and `context trace
    --json --calls` is the local engine's, byte for byte."""
    from tests.test_samples import CLAUDE_EXPECTED as EXPECTED
    from tests.test_samples import FIELDS

    paths = [str(real.projects)]
    run = timed("dask-real", lambda: analyze(paths, engine=DaskEngine(client=client)))
    known = {name: (values, total) for name, values, total in EXPECTED}
    reports = orjson.loads(render_json(run, with_calls=True))
    got = {r["trace"]: (tuple(r[f] for f in FIELDS), sum(r["prompt_tokens"])) for r in reports}
    assert len(got) == len(known) * real.copies
    wrong = [f"{t}: {v} != {known[real.sample_of(t)]}" for t, v in got.items() if v != known[real.sample_of(t)]]
    assert not wrong, "\n".join(wrong[:10])
    assert render_json(run, with_calls=True) == render_json(analyze(paths), with_calls=True)
