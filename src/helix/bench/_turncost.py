"""Instructions per turn: the harness's work counted, not timed.

Times on a shared VM move by 2x within the hour; an instruction count does not. Each
count is a process of its own (this module, run with ``python -m``) under
``valgrind --tool=callgrind``: once driving a short run and once a long one, so that
the interpreter's start, the imports and the run's setup cancel in the difference,
``(count(long) - count(short)) / (long - short)`` being one turn.

The baseline is counted the same way in the same run: plain ``sqlite3`` committing the
rows the engine committed, in the same transactions (both of its processes read every
row of the long run, so the read cancels too).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from pathlib import Path

from helix.kernel.log import SqliteEventStore
from helix.providers import ModelAdapter, ModelRequest, ModelResponse, TokenUsage, ToolCall
from helix.runtime import Blueprint, Engine, RunSetup
from helix.tools import ToolContext, ToolResult, builtin_registry, tool

from ._figure import Figure

SUITE = "engine"
TURNS = (100, 300)
"""The two runs whose difference is counted (a turn: one model call, one tool call).

Both pass the store's snapshot points (every 500 events), so what is done once at the
first of them (building the snapshot codec) cancels too.
"""

_COLUMNS = "run_id, seq, type, v, ts, turn, actor, data, ext"
_SCHEMA = (
    "CREATE TABLE events (pos INTEGER PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " type TEXT NOT NULL, v INTEGER NOT NULL, ts TEXT NOT NULL, turn INTEGER,"
    " actor TEXT NOT NULL, data TEXT NOT NULL, ext TEXT, UNIQUE (run_id, seq))"
)


def valgrind() -> str | None:
    """The ``valgrind`` executable, if this machine has one (the count needs it)."""
    return shutil.which("valgrind")


async def instructions_per_turn(workdir: Path, turns: tuple[int, int] = TURNS) -> list[Figure]:
    """A turn's instructions, beside plain ``sqlite3``'s for its rows (none without valgrind)."""
    tool = valgrind()
    if tool is None:
        return []
    short, long = turns
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    helix = await asyncio.gather(*(_count(tool, workdir / f"helix-{n}", "helix", n) for n in turns))
    source = str(workdir / f"helix-{long}" / "helix.db")
    plain = await asyncio.gather(
        *(_count(tool, workdir / f"sqlite-{n}", "sqlite", n, source) for n in turns)
    )
    await asyncio.to_thread(shutil.rmtree, workdir, True)
    turn = (helix[1] - helix[0]) / (long - short)
    floor = (plain[1] - plain[0]) / (long - short)
    params = {"turns": list(turns), "counter": "callgrind", "store": "sqlite",
              "baseline": "plain sqlite3 committing the same rows"}  # fmt: skip
    return [Figure(SUITE, "instructions_per_turn", turn, "instructions", params, baseline=floor)]


async def _count(valgrind: str, folder: Path, what: str, turns: int, *extra: str) -> int:
    """Instructions callgrind counted for one worker process."""
    await asyncio.to_thread(folder.mkdir, parents=True)
    out = folder / "callgrind.out"
    worker = ["-c", _SQLITE_WORKER] if what == "sqlite" else ["-m", __name__]
    args = [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
            *worker, str(turns), str(folder), *extra]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    process = await asyncio.create_subprocess_exec(
        *args, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    _, err = await process.communicate()
    if process.returncode != 0:
        detail = err.decode(errors="replace")[-2000:]
        raise RuntimeError(f"counting the {what} worker's instructions failed: {detail}")
    return total_instructions(await asyncio.to_thread(out.read_text))


def total_instructions(callgrind_out: str) -> int:
    """The total of a callgrind output file (its ``summary:`` or ``totals:`` line)."""
    found = re.search(r"^(?:summary|totals): (\d+)", callgrind_out, re.MULTILINE)
    if found is None:
        raise RuntimeError("callgrind wrote no instruction total")
    return int(found.group(1))


_SQLITE_WORKER = f"""
import sqlite3, sys
turns, folder, source = int(sys.argv[1]), sys.argv[2], sys.argv[3]
read = sqlite3.connect(source)
rows = read.execute("SELECT {_COLUMNS} FROM events ORDER BY pos").fetchall()
read.close()
commits = {{}}
for row in rows:
    commits.setdefault(row[4], []).append(row)
wanted = [group for group in commits.values() if (group[0][5] or 0) <= turns]
db = sqlite3.connect(folder + "/raw.db", isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA synchronous = NORMAL")
db.execute("{_SCHEMA}")
insert = "INSERT INTO events ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
for group in wanted:
    db.execute("BEGIN IMMEDIATE")
    db.executemany(insert, group)
    db.execute("COMMIT")
db.close()
"""
"""Plain ``sqlite3`` committing the source's rows up to a turn, an append's rows at a time
(an append's events share their time); no helix import, so little to cancel out."""


@tool(read_only=True, idempotent=True, effect="none")
async def noop(ctx: ToolContext, path: str) -> ToolResult:
    """Do nothing (the benchmark's tool)."""
    return ToolResult(ok=True, output="ok")


class _FixedModel(ModelAdapter):
    """Calls the no-op tool until the last turn, then ends: the same work every turn.

    The scripted model finds its reply by counting the conversation's replies, which
    grows with the run; this one keeps a counter, so the difference is the harness's.
    """

    provider, model = "scripted", "bench"

    def __init__(self, turns: int) -> None:
        self._turns = turns
        self._calls = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        self._calls += 1
        usage = TokenUsage(100, 10)
        if self._calls >= self._turns:
            return ModelResponse("done", (), usage, "end", self.model)
        call = ToolCall(f"call_{self._calls}", "noop", {"path": "a.txt"})
        return ModelResponse("step", (call,), usage, "tool_calls", self.model)


async def _helix(turns: int, folder: Path) -> None:
    """Drive one run of ``turns`` turns (a model call and a no-op tool call each)."""
    registry = builtin_registry()
    registry.register(noop)

    def model(_setup: RunSetup) -> ModelAdapter:
        return _FixedModel(turns)

    (folder / "world").mkdir(parents=True)
    # Its poll for other processes' commits costs per second, not per turn: under
    # callgrind (~50x slower) it would be counted fifty times over.
    store = SqliteEventStore(folder / "helix.db", watch_interval_s=1.0)
    engine = Engine(store, home=folder, tools=registry, model_factory=model, env={})
    record = await engine.create(
        "benchmark", blueprint=Blueprint(model="scripted:bench", tools=("noop",)),
        world=folder / "world",
    )  # fmt: skip
    await engine.drive(record.id)
    await store.close()


if __name__ == "__main__":
    asyncio.run(_helix(int(sys.argv[1]), Path(sys.argv[2])))
