"""``helix bench orchestration``: a task graph's scheduling cost, its readiness latency and
its recovery, each beside a baseline measured in the same run."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helix.bench import SUITES
from helix.bench._orchestration import OrchestrationSizes, chain_plan, run_orchestration

NAMES = {"task_overhead_ms", "ready_to_started_ms", "graph_recovery_s"}


def _check(figures: list[dict[str, Any]], backend: str, sizes: OrchestrationSizes) -> None:
    mine = [f for f in figures if f["params"]["backend"] == backend]
    assert sorted(f["name"] for f in mine) == sorted([*NAMES, "ready_to_started_ms"])
    for figure in mine:
        assert figure["suite"] == "orchestration"
        assert isinstance(figure["value"], float), figure
        assert math.isfinite(figure["value"]), figure
    overhead = next(f for f in mine if f["name"] == "task_overhead_ms")
    # a difference of two wall times: at a smoke test's size the noise of a shared machine
    # can outweigh it, so only the graph's own time per task (value + baseline) must be > 0
    assert overhead["value"] + overhead["baseline"] > 0
    for figure in mine:
        assert figure is overhead or figure["value"] > 0, figure
    assert overhead["unit"] == "ms"
    assert overhead["params"]["tasks"] == sizes.tasks
    assert overhead["baseline"] > 0
    assert overhead["ratio"] == pytest.approx(overhead["value"] / overhead["baseline"], rel=0.01)
    stats = {f["params"]["stat"]: f for f in mine if f["name"] == "ready_to_started_ms"}
    assert set(stats) == {"p50", "p99"}
    assert stats["p50"]["value"] <= stats["p99"]["value"]
    assert stats["p50"]["params"]["samples"] == sizes.tasks - sizes.width  # one per dependent
    recovery = next(f for f in mine if f["name"] == "graph_recovery_s")
    assert recovery["unit"] == "s"
    assert recovery["params"]["tasks"] == sizes.recovery_tasks
    assert 0 < recovery["params"]["completed_before"] < sizes.recovery_tasks
    assert recovery["baseline"] > 0
    assert recovery["ratio"] > 0
    assert recovery["params"]["stopped_by"] == "kill -9"


def test_the_suite_prints_its_three_figures_small(tmp_path: Path) -> None:
    assert "orchestration" in SUITES
    result = subprocess.run(
        [sys.executable, "-m", "helix", "bench", "orchestration", "--json", "--quick",
         "--no-postgres"],
        capture_output=True,
        text=True,
        env={**os.environ, "HELIX_HOME": str(tmp_path)},
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    figures = [json.loads(line) for line in result.stdout.splitlines()]
    _check(figures, "sqlite", OrchestrationSizes.quick())
    assert {f["params"]["backend"] for f in figures} == {"sqlite"}


@pytest.mark.postgres
async def test_the_suite_measures_postgres_too(postgres_url: str, tmp_path: Path) -> None:
    admin = postgres_url.rsplit("/", 1)[0] + "/postgres"
    sizes = OrchestrationSizes(tasks=12, width=3, recovery_tasks=8, rounds=2)
    figures = [
        f.to_dict() async for f in run_orchestration(sizes, postgres_url=admin, workdir=tmp_path)
    ]
    for backend in ("sqlite", "postgres"):
        _check(figures, backend, sizes)
    assert os.listdir(tmp_path) == []  # the scratch folder is gone


def test_the_benchmark_graph_is_chains_of_dependent_tasks() -> None:
    graph = chain_plan(7, 3).blueprint.graph
    assert graph is not None
    assert graph.max_parallel == 3
    assert [t.depends_on for t in graph.tasks] == [(), (), (), ("t0",), ("t1",), ("t2",), ("t3",)]
