"""``helix bench engine``: what the run engine costs around the model and the tools.

Every run here is real: the engine, its supervisor, the gate pipeline, the durable
SQLite log (WAL, ``synchronous=NORMAL``). Only the model is scripted (in-process, so
the figures hold no HTTP) and the tool is a no-op, so what is measured is the harness:
timing wrappers record the model's and the tool's own time, which is subtracted.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helix.gates import GateCall, GateContext, Policy, build_gate_pipeline
from helix.kernel.events import ModelRequested as Requested
from helix.kernel.events import NewEvent, RunStarted
from helix.kernel.events import TurnStarted as Started
from helix.kernel.log import EncodedEvent, SqliteEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.tools import builtin_registry

from ._engine_parts import (
    FLOOR_BATCH,
    ROW_COLUMNS,
    TimedModel,
    Timings,
    bench_scenario,
    bench_tools,
    peak_rss_kib,
    rss_kib,
    write_floor,
)
from ._engine_processes import processes_figures
from ._figure import Figure, percentile
from ._langgraph import langgraph_figures
from ._sqlite import SqliteBench, event_bytes
from ._turncost import TURNS, instructions_per_turn

SUITE = "engine"


@dataclass(frozen=True, slots=True)
class EngineSizes:
    """How much work each measurement does."""

    turns: int = 300
    concurrent_runs: int = 1000
    concurrent_turns: int = 10
    model_delay_s: float = 0.05
    resume_runs: int = 100
    gate_samples: int = 5000
    bytes_turns: tuple[int, ...] = (10, 100, 1000)
    workers: tuple[int, ...] = (2, 1)
    """Worker counts the ``processes`` executor drives the concurrent runs with."""
    count_turns: tuple[int, int] | None = TURNS
    """The two runs ``instructions_per_turn`` counts (``None``: not counted; valgrind's slow)."""

    @classmethod
    def quick(cls) -> EngineSizes:
        """A smoke test's sizes."""
        return cls(
            turns=20, concurrent_runs=20, concurrent_turns=3, model_delay_s=0.01,
            resume_runs=5, gate_samples=200, bytes_turns=(5, 20), workers=(2,),
            count_turns=None,
        )  # fmt: skip


class _Bench:
    """One store and one engine in a scratch folder."""

    def __init__(self, root: Path, scenario: Scenario, *, group_commit: bool = False) -> None:
        (root / "world").mkdir(parents=True, exist_ok=True)
        self.root = root
        self.timings = Timings()
        self.store = SqliteEventStore(root / "helix.db", group_commit=group_commit)
        self.scenario = scenario

        def model(_setup: RunSetup) -> ModelAdapter:
            return TimedModel(ScriptedModel(self.scenario, label="bench"), self.timings)

        self.engine = Engine(
            self.store, home=root, tools=bench_tools(self.timings), model_factory=model, env={}
        )

    async def create(self) -> str:
        blueprint = Blueprint(model="scripted:bench", tools=("noop",))
        record = await self.engine.create(
            "benchmark", blueprint=blueprint, world=self.root / "world"
        )
        return record.id


async def run_engine(
    sizes: EngineSizes, workdir: Path | None = None, postgres_url: str | None = None
) -> AsyncIterator[Figure]:
    """Measure gates, per-call overhead, concurrency, resume, storage and instructions per turn.

    The concurrent runs are driven in this process, then by the ``processes`` executor
    (``sizes.workers``: the worker counts to measure), and, given ``postgres_url`` (an
    admin URL: a scratch database is made), by worker processes on PostgreSQL.
    """
    with tempfile.TemporaryDirectory(dir=workdir, prefix="helix-bench-") as tmp:
        root = Path(tmp)
        for tool, args in (("read_file", {"path": "notes.txt"}), ("run_command", _COMMAND)):
            yield await _gates(sizes, root, tool, args)
        for figure in await _overhead(sizes, root / "overhead"):
            yield figure
        for figure in await _concurrent(sizes, root / "concurrent"):
            yield figure
        for workers in sizes.workers:
            async for figure in processes_figures(sizes, root / f"workers-{workers}", workers):
                yield figure
        if postgres_url is not None:
            async for figure in processes_figures(
                sizes, root / "postgres", max(sizes.workers), postgres_url=postgres_url
            ):
                yield figure
        yield await _resume(sizes, root / "resume")
        for figure in await _per_turn(sizes, root / "per-turn"):
            yield figure
        if sizes.count_turns is not None:
            for figure in await instructions_per_turn(root / "count", sizes.count_turns):
                yield figure
    async for figure in langgraph_figures(sizes.bytes_turns, workdir):
        yield figure


_COMMAND = {"command": "grep -rn TODO src | head -20"}
"""A read-only command: every gate it meets allows it, the command rules included."""


async def _gates(sizes: EngineSizes, root: Path, tool: str, args: dict[str, Any]) -> Figure:
    world = _folder(root / "gates")
    registry = builtin_registry()
    pipeline = build_gate_pipeline(available_tools=registry.names)
    context = GateContext(run_id="bench", world=world.resolve(), policy=Policy())
    call = GateCall("c1", tool, args, registry.get(tool))
    samples = []
    ran = 0
    for _ in range(sizes.gate_samples):
        started = time.perf_counter()
        outcome = await pipeline.evaluate(call, context)
        samples.append((time.perf_counter() - started) * 1000)
        ran = len(outcome.decisions)
    # The gates scoped to other tools (commands, egress) are not asked about a read.
    return Figure(SUITE, "gates_p50", statistics.median(samples), "ms",
                  {"tool": tool, "gates": ran, "pipeline": len(pipeline.gates),
                   "calls": sizes.gate_samples})  # fmt: skip


async def _overhead(sizes: EngineSizes, root: Path) -> list[Figure]:
    bench = _Bench(root, bench_scenario(sizes.turns))
    run_id = await bench.create()
    await bench.engine.drive(run_id)
    t = bench.timings
    # From one model call's start to the next: the model, one tool call, and the harness.
    overhead = [
        (t.model_starts[i + 1] - t.model_starts[i] - t.model_s[i] - t.tool_s[i]) * 1000
        for i in range(len(t.model_starts) - 1)
    ]
    floor, commits = await _commit_floor(bench.store, root, run_id, sizes.turns)
    await bench.store.close()
    p50 = percentile(overhead, 50)
    params = {"turns": sizes.turns, "store": "sqlite", "durability": "normal"}
    floor_params = {"turns": sizes.turns, "commits": commits, "overhead_p50_vs_floor":
                    round(p50 / floor, 2) if floor else None}  # fmt: skip
    return [
        Figure(SUITE, "tool_call_overhead_p50", p50, "ms", params),
        Figure(SUITE, "tool_call_overhead_p99", percentile(overhead, 99), "ms", params),
        Figure(SUITE, "tool_call_commit_floor", floor, "ms", floor_params),
    ]


async def _commit_floor(
    store: SqliteEventStore, root: Path, run_id: str, turns: int
) -> tuple[float, int]:
    """Milliseconds per turn plain ``sqlite3`` takes to commit what the engine committed.

    The same rows in the same transactions (an append's events share their commit
    time), with no harness: the durable log's share of the per-call overhead, measured
    in the same run so that the two can be compared on a machine whose speed varies.
    """
    rows = [EncodedEvent(*row) for row in store.connection.execute(
        f"SELECT {ROW_COLUMNS} FROM events WHERE run_id = ? ORDER BY seq", (run_id,))]  # fmt: skip
    commits: dict[str, list[EncodedEvent]] = {}
    for row in rows:
        commits.setdefault(row.ts, []).append(row)
    seconds = await SqliteBench(root, store).raw_commits(list(commits.values()))
    return sum(seconds) * 1000 / turns, len(commits)


async def _concurrent(sizes: EngineSizes, root: Path) -> list[Figure]:
    # Many runs in one process is what group commit is for: one transaction per loop turn.
    scenario = bench_scenario(sizes.concurrent_turns, sizes.model_delay_s)
    bench = _Bench(root, scenario, group_commit=True)
    ids = [await bench.create() for _ in range(sizes.concurrent_runs)]
    before = rss_kib()
    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for run_id in ids:
            group.create_task(bench.engine.drive(run_id))
    elapsed = time.perf_counter() - started
    peak = peak_rss_kib()
    floor = await write_floor(bench.store, root)
    await bench.store.close()
    ideal = sizes.concurrent_turns * sizes.model_delay_s
    params = {"runs": sizes.concurrent_runs, "turns": sizes.concurrent_turns,
              "model_delay_ms": sizes.model_delay_s * 1000, "elapsed_s": round(elapsed, 3),
              "ideal_s": ideal, "group_commit": True, "executor": "local", "workers": 1,
              "store": "sqlite"}  # fmt: skip
    floor_s, rows = floor
    params["vs_floor"] = round(elapsed / floor_s, 2) if floor_s else None
    floor_params = {"runs": sizes.concurrent_runs, "rows": rows, "floor_s": round(floor_s, 3),
                    "ideal_s": ideal, "batch": FLOOR_BATCH}  # fmt: skip
    return [
        Figure(SUITE, "concurrent_runs_vs_ideal", elapsed / ideal, "ratio", params),
        Figure(SUITE, "concurrent_write_floor", floor_s / ideal, "ratio", floor_params),
        Figure(
            SUITE,
            "memory_per_run",
            max(0.0, peak - before) / sizes.concurrent_runs,
            "KiB",
            {"runs": sizes.concurrent_runs},
        ),
    ]


async def _resume(sizes: EngineSizes, root: Path) -> Figure:
    """In-flight runs (the model was called, then the process died): time to resume all."""
    bench = _Bench(root, bench_scenario(3, delay_s=0.5))
    for _ in range(sizes.resume_runs):
        run_id = await bench.create()
        in_flight = [NewEvent(RunStarted()), NewEvent(Started(turn=1), turn=1),
                     NewEvent(Requested(provider="scripted", model="bench"), turn=1)]  # fmt: skip
        await bench.store.append(run_id, in_flight, expected_seq=1)
    resumed: set[str] = set()
    started = time.perf_counter()
    async with bench.store.subscribe_all() as events, asyncio.TaskGroup() as group:
        driver = group.create_task(bench.engine.resume_all())
        async for event in events:
            if event.type == "run.resumed":
                resumed.add(event.run_id)
                if len(resumed) == sizes.resume_runs:
                    break
        elapsed = time.perf_counter() - started
        driver.cancel()
    await bench.store.close()
    return Figure(SUITE, "resume_100_runs", elapsed, "s", {"runs": sizes.resume_runs})


async def _per_turn(sizes: EngineSizes, root: Path) -> list[Figure]:
    figures = []
    for turns in sizes.bytes_turns:
        bench = _Bench(root / f"n{turns}", bench_scenario(turns))
        run_id = await bench.create()
        started = time.perf_counter()
        await bench.engine.drive(run_id)
        elapsed = time.perf_counter() - started
        t = bench.timings
        overhead_ms = (elapsed - sum(t.model_s) - sum(t.tool_s)) * 1000 / turns
        size = event_bytes(bench.store, run_id)
        await bench.store.close()
        params = {"system": "helix", "turns": turns}
        figures.append(Figure(SUITE, "turn_overhead", overhead_ms, "ms", params))
        figures.append(Figure(SUITE, "bytes_per_turn", size / turns, "bytes", params))
    return figures


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
