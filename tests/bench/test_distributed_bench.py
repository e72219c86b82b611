"""``helix bench distributed --quick``: every figure, with its baseline, at tiny sizes."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helix.bench._crossnode import StreamSizes, run_cross_node
from helix.bench._fleet import FleetSizes, run_fleet
from tests.conftest import ray_tier


@pytest.mark.postgres
@ray_tier  # its actor-restart figure starts a Ray cluster of its own
@pytest.mark.timeout(600)  # a whole suite in a process: as long as its own safety net
def test_the_distributed_suite_prints_every_figure(tmp_path: Path, postgres_url: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "helix", "bench", "distributed", "--json", "--quick"],
        capture_output=True,
        text=True,
        env={**os.environ, "HELIX_HOME": str(tmp_path), "HELIX_BENCH_POSTGRES": postgres_url},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    figures = [json.loads(line) for line in result.stdout.splitlines()]
    names = [f["name"] for f in figures]
    assert names == [
        "lease_takeover_s",
        "lease_takeover_s",
        "cross_node_stream_p99_ms",
        "concurrent_runs_10k",
        "actor_restart_to_resumed_s",
    ]
    stream, fleet, restart = figures[2], figures[3], figures[4]
    assert restart["unit"] == "s"
    assert restart["value"] > 0
    assert restart["baseline"] > 0  # a killed local driver's takeover, the same run
    assert stream["unit"] == "ms"
    assert stream["params"]["events"] == 50
    assert stream["value"] > 0
    assert stream["baseline"] > 0
    assert fleet["unit"] == "s"
    assert fleet["params"]["model_latency_s"] == 1.0
    assert fleet["params"]["runs"] == 100
    assert fleet["params"]["completed"] == 100
    assert fleet["params"]["memory_per_run"] > 0
    assert fleet["params"]["cpu_s"] > 0
    assert fleet["params"]["gc_threshold"] == [50_000, 20, 100]  # as helix serve collects
    # Wall against ideal: no run can finish faster than its model lets it.
    assert fleet["baseline"] == fleet["params"]["ideal_s"] == 2.0
    assert fleet["ratio"] >= 1.0


async def test_the_stream_figure_needs_postgresql() -> None:
    figures = [f async for f in run_cross_node(StreamSizes.quick(), postgres_url=None)]
    assert figures == []


async def test_a_fleet_finishes_every_run_no_sooner_than_its_model(tmp_path: Path) -> None:
    sizes = FleetSizes(runs=20, turns=1, model_latency_s=0.05)
    before = gc.get_threshold()
    (figure,) = [f async for f in run_fleet(sizes, workdir=tmp_path)]
    assert figure.params["completed"] == 20
    assert figure.value >= 0.05
    assert figure.ratio is not None
    assert figure.ratio >= 1.0
    assert gc.get_threshold() == before  # the drive's collector settings are undone
    assert not any(tmp_path.iterdir())  # noqa: ASYNC240 - the scratch folder is gone
