"""``concurrent_runs_vs_ideal`` with the ``processes`` executor, beside its write floor.

The same runs as the in-process figure (``_engine.py``: a scripted model that waits
``model_delay_s`` a call, a no-op tool), driven by N worker processes on one store:
a SQLite file (each worker groups its commits) or a scratch PostgreSQL database. The
floor is measured in the same run on the rows those runs wrote: plain ``sqlite3`` (or
``asyncpg``), 1,000 rows a commit, no harness.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from helix.distributed import ProcessExecutor, open_executor
from helix.kernel.log import EncodedEvent, EventStore, SqliteEventStore, open_store
from helix.providers import ModelAdapter, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, open_supervisor

from ._engine_parts import (
    FLOOR_BATCH,
    ROW_COLUMNS,
    Timings,
    bench_scenario,
    bench_tools,
    completed_runs,
    write_floor,
)
from ._figure import Figure
from ._postgres import PostgresBench, temporary_database

if TYPE_CHECKING:
    from ._engine import EngineSizes

SUITE = "engine"


@asynccontextmanager
async def open_bench_engine(
    db_url: str, home: str, turns: int, delay_s: float
) -> AsyncIterator[Engine]:
    """The benchmark's engine on ``db_url``: an ``EngineOpener`` for the workers."""
    store: EventStore
    if db_url.startswith("sqlite:///"):
        store = SqliteEventStore(Path(db_url.removeprefix("sqlite:///")), group_commit=True)
    else:
        store = await open_store(db_url)
    scenario = bench_scenario(turns, delay_s)

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="bench")

    tools = bench_tools(Timings())
    try:
        yield Engine(store, home=Path(home), tools=tools, model_factory=model, env={})
    finally:
        await store.close()


async def processes_figures(
    sizes: EngineSizes, root: Path, workers: int, *, postgres_url: str | None = None
) -> AsyncIterator[Figure]:
    """``concurrent_runs_vs_ideal`` (executor ``processes``) and its ``concurrent_write_floor``."""
    (root / "world").mkdir(parents=True, exist_ok=True)
    async with AsyncExitStack() as stack:
        if postgres_url is not None:
            db_url = await stack.enter_async_context(temporary_database(postgres_url))
        else:
            db_url = f"sqlite:///{root / 'helix.db'}"
        opener = partial(
            open_bench_engine, db_url, str(root), sizes.concurrent_turns, sizes.model_delay_s
        )
        engine = await stack.enter_async_context(opener())
        blueprint = Blueprint(model="scripted:bench", tools=("noop",))
        ids = [
            (await engine.create("benchmark", blueprint=blueprint, world=root / "world")).id
            for _ in range(sizes.concurrent_runs)
        ]
        supervisor = await stack.enter_async_context(open_supervisor())
        executor = await stack.enter_async_context(
            open_executor(
                "processes", engine=engine, supervisor=supervisor, opener=opener, workers=workers
            )
        )
        assert isinstance(executor, ProcessExecutor)
        started = time.perf_counter()
        for run_id in ids:
            executor.submit(run_id)
        await executor.wait_idle()
        elapsed = time.perf_counter() - started
        completed = await completed_runs(engine.store)
        if postgres_url is None:
            assert isinstance(engine.store, SqliteEventStore)
            floor_s, rows = await write_floor(engine.store, root)
        else:
            floor_s, rows = await _postgres_floor(db_url)
    store = "sqlite" if postgres_url is None else "postgresql"
    ideal = sizes.concurrent_turns * sizes.model_delay_s
    params = {"runs": sizes.concurrent_runs, "turns": sizes.concurrent_turns,
              "model_delay_ms": sizes.model_delay_s * 1000, "elapsed_s": round(elapsed, 3),
              "ideal_s": ideal, "executor": "processes", "workers": workers, "store": store,
              "completed": completed,
              "vs_floor": round(elapsed / floor_s, 2) if floor_s else None}  # fmt: skip
    floor_params = {"runs": sizes.concurrent_runs, "rows": rows, "floor_s": round(floor_s, 3),
                    "ideal_s": ideal, "batch": FLOOR_BATCH, "store": store,
                    "executor": "processes", "workers": workers}  # fmt: skip
    yield Figure(SUITE, "concurrent_runs_vs_ideal", elapsed / ideal, "ratio", params)
    yield Figure(SUITE, "concurrent_write_floor", floor_s / ideal, "ratio", floor_params)


async def _postgres_floor(db_url: str) -> tuple[float, int]:
    """Seconds plain ``asyncpg`` takes to write the rows those runs wrote, and how many."""
    bench = PostgresBench(db_url)
    try:
        conn = await bench._connection()
        rows = [EncodedEvent(*row) for row in await conn.fetch(f"SELECT {ROW_COLUMNS} FROM events")]
        rate = await bench.raw_inserts(rows, FLOOR_BATCH)
    finally:
        await bench.close()
    return len(rows) / rate, len(rows)
