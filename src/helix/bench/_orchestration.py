"""``helix bench orchestration``: what a task graph costs around the runs it starts.

Every run is real (the engine, its supervisor, the durable log); only the model is
scripted, in-process, replying at once, so each task's run is one model call and the
figures hold the graph's scheduling, not the model. The graph is ``width`` chains of
no-op tasks (task ``i`` depends on task ``i - width``) under ``max_parallel = width``,
so a task that becomes ready starts at once: what ``ready_to_started_ms`` measures is
the conductor noticing, not a queue.

- ``task_overhead_ms``: per task, the graph's wall time less the wall time of the same
  runs driven directly (``width`` chains of plain runs side by side, created and driven
  one after another); ``baseline`` is that plain run's wall time per task, so ``ratio``
  is the scheduling cost as a share of a no-op run. Both are warmed up first, then
  measured in ``rounds`` interleaved rounds; the fastest round of each counts.
- ``ready_to_started_ms``: from the ``task.completed`` of a task's last dependency to its
  ``task.started`` (the log's own times), p50 and p99 (``params.stat``), in the graph of
  the round that counted.
- ``graph_recovery_s``: a 100-task graph driven by a process of its own that kills itself
  (``SIGKILL``) once half its tasks completed, its running tasks' runs left mid-way under
  its leases; then the time for a fresh engine on the same database (opening the store
  included) to resume it to completion; ``baseline``: the same graph run uninterrupted,
  start to end, in the same run.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from helix.kernel.events import Event
from helix.kernel.log import EventStore, open_store
from helix.kernel.session import SessionState, replay_run
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, Plan, RunSetup

from ._figure import Figure, percentile
from ._postgres import temporary_database

SUITE = "orchestration"
_REPLY = Scenario.of({"text": "done", "usage": {"input_tokens": 10, "output_tokens": 2}})


@dataclass(frozen=True, slots=True)
class OrchestrationSizes:
    """How much work each measurement does (sized for a 2-core machine)."""

    tasks: int = 100
    """Tasks of the graph ``task_overhead_ms`` and ``ready_to_started_ms`` measure."""
    width: int = 4
    """Chains side by side (and the graph's ``max_parallel``)."""
    recovery_tasks: int = 100
    rounds: int = 3
    """Rounds of the plain runs and the graph, interleaved (the fastest of each counts)."""

    @classmethod
    def quick(cls) -> OrchestrationSizes:
        """A smoke test's sizes."""
        return cls(tasks=12, width=3, recovery_tasks=12, rounds=2)


def chain_plan(tasks: int, width: int) -> Plan:
    """``width`` chains of no-op tasks: task ``i`` depends on task ``i - width``."""
    specs: list[dict[str, Any]] = [{"id": f"t{i}", "objective": f"no-op {i}"} for i in range(tasks)]
    for i in range(width, tasks):
        specs[i]["depends_on"] = [f"t{i - width}"]
    data = {"model": "scripted:bench", "tools": [], "max_parallel": width, "tasks": specs}
    return Plan.parse(data, source="bench")


class _Place:
    """A database and a scratch folder the runs work in; engines opened on them."""

    def __init__(self, url: str, root: Path) -> None:
        self.url, self.root = url, root
        self.world = root / "world"
        self.world.mkdir(parents=True, exist_ok=True)
        self.stores: list[EventStore] = []

    async def engine(self) -> Engine:
        store = await open_store(self.url)
        self.stores.append(store)

        def model(_setup: RunSetup) -> ModelAdapter:
            return ScriptedModel(_REPLY, label="bench")

        return Engine(store, home=self.root, model_factory=model, env={})

    async def close(self) -> None:
        while self.stores:
            await self.stores.pop().close()

    async def graph(self, engine: Engine, plan: Plan) -> str:
        record = await engine.create(plan.objective, blueprint=plan.blueprint, world=self.world)
        return record.id


async def run_orchestration(
    sizes: OrchestrationSizes, *, postgres_url: str | None = None, workdir: Path | None = None
) -> AsyncIterator[Figure]:
    """Measure on SQLite, then (given an admin ``postgres_url``) on a scratch PostgreSQL."""
    with tempfile.TemporaryDirectory(dir=workdir, prefix="helix-bench-") as tmp:
        root = Path(tmp)
        async for figure in _measure(
            sizes, f"sqlite:///{root / 'sqlite' / 'helix.db'}", root / "sqlite", "sqlite"
        ):
            yield figure
        if postgres_url is not None:
            async with temporary_database(postgres_url) as url:
                async for figure in _measure(sizes, url, root / "postgres", "postgres"):
                    yield figure


async def _measure(
    sizes: OrchestrationSizes, url: str, root: Path, backend: str
) -> AsyncIterator[Figure]:
    place = _Place(url, root)  # makes the folder
    try:
        for figure in await _overhead(sizes, place, backend):
            yield figure
        yield await _recovery(sizes, place, backend)
    finally:
        await place.close()


async def _overhead(sizes: OrchestrationSizes, place: _Place, backend: str) -> list[Figure]:
    engine = await place.engine()
    plan = chain_plan(sizes.tasks, sizes.width)
    blueprint = Blueprint(model="scripted:bench", tools=())

    async def plain(tasks: int) -> float:
        """The same runs driven directly: ``width`` chains side by side; wall seconds."""

        async def chain(length: int) -> None:
            for _ in range(length):
                record = await engine.create("no-op", blueprint=blueprint, world=place.world)
                await engine.drive(record.id)

        started = time.perf_counter()
        async with asyncio.TaskGroup() as group:
            for i in range(sizes.width):
                group.create_task(chain(len(range(i, tasks, sizes.width))))
        return time.perf_counter() - started

    async def graph(of: Plan) -> tuple[float, str]:
        run_id = await place.graph(engine, of)
        started = time.perf_counter()
        state = await engine.drive(run_id)
        if state.status != "completed":
            raise RuntimeError(f"the benchmark's graph ended {state.status}: {state.error}")
        return time.perf_counter() - started, run_id

    await plain(sizes.width)  # warm both paths up (tables, caches, the first imports)
    await graph(chain_plan(sizes.width, sizes.width))
    plain_s, graph_s, waits = math.inf, math.inf, []
    for _ in range(sizes.rounds):  # interleaved; the least disturbed round of each counts
        plain_s = min(plain_s, await plain(sizes.tasks))
        took, run_id = await graph(plan)
        if took < graph_s:
            graph_s, waits = took, ready_to_started(await engine.store.read(run_id))

    params = {"backend": backend, "tasks": sizes.tasks, "max_parallel": sizes.width}
    per_plain_ms = plain_s * 1000 / sizes.tasks
    overhead = Figure(
        SUITE, "task_overhead_ms", graph_s * 1000 / sizes.tasks - per_plain_ms, "ms",
        {**params, "rounds": sizes.rounds}, baseline=per_plain_ms,
    )  # fmt: skip
    return [
        overhead,
        *(
            Figure(
                SUITE,
                "ready_to_started_ms",
                percentile(waits, q),
                "ms",
                {**params, "stat": stat, "samples": len(waits)},
            )
            for stat, q in (("p50", 50), ("p99", 99))
        ),
    ]


def ready_to_started(log: list[Event]) -> list[float]:
    """For each task started after its dependencies: ms from the last one's completion."""
    completed: dict[str, datetime] = {}
    needs: dict[str, list[str]] = {}
    waits: list[float] = []
    for event in log:
        if event.type == "graph.planned":
            needs = {t["id"]: list(t.get("depends_on") or ()) for t in event.data["plan"]["tasks"]}
        elif event.type == "task.completed":
            completed[event.data["task"]] = datetime.fromisoformat(event.ts)
        elif event.type == "task.started" and needs.get(event.data["task"]):
            ready = max(completed[need] for need in needs[event.data["task"]])
            waits.append((datetime.fromisoformat(event.ts) - ready).total_seconds() * 1000)
    return waits


async def _recovery(sizes: OrchestrationSizes, place: _Place, backend: str) -> Figure:
    plan = chain_plan(sizes.recovery_tasks, sizes.width)
    whole = await place.engine()
    graph = await place.graph(whole, plan)
    started = time.perf_counter()
    await whole.drive(graph)
    uninterrupted_s = time.perf_counter() - started
    await place.close()

    first = await place.engine()
    graph = await place.graph(first, plan)
    await place.close()
    half = sizes.recovery_tasks // 2
    killed = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CRASH, place.url, str(place.root), graph, str(half),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await killed.communicate()
    if killed.returncode != -signal.SIGKILL:
        raise RuntimeError(f"the graph's first driver did not die mid-way: {err.decode()[-2000:]}")
    looker = await place.engine()
    done_before = sum(
        t.status == "completed" for t in (await replay_run(looker.store, graph)).tasks.values()
    )
    await place.close()

    started = time.perf_counter()
    fresh = await place.engine()
    state = await fresh.drive(graph)
    resumed_s = time.perf_counter() - started
    if state.status != "completed":
        raise RuntimeError(f"the resumed graph ended {state.status}: {state.error}")
    params = {
        "backend": backend, "tasks": sizes.recovery_tasks, "completed_before": done_before,
        "max_parallel": sizes.width, "until": "completed", "stopped_by": "kill -9",
    }  # fmt: skip
    return Figure(SUITE, "graph_recovery_s", resumed_s, "s", params, baseline=uninterrupted_s)


_CRASH = (
    "import sys; from helix.bench._orchestration import crash_midway; crash_midway(*sys.argv[1:])"
)


def crash_midway(url: str, root: str, graph: str, half: str) -> None:
    """Drive ``graph`` in this process; ``kill -9`` it once ``half`` tasks completed."""

    def dead_once_half_done(state: SessionState) -> bool:
        if sum(t.status == "completed" for t in state.tasks.values()) >= int(half):
            os.kill(os.getpid(), signal.SIGKILL)
        return False

    async def main() -> None:
        engine = await _Place(url, Path(root)).engine()
        await engine.drive(graph, until=dead_once_half_done)

    asyncio.run(main())
