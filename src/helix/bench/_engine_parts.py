"""What the engine figures share: the timed model, the no-op tool, the scenario, the floor.

``helix bench engine`` drives its runs in this process (``_engine.py``) and in worker
processes (``_engine_processes.py``); both build their engines from these.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helix.kernel.log import EncodedEvent, EventStore, SqliteEventStore
from helix.providers import ModelAdapter, ModelRequest, ModelResponse, Scenario
from helix.tools import ToolContext, ToolRegistry, ToolResult, builtin_registry, tool

from ._sqlite import SqliteBench


@dataclass
class Timings:
    """The model's and the tool's own time, per call, to subtract from the harness's."""

    model_starts: list[float] = field(default_factory=list[float])
    model_s: list[float] = field(default_factory=list[float])
    tool_s: list[float] = field(default_factory=list[float])


class TimedModel(ModelAdapter):
    def __init__(self, inner: ModelAdapter, timings: Timings) -> None:
        self.inner, self.timings = inner, timings
        self.provider, self.model = inner.provider, inner.model

    async def request(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        self.timings.model_starts.append(started)
        response = await self.inner.request(request)
        self.timings.model_s.append(time.perf_counter() - started)
        return response


def bench_tools(timings: Timings) -> ToolRegistry:
    @tool(read_only=True, idempotent=True, effect="none")
    async def noop(ctx: ToolContext, path: str) -> ToolResult:
        """Do nothing (the benchmark's tool)."""
        started = time.perf_counter()
        result = ToolResult(ok=True, output="ok")
        timings.tool_s.append(time.perf_counter() - started)
        return result

    registry = builtin_registry()
    registry.register(noop)
    return registry


def bench_scenario(turns: int, delay_s: float = 0.0) -> Scenario:
    usage = {"input_tokens": 100, "output_tokens": 10}
    call = {"name": "noop", "args": {"path": "a.txt"}}
    steps: list[dict[str, Any]] = [
        {"text": "step", "tool_calls": [call], "usage": usage, "delay_s": delay_s}
        for _ in range(turns - 1)
    ]
    steps.append({"text": "done", "usage": usage, "delay_s": delay_s})
    return Scenario.of(*steps)


FLOOR_BATCH = 1000
ROW_COLUMNS = ", ".join(EncodedEvent._fields)
"""The ``events`` table's columns an ``EncodedEvent`` holds, in its order (to read rows back)."""


async def write_floor(store: SqliteEventStore, root: Path) -> tuple[float, int]:
    """Seconds plain ``sqlite3`` takes to write the rows those runs wrote, and how many.

    No harness at all, and the kindest batching (1,000 rows a commit): a floor under
    any engine that logs the same events durably, so the ideal can be judged by it.
    """
    select = f"SELECT {ROW_COLUMNS} FROM events"
    rows = [EncodedEvent(*row) for row in store.connection.execute(select)]
    rate = await SqliteBench(root, store).raw_inserts(rows, FLOOR_BATCH)
    return len(rows) / rate, len(rows)


async def completed_runs(store: EventStore) -> int:
    """How many runs of the benchmark's store (its own scratch one) completed."""
    completed, cursor = 0, None
    while True:
        page = await store.list_runs(limit=500, cursor=cursor)
        completed += sum(1 for r in page.runs if r.status == "completed")
        if page.next_cursor is None:
            return completed
        cursor = page.next_cursor


def rss_kib() -> float:
    """This process's resident memory now (KiB)."""
    return _status_kib("VmRSS")


def peak_rss_kib() -> float:
    """This process's peak resident memory (KiB) since it started or ``reset_peak_rss``."""
    return _status_kib("VmHWM")


def reset_peak_rss() -> None:
    """Start the peak (``VmHWM``) afresh, so what came before does not count."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def _status_kib(field_name: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field_name + ":"):
                return float(line.split()[1])
    return 0.0
