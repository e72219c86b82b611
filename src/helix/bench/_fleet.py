"""``concurrent_runs_10k``: ten thousand runs at once, each waiting a second on its model.

One process, as ``helix serve`` drives runs: one engine over one SQLite store (with
group commit: the appends made in one turn of the event loop share a transaction), a
supervisor with one child per run, each run holding its lease. The model is scripted
(in process, so no HTTP) and answers each call after ``model_latency_s``; the tool is a
no-op. The ideal is ``turns * model_latency_s``, what the runs would take if the
harness cost nothing: the figure is the wall time against it (``ratio``). Also
reported: the peak resident memory the drive added, per run (``memory_per_run``, KiB),
the CPU time the drive took (``cpu_s``: the harness's cost, which a busy machine's
other work does not inflate as it does the wall time), and the write floor (plain
``sqlite3`` writing the same rows, 1,000 a commit). Garbage is collected as
``helix serve`` collects it (``tune_gc_for_many_runs``).
"""

from __future__ import annotations

import gc
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from helix._util import MANY_RUNS_GC_THRESHOLD, tune_gc_for_many_runs
from helix.runtime import ChildSpec, Engine, open_supervisor

from ._engine import _Bench
from ._engine_parts import (
    bench_scenario,
    completed_runs,
    peak_rss_kib,
    reset_peak_rss,
    rss_kib,
    write_floor,
)
from ._figure import Figure

SUITE = "distributed"


@dataclass(frozen=True, slots=True)
class FleetSizes:
    """How many runs, of how many turns, and how slow their model is."""

    runs: int = 10_000
    turns: int = 3
    model_latency_s: float = 1.0

    @classmethod
    def quick(cls) -> FleetSizes:
        """A smoke test's sizes."""
        return cls(runs=100, turns=2)


async def run_fleet(
    sizes: FleetSizes, *, workdir: Path | None = None, tuned_gc: bool = True
) -> AsyncIterator[Figure]:
    """Drive ``runs`` runs at once to their end; one figure.

    ``tuned_gc``: collect garbage as ``helix serve`` does (``tune_gc_for_many_runs``),
    for the drive only; else with the interpreter's defaults.
    """
    with tempfile.TemporaryDirectory(dir=workdir, prefix="helix-bench-") as tmp:
        yield await _fleet(sizes, Path(tmp), tuned_gc)


async def _fleet(sizes: FleetSizes, root: Path, tuned_gc: bool) -> Figure:
    bench = _Bench(root, bench_scenario(sizes.turns, sizes.model_latency_s), group_commit=True)
    try:
        created = time.perf_counter()
        ids = [await bench.create() for _ in range(sizes.runs)]
        create_s = time.perf_counter() - created
        reset_peak_rss()
        before = rss_kib()
        previous = tune_gc_for_many_runs() if tuned_gc else None
        cpu, started = time.process_time(), time.perf_counter()
        try:
            async with open_supervisor() as supervisor:
                for run_id in ids:
                    start = partial(_drive, bench.engine, run_id)
                    spec = ChildSpec(id=run_id, start=start, restart="temporary")
                    supervisor.start_child(spec)
        finally:
            if previous is not None:
                gc.set_threshold(*previous)
                gc.unfreeze()
        elapsed, cpu_s = time.perf_counter() - started, time.process_time() - cpu
        peak = peak_rss_kib()
        finished = await completed_runs(bench.store)
        floor_s, rows = await write_floor(bench.store, root)
    finally:
        await bench.store.close()
    ideal = sizes.turns * sizes.model_latency_s
    params = {
        "runs": sizes.runs,
        "turns": sizes.turns,
        "model_latency_s": sizes.model_latency_s,
        "executor": "local",
        "store": "sqlite",
        "group_commit": True,
        "elapsed_s": round(elapsed, 3),
        "ideal_s": ideal,
        "cpu_s": round(cpu_s, 3),
        "gc_threshold": list(MANY_RUNS_GC_THRESHOLD if tuned_gc else gc.get_threshold()),
        "memory_per_run": round(max(0.0, peak - before) / sizes.runs, 1),
        "completed": finished,
        "rows": rows,
        "write_floor_s": round(floor_s, 3),
        "create_s": round(create_s, 3),
    }
    return Figure(SUITE, "concurrent_runs_10k", elapsed, "s", params, baseline=ideal)


async def _drive(engine: Engine, run_id: str) -> None:
    await engine.drive(run_id)
